//! Noise you can see: a short reference loop before and after every trial, whose speed is
//! stored with the trial relative to the loop's calibration, and judged against the run's own
//! steady speed; and the steal time over the trial.
//!
//! The loop runs in the main process, outside the measured region (before the launcher is
//! asked to run the trial, after its tasks ended), at SCHED_OTHER, on the trial's CPUs: a
//! pinned trial's CPUs, else every CPU this process may use. Each CPU runs a few chunks of
//! spin units (0.5 ms each at the calibrated spin rate); a chunk's speed is its units over its
//! wall time, a CPU's speed the median of its chunks (so one preemption of one chunk does not
//! count, a CPU that is slower throughout does), and the trial's speed that of its slowest CPU.
//!
//! The loop has a calibration of its own, measured the same way and stored with the other
//! calibrations of this kernel and CPU model (the spin calibration times 40 ms batches by CPU
//! time, which counts the interrupts of those 40 ms, so chunk medians run 5-20 % faster than
//! it). This VM's speed drifts by tens of percent for seconds to minutes, and slowdowns only
//! slow: the calibration is [`CAL_ROUNDS`] measurements of every CPU spread over about
//! [`CAL_SPACING_MS`] x [`CAL_ROUNDS`] ms, its speed their [`CAL_QUANTILE`] quantile, and
//! their spread is stored beside it. 1.0 is the calibrated speed; 0.8 means the same work took
//! 25 % longer.
//!
//! A calibration taken at a slow (or fast) moment shifts every speed of a run alike, so the
//! noise flag does not use it: a trial is noisy when its speed before or after is more than
//! [`SPEED_WARN_PCT`] below the run's steady speed, the median of the run's reference speeds
//! so far ([`Steady`]); only slowdowns count ([`is_noisy`]). A trial of calibrated CPU work
//! is judged by its own in-trial speed instead (`intrial.rs`: slowed or not), which the
//! loop only stands in for. The steady speed against the calibration is stored with each trial
//! (`speed_steady`), for comparisons across runs and machines.

use super::cells::Calibrator;
use super::interference::{self, Busy};
use super::whose;
use crate::error::Result;
use schedlab_core::records::{TrialMeta, TrialOutcome};
use schedlab_core::warning::OutsideProcess;
use schedlab_core::workload::{CpuKernel, CpuState, Workload, WorkloadKind};
use schedlab_core::Warning;
use schedlab_procfs::{parse_per_cpu_ticks, CpuTicks};

/// A trial whose reference speed before or after it is below the run's steady speed by more
/// than this share is flagged noisy, in percent.
pub const SPEED_WARN_PCT: f64 = 10.0;
/// Measurements of every CPU that make the loop's calibration.
pub const CAL_ROUNDS: usize = 10;
/// Pause between two of them, ms.
pub const CAL_SPACING_MS: u64 = 200;
/// The quantile of the measurements taken as the calibrated speed (slowdowns only slow).
pub const CAL_QUANTILE: f64 = 0.9;
/// Wall time of one chunk of the reference loop at the calibrated speed, ns.
const CHUNK_NS: u64 = 500_000;
/// Chunks per CPU and measurement (3 ms of spinning per CPU).
const CHUNKS: usize = 6;
/// Chunks run untimed before the timed ones (2 ms at the calibrated speed).
const WARM_CHUNKS: usize = 4;
/// Most CPUs measured per trial (evenly spread over its CPUs), so a large machine does not
/// spend long on the loop.
const MAX_CPUS: usize = 4;

/// The reference loop of this machine: spin units and their calibrated rate.
#[derive(Debug, Clone, Copy)]
pub struct Reference {
    /// Calibrated spin units per CPU second.
    units_per_sec: f64,
    /// Units per chunk ([`CHUNK_NS`] at the calibrated rate).
    units_per_chunk: u64,
}

