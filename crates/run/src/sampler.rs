//! System-wide sampling during a trial: vmstat's columns, PSI and load, every interval, in a thread.
//!
//! The columns are computed from /proc/stat and /proc/vmstat as procps `vmstat` computes them:
//! us = user + nice, sy = system + irq + softirq, id = idle, wa = iowait, st = steal, each as a
//! share of all ticks in the interval; in and cs as rates per second; r and b as read.
//!
//! The counters come from [`SystemReader`] (shared with the idle check before each trial),
//! which keeps the files open and parses them without allocating: one sample costs a few tens
//! of microseconds of CPU (bench/sampler.rs).

use schedlab_procfs::{CpuTicks, SystemCounters, SystemReader};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use schedlab_core::records::Sample;

/// Samples reserved when the sampler starts: 1024, 102 s at the default 100 ms.
pub const RESERVED_SAMPLES: usize = 1024;

/// The sample for the interval between two readings, `origin_ns` being the CLOCK_MONOTONIC
/// time the sampler started (`None` if /proc/stat was unreadable).
pub fn compute(prev: &SystemCounters, cur: &SystemCounters, origin_ns: u64) -> Option<Sample> {
    let (a, b) = (prev.stat.as_ref()?, cur.stat.as_ref()?);
    let dt_ns = cur.t_ns.saturating_sub(prev.t_ns).max(1);
    let secs = dt_ns as f64 / 1e9;
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let (ta, tb): (&CpuTicks, &CpuTicks) = (&a.cpu, &b.cpu);
    let us = d(ta.user + ta.nice, tb.user + tb.nice);
    let sy = d(
        ta.system + ta.irq + ta.softirq,
        tb.system + tb.irq + tb.softirq,
    );
    let id = d(ta.idle, tb.idle);
    let wa = d(ta.iowait, tb.iowait);
    let st = d(ta.steal, tb.steal);
    let total = (us + sy + id + wa + st).max(1.0);
    let rate = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => d(x, y) / secs,
        _ => 0.0,
    };
    let mut psi_pct = [None; 6];
    for (i, (p, c)) in prev.psi.iter().zip(&cur.psi).enumerate() {
        if let (Some(p), Some(c)) = (p, c) {
            let interval_us = dt_ns as f64 / 1e3;
            psi_pct[2 * i] = Some(d(p.some.total_us, c.some.total_us) / interval_us * 100.0);
            if let (Some(pf), Some(cf)) = (&p.full, &c.full) {
                psi_pct[2 * i + 1] = Some(d(pf.total_us, cf.total_us) / interval_us * 100.0);
            }
        }
    }
    let (bi, bo) = match (prev.pgpg_kib, cur.pgpg_kib) {
        (Some((i0, o0)), Some((i1, o1))) => (d(i0, i1) / secs, d(o0, o1) / secs),
        _ => (0.0, 0.0),
    };
    Some(Sample {
        t_ns: cur.t_ns.saturating_sub(origin_ns),
        interval_ns: dt_ns,
        r: b.procs_running.unwrap_or(0),
        b: b.procs_blocked.unwrap_or(0),
        in_per_s: rate(a.intr_total, b.intr_total),
        cs_per_s: rate(a.ctxt, b.ctxt),
        us_pct: 100.0 * us / total,
        sy_pct: 100.0 * sy / total,
        id_pct: 100.0 * id / total,
        wa_pct: 100.0 * wa / total,
        st_pct: 100.0 * st / total,
        bi_kib_s: bi,
        bo_kib_s: bo,
        psi_pct,
        load1: cur.loadavg.map(|l| l.load1),
    })
}

/// A running sampler thread.
pub struct Sampler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<Vec<Sample>>,
}

