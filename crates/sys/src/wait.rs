//! Reaping children with their rusage (`wait4`, raw: nix has no wait4), waiting without reaping
//! (`waitid` with WNOWAIT, raw: nix's refuses children ended by real-time signals), and the
//! calling thread's rusage.

use nix::sys::resource::{getrusage, UsageWho};
use std::io;

/// The result of `wait4`.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    /// Pid of the reaped child.
    pub pid: i32,
    /// Raw wait status.
    pub status: i32,
    /// User CPU time of the child, in nanoseconds.
    pub utime_ns: u64,
    /// System CPU time of the child, in nanoseconds.
    pub stime_ns: u64,
    /// Voluntary context switches of the child.
    pub nvcsw: u64,
    /// Involuntary context switches of the child.
    pub nivcsw: u64,
}

/// `wait4(pid, flags)` (pid -1: any child), retried on EINTR; `Ok(None)` when WNOHANG finds
/// nothing to reap.
pub fn wait4(pid: i32, nohang: bool) -> io::Result<Option<Reaped>> {
    let mut status = 0;
    // SAFETY: rusage is plain old data (integers); all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: valid out-pointers for the duration of the call.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Ok(None);
        }
        return Ok(Some(Reaped {
            pid: rc,
            status,
            utime_ns: timeval_ns(ru.ru_utime.tv_sec as i64, ru.ru_utime.tv_usec as i64),
            stime_ns: timeval_ns(ru.ru_stime.tv_sec as i64, ru.ru_stime.tv_usec as i64),
            nvcsw: ru.ru_nvcsw as u64,
            nivcsw: ru.ru_nivcsw as u64,
        }));
    }
}

/// Waits for any child to exit and returns its pid, leaving it reapable (`waitid` with
/// WNOWAIT); None when there are no children left.
pub fn wait_exited_nowait() -> io::Result<Option<i32>> {
    waitid_nowait(libc::P_ALL, 0, 0)
}

/// The pid of an exited, not yet reaped child in process group `pgid`, left reapable; None
/// when none has exited yet or there are none.
pub fn exited_in_group_nowait(pgid: i32) -> io::Result<Option<i32>> {
    waitid_nowait(libc::P_PGID, pgid as libc::id_t, libc::WNOHANG)
}

/// Whether `pid` is a child of the caller that has not exited yet (not a zombie); false for
/// an exited child (left reapable), a reaped one, or a process that is not a child.
pub fn is_running_child(pid: i32) -> bool {
    matches!(
        waitid_raw(libc::P_PID, pid as libc::id_t, libc::WNOHANG),
        Ok(0)
    )
}

/// `waitid(idtype, id, WEXITED | WNOWAIT | flags)` once, retried on EINTR: the pid of an
/// exited child, 0 when WNOHANG found none.
fn waitid_raw(idtype: libc::idtype_t, id: libc::id_t, flags: i32) -> io::Result<i32> {
    loop {
        // SAFETY: siginfo_t is plain old data; all-zero is a valid value (and what WNOHANG
        // leaves when no child has exited).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer for the duration of the call.
        let rc =
            unsafe { libc::waitid(idtype, id, &mut info, libc::WEXITED | libc::WNOWAIT | flags) };
        if rc == 0 {
            // SAFETY: waitid filled `info` for a child event (or left it zeroed under WNOHANG),
            // so the union's si_pid is the field to read.
            return Ok(unsafe { info.si_pid() });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

fn waitid_nowait(idtype: libc::idtype_t, id: libc::id_t, flags: i32) -> io::Result<Option<i32>> {
    match waitid_raw(idtype, id, flags) {
        Ok(pid) => Ok((pid > 0).then_some(pid)),
        Err(e) if e.raw_os_error() == Some(libc::ECHILD) => Ok(None),
        Err(e) => Err(e),
    }
}

/// CPU and switch counters of the calling thread (`RUSAGE_THREAD`): (utime_ns, stime_ns,
/// nvcsw, nivcsw); zeros if they cannot be read.
pub fn rusage_thread() -> (u64, u64, u64, u64) {
    match getrusage(UsageWho::RUSAGE_THREAD) {
        Ok(ru) => (
            timeval_ns(ru.user_time().tv_sec(), ru.user_time().tv_usec()),
            timeval_ns(ru.system_time().tv_sec(), ru.system_time().tv_usec()),
            ru.voluntary_context_switches() as u64,
            ru.involuntary_context_switches() as u64,
        ),
        Err(_) => (0, 0, 0, 0),
    }
}

/// A `timeval` (seconds, microseconds) in nanoseconds.
fn timeval_ns(sec: i64, usec: i64) -> u64 {
    sec as u64 * 1_000_000_000 + usec as u64 * 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_rusage_counts_this_threads_cpu_time_only() {
        // Checked against the kernel's other account of the same thread: CLOCK_THREAD_CPUTIME_ID.
        let (u0, s0, _, _) = rusage_thread();
        let c0 = crate::thread_cpu_ns();
        let start = crate::now_ns();
        while crate::thread_cpu_ns() - c0 < 30_000_000 && crate::now_ns() - start < 5_000_000_000 {
            std::hint::black_box(0u64);
        }
        let (u1, s1, _, _) = rusage_thread();
        let clock = crate::thread_cpu_ns() - c0;
        let rusage = (u1 + s1) - (u0 + s0);
        // rusage is sampled at tick granularity: within 20 ms of the clock's 30 ms.
        assert!(rusage.abs_diff(clock) < 20_000_000, "{rusage} vs {clock}");
    }

    #[test]
    fn a_voluntary_switch_is_counted() {
        let (_, _, v0, _) = rusage_thread();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (_, _, v1, _) = rusage_thread();
        assert!(v1 > v0, "{v0} -> {v1}");
    }

    #[test]
    fn a_process_that_is_not_a_child_is_not_a_running_child() {
        // pid 1 exists but is not ours: waitid says ECHILD.
        assert!(!is_running_child(1));
    }

    #[test]
    fn timevals_convert_to_nanoseconds() {
        assert_eq!(timeval_ns(2, 500_000), 2_500_000_000);
    }
}
