//! One trial: fork a host process (its own process group) that creates the tasks, release them,
//! watch the deadline and interruptions, kill the whole group when needed, collect every slot.

use super::task::{self, Header, Slot, TaskPlan};
use crate::policy::{self, PolicyKind};
use crate::records::TaskKind;
use crate::records::{TaskRecord, TrialOutcome, TrialStatus};
use crate::sys::{self, SharedSlice};
use crate::workload::periodic::{self, HIST_BYTES};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};

/// Task `i`'s share of the trial's histogram buffer (empty when the work is not periodic).
fn hist_chunk(hists: &[AtomicU8], i: usize) -> &[AtomicU8] {
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
    /// Runs in the launcher right after the host is forked: the place to start helper threads
    /// (the sampler), as a process with other threads may not fork.
    pub after_fork: &'a dyn Fn(),
}

/// Runs one trial and returns its outcome. Leaves no process behind.
pub fn run_trial(setup: &TrialSetup) -> std::io::Result<TrialOutcome> {
    let n = setup.plan.policies.len();
    let hdr: SharedSlice<Header> = SharedSlice::new(1)?;
    let slots: SharedSlice<Slot> = SharedSlice::new(n)?;
    let h = &hdr.as_slice()[0];
    h.remaining.store(setup.plan.measured as u32, SeqCst);
    let periodic = setup.plan.workload.kind == crate::workload::WorkloadKind::Periodic;
    let hists: SharedSlice<AtomicU8> = SharedSlice::new(if periodic { n * HIST_BYTES } else { 0 })?;
    let cpu0 = sys::thread_cpu_ns();
    let t0 = sys::now_ns();
    let deadline = t0 + setup.timeout_ns;
    let launcher = sys::getpid();
    // Refused if the launcher has other threads; they start after the fork (`after_fork`).
    let host = sys::fork()?;
    if host == 0 {
        host_main(setup, h, slots.as_slice(), hists.as_slice(), launcher);
    }
    // Both sides set the group, so it exists before either goes on.
    let _ = sys::setpgid(host, host);
    (setup.after_fork)();
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
                let t = sys::now_ns();
                h.t_release_ns.store(t, SeqCst);
                h.release.store(1, SeqCst);
                sys::futex_wake(&h.release, i32::MAX);
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
        Some(start + window_ns)
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
    // Antagonists run until every measured task is done.
    h.stop.store(1, SeqCst);
    // Give the host a moment to reap its tasks and exit, then make sure nothing survives.
    let mut host_usage = None;
    let grace = sys::now_ns() + 2_000_000_000;
    while status == TrialStatus::Ok && sys::now_ns() < grace {
        if let Some(r) = sys::wait4(host, true)? {
            host_usage = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    sys::kill_group(host, libc::SIGKILL);
    if host_usage.is_none() {
        host_usage = sys::wait4(host, false).ok().flatten();
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
    let harness_cpu_ns = sys::thread_cpu_ns() - cpu0;
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
        (status, reason) = judge(
            &mut tasks,
            slots.as_slice(),
            setup.plan,
            if window_hit { None } else { host_usage },
            window_hit,
        );
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
        let now = sys::now_ns();
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
            sys::futex_wait(word, seen, Some(left));
        }
    }
}

/// Whether `pid` is still a running (not zombie) child.
fn pid_alive(pid: i32) -> bool {
    sys::is_running_child(pid)
}

/// Stores the run-queue wait, timeslices and migrations of an exited, unreaped task (its main
/// thread's: the counters of threads and child processes that ended before it are gone).
fn read_zombie_counters(pid: i32, slot: &Slot) {
    let read = |f: &str| std::fs::read_to_string(format!("/proc/{pid}/{f}")).ok();
    if let Some(s) = read("schedstat")
        .as_deref()
        .and_then(crate::procfs::parse_schedstat)
    {
        slot.run_delay_ns.store(s.run_delay_ns, SeqCst);
        slot.timeslices.store(s.timeslices, SeqCst);
    }
    if let Some(m) = read("sched").and_then(|t| crate::procfs::parse_sched(&t).nr_migrations) {
        slot.migrations.store(m, SeqCst);
    }
}

/// Stores a reaped task's rusage (with the children it waited for) and wait status in its slot.
fn store_reaped(slots: &[Slot], r: &sys::Reaped) {
    if let Some(slot) = slots.iter().find(|s| s.pid.load(SeqCst) == r.pid) {
        slot.utime_ns.store(r.utime_ns, SeqCst);
        slot.stime_ns.store(r.stime_ns, SeqCst);
        slot.nvcsw.store(r.nvcsw, SeqCst);
        slot.nivcsw.store(r.nivcsw, SeqCst);
        slot.exit_status.store(r.status, SeqCst);
    }
}

/// Reaps every process left in group `pgid` (the launcher is a child subreaper, so orphaned
/// tasks come back to it) until the group is empty. Tasks reaped here (their host died first,
/// e.g. programs stopped by a window) get their scheduler counters read from the zombie, then
/// their rusage and wait status recorded.
fn reap_group(pgid: i32, slots: &[Slot]) {
    let give_up = sys::now_ns() + 5_000_000_000;
    while sys::group_alive(pgid) && sys::now_ns() < give_up {
        sys::kill_group(pgid, libc::SIGKILL);
        match sys::exited_in_group_nowait(pgid) {
            Ok(Some(pid)) => {
                if let Some(slot) = slots.iter().find(|s| s.pid.load(SeqCst) == pid) {
                    read_zombie_counters(pid, slot);
                }
                if let Ok(Some(r)) = sys::wait4(pid, false) {
                    store_reaped(slots, &r);
                }
            }
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

fn since_base(total: &std::sync::atomic::AtomicU64, base: &std::sync::atomic::AtomicU64) -> u64 {
    total.load(SeqCst).saturating_sub(base.load(SeqCst))
}

fn record(i: usize, s: &Slot, h: &Header) -> TaskRecord {
    let t_release = match s.t_release_ns.load(SeqCst) {
        0 => h.t_release_ns.load(SeqCst),
        t => t,
    };
    let t_start = s.t_start_ns.load(SeqCst);
    let t_end = s.t_end_ns.load(SeqCst);
    let done = s.state.load(SeqCst) == task::STATE_DONE;
    let diff = |a: u64, b: u64| (a != 0 && b != 0).then(|| a as i64 - b as i64);
    TaskRecord {
        task_index: i as u32,
        pid: s.pid.load(SeqCst),
        tid: s.tid.load(SeqCst),
        t_release_ns: t_release,
        t_start_ns: t_start,
        t_end_ns: t_end,
        response_ns: diff(t_start, t_release),
        turnaround_ns: if done { diff(t_end, t_release) } else { None },
        run_span_ns: if done { diff(t_end, t_start) } else { None },
        utime_ns: since_base(&s.utime_ns, &s.base[0]),
        stime_ns: since_base(&s.stime_ns, &s.base[1]),
        nvcsw: since_base(&s.nvcsw, &s.base[2]),
        nivcsw: since_base(&s.nivcsw, &s.base[3]),
        run_delay_ns: since_base(&s.run_delay_ns, &s.base[4]),
        timeslices: since_base(&s.timeslices, &s.base[5]),
        migrations: since_base(&s.migrations, &s.base[6]),
        work_units: s.work_units.load(SeqCst),
        exit_status: s.exit_status.load(SeqCst),
        policy: if s.state.load(SeqCst) == task::STATE_REFUSED {
            None
        } else {
            PolicyKind::from_number(s.policy_read.load(SeqCst))
        },
        nice: s.nice_read.load(SeqCst),
        rt_priority: s.prio_read.load(SeqCst),
        antagonist: false,
        latency: None,
        trace: None,
    }
}

/// A wait status in words: "exited with status 3", "was killed by signal 9 (SIGKILL)".
fn describe_wait_status(status: i32) -> String {
    if libc::WIFEXITED(status) {
        format!("exited with status {}", libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        format!(
            "was killed by signal {sig} ({})",
            sys::signal_description(sig)
        )
    } else {
        format!("ended with wait status {status:#x}")
    }
}

/// Decides the status of a trial whose tasks all reported back.
fn judge(
    tasks: &mut [TaskRecord],
    slots: &[Slot],
    plan: &TaskPlan,
    host: Option<sys::Reaped>,
    window_hit: bool,
) -> (TrialStatus, Option<String>) {
    let policies = &plan.policies;
    if let Some((i, s)) = slots
        .iter()
        .enumerate()
        .find(|(_, s)| s.state.load(SeqCst) == task::STATE_EXEC_FAILED)
    {
        let e = s.errno.load(SeqCst) as i32;
        let argv = plan
            .workload
            .commands
            .get(i)
            .map(|c| c.argv.join(" "))
            .unwrap_or_default();
        return (
            TrialStatus::Failed,
            Some(format!(
                "task {i}: the command `{argv}` could not start ({}: {}); check the program name, PATH and cwd",
                sys::errno_name(e),
                std::io::Error::from_raw_os_error(e)
            )),
        );
    }
    if let Some((i, s)) = slots
        .iter()
        .enumerate()
        .find(|(_, s)| s.state.load(SeqCst) == task::STATE_REFUSED)
    {
        let p = &policies[i];
        let reason = policy::refusal_reason(p.kind, p.nice, s.errno.load(SeqCst) as i32);
        return (TrialStatus::Skipped, Some(format!("task {i}: {reason}")));
    }
    if let Some((i, s)) = slots
        .iter()
        .enumerate()
        .find(|(_, s)| s.state.load(SeqCst) != task::STATE_DONE)
    {
        let e = s.errno.load(SeqCst) as i32;
        return (
            TrialStatus::Failed,
            Some(format!(
                "task {i} could not prepare its work ({}: {}); check --io-dir and its free space",
                sys::errno_name(e),
                std::io::Error::from_raw_os_error(e)
            )),
        );
    }
    // Programs stopped by the window end with SIGKILL; that is how the window ends them.
    let stopped = |s: i32| window_hit && libc::WIFSIGNALED(s) && libc::WTERMSIG(s) == libc::SIGKILL;
    if let Some(t) = tasks
        .iter()
        .find(|t| t.exit_status != 0 && !stopped(t.exit_status))
    {
        let i = t.task_index as usize;
        let how = describe_wait_status(t.exit_status);
        let reason = match (plan.workload.commands.get(i), &plan.dir) {
            (Some(c), Some(dir)) => {
                let log = task::command_log(dir, i, "stderr");
                let last = std::fs::read_to_string(&log).ok().and_then(|s| {
                    s.lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(str::to_string)
                });
                format!(
                    "task {i}: the command `{}` {how}{}",
                    c.argv.join(" "),
                    last.map_or_else(String::new, |l| format!(
                        "; its last stderr line: {}",
                        l.trim()
                    ))
                )
            }
            _ => format!("task {i} {how}"),
        };
        return (TrialStatus::Failed, Some(reason));
    }
    if host.is_some_and(|h| h.status != 0) {
        return (
            TrialStatus::Failed,
            Some(format!(
                "the host process ended with wait status {:#x}",
                host.unwrap().status
            )),
        );
    }
    (TrialStatus::Ok, None)
}

/// Reaps the next task. For commands (exec'd programs that cannot record their own end), the
/// host records it: the end time, and the main thread's run-queue wait, timeslices and
/// migrations read from /proc while the program is a zombie; then it counts the task out.
fn reap_next(h: &Header, slots: &[Slot], commands: bool) -> std::io::Result<Option<sys::Reaped>> {
    if !commands {
        return sys::wait4(-1, false);
    }
    let Some(pid) = sys::wait_exited_nowait()? else {
        return Ok(None);
    };
    let t_end = sys::now_ns();
    if let Some(slot) = slots.iter().find(|s| s.pid.load(SeqCst) == pid) {
        read_zombie_counters(pid, slot);
        let state = slot.state.load(SeqCst);
        if state == task::STATE_NEW || state == task::STATE_READY {
            slot.t_end_ns.store(t_end, SeqCst);
            slot.work_units.store(1, SeqCst);
            slot.state.store(task::STATE_DONE, SeqCst);
            h.remaining.fetch_sub(1, SeqCst);
            sys::futex_wake(&h.remaining, 1);
        }
    }
    sys::wait4(pid, false)
}

/// The host process: its own process group; creates the tasks, reaps them, exits.
fn host_main(
    setup: &TrialSetup,
    h: &Header,
    slots: &[Slot],
    hists: &[AtomicU8],
    launcher: i32,
) -> ! {
    let _ = sys::setpgid(0, 0);
    sys::die_with_parent(launcher);
    // The launcher handles Ctrl-C and SIGTERM; the host dies with it or by SIGKILL.
    let _ = sys::restore_default_signal(sys::Signal::SIGINT);
    let _ = sys::restore_default_signal(sys::Signal::SIGTERM);
    let plan = setup.plan;
    if setup.guard {
        // Above every RT worker, so creation and reaping are never starved; children reset.
        let _ = sys::sched_setattr(&sys::SchedAttr {
            policy: PolicyKind::Fifo.number(),
            priority: policy::RT_LAUNCHER,
            flags: sys::FLAG_RESET_ON_FORK,
            ..Default::default()
        });
    }
    if !plan.barrier {
        // Staggered, as the studies did: the spawner runs at the cell's policy (at the level of
        // its highest task) and the tasks inherit it through fork/clone, so a task waits for its
        // first run under its own policy and that wait counts in its response. DEADLINE tasks
        // cannot be forked from, so the spawner keeps the guard for them.
        if let Some(top) = plan
            .policies
            .first()
            .filter(|p| p.kind != PolicyKind::Deadline)
        {
            let _ = top.apply();
        }
        // Tasks are born on their CPUs, as they inherit the spawner's affinity.
        if let Some(cpus) = &plan.cpus {
            let _ = sys::set_affinity(cpus);
        }
    }
    if plan.policies.iter().any(|p| p.kind.needs_guard()) {
        let us = setup.timeout_ns / 1000;
        let _ = sys::set_rlimit(sys::Resource::RLIMIT_RTTIME, us, us);
    }
    match setup.kind {
        TaskKind::Process => {
            let me = sys::getpid();
            let commands = plan.workload.kind == crate::workload::WorkloadKind::Command;
            for (i, slot) in slots.iter().enumerate() {
                if !plan.barrier && i > 0 && plan.workload.start_gap_ns > 0 {
                    std::thread::sleep(Duration::from_nanos(plan.workload.start_gap_ns));
                }
                // The host is single-threaded. Staggered: the release is stamped just before
                // the fork (after fork's thread check).
                match sys::fork_stamped((!plan.barrier).then_some(&slot.t_release_ns)) {
                    Ok(0) => {
                        sys::die_with_parent(me);
                        task::task_main(h, slot, hist_chunk(hists, i), plan, i);
                        sys::exit_now(0);
                    }
                    Ok(pid) => slot.pid.store(pid, SeqCst),
                    Err(_) => sys::exit_now(3),
                }
            }
            while let Ok(Some(r)) = reap_next(h, slots, commands) {
                store_reaped(slots, &r);
            }
        }
        TaskKind::Thread => {
            std::thread::scope(|s| {
                for (i, slot) in slots.iter().enumerate() {
                    if !plan.barrier {
                        slot.t_release_ns.store(sys::now_ns(), SeqCst);
                    }
                    if std::thread::Builder::new()
                        .stack_size(256 * 1024)
                        .spawn_scoped(s, move || {
                            task::task_main(h, slot, hist_chunk(hists, i), plan, i)
                        })
                        .is_err()
                    {
                        sys::exit_now(3);
                    }
                }
            });
        }
    }
    let (ut, st, _, _) = sys::rusage_thread();
    h.host_cpu_ns.store(ut + st, SeqCst);
    sys::exit_now(0)
}
