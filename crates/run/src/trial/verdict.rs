//! A trial's verdict: each slot turned into a task record, and the trial's status with its reason.

use super::super::task::{self, Header, Slot, TaskPlan};
use schedlab_core::policy::{self, PolicyKind};
use schedlab_core::records::{TaskRecord, TrialStatus};
use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering::SeqCst;

fn since_base(total: &std::sync::atomic::AtomicU64, base: &std::sync::atomic::AtomicU64) -> u64 {
    total.load(SeqCst).saturating_sub(base.load(SeqCst))
}

/// The task's exact CPU time over its work, ns (see `TaskRecord::cpu_ns`): its own thread CPU
/// clock at the end less the same clock at the end of setup; for a program, which cannot read
/// it, the rusage of the reaped process (final at exit) less that base.
fn exact_cpu_ns(s: &Slot, done: bool) -> Option<u64> {
    let base = s.base_cpu_ns.load(SeqCst);
    match s.cpu_ns.load(SeqCst) {
        0 if done => {
            let total = s.utime_ns.load(SeqCst) + s.stime_ns.load(SeqCst);
            (total > 0).then(|| total.saturating_sub(base))
        }
        0 => None,
        end => Some(end.saturating_sub(base)),
    }
}

pub(crate) fn record(i: usize, s: &Slot, h: &Header) -> TaskRecord {
    let t_release = match s.t_release_ns.load(SeqCst) {
        0 => h.t_release_ns.load(SeqCst),
        t => t,
    };
    let t_start = s.t_start_ns.load(SeqCst);
    // Staggered: the task's first timestamp, before its setup (0 with a barrier).
    let t_first = match s.t_first_ns.load(SeqCst) {
        0 => t_start,
        t => t,
    };
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
        response_ns: diff(t_first, t_release),
        turnaround_ns: if done { diff(t_end, t_release) } else { None },
        run_span_ns: if done { diff(t_end, t_start) } else { None },
        utime_ns: since_base(&s.utime_ns, &s.base[0]),
        stime_ns: since_base(&s.stime_ns, &s.base[1]),
        cpu_ns: exact_cpu_ns(s, done),
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
        figures: None,
        trace: None,
        slice_getattr_ns: Some(s.slice_getattr_ns.load(SeqCst)).filter(|&v| v > 0),
        slice_proc_ns: Some(s.slice_proc_ns.load(SeqCst)).filter(|&v| v > 0),
        group: None,
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
            schedlab_sys::signal_description(sig)
        )
    } else {
        format!("ended with wait status {status:#x}")
    }
}

/// Decides the status of a trial whose tasks all reported back.
pub(super) fn judge(
    tasks: &mut [TaskRecord],
    slots: &[Slot],
    plan: &TaskPlan,
    dir: Option<BorrowedFd>,
    host: Option<schedlab_sys::Reaped>,
    window_hit: bool,
) -> (TrialStatus, Option<String>) {
    if let Some((status, reason)) = slot_failure(slots, plan) {
        return (status, Some(reason));
    }
    // Programs stopped by the window end with SIGKILL; that is how the window ends them.
    let stopped = |s: i32| window_hit && libc::WIFSIGNALED(s) && libc::WTERMSIG(s) == libc::SIGKILL;
    if let Some(t) = tasks
        .iter()
        .find(|t| t.exit_status != 0 && !stopped(t.exit_status))
    {
        return (TrialStatus::Failed, Some(exit_failure(t, plan, dir)));
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

/// The first task whose slot says it did not finish its work, in this order: a program that
/// could not start, attributes the kernel refused, work that could not be prepared.
fn slot_failure(slots: &[Slot], plan: &TaskPlan) -> Option<(TrialStatus, String)> {
    let first_in = |state: u32| {
        slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.state.load(SeqCst) == state)
    };
    if let Some((i, s)) = first_in(task::STATE_EXEC_FAILED) {
        let e = s.errno.load(SeqCst) as i32;
        let argv = plan
            .workload
            .commands
            .get(i)
            .map(|c| c.argv.join(" "))
            .unwrap_or_default();
        return Some((
            TrialStatus::Failed,
            format!(
                "task {i}: the command `{argv}` could not start ({}: {}); check the program name, PATH and cwd",
                schedlab_sys::errno_name(e),
                std::io::Error::from_raw_os_error(e)
            ),
        ));
    }
    if let Some((i, s)) = first_in(task::STATE_REFUSED) {
        let p = &plan.policies[i];
        let errno = s.errno.load(SeqCst) as i32;
        let reason = policy::refusal_reason(p.kind, p.nice, errno, plan.cpus.as_deref());
        return Some((TrialStatus::Skipped, format!("task {i}: {reason}")));
    }
    let (i, s) = slots
        .iter()
        .enumerate()
        .find(|(_, s)| s.state.load(SeqCst) != task::STATE_DONE)?;
    let e = s.errno.load(SeqCst) as i32;
    Some((
        TrialStatus::Failed,
        format!(
            "task {i} could not prepare its work ({}: {}); check --io-dir and its free space",
            schedlab_sys::errno_name(e),
            std::io::Error::from_raw_os_error(e)
        ),
    ))
}

/// Why task `t`, which ended with a failing wait status, failed: for a command, its program
/// and the last line it wrote to stderr (read from the trial directory `dir`).
fn exit_failure(t: &TaskRecord, plan: &TaskPlan, dir: Option<BorrowedFd>) -> String {
    let i = t.task_index as usize;
    let how = describe_wait_status(t.exit_status);
    match (plan.workload.commands.get(i), dir) {
        (Some(c), Some(dir)) => {
            let log = task::command_log(i, "stderr");
            let last = read_log(dir, &log).and_then(|s| {
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
    }
}

/// The text of log file `name` in the trial directory `dir` (no link followed); None if it
/// cannot be read.
fn read_log(dir: BorrowedFd, name: &str) -> Option<String> {
    use std::io::Read;
    let mut text = String::new();
    schedlab_sys::dir::open_file_at(dir, name, nix::fcntl::OFlag::empty())
        .ok()?
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}
