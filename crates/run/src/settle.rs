//! The settle window before each trial: system-wide snapshots around it tell whether the trial
//! started on an idle machine, and a warning says what was not idle.
//!
//! The counters come from [`SystemReader`], the same reader the sampler uses.

use schedlab_core::warning::{Over, Warning};
use serde::{Deserialize, Serialize};

use schedlab_procfs::{CpuTicks, Pressure, SystemCounters, SystemReader};

/// Above this share of all CPUs' time spent working during the window, in percent, the machine
/// is called busy.
pub const BUSY_WARN_PCT: f64 = 10.0;
/// Above this share of CPU time taken by the hypervisor, in percent, steal is called high.
pub const STEAL_WARN_PCT: f64 = 5.0;
/// Above this share of the window with some task waiting for a CPU (PSI `cpu some`), in
/// percent, CPU contention is called high.
pub const PSI_CPU_WARN_PCT: f64 = 5.0;

/// System-wide load counters at one instant; a pair of them measures a window.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct SystemSnapshot {
    /// CLOCK_MONOTONIC when taken, in nanoseconds.
    pub taken_ns: u64,
    /// 1-minute load average (runnable + uninterruptible tasks).
    pub load1: Option<f64>,
    /// 5-minute load average.
    pub load5: Option<f64>,
    /// 15-minute load average.
    pub load15: Option<f64>,
    /// Tasks runnable at that instant (`/proc/stat` `procs_running`).
    pub procs_running: Option<u64>,
    /// The aggregate `cpu` line of `/proc/stat`, in USER_HZ ticks.
    pub cpu_ticks: Option<CpuTicks>,
    /// `/proc/pressure/cpu` (averages in percent, totals in microseconds).
    pub psi_cpu: Option<Pressure>,
    /// `/proc/pressure/io`.
    pub psi_io: Option<Pressure>,
    /// `/proc/pressure/memory`.
    pub psi_memory: Option<Pressure>,
}

/// How busy the machine was between two snapshots. Shares come from counter differences, so
/// they describe exactly the window; `None` when a counter was unreadable or did not advance.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct Idleness {
    /// Length of the window, in nanoseconds.
    pub window_ns: u64,
    /// Share of all CPUs' time taken by the hypervisor for other guests, in percent.
    pub steal_pct: Option<f64>,
    /// Share of all CPUs' time spent working (user, nice, system, irq, softirq; not idle,
    /// iowait or steal), in percent. With USER_HZ = 100 a 1 s window on 2 CPUs holds 200
    /// ticks, so the resolution is 0.5 %.
    pub busy_pct: Option<f64>,
    /// Share of the window during which some runnable task waited for a CPU (PSI `cpu some`
    /// total difference over wall time), in percent.
    pub psi_cpu_some_pct: Option<f64>,
}

impl SystemSnapshot {
    /// Reads `/proc/loadavg`, `/proc/stat` and `/proc/pressure/*` now; unreadable parts are
    /// `None` (PSI is absent on kernels without CONFIG_PSI or booted with `psi=0`).
    pub fn capture() -> SystemSnapshot {
        SystemSnapshot::from_counters(&SystemReader::open().read())
    }

    /// The snapshot part of a reading of the system-wide counters.
    pub fn from_counters(c: &SystemCounters) -> SystemSnapshot {
        let [psi_cpu, psi_io, psi_memory] = c.psi;
        SystemSnapshot {
            taken_ns: c.t_ns,
            load1: c.loadavg.map(|l| l.load1),
            load5: c.loadavg.map(|l| l.load5),
            load15: c.loadavg.map(|l| l.load15),
            procs_running: c.stat.and_then(|s| s.procs_running),
            cpu_ticks: c.stat.map(|s| s.cpu),
            psi_cpu,
            psi_io,
            psi_memory,
        }
    }

    /// How busy the machine was from `earlier` to this snapshot.
    pub fn busy_since(&self, earlier: &SystemSnapshot) -> Idleness {
        let window_ns = self.taken_ns.saturating_sub(earlier.taken_ns);
        let (mut steal_pct, mut busy_pct) = (None, None);
        if let (Some(now), Some(then)) = (self.cpu_ticks, earlier.cpu_ticks) {
            let total = now.total().saturating_sub(then.total());
            if total > 0 {
                let share = |later: u64, before: u64| {
                    later.saturating_sub(before) as f64 * 100.0 / total as f64
                };
                steal_pct = Some(share(now.steal, then.steal));
                busy_pct = Some(share(now.busy(), then.busy()));
            }
        }
        let psi_cpu_some_pct = match (self.psi_cpu, earlier.psi_cpu) {
            (Some(now), Some(then)) if window_ns > 0 => {
                let stalled_us = now.some.total_us.saturating_sub(then.some.total_us);
                Some((stalled_us as f64 * 100_000.0 / window_ns as f64).min(100.0))
            }
            _ => None,
        };
        Idleness {
            window_ns,
            steal_pct,
            busy_pct,
            psi_cpu_some_pct,
        }
    }

