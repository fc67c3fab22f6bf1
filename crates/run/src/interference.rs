//! Interference measured, not guessed: the CPU time that anything outside a trial used on the
//! trial's CPUs while it ran, and whose it was.
//!
//! outside = busy time of the trial's CPUs over the trial − the CPU time of the trial's own
//! tasks (measured and antagonists, whole lives from rusage or their exact clock, whichever is
//! larger; a task's rusage holds the children it reaped) − the tasks' other descendants (a
//! program's children still running when its window closed, reaped by the launcher:
//! `TrialOutcome::descendants_cpu_ns`) − the harness (launcher, host, and this process,
//! wherever they ran: an upper bound of their share on the trial's CPUs, so outside is never
//! overstated by them). Negative remainders (counter granularity) count as 0.
//!
//! The busy time comes from the most exact counter the kernel has, in this order:
//! 1. `/proc/schedstat` per-CPU run time, ns (CONFIG_SCHEDSTATS);
//! 2. cgroup v1 `cpuacct.usage_percpu` of the root, ns per CPU (every task on the machine);
//! 3. cgroup v2 root `cpu.stat` `usage_usec`, µs, all CPUs together: only for unpinned trials;
//! 4. `/proc/stat` busy ticks per CPU (user, nice, system, irq, softirq), USER_HZ ticks
//!    (10 ms at 100 Hz): the last resort, its resolution stated with every trial.
//!
//! Sources 1-3 count tasks' run time: interrupts only where the kernel charges them to the
//! task they interrupted (without CONFIG_IRQ_TIME_ACCOUNTING, as on this VM).
//!
//! The outside time is split by whose it was (`whose.rs`): kernel threads and interrupts are
//! the kernel's work, most of it done for the trial itself (an I/O trial's writes are flushed
//! by kernel workers, its completions are softirqs), so beyond the settle window's rate it is
//! stored as the trial's own kernel cost (`kernel_cpu_ns`), not as disturbance. Other
//! processes' time on the trial's CPUs is the smaller of the busy time left after the kernel's
//! and those processes' own CPU time (each an upper bound of it); a trial whose other
//! processes took more than [`DISTURBED_PCT`] of its CPUs' time (CPUs × wall time) is flagged
//! `disturbed`, and verdicts and summaries leave it out by default. This is apart from the
//! reference loop's speed flag (`noise.rs`), which measures speed drift (frequency, steal, a
//! slower machine) and by design ignores preemption.

use super::whose::{KernelRate, Split};
pub use schedlab_core::records::DISTURBED_PCT;
use schedlab_core::records::{TrialMeta, TrialOutcome};

/// Where a trial's busy time was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `/proc/schedstat`.
    Schedstat,
    /// cgroup v1 root `cpuacct.usage_percpu`.
    Cpuacct,
    /// cgroup v2 root `cpu.stat`.
    Cgroup2,
    /// `/proc/stat` ticks.
    ProcStat,
}

impl Source {
    /// The name stored with the trial.
    pub fn name(self) -> &'static str {
        match self {
            Source::Schedstat => "schedstat",
            Source::Cpuacct => "cpuacct",
            Source::Cgroup2 => "cgroup2",
            Source::ProcStat => "proc-stat",
        }
    }
}

/// One reading of the busy counters of a trial's CPUs, and of this process's CPU time.
#[derive(Debug, Clone)]
pub struct Busy {
    source: Source,
    /// CLOCK_MONOTONIC at the reading, ns.
    t_ns: u64,
    /// Busy time of the trial's CPUs since boot, ns (summed).
    busy_ns: u64,
    /// This process's CPU time, ns.
    process_cpu_ns: u64,
    /// CPUs counted.
    cpus: usize,
}

/// Nanoseconds per USER_HZ tick (100 Hz on every mainstream architecture).
const TICK_NS: u64 = 10_000_000;

