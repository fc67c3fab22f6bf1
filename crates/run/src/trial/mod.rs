//! One trial: fork a host process (its own process group) that creates the tasks, release them,
//! watch the deadline and interruptions, kill the whole group when needed, collect every slot.

pub mod groups;
mod host;
mod links;
mod reap;
mod recorded;
mod verdict;

use super::task::{self, Header, Slot, TaskPlan};
use host::host_main;
use reap::reap_group;
use schedlab_core::records::TaskKind;
use schedlab_core::records::{TaskRecord, TrialOutcome, TrialStatus};
use schedlab_core::workload::request::{CpuLock, RequestWords};
use schedlab_core::workload::WorkloadKind;
use schedlab_sys::SharedSlice;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::time::Duration;
use verdict::judge;
pub(crate) use verdict::record;

/// The shared memory of one trial, made by the launcher before the host exists, so that the
/// host, its task processes and threads all see it.
pub(super) struct TrialMemory<'a> {
    /// Trial-wide words.
    pub hdr: &'a Header,
    /// One slot per task.
    pub slots: &'a [Slot],
    /// The tasks' histograms ([`recorded::hist_chunk`]).
    pub hists: &'a [AtomicU8],
    /// Request workload: one set of words per measured task.
    pub words: &'a [RequestWords],
    /// Request workload: one spin lock per CPU.
    pub cpu_locks: &'a [CpuLock],
}

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

/// The shared memory of one trial, owned by the launcher (see [`TrialMemory`]).
struct SharedMemory {
    hdr: SharedSlice<Header>,
    slots: SharedSlice<Slot>,
    hists: SharedSlice<AtomicU8>,
    words: SharedSlice<RequestWords>,
    cpu_locks: SharedSlice<CpuLock>,
}

impl SharedMemory {
    /// Maps the trial's shared memory, its header counting the tasks of `plan`.
    fn new(plan: &TaskPlan) -> std::io::Result<SharedMemory> {
        let n = plan.policies.len();
        let request = plan.workload.kind == WorkloadKind::Request;
        let memory = SharedMemory {
            hdr: SharedSlice::new(1)?,
            slots: SharedSlice::new(n)?,
            hists: SharedSlice::new(recorded::hist_buffer_len(plan, n))?,
            words: SharedSlice::new(if request { plan.measured } else { 0 })?,
            cpu_locks: SharedSlice::new(match request {
                true => schedlab_sys::CPU_SET_CAPACITY,
                false => 0,
            })?,
        };
        let h = memory.header();
        h.remaining.store(plan.measured as u32, SeqCst);
        h.tasks.store(n as u32, SeqCst);
        Ok(memory)
    }

    fn header(&self) -> &Header {
        &self.hdr.as_slice()[0]
    }

    fn view(&self) -> TrialMemory<'_> {
        TrialMemory {
            hdr: self.header(),
            slots: self.slots.as_slice(),
            hists: self.hists.as_slice(),
            words: self.words.as_slice(),
            cpu_locks: self.cpu_locks.as_slice(),
        }
    }
}

/// How the wait for the tasks ended.
struct Waited {
    status: TrialStatus,
    reason: Option<String>,
    /// A command workload's window closed before its programs ended (not a failure).
    window_hit: bool,
    /// When that window closes, CLOCK_MONOTONIC ns.
    window_end: Option<u64>,
}

