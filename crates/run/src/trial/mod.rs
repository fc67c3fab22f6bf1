//! One trial: fork a host process (its own process group) that creates the tasks, release them,
//! watch the deadline and interruptions, kill the whole group when needed, collect every slot.

pub mod groups;
mod host;
mod reap;
mod verdict;

use super::task::{self, Header, Slot, TaskPlan};
use host::host_main;
use reap::reap_group;
use schedlab_core::records::TaskKind;
use schedlab_core::records::{TaskRecord, TrialOutcome, TrialStatus};
use schedlab_core::workload::periodic::{self, HIST_BYTES};
use schedlab_sys::SharedSlice;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use verdict::judge;
pub(crate) use verdict::record;

/// Task `i`'s share of the trial's histogram buffer (empty when the work is not periodic).
pub(super) fn hist_chunk(hists: &[AtomicU8], i: usize) -> &[AtomicU8] {
    hists
        .get(i * HIST_BYTES..(i + 1) * HIST_BYTES)
        .unwrap_or(&[])
}
use std::time::Duration;

/// Everything needed to run one trial.
pub struct TrialSetup<'a> {
    /// Task kind.
    pub kind: TaskKind,
    /// What each task does and with which policy.
    pub plan: &'a TaskPlan,
    /// Deadline of the whole trial, ns from its start.
    pub timeout_ns: u64,
    /// Whether the host should take the launcher's RT guard priority.
    pub guard: bool,
    /// Set by the SIGINT/SIGTERM handler.
    pub interrupted: &'a AtomicBool,
    /// The trial directory, held open by the launcher (tasks and programs inherit the fd).
    pub dir: Option<BorrowedFd<'a>>,
    /// The trial's task groups (CPU cgroups), if any: the host places the tasks, the launcher
    /// reads their figures.
    pub groups: Option<&'a groups::TrialGroups>,
}

/// Runs one trial and returns its outcome. Leaves no process behind.
pub fn run_trial(setup: &TrialSetup) -> std::io::Result<TrialOutcome> {
    let n = setup.plan.policies.len();
    let hdr: SharedSlice<Header> = SharedSlice::new(1)?;
    let slots: SharedSlice<Slot> = SharedSlice::new(n)?;
    let h = &hdr.as_slice()[0];
    h.remaining.store(setup.plan.measured as u32, SeqCst);
    h.tasks.store(n as u32, SeqCst);
    let periodic = setup.plan.workload.kind == schedlab_core::workload::WorkloadKind::Periodic;
    let hists: SharedSlice<AtomicU8> = SharedSlice::new(if periodic { n * HIST_BYTES } else { 0 })?;
    let cpu0 = schedlab_sys::thread_cpu_ns();
    let t0 = schedlab_sys::now_ns();
    let deadline = t0.saturating_add(setup.timeout_ns);
    let launcher = schedlab_sys::getpid();
    // Refused unless this process is single-threaded (the launcher always is).
    let launcher_threads = schedlab_sys::thread_count().unwrap_or(0) as u32;
    let mut watch = groups::Watch::new(setup.groups);
    if let Some(w) = watch.as_mut().filter(|_| !setup.plan.barrier) {
        w.start();
    }
    let host = schedlab_sys::fork()?;
    if host == 0 {
        host_main(setup, h, slots.as_slice(), hists.as_slice(), launcher);
    }
    // Both sides set the group, so it exists before either goes on.
    let _ = schedlab_sys::setpgid(host, host);
    let mut status = TrialStatus::Ok;
    let mut reason = None;
    if setup.plan.barrier {
        match wait_word(
            h,
            |h| h.ready.load(SeqCst) as usize >= n,
            deadline,
            setup,
            host,
        ) {
            Wait::Done => {
                if let Some(w) = watch.as_mut() {
                    w.start();
                }
                let t = schedlab_sys::now_ns();
                h.t_release_ns.store(t, SeqCst);
                h.release.store(1, SeqCst);
                schedlab_sys::futex_wake(&h.release, i32::MAX);
            }
            other => (status, reason) = other.into_status(setup.timeout_ns),
        }
    }
    // A command workload may run for a fixed window after release (study 004's 100 s).
    let window_ns = setup.plan.workload.window_ns;
    let window_end = if window_ns > 0 {
        let start = if setup.plan.barrier {
            h.t_release_ns.load(SeqCst)
        } else {
            t0
        };
        Some(start.saturating_add(window_ns))
    } else {
        None
    };
    let mut window_hit = false;
    if status == TrialStatus::Ok {
        let until = window_end.map_or(deadline, |w| w.min(deadline));
        let w = wait_word(h, |h| h.remaining.load(SeqCst) == 0, until, setup, host);
        window_hit = matches!(w, Wait::Deadline) && window_end.is_some_and(|e| e <= deadline);
        if !window_hit {
            (status, reason) = w.into_status(setup.timeout_ns);
        }
    }
    // Antagonists run until every measured task is done; finished tasks wait for this too
    // (see `task::linger`), so their exits come after the measured period.
    let t_stop_ns = schedlab_sys::now_ns();
    let group_records = watch.map(|w| w.finish(h)).unwrap_or_default();
    h.stop.store(1, SeqCst);
    schedlab_sys::futex_wake(&h.stop, i32::MAX);
    // Give the host a moment to reap its tasks and exit, then make sure nothing survives.
    let mut host_usage = None;
    let grace = schedlab_sys::now_ns() + 2_000_000_000;
    while status == TrialStatus::Ok && schedlab_sys::now_ns() < grace {
        if let Some(r) = schedlab_sys::wait4(host, true)? {
            host_usage = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    schedlab_sys::kill_group(host, libc::SIGKILL);
    if host_usage.is_none() {
        host_usage = schedlab_sys::wait4(host, false).ok().flatten();
    }
    reap_group(host, slots.as_slice());
    if let (true, Some(end)) = (window_hit, window_end) {
        // The programs still running when the window closed were stopped by it.
        for s in slots.as_slice() {
            let st = s.state.load(SeqCst);
            if (st == task::STATE_NEW || st == task::STATE_READY) && s.pid.load(SeqCst) > 0 {
                s.t_end_ns.store(end, SeqCst);
                s.state.store(task::STATE_DONE, SeqCst);
            }
        }
    }
    let harness_cpu_ns = schedlab_sys::thread_cpu_ns() - cpu0;
    let mut tasks: Vec<TaskRecord> = slots
        .as_slice()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = record(i, s, h);
            r.antagonist = setup.plan.is_antagonist(i);
            let len = s.hist_len.load(SeqCst) as usize;
            if periodic && len > 0 {
                let bytes: Vec<u8> = hist_chunk(hists.as_slice(), i)[..len]
                    .iter()
                    .map(|b| b.load(SeqCst))
                    .collect();
                r.latency = periodic::deserialize(&bytes)
                    .and_then(|hist| periodic::summarize(&hist))
                    .map(|s| (s, bytes));
            }
            r
        })
        .collect();
    if status == TrialStatus::Ok {
        (status, reason) = groups::placement_failure(slots.as_slice()).unwrap_or_else(|| {
            judge(
                &mut tasks,
                slots.as_slice(),
                setup.plan,
                setup.dir,
                if window_hit { None } else { host_usage },
                window_hit,
            )
        });
    }
    let makespan_ns = if status == TrialStatus::Ok {
        let measured = || tasks.iter().filter(|t| !t.antagonist);
        let first = measured().map(|t| t.t_release_ns).min().unwrap_or(0);
        let last = measured().map(|t| t.t_end_ns).max().unwrap_or(0);
        Some(last.saturating_sub(first))
    } else {
        None
    };
    Ok(TrialOutcome {
        status,
        reason,
        makespan_ns,
        harness_cpu_ns: harness_cpu_ns + h.host_cpu_ns.load(SeqCst),
        tasks,
        pgid: host,
        samples: Vec::new(),
        trace_slices: Vec::new(),
        trace_lost_events: None,
        launcher_threads,
        host_threads: h.host_threads.load(SeqCst),
        t_stop_ns,
        groups: group_records,
    })
}

