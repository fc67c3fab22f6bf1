//! One trial as the main process sees it: its files and task plan, the sampler and trace around
//! it, and the request to the launcher that runs it.

use super::cells::{antagonist_workload, CellState};
use super::launcher::{Launcher, Request};
use super::sampler::Sampler;
use super::task::TaskPlan;
use super::trace;
use super::trial::groups::TrialGroups;
use crate::error::{Result, RunError};
use schedlab_core::policy::{PriorityMode, TaskPolicy};
use schedlab_core::records::{StartMode, TrialOutcome};
use schedlab_core::workload::{TrialDir, TrialDirRef};
use schedlab_spec::plan::Cell;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What is recorded next to the tasks during a trial.
#[derive(Debug, Clone, Copy)]
pub struct Observe {
    /// Interval of the system-wide sampler; None = off.
    pub sample_interval: Option<Duration>,
    /// Record the kernel's scheduler trace.
    pub trace: bool,
}

/// Runs one trial of `cell` through `launcher`: creates its files, starts the sampler and the
/// trace, has the launcher run it (with its task groups, if any), then attaches samples and
/// trace to the outcome.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    launcher: &mut Launcher,
    cell: &Cell,
    state: &CellState,
    timeout_ns: u64,
    io_dir: &Path,
    tag: &str,
    interrupted: &AtomicBool,
    (observe, groups): (Observe, Option<&TrialGroups>),
) -> Result<TrialOutcome> {
    let dir = if needs_trial_dir(cell) {
        Some(
            TrialDir::create(io_dir, tag, cell.workload.io_input_bytes).map_err(|source| {
                RunError::TrialDir {
                    io_dir: io_dir.to_path_buf(),
                    source,
                }
            })?,
        )
    } else {
        None
    };
    let dir_ref = match &dir {
        Some(d) => Some(d.reference().map_err(|source| RunError::TrialDir {
            io_dir: io_dir.to_path_buf(),
            source,
        })?),
        None => None,
    };
    let guard = cell.policy.needs_guard();
    let mut plan = task_plan(cell, state, dir_ref);
    if let Some(g) = groups.filter(|g| g.files.groups.len() > 1) {
        plan.contended = g.files.groups.iter().map(|g| g.stat.clone()).collect();
    }
    let req = Request {
        kind: cell.kind,
        plan,
        timeout_ns,
        guard,
        groups: groups.cloned(),
    };
    let mut tracer = if observe.trace {
        Some(trace::TraceSession::start(trace::DEFAULT_BUFFER_KB).map_err(RunError::Trace)?)
    } else {
        None
    };
    // The sampler runs at the launcher's guard priority when RT workers could starve it.
    let sampler = observe.sample_interval.map(|i| Sampler::start(i, guard));
    let outcome = launcher.run_trial(&req, interrupted);
    let samples = sampler.map(|s| s.finish()).unwrap_or_default();
    let mut outcome = outcome.map_err(RunError::LauncherFailed)?;
    outcome.samples = samples;
    if let Some(t) = tracer.as_mut() {
        attach_trace(t, &mut outcome).map_err(RunError::Trace)?;
    }
    drop(tracer);
    drop(dir);
    Ok(outcome)
}

/// Whether the trials of `cell` need a directory under the I/O directory: for their files,
/// their antagonists' files, or as the starting directory of their programs.
pub fn needs_trial_dir(cell: &Cell) -> bool {
    cell.workload.needs_trial_dir()
        || (cell.antagonists > 0 && antagonist_workload(cell).needs_files())
}

/// What every task of a trial of `cell` does, with which policy, in which directory.
fn task_plan(cell: &Cell, state: &CellState, dir: Option<TrialDirRef>) -> TaskPlan {
    let n = cell.tasks as usize;
    let a = cell.antagonists as usize;
    let measured = (0..n).map(|i| {
        TaskPolicy::for_task(
            cell.policy,
            cell.priorities,
            i,
            n,
            cell.nice,
            cell.rt_priority,
            cell.deadline,
        )
        .with_slice(cell.slice_ns)
    });
    let antagonists = (0..a).map(|i| {
        TaskPolicy::for_task(
            cell.antagonist_policy,
            PriorityMode::Same,
            i,
            a,
            None,
            None,
            cell.deadline,
        )
    });
    TaskPlan {
        dir,
        policies: measured.chain(antagonists).collect(),
        workload: cell.workload.clone(),
        units: state.units.unwrap_or(1),
        cpus: cell.cpus.clone(),
        barrier: cell.start == StartMode::Barrier,
        run_units: state.run_units,
        measured: n,
        antagonist_workload: (a > 0).then(|| antagonist_workload(cell)),
        antagonist_chunk: state.antagonist_chunk,
        contended: Vec::new(),
    }
}

