//! Clocks: CLOCK_MONOTONIC, the calling thread's and process's CPU time in nanoseconds, absolute sleeps.

use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

/// CLOCK_MONOTONIC now, in nanoseconds.
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(ClockId::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(ClockId::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by every thread of the calling process, in nanoseconds.
pub fn process_cpu_ns() -> u64 {
    clock_ns(ClockId::CLOCK_PROCESS_CPUTIME_ID)
}

/// The clock in nanoseconds; 0 if it cannot be read (these clocks always exist on Linux).
fn clock_ns(clock: ClockId) -> u64 {
    clock_gettime(clock).map_or(0, |ts| {
        ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
    })
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `t_ns` (nanoseconds), resuming after
/// signals; returns at once if that time has passed.
pub fn sleep_until_ns(t_ns: u64) {
    let ts = TimeSpec::new(
        (t_ns / 1_000_000_000) as libc::time_t,
        (t_ns % 1_000_000_000) as libc::c_long,
    );
    while let Err(Errno::EINTR) = clock_nanosleep(
        ClockId::CLOCK_MONOTONIC,
        ClockNanosleepFlags::TIMER_ABSTIME,
        &ts,
    ) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        assert!(a > 0);
    }

    #[test]
    fn monotonic_clock_agrees_with_std_instant() {
        // std's Instant reads CLOCK_MONOTONIC too: an independent reading of the same clock,
        // bracketed by ours at both ends so that the bounds hold however the thread is preempted.
        let a0 = now_ns();
        let i = std::time::Instant::now();
        let a1 = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b0 = now_ns();
        let std_ns = i.elapsed().as_nanos() as u64;
        let b1 = now_ns();
        assert!(
            b0 - a1 <= std_ns && std_ns <= b1 - a0,
            "{a0} {a1} {b0} {b1} {std_ns}"
        );
        assert!(b0 - a1 >= 20_000_000);
    }

    #[test]
    fn sleep_until_wakes_at_the_absolute_time_not_before() {
        let target = now_ns() + 5_000_000;
        sleep_until_ns(target);
        assert!(now_ns() >= target);
        // A time in the past returns at once.
        let t = now_ns();
        sleep_until_ns(t - 1_000_000);
        assert!(now_ns() - t < 50_000_000);
    }

    #[test]
    fn thread_cpu_time_counts_busy_work_not_sleep() {
        let t0 = thread_cpu_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = thread_cpu_ns() - t0;
        assert!(slept < 10_000_000, "sleeping 30 ms used {slept} ns of CPU");
        // Spinning accumulates CPU time: 5 ms of it within 5 s of wall time, even on a busy machine.
        let (t1, start) = (thread_cpu_ns(), now_ns());
        while thread_cpu_ns() - t1 < 5_000_000 && now_ns() - start < 5_000_000_000 {
            std::hint::black_box(0u64);
        }
        assert!(thread_cpu_ns() - t1 >= 5_000_000);
    }
}