impl Reference {
    /// The reference loop: chunks sized by the spin kernel's calibration, timed against the
    /// loop's own calibration (both stored, or measured now and stored).
    pub fn new(cal: &mut Calibrator) -> Result<Reference> {
        let spin = Workload {
            kind: WorkloadKind::Cpu,
            cpu_kernel: CpuKernel::Spin,
            ..Workload::default()
        };
        let spin_rate = cal.rate(&spin)?.units_per_sec;
        let key = format!(
            "reference-loop|spin|chunk={CHUNK_NS}ns|q{:.0}x{CAL_ROUNDS}|{}",
            CAL_QUANTILE * 100.0,
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        let stored = match cal.sink.as_deref() {
            Some(sink) => sink.calibration(&key, &cal.kernel, &cal.cpu_model)?,
            None => None,
        };
        let rate = match stored {
            Some(r) => r,
            None => {
                cal.progress.note("calibrating the reference loop");
                let measured = Reference::with_rate(spin_rate).calibrate();
                let r = spin_rate * measured.speed;
                if let Some(sink) = cal.sink.as_deref_mut() {
                    sink.save_calibration(
                        &key,
                        &cal.kernel,
                        &cal.cpu_model,
                        r,
                        Some(measured.spread),
                    )?;
                }
                r
            }
        };
        Ok(Reference {
            units_per_sec: rate,
            units_per_chunk: ((spin_rate * CHUNK_NS as f64 / 1e9) as u64).max(1),
        })
    }

    /// The loop's speed against `units_per_sec`, measured for its calibration: every CPU this
    /// process may use, [`CAL_ROUNDS`] times, [`CAL_SPACING_MS`] apart.
    fn calibrate(&self) -> Calibrated {
        let original = schedlab_sys::allowed_cpus();
        let mut speeds: Vec<f64> = Vec::with_capacity(CAL_ROUNDS * original.len());
        for round in 0..CAL_ROUNDS {
            if round > 0 {
                std::thread::sleep(std::time::Duration::from_millis(CAL_SPACING_MS));
            }
            for &cpu in &original {
                if schedlab_sys::set_affinity(&[cpu]).is_ok() {
                    speeds.push(self.speed_here());
                }
            }
        }
        let _ = schedlab_sys::set_affinity(&original);
        Calibrated::of(speeds)
    }

    /// The reference loop for a known rate (units per wall second by chunk medians).
    pub fn with_rate(units_per_sec: f64) -> Reference {
        Reference {
            units_per_sec,
            units_per_chunk: ((units_per_sec * CHUNK_NS as f64 / 1e9) as u64).max(1),
        }
    }

    /// Runs the loop on `cpus` (None: every CPU this process may use) and returns the speed of
    /// the slowest one relative to the calibration. The calling thread is moved to each CPU in
    /// turn and its affinity restored afterwards. None if no CPU could be measured.
    pub fn speed(&self, cpus: Option<&[usize]>) -> Option<f64> {
        let original = schedlab_sys::allowed_cpus();
        let all = cpus.map_or_else(|| original.clone(), <[usize]>::to_vec);
        let mut slowest: Option<f64> = None;
        for cpu in spread(&all, MAX_CPUS) {
            if schedlab_sys::set_affinity(&[cpu]).is_err() {
                continue;
            }
            let s = self.speed_here();
            slowest = Some(slowest.map_or(s, |m: f64| m.min(s)));
        }
        let _ = schedlab_sys::set_affinity(&original);
        slowest
    }

    /// The median speed of [`CHUNKS`] chunks on the CPU this thread runs on, after
    /// [`WARM_CHUNKS`] chunks that are not timed: a CPU that was idle (the settle window
    /// sleeps 100 ms before the loop) first runs slow for a moment on this VM, which read as
    /// half speed beside trials that ran at full speed.
    fn speed_here(&self) -> f64 {
        let mut state = CpuState::new(1);
        for _ in 0..WARM_CHUNKS {
            state.run(CpuKernel::Spin, self.units_per_chunk);
        }
        let mut speeds = [0.0f64; CHUNKS];
        for s in &mut speeds {
            let t0 = schedlab_sys::now_ns();
            state.run(CpuKernel::Spin, self.units_per_chunk);
            let wall = (schedlab_sys::now_ns() - t0).max(1);
            *s = self.units_per_chunk as f64 * 1e9 / wall as f64 / self.units_per_sec;
        }
        speeds.sort_by(f64::total_cmp);
        (speeds[CHUNKS / 2 - 1] + speeds[CHUNKS / 2]) / 2.0
    }
}

/// The reference loop's calibration: the chosen speed and how far the measurements spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibrated {
    /// The [`CAL_QUANTILE`] quantile of the measured speeds.
    pub speed: f64,
    /// (that quantile - the 10 % quantile) / that quantile: 0.2 means the slow moments ran
    /// 20 % slower.
    pub spread: f64,
}