impl Busy {
    /// Reads the busy time of `cpus` (None: every CPU this process may use) from the most
    /// exact source there is; None when none can be read.
    pub fn read(cpus: Option<&[usize]>) -> Option<Busy> {
        let allowed = schedlab_sys::allowed_cpus();
        let chosen: Vec<usize> = cpus.map_or_else(|| allowed.clone(), <[usize]>::to_vec);
        let pick = |per_cpu: Vec<(usize, u64)>| -> Option<u64> {
            let found: Vec<u64> = per_cpu
                .iter()
                .filter(|(c, _)| chosen.contains(c))
                .map(|(_, v)| *v)
                .collect();
            (found.len() == chosen.len()).then(|| found.iter().sum())
        };
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let (source, busy_ns) = if let Some(ns) =
            read("/proc/schedstat").and_then(|t| pick(schedlab_procfs::parse_schedstat_cpus(&t)))
        {
            (Source::Schedstat, ns)
        } else if let Some(ns) = mount_of("cgroup", "cpuacct")
            .and_then(|m| read(&format!("{m}/cpuacct.usage_percpu")))
            .and_then(|t| pick(schedlab_procfs::parse_usage_percpu(&t)))
        {
            (Source::Cpuacct, ns)
        } else if let Some(us) = (chosen.len() >= allowed.len())
            .then(|| mount_of("cgroup2", ""))
            .flatten()
            .and_then(|m| read(&format!("{m}/cpu.stat")))
            .and_then(|t| schedlab_procfs::parse_cpu_stat_usage_usec(&t))
        {
            (Source::Cgroup2, us * 1000)
        } else {
            let ticks = read("/proc/stat").map(schedlab_procfs::parse_per_cpu_ticks)?;
            let busy = ticks
                .into_iter()
                .map(|(c, t)| (c, t.busy() * TICK_NS))
                .collect();
            (Source::ProcStat, pick(busy)?)
        };
        Some(Busy {
            source,
            t_ns: schedlab_sys::now_ns(),
            busy_ns,
            process_cpu_ns: schedlab_sys::process_cpu_ns(),
            cpus: chosen.len(),
        })
    }
}

/// The mount point of the first `fstype` filesystem whose options name `option` ("" for
/// any), from /proc/self/mountinfo.
fn mount_of(fstype: &str, option: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut r = right.split_whitespace();
        let (fs, _, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
        let wanted = fs == fstype && (option.is_empty() || opts.split(',').any(|o| o == option));
        wanted.then(|| left.split_whitespace().nth(4).map(str::to_string))?
    })
}

/// What the trial itself used, ns: each task's larger of its exact CPU clock (measured region)
/// and rusage (its whole life), the tasks' descendants that no task reaped, and the harness.
pub fn own_cpu_ns(outcome: &TrialOutcome) -> u64 {
    let tasks: u64 = outcome
        .tasks
        .iter()
        .map(|t| t.cpu_ns.unwrap_or(0).max(t.utime_ns + t.stime_ns))
        .sum();
    tasks + outcome.descendants_cpu_ns + outcome.harness_cpu_ns
}

/// The outside CPU time between `before` and `after` given the trial's own CPU time
/// (`own_ns`: tasks and harness outside this process), as (outside ns, share of the CPUs'
/// time). None when the readings do not fit together.
pub fn outside(before: &Busy, after: &Busy, own_ns: u64) -> Option<(i64, f64)> {
    if before.source != after.source || before.cpus != after.cpus || after.t_ns <= before.t_ns {
        return None;
    }
    let busy = after.busy_ns.checked_sub(before.busy_ns)?;
    let ours = own_ns + after.process_cpu_ns.saturating_sub(before.process_cpu_ns);
    let outside = busy.saturating_sub(ours);
    let capacity = (after.t_ns - before.t_ns) as f64 * after.cpus.max(1) as f64;
    Some((outside as i64, outside as f64 / capacity))
}

/// What is known of a trial's outside work.
pub struct Seen<'a> {
    /// The busy counters just before and just after it.
    pub busy: (Option<&'a Busy>, Option<&'a Busy>),
    /// The trial's own CPU time outside this process ([`own_cpu_ns`]).
    pub own_ns: u64,
    /// Whose the outside work was, over the same interval.
    pub whose: &'a Split,
    /// The kernel's work per ns in the settle window.
    pub rate: KernelRate,
    /// The trial's CPUs' time over the interval, ns (CPUs × wall time).
    pub capacity_ns: f64,
    /// The interval, ns.
    pub wall_ns: u64,
}