    /// A sentence saying what was high from `earlier` to this snapshot and what to do, or
    /// `None` when the machine was idle: CPUs busy over [`BUSY_WARN_PCT`], steal over
    /// [`STEAL_WARN_PCT`], or PSI `cpu some` over [`PSI_CPU_WARN_PCT`] of the window.
    ///
    /// The load averages and PSI `avg10` are recorded but not judged: they decay over 10 s to
    /// 15 min and so still show the previous trial, while the counter differences used here
    /// describe only the window.
    pub fn idle_warning(&self, earlier: &SystemSnapshot, trial: usize) -> Option<Warning> {
        self.busy_since(earlier).warning(trial)
    }
}

impl Idleness {
    /// See [`SystemSnapshot::idle_warning`]; `trial` is the number of the trial that follows
    /// the window, from 1.
    pub fn warning(&self, trial: usize) -> Option<Warning> {
        let over = |v: Option<f64>, threshold_pct: f64| {
            v.filter(|&v| v > threshold_pct)
                .map(|pct| Over { pct, threshold_pct })
        };
        let (busy, steal, psi_cpu_some) = (
            over(self.busy_pct, BUSY_WARN_PCT),
            over(self.steal_pct, STEAL_WARN_PCT),
            over(self.psi_cpu_some_pct, PSI_CPU_WARN_PCT),
        );
        (busy.is_some() || steal.is_some() || psi_cpu_some.is_some()).then_some(
            Warning::MachineBusy {
                trial,
                window_ms: self.window_ns / 1_000_000,
                busy,
                steal,
                psi_cpu_some,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_procfs::PsiLine;

    fn snap(taken_ms: u64, busy: u64, idle: u64, steal: u64, psi_total_us: u64) -> SystemSnapshot {
        let psi = Pressure {
            some: PsiLine {
                total_us: psi_total_us,
                ..PsiLine::default()
            },
            full: None,
        };
        SystemSnapshot {
            taken_ns: taken_ms * 1_000_000,
            cpu_ticks: Some(CpuTicks {
                user: busy,
                idle,
                steal,
                ..CpuTicks::default()
            }),
            psi_cpu: Some(psi),
            ..SystemSnapshot::default()
        }
    }

    #[test]
    fn shares_come_from_tick_and_psi_differences_over_the_window() {
        // 1 s on 2 CPUs: 200 ticks, of which 30 busy, 10 stolen, 160 idle; 80 ms of CPU waiting.
        let before = snap(1_000, 500, 9_000, 100, 1_000_000);
        let after = snap(2_000, 530, 9_160, 110, 1_080_000);
        let i = after.busy_since(&before);
        assert_eq!(i.window_ns, 1_000_000_000);
        assert_eq!(i.busy_pct, Some(15.0));
        assert_eq!(i.steal_pct, Some(5.0));
        assert!((i.psi_cpu_some_pct.unwrap() - 8.0).abs() < 1e-9);
    }

    #[test]
    fn a_window_without_ticks_or_psi_gives_no_shares_and_no_warning() {
        let before = snap(1_000, 500, 9_000, 100, 0);
        let mut after = before.clone();
        after.taken_ns += 5_000_000;
        after.psi_cpu = None;
        let i = after.busy_since(&before);
        assert_eq!(
            (i.busy_pct, i.steal_pct, i.psi_cpu_some_pct),
            (None, None, None)
        );
        assert_eq!(after.idle_warning(&before, 1), None);
    }

    #[test]
    fn an_idle_window_gives_no_warning() {
        let before = snap(0, 500, 9_000, 100, 1_000);
        let after = snap(1_000, 505, 9_195, 100, 2_000);
        assert_eq!(after.idle_warning(&before, 1), None);
    }

    #[test]
    fn a_busy_stolen_contended_window_is_named_with_thresholds_and_remedies() {
        let before = snap(0, 0, 0, 0, 0);
        let after = snap(500, 50, 40, 10, 100_000);
        let w = after.idle_warning(&before, 1).unwrap();
        assert_eq!(w.code(), "machine_busy");
        let w = w.to_string();
        assert!(w.contains("500 ms"), "{w}");
        assert!(w.contains("50.0% busy (threshold 10%)"), "{w}");
        assert!(
            w.contains("10.0% of CPU time") && w.contains("steal"),
            "{w}"
        );
        assert!(w.contains("20.0% of the time (PSI cpu some"), "{w}");
        assert!(
            w.contains("--cpus") && w.contains("re-run") && w.contains("dedicated host"),
            "{w}"
        );
    }

    #[test]
    fn only_busy_cpus_do_not_blame_the_hypervisor() {
        let w = Idleness {
            window_ns: 2_000_000_000,
            busy_pct: Some(12.5),
            steal_pct: Some(1.0),
            psi_cpu_some_pct: Some(0.0),
        }
        .warning(1)
        .unwrap()
        .to_string();
        assert!(w.contains("12.5% busy"), "{w}");
        assert!(!w.contains("steal") && !w.contains("PSI"), "{w}");
    }

    #[test]
    fn capture_reads_cpu_ticks_on_this_machine() {
        let a = SystemSnapshot::capture();
        let b = SystemSnapshot::capture();
        assert!(a.cpu_ticks.is_some_and(|t| t.total() > 0));
        assert!(b.taken_ns >= a.taken_ns);
    }
}