impl Calibrated {
    /// The calibration of `speeds` (1.0 and no spread when there are none).
    pub fn of(mut speeds: Vec<f64>) -> Calibrated {
        speeds.retain(|s| s.is_finite() && *s > 0.0);
        speeds.sort_by(f64::total_cmp);
        let q = |p: f64| speeds[((speeds.len() - 1) as f64 * p).round() as usize];
        if speeds.is_empty() {
            return Calibrated {
                speed: 1.0,
                spread: 0.0,
            };
        }
        let high = q(CAL_QUANTILE);
        Calibrated {
            speed: high,
            spread: (high - q(0.1)) / high,
        }
    }
}

/// The reference speeds of a run so far; their median is the run's steady speed.
#[derive(Debug, Clone, Default)]
pub struct Steady {
    speeds: Vec<f64>,
}

impl Steady {
    /// Adds the speeds measured around one trial.
    pub fn add(&mut self, speeds: impl IntoIterator<Item = Option<f64>>) {
        self.speeds.extend(speeds.into_iter().flatten());
    }

    /// The median of the speeds so far; None before the first.
    pub fn median(&self) -> Option<f64> {
        median(&self.speeds)
    }
}

/// The median of `v` (None when empty).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// What is measured around one trial: started by [`Around::before`] just before the trial,
/// finished by [`Around::after`] just after it.
pub struct Around {
    speed_before: Option<f64>,
    ticks: Vec<(usize, CpuTicks)>,
    busy: Option<Busy>,
    scan: whose::Scan,
    /// The kernel's work per ns in the settle window.
    rate: whose::KernelRate,
}

impl Around {
    /// Runs the reference loop on `cpus`, then reads the process table and the CPUs' tick and
    /// busy counters; `settle` is the process table at the start of the settle window, which
    /// gives the machine's own rate of kernel work.
    pub fn before(reference: &Reference, cpus: Option<&[usize]>, settle: &whose::Scan) -> Around {
        let speed_before = reference.speed(cpus);
        let scan = whose::Scan::take();
        let window = split(settle, &scan, cpus);
        let rate = whose::KernelRate::of(&window, scan.t_ns.saturating_sub(settle.t_ns));
        Around {
            speed_before,
            ticks: cpu_ticks(),
            busy: Busy::read(cpus),
            scan,
            rate,
        }
    }

    /// Reads the counters again (steal and interference over the trial, whose outcome is
    /// `outcome`), runs the reference loop, judges its speeds against the run's steady speed
    /// (`steady`, which they join), and records all in `meta`.
    pub fn after(
        self,
        reference: &Reference,
        cpus: Option<&[usize]>,
        outcome: &TrialOutcome,
        meta: &mut TrialMeta,
        steady: &mut Steady,
    ) -> AfterTrial {
        let busy = Busy::read(cpus);
        let ticks = cpu_ticks();
        let scan = whose::Scan::take();
        let whose = split(&self.scan, &scan, cpus);
        let own = interference::own_cpu_ns(outcome);
        let wall_ns = scan.t_ns.saturating_sub(self.scan.t_ns);
        let trial_cpus = cpus.map_or_else(|| schedlab_sys::allowed_cpus().len(), <[usize]>::len);
        let capacity_ns = wall_ns as f64 * trial_cpus.max(1) as f64;
        interference::record(
            &interference::Seen {
                busy: (self.busy.as_ref(), busy.as_ref()),
                own_ns: own,
                whose: &whose,
                rate: self.rate,
                capacity_ns,
                wall_ns,
            },
            meta,
        );
        meta.trial_steal_pct = steal_pct(&self.ticks, &ticks, cpus);
        meta.speed_before = self.speed_before;
        meta.speed_after = reference.speed(cpus);
        steady.add([meta.speed_before, meta.speed_after]);
        meta.speed_steady = steady.median();
        meta.noisy = is_noisy(meta.speed_before, meta.speed_after, meta.speed_steady);
        AfterTrial {
            top: whose.top,
            capacity_ns,
        }
    }
}