/// Records the interference of a trial in `meta`: the outside CPU time (when the busy
/// counters fit together), its split, the kernel work the trial caused, and the disturbed flag.
pub fn record(seen: &Seen, meta: &mut TrialMeta) {
    let whose = seen.whose;
    let mut process_ns = whose.process_ns;
    if let (Some(b), Some(a)) = seen.busy {
        if let Some((ns, share)) = outside(b, a, seen.own_ns) {
            meta.outside_cpu_ns = Some(ns);
            meta.outside_share = Some(share);
            meta.interference_source = Some(a.source.name().to_string());
            // Only /proc/stat's busy ticks hold interrupts apart from tasks' time.
            let kernel = whose.kthread_ns
                + if a.source == Source::ProcStat {
                    whose.irq_ns
                } else {
                    0
                };
            process_ns = process_ns.min((ns.max(0) as u64).saturating_sub(kernel));
        }
    }
    let share = process_ns as f64 / seen.capacity_ns.max(1.0);
    meta.outside_process_ns = Some(process_ns as i64);
    meta.outside_process_share = Some(share);
    meta.outside_kthread_ns = Some(whose.kthread_ns as i64);
    meta.outside_irq_ns = Some(whose.irq_ns as i64);
    meta.kernel_cpu_ns = Some(seen.rate.induced_ns(whose, seen.wall_ns) as i64);
    meta.disturbed = share * 100.0 > DISTURBED_PCT;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(t_ns: u64, busy_ns: u64, process_cpu_ns: u64) -> Busy {
        Busy {
            source: Source::Cpuacct,
            t_ns,
            busy_ns,
            process_cpu_ns,
            cpus: 2,
        }
    }

    #[test]
    fn outside_is_busy_time_less_the_trials_own_as_a_share_of_the_cpus_time() {
        // 1 s on 2 CPUs: 1.5 s busy, of which the trial's tasks and harness 0.9 s and this
        // process 0.1 s: 0.5 s outside, 25 % of 2 CPU-seconds.
        let (b, a) = (
            busy(0, 10_000_000_000, 5),
            busy(1_000_000_000, 11_500_000_000, 100_000_005),
        );
        let (ns, share) = outside(&b, &a, 900_000_000).expect("fits");
        assert_eq!(ns, 500_000_000);
        assert!((share - 0.25).abs() < 1e-12);
        // Of the 0.5 s, kernel threads 0.3 s and a process 0.35 s (an upper bound: it may
        // also have run elsewhere): other processes get the 0.2 s the kernel left, 10 %.
        let whose = Split {
            process_ns: 350_000_000,
            kthread_ns: 300_000_000,
            irq_ns: 40_000_000,
            top: Vec::new(),
        };
        let seen = |own_ns, whose| Seen {
            busy: (Some(&b), Some(&a)),
            own_ns,
            whose,
            rate: KernelRate { per_ns: 0.01 },
            capacity_ns: 2e9,
            wall_ns: 1_000_000_000,
        };
        let mut meta = TrialMeta::default();
        record(&seen(900_000_000, &whose), &mut meta);
        assert_eq!(meta.outside_cpu_ns, Some(500_000_000));
        assert_eq!(meta.outside_process_ns, Some(200_000_000));
        assert_eq!(meta.outside_process_share, Some(0.1));
        assert!(!meta.disturbed, "10 % is not above the threshold");
        // Kernel work 0.34 s, less 1 % of a CPU for 1 s at the settle window's rate.
        assert_eq!(meta.kernel_cpu_ns, Some(330_000_000));
        assert_eq!(meta.interference_source.as_deref(), Some("cpuacct"));
        // Without kernel work the process's 0.35 s stand: 17.5 %, disturbed.
        let busy_process = Split {
            kthread_ns: 0,
            irq_ns: 0,
            ..whose.clone()
        };
        let mut hogged = TrialMeta::default();
        record(&seen(900_000_000, &busy_process), &mut hogged);
        assert_eq!(hogged.outside_process_ns, Some(350_000_000));
        assert!(hogged.disturbed);
        // More of our own than was busy (counter granularity): nothing outside.
        assert_eq!(outside(&b, &a, 2_000_000_000).map(|o| o.0), Some(0));
        let mut quiet = TrialMeta::default();
        record(&seen(2_000_000_000, &busy_process), &mut quiet);
        assert_eq!(quiet.outside_process_ns, Some(0));
        assert!(!quiet.disturbed, "{:?}", quiet.outside_process_share);
        assert_eq!(
            outside(
                &b,
                &Busy {
                    cpus: 1,
                    ..a.clone()
                },
                0
            ),
            None
        );
    }

    #[test]
    fn a_reading_comes_from_the_best_source_here() {
        let here = Busy::read(Some(&schedlab_sys::allowed_cpus()[..1])).expect("some source");
        assert_eq!(here.cpus, 1);
        // This machine has cgroup v1 cpuacct and no schedstat; elsewhere any source will do.
        if std::path::Path::new("/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu").exists()
            && !std::path::Path::new("/proc/schedstat").exists()
        {
            assert_eq!(here.source, Source::Cpuacct);
        }
        let later = Busy::read(Some(&schedlab_sys::allowed_cpus()[..1])).expect("again");
        assert!(later.busy_ns >= here.busy_ns);
    }
}