/// Stops the trace, reads it, and attaches per-task summaries and the timeline to the outcome.
fn attach_trace(
    t: &mut trace::TraceSession,
    o: &mut TrialOutcome,
) -> Result<(), trace::TraceError> {
    t.stop()?;
    let raw = t.read()?;
    let (mut events, _) = trace::parse_lenient(&raw.text);
    // The measured period ends when the finished tasks are told to exit; their exits (and the
    // host's reaping) after that are teardown, not the schedule under study.
    if o.t_stop_ns > 0 {
        events.retain(|e| e.ts_ns <= o.t_stop_ns);
    }
    let tids: Vec<i32> = o.tasks.iter().map(|r| r.tid).collect();
    for (r, tt) in o.tasks.iter_mut().zip(trace::per_task(&events, &tids)) {
        r.trace = Some(tt);
    }
    o.trace_slices = trace::timeline(&events, &tids)
        .into_iter()
        .filter_map(|s| tids.iter().position(|&t| t == s.tid).map(|i| (i as u32, s)))
        .collect();
    o.trace_lost_events = Some(raw.lost_events + raw.overruns);
    Ok(())
}

/// Removes trial directories left under `io_dir` by schedlab processes that no longer exist
/// (a run killed with SIGKILL cannot clean up after itself): entries named `schedlab-PID-…`
/// whose process is gone, that are directories (not links) owned by this process's effective
/// uid. Another user's entries are never touched, and nothing is followed through a link.
pub fn remove_stale_trial_dirs(io_dir: &Path) {
    let (Ok(entries), Ok(parent)) = (
        std::fs::read_dir(io_dir),
        schedlab_sys::dir::open_dir(io_dir),
    ) else {
        return;
    };
    let me = schedlab_sys::euid();
    for e in entries.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let Some(pid) = name
            .strip_prefix("schedlab-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if schedlab_sys::process_exists(pid) {
            continue;
        }
        // lstat, then the opened directory itself: ours, and the same one.
        let Ok(Some(m)) = schedlab_sys::dir::meta_at(parent.as_fd(), &name) else {
            continue;
        };
        if !m.is_dir() || m.uid != me {
            continue;
        }
        let Ok(dir) = schedlab_sys::dir::open_dir_at(parent.as_fd(), &name) else {
            continue;
        };
        if schedlab_sys::dir::meta(dir.as_fd()).is_ok_and(|d| d.id == m.id && d.uid == me) {
            let _ = schedlab_sys::dir::remove_dir_at(parent.as_fd(), &name, dir.as_fd());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A pid that no process has: a child that was started and reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn stale_trial_dirs_are_removed_only_when_dead_ours_and_real_directories() {
        let t = tempfile::tempdir().unwrap();
        let io = t.path().join("io");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(&io).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), b"keep").unwrap();
        let dead = dead_pid();
        // A stale directory of ours, with a link out of it: removed, the link not followed.
        let stale = io.join(format!("schedlab-{dead}-r1-t0.abcdefghij"));
        std::fs::create_dir_all(stale.join("sub")).unwrap();
        std::fs::write(stale.join("input"), b"x").unwrap();
        symlink(&outside, stale.join("sub/link")).unwrap();
        // A link with a stale name pointing at a directory: left alone, not followed.
        let link = io.join(format!("schedlab-{dead}-calibration"));
        symlink(&outside, &link).unwrap();
        // A live process's directory and an unrelated one: left alone.
        let live = io.join(format!("schedlab-{}-r1-t1.x", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let other = io.join("schedlab-notapid");
        std::fs::create_dir(&other).unwrap();
        // Another user's directory with a stale name (needs root to make): left alone.
        let theirs = io.join(format!("schedlab-{dead}-r2-t0.zzz"));
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("file"), b"theirs").unwrap();
        let chowned = schedlab_sys::is_root()
            && std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).is_ok();
        remove_stale_trial_dirs(&io);
        assert!(!stale.exists(), "the stale directory is removed");
        assert!(outside.join("keep").exists(), "nothing followed out of it");
        assert!(link.is_symlink(), "a link is not a trial directory");
        assert!(live.exists() && other.exists());
        assert_eq!(theirs.exists(), chowned, "another user's directory is kept");
    }
}