/// What [`Around::after`] found besides what it records.
#[derive(Debug, Clone, Default)]
pub struct AfterTrial {
    /// The outside processes that used the most CPU time during the trial, most first.
    pub top: Vec<OutsideProcess>,
    /// The trial's CPUs' time over the interval measured, ns (CPUs × wall time).
    pub capacity_ns: f64,
}

/// What the process tables `before` and `after` show on `cpus` (None: every CPU this process
/// may use), this process and its descendants left out.
fn split(before: &whose::Scan, after: &whose::Scan, cpus: Option<&[usize]>) -> whose::Split {
    let list = cpus.map_or_else(schedlab_sys::allowed_cpus, <[usize]>::to_vec);
    whose::split(
        before,
        after,
        &list,
        schedlab_sys::getpid(),
        &schedlab_sys::affinity_of,
    )
}

/// At most `n` of `cpus`, evenly spread (all of them when there are `n` or fewer).
fn spread(cpus: &[usize], n: usize) -> Vec<usize> {
    if cpus.len() <= n {
        return cpus.to_vec();
    }
    (0..n).map(|i| cpus[i * cpus.len() / n]).collect()
}

/// Whether a trial whose reference loop ran at `before` and `after` (of the calibrated speed)
/// is noisy: either is more than [`SPEED_WARN_PCT`] below the run's `steady` speed.
///
/// Only slowdowns count. On this VM the 3 ms loop reads in two modes: in the quick
/// experiment of 2026-11-28 most readings were 0.50-0.66 of the calibration and some 1.0
/// (190 % of the run's median), while the trials' makespans stayed within 3 % and their
/// in-trial speeds at 0.94-1.01: a fast reading says nothing about the trial, and a faster
/// moment cannot have made it slower. What contaminates a trial (other load, steal,
/// throttling) slows it; the stored speeds still show any drift of the run either way.
pub fn is_noisy(before: Option<f64>, after: Option<f64>, steady: Option<f64>) -> bool {
    let Some(steady) = steady.filter(|s| *s > 0.0) else {
        return false;
    };
    [before, after]
        .into_iter()
        .flatten()
        .any(|s| (1.0 - s / steady) * 100.0 > SPEED_WARN_PCT)
}

/// The warning stored with a noisy trial whose `meta` holds its speeds and the run's steady
/// speed (trial number `trial`, from 1, of cell `cell`).
pub fn noisy_warning(meta: &TrialMeta, trial: usize, cell: &str) -> Warning {
    let steady = meta.speed_steady.filter(|s| *s > 0.0).unwrap_or(1.0);
    Warning::TrialNoisy {
        trial,
        cell: cell.to_string(),
        before_pct: meta.speed_before.map(|s| s / steady * 100.0),
        after_pct: meta.speed_after.map(|s| s / steady * 100.0),
        limit_pct: SPEED_WARN_PCT,
        steady_pct: meta.speed_steady.map(|s| s * 100.0),
    }
}

/// The per-CPU lines of `/proc/stat` now (empty if unreadable).
pub fn cpu_ticks() -> Vec<(usize, CpuTicks)> {
    std::fs::read("/proc/stat").map_or_else(|_| Vec::new(), parse_per_cpu_ticks)
}

/// The share of `cpus`' time (None: all CPUs) the hypervisor took for other guests between two
/// readings of [`cpu_ticks`], in percent; None when no tick passed on them.
pub fn steal_pct(
    before: &[(usize, CpuTicks)],
    after: &[(usize, CpuTicks)],
    cpus: Option<&[usize]>,
) -> Option<f64> {
    let (mut steal, mut total) = (0u64, 0u64);
    for (cpu, a) in after {
        if cpus.is_some_and(|c| !c.contains(cpu)) {
            continue;
        }
        if let Some((_, b)) = before.iter().find(|(c, _)| c == cpu) {
            steal += a.steal.saturating_sub(b.steal);
            total += a.total().saturating_sub(b.total());
        }
    }
    (total > 0).then(|| steal as f64 * 100.0 / total as f64)
}

#[cfg(test)]
#[path = "noise_tests.rs"]
mod tests;