impl Sampler {
    /// Starts sampling every `interval`; with `rt` the thread runs at the launcher's guard
    /// priority (FIFO 99) so that RT workers cannot starve it.
    pub fn start(interval: Duration, rt: bool) -> Sampler {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            if rt {
                let _ = schedlab_sys::sched_setattr(&schedlab_sys::SchedAttr {
                    policy: schedlab_core::policy::PolicyKind::Fifo.number(),
                    priority: schedlab_core::policy::RT_LAUNCHER,
                    flags: schedlab_sys::FLAG_RESET_ON_FORK,
                    ..Default::default()
                });
            }
            let mut out = Vec::with_capacity(RESERVED_SAMPLES);
            let mut reader = SystemReader::open();
            let mut prev = reader.read();
            let origin = prev.t_ns;
            let (lock, cv) = &*flag;
            let mut stopped = lock.lock().expect("sampler lock");
            loop {
                // `finish` may have come before this thread first took the lock: then there
                // is no wake-up left to wait for.
                let mut timed_out = false;
                if !*stopped {
                    let (guard, t) = cv.wait_timeout(stopped, interval).expect("sampler lock");
                    stopped = guard;
                    timed_out = t.timed_out();
                }
                if *stopped {
                    // The last, partial interval, so that even a short trial has a sample.
                    let cur = reader.read();
                    if cur.t_ns - prev.t_ns >= 1_000_000 {
                        out.extend(compute(&prev, &cur, origin));
                    }
                    break;
                }
                if timed_out {
                    let cur = reader.read();
                    if let Some(s) = compute(&prev, &cur, origin) {
                        out.push(s);
                    }
                    prev = cur;
                }
            }
            out
        });
        Sampler { stop, handle }
    }

    /// Stops the thread and returns the samples taken.
    pub fn finish(self) -> Vec<Sample> {
        let (lock, cv) = &*self.stop;
        *lock.lock().expect("sampler lock") = true;
        cv.notify_all();
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_procfs::{Pressure, ProcStat, PsiLine};

    fn stat(
        user: u64,
        system: u64,
        idle: u64,
        iowait: u64,
        steal: u64,
        intr: u64,
        ctxt: u64,
    ) -> ProcStat {
        ProcStat {
            cpu: CpuTicks {
                user,
                system,
                idle,
                iowait,
                steal,
                ..Default::default()
            },
            intr_total: Some(intr),
            ctxt: Some(ctxt),
            procs_running: Some(3),
            procs_blocked: Some(1),
        }
    }

    #[test]
    fn columns_are_shares_of_the_ticks_and_rates_per_second() {
        let a = SystemCounters {
            t_ns: 1_000_000_000,
            stat: Some(stat(100, 50, 1000, 10, 0, 5000, 9000)),
            pgpg_kib: Some((0, 0)),
            ..Default::default()
        };
        let b = SystemCounters {
            t_ns: 1_500_000_000,
            stat: Some(stat(130, 60, 1050, 15, 5, 5500, 10000)),
            pgpg_kib: Some((100, 400)),
            ..Default::default()
        };
        let s = compute(&a, &b, 1_000_000_000).unwrap();
        // Deltas: us 30, sy 10, id 50, wa 5, st 5 -> 100 ticks.
        assert_eq!(
            (s.us_pct, s.sy_pct, s.id_pct, s.wa_pct, s.st_pct),
            (30.0, 10.0, 50.0, 5.0, 5.0)
        );
        assert_eq!(s.in_per_s, 1000.0);
        assert_eq!(s.cs_per_s, 2000.0);
        assert_eq!((s.bi_kib_s, s.bo_kib_s), (200.0, 800.0));
        assert_eq!((s.r, s.b, s.t_ns), (3, 1, 500_000_000));
    }

    #[test]
    fn psi_stall_is_a_share_of_the_interval() {
        let psi = |some: u64, full: u64| Pressure {
            some: PsiLine {
                total_us: some,
                ..Default::default()
            },
            full: Some(PsiLine {
                total_us: full,
                ..Default::default()
            }),
        };
        let a = SystemCounters {
            t_ns: 0,
            stat: Some(stat(0, 0, 0, 0, 0, 0, 0)),
            psi: [Some(psi(0, 0)), None, None],
            ..Default::default()
        };
        let b = SystemCounters {
            t_ns: 100_000_000,
            stat: Some(stat(1, 0, 1, 0, 0, 0, 0)),
            psi: [Some(psi(25_000, 5_000)), None, None],
            ..Default::default()
        };
        let s = compute(&a, &b, 0).unwrap();
        assert_eq!(s.psi_pct[0], Some(25.0));
        assert_eq!(s.psi_pct[1], Some(5.0));
        assert_eq!(s.psi_pct[2], None);
    }

    /// Full samples (all but the last, partial one) of a sampler at `interval` run for
    /// `run`; retried (at most 5 times) until it took at least 3, so that a machine too busy
    /// to wake the thread 3 times in `run` cannot fail the checks below for want of samples.
    fn full_samples(interval: Duration, run: Duration) -> Vec<Sample> {
        let mut got = Vec::new();
        for _ in 0..5 {
            let s = Sampler::start(interval, false);
            std::thread::sleep(run);
            let mut samples = s.finish();
            // The samples tile the run exactly: each begins where the one before ended, the
            // first at the sampler's origin.
            assert_eq!(
                samples.first().map(|s| s.t_ns),
                samples.first().map(|s| s.interval_ns)
            );
            for pair in samples.windows(2) {
                assert_eq!(pair[1].t_ns - pair[0].t_ns, pair[1].interval_ns, "{pair:?}");
            }
            samples.pop();
            if samples.len() >= 3 {
                return samples;
            }
            got = samples;
        }
        panic!("fewer than 3 samples in 5 runs of {run:?}: {got:?}");
    }

    #[test]
    fn every_sample_spans_at_least_the_interval_and_typically_no_more() {
        let interval = Duration::from_millis(50);
        let samples = full_samples(interval, Duration::from_millis(400));
        // Exact: a sample is taken when the wait for `interval` timed out, and a timed-out
        // wait on CLOCK_MONOTONIC (a futex with an absolute deadline) never ends before its
        // deadline; the sample's stamps are CLOCK_MONOTONIC readings taken before the wait
        // and after it.
        for s in &samples {
            assert!(
                s.interval_ns >= interval.as_nanos() as u64,
                "a sample shorter than the interval: {s:?}"
            );
        }
        // What a sample adds to the interval: the timer's slack (50 µs for a normal thread),
        // the reading of the /proc files (tens of µs) and the wake-up latency of a
        // SCHED_OTHER thread: about 4 ms at a load of 10 on this 2-CPU machine, more for a
        // few samples on a busier one, but not for half of them. So the median stays within
        // half an interval (25 ms); a sampler that waited twice per sample would be an
        // interval off.
        let mut spans: Vec<u64> = samples.iter().map(|s| s.interval_ns).collect();
        spans.sort_unstable();
        let median = spans[spans.len() / 2];
        assert!(
            median < interval.as_nanos() as u64 * 3 / 2,
            "median span {median} ns for an interval of {interval:?}: {spans:?}"
        );
    }

    #[test]
    fn finish_ends_the_wait_and_takes_the_last_partial_sample() {
        // An interval far longer than the test: the one sample must be the partial one that
        // `finish` takes when it wakes the thread, shorter than the interval by the samples'
        // own stamps. A sampler that slept through `finish` would return a sample of 10 s.
        let interval = Duration::from_secs(10);
        let s = Sampler::start(interval, false);
        std::thread::sleep(Duration::from_millis(100));
        let samples = s.finish();
        assert_eq!(samples.len(), 1, "{samples:?}");
        let last = &samples[0];
        assert!(
            last.interval_ns < interval.as_nanos() as u64,
            "the last sample waited for the interval: {last:?}"
        );
        assert!(last.interval_ns >= 1_000_000, "{last:?}");
        assert_eq!(last.t_ns, last.interval_ns);
    }
}