enum Wait {
    Done,
    Deadline,
    Interrupted,
    HostDied,
}

impl Wait {
    fn into_status(self, timeout_ns: u64) -> (TrialStatus, Option<String>) {
        match self {
            Wait::Done => (TrialStatus::Ok, None),
            Wait::Deadline => (
                TrialStatus::Timeout,
                Some(format!(
                    "the trial did not finish within its timeout of {:.1} s; every task was killed (raise --timeout or lower --work/--tasks)",
                    timeout_ns as f64 / 1e9
                )),
            ),
            Wait::Interrupted => (TrialStatus::Interrupted, Some("interrupted by a signal".into())),
            Wait::HostDied => (
                TrialStatus::Failed,
                Some("the trial's host process died before its tasks finished".into()),
            ),
        }
    }
}

/// Waits until `done(h)`, the deadline, an interruption, or the host's death.
fn wait_word(
    h: &Header,
    done: impl Fn(&Header) -> bool,
    deadline: u64,
    setup: &TrialSetup,
    host: i32,
) -> Wait {
    loop {
        if done(h) {
            return Wait::Done;
        }
        if setup.interrupted.load(SeqCst) {
            return Wait::Interrupted;
        }
        let now = schedlab_sys::now_ns();
        if now >= deadline {
            return Wait::Deadline;
        }
        if !pid_alive(host) {
            return if done(h) { Wait::Done } else { Wait::HostDied };
        }
        // Sleep on whichever word is changing; wake at least every 100 ms for signals and the deadline.
        let word = if h.release.load(SeqCst) == 0 && setup.plan.barrier {
            &h.ready
        } else {
            &h.remaining
        };
        let seen = word.load(SeqCst);
        let left = Duration::from_nanos((deadline - now).min(100_000_000));
        if !done(h) {
            schedlab_sys::futex_wait(word, seen, Some(left));
        }
    }
}

/// Whether `pid` is still a running (not zombie) child.
fn pid_alive(pid: i32) -> bool {
    schedlab_sys::is_running_child(pid)
}