/// Runs one trial and returns its outcome. Leaves no process behind.
pub fn run_trial(setup: &TrialSetup) -> std::io::Result<TrialOutcome> {
    let shared = SharedMemory::new(setup.plan)?;
    let h = shared.header();
    let cpu0 = schedlab_sys::thread_cpu_ns();
    let t0 = schedlab_sys::now_ns();
    let launcher = schedlab_sys::getpid();
    // Refused unless this process is single-threaded (the launcher always is).
    let launcher_threads = schedlab_sys::thread_count().unwrap_or(0) as u32;
    let mut watch = groups::Watch::new(setup.groups);
    if let Some(w) = watch.as_mut().filter(|_| !setup.plan.barrier) {
        w.start();
    }
    let host = schedlab_sys::fork()?;
    if host == 0 {
        host_main(setup, &shared.view(), launcher);
    }
    // Both sides set the group, so it exists before either goes on.
    let _ = schedlab_sys::setpgid(host, host);
    let waited = wait_for_tasks(setup, h, host, t0, watch.as_mut());
    // Antagonists run until every measured task is done; finished tasks wait for this too
    // (see `task::linger`), so their exits come after the measured period.
    let t_stop_ns = schedlab_sys::now_ns();
    let group_records = watch.map(|w| w.finish(h)).unwrap_or_default();
    h.stop.store(1, SeqCst);
    schedlab_sys::futex_wake(&h.stop, i32::MAX);
    let slots = shared.slots.as_slice();
    // Programs still running when their window closed are stopped at once, not given the
    // host's grace.
    let orderly = waited.status == TrialStatus::Ok && !waited.window_hit;
    let (host_usage, descendants_cpu_ns) = end_host(host, orderly, slots)?;
    if let (true, Some(end)) = (waited.window_hit, waited.window_end) {
        stopped_by_window(slots, end);
    }
    let harness_cpu_ns = schedlab_sys::thread_cpu_ns() - cpu0;
    let mut tasks: Vec<TaskRecord> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = record(i, s, h);
            r.antagonist = setup.plan.is_antagonist(i);
            recorded::attach(&mut r, i, s, shared.hists.as_slice(), setup.plan);
            r
        })
        .collect();
    let Waited {
        mut status,
        mut reason,
        window_hit,
        ..
    } = waited;
    if status == TrialStatus::Ok {
        (status, reason) = groups::placement_failure(slots).unwrap_or_else(|| {
            let host = if window_hit { None } else { host_usage };
            judge(&mut tasks, slots, setup.plan, setup.dir, host, window_hit)
        });
    }
    Ok(TrialOutcome {
        status,
        reason,
        makespan_ns: (status == TrialStatus::Ok).then(|| makespan_ns(&tasks)),
        harness_cpu_ns: harness_cpu_ns + h.host_cpu_ns.load(SeqCst),
        tasks,
        pgid: host,
        samples: Vec::new(),
        trace_slices: Vec::new(),
        trace_lost_events: None,
        launcher_threads,
        host_threads: h.host_threads.load(SeqCst),
        t_stop_ns,
        figures: None,
        groups: group_records,
        descendants_cpu_ns,
    })
}

/// Marks the programs still running when their window closed (at `end`, CLOCK_MONOTONIC ns)
/// as ended by it.
fn stopped_by_window(slots: &[Slot], end: u64) {
    for s in slots {
        let st = s.state.load(SeqCst);
        if (st == task::STATE_NEW || st == task::STATE_READY) && s.pid.load(SeqCst) > 0 {
            s.t_end_ns.store(end, SeqCst);
            s.state.store(task::STATE_DONE, SeqCst);
        }
    }
}

/// The span from the first measured task's release to the last one's end, ns.
fn makespan_ns(tasks: &[TaskRecord]) -> u64 {
    let measured = || tasks.iter().filter(|t| !t.antagonist);
    let first = measured().map(|t| t.t_release_ns).min().unwrap_or(0);
    let last = measured().map(|t| t.t_end_ns).max().unwrap_or(0);
    last.saturating_sub(first)
}

/// Waits for every task at the barrier (then releases them) and for every measured task to
/// finish, or a command workload's window to close, within the deadline (`t0` + the timeout).
fn wait_for_tasks(
    setup: &TrialSetup,
    h: &Header,
    host: i32,
    t0: u64,
    watch: Option<&mut groups::Watch>,
) -> Waited {
    let n = setup.plan.policies.len();
    let deadline = t0.saturating_add(setup.timeout_ns);
    let mut status = TrialStatus::Ok;
    let mut reason = None;
    if setup.plan.barrier {
        let ready = |h: &Header| h.ready.load(SeqCst) as usize >= n;
        match wait_word(h, ready, deadline, setup, host) {
            Wait::Done => {
                if let Some(w) = watch {
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
    Waited {
        status,
        reason,
        window_hit,
        window_end,
    }
}

/// Gives the host a moment to reap its tasks and exit (if the trial ended in order: `orderly`),
/// then kills its whole group and reaps what is left: the host's usage, if it was reaped, and
/// the CPU time of the processes reaped that were not tasks, ns (see [`reap_group`]).
fn end_host(
    host: i32,
    orderly: bool,
    slots: &[Slot],
) -> std::io::Result<(Option<schedlab_sys::Reaped>, u64)> {
    let mut host_usage = None;
    let grace = schedlab_sys::now_ns() + 2_000_000_000;
    while orderly && schedlab_sys::now_ns() < grace {
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
    let descendants_cpu_ns = reap_group(host, slots);
    Ok((host_usage, descendants_cpu_ns))
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
