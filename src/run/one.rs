//! One trial as the main process sees it: its files and task plan, the sampler and trace around
//! it, and the request to the launcher that runs it.

use super::cells::{antagonist_workload, CellState};
use super::launcher::{Launcher, Request};
use super::sampler::Sampler;
use super::task::TaskPlan;
use super::trace;
use crate::plan::Cell;
use crate::policy::{PriorityMode, TaskPolicy};
use crate::records::{StartMode, TrialOutcome};
use crate::sys;
use crate::workload::TrialDir;
use anyhow::{Context, Result};
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
/// trace, has the launcher run it, then attaches samples and trace to the outcome.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    launcher: &mut Launcher,
    cell: &Cell,
    state: &CellState,
    timeout_ns: u64,
    io_dir: &Path,
    tag: &str,
    interrupted: &AtomicBool,
    observe: Observe,
) -> Result<TrialOutcome> {
    let needs_files = cell.workload.needs_trial_dir()
        || (cell.antagonists > 0 && antagonist_workload(cell).needs_files());
    let dir = if needs_files {
        Some(
            TrialDir::create(io_dir, tag, cell.workload.io_input_bytes).with_context(|| {
                format!(
                    "cannot create the trial's I/O files under {}; choose a writable --io-dir",
                    io_dir.display()
                )
            })?,
        )
    } else {
        None
    };
    let guard = cell.policy.needs_guard();
    let req = Request {
        kind: cell.kind,
        plan: task_plan(cell, state, dir.as_ref()),
        timeout_ns,
        guard,
    };
    let mut tracer = if observe.trace {
        Some(trace::TraceSession::start(trace::DEFAULT_BUFFER_KB).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    // The sampler runs at the launcher's guard priority when RT workers could starve it.
    let sampler = observe.sample_interval.map(|i| Sampler::start(i, guard));
    let outcome = launcher.run_trial(&req, interrupted);
    let samples = sampler.map(|s| s.finish()).unwrap_or_default();
    let mut outcome = outcome.context("the launcher process failed")?;
    outcome.samples = samples;
    if let Some(t) = tracer.as_mut() {
        attach_trace(t, &mut outcome).map_err(anyhow::Error::msg)?;
    }
    drop(tracer);
    drop(dir);
    Ok(outcome)
}

/// What every task of a trial of `cell` does, with which policy, on which files.
fn task_plan(cell: &Cell, state: &CellState, dir: Option<&TrialDir>) -> TaskPlan {
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
    let output = |i: usize| dir.map_or_else(|| "/dev/null".into(), |d| d.output(i));
    TaskPlan {
        dir: dir.map(|d| d.path().to_path_buf()),
        policies: measured.chain(antagonists).collect(),
        workload: cell.workload.clone(),
        units: state.units.unwrap_or(1),
        cpus: cell.cpus.clone(),
        barrier: cell.start == StartMode::Barrier,
        input: dir.map_or_else(|| "/dev/null".into(), |d| d.input()),
        outputs: (0..n + a).map(output).collect(),
        run_units: state.run_units,
        measured: n,
        antagonist_workload: (a > 0).then(|| antagonist_workload(cell)),
        antagonist_chunk: state.antagonist_chunk,
    }
}

/// Stops the trace, reads it, and attaches per-task summaries and the timeline to the outcome.
fn attach_trace(t: &mut trace::TraceSession, o: &mut TrialOutcome) -> Result<(), String> {
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
/// (a run killed with SIGKILL cannot clean up after itself).
pub fn remove_stale_trial_dirs(io_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(io_dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("schedlab-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if !sys::process_exists(pid) && e.path().is_dir() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
