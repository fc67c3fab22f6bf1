//! Noise you can see: a short reference loop before and after every trial, whose speed
//! relative to the calibration is stored with the trial, and the steal time over the trial.
//!
//! The loop runs in the main process, outside the measured region (before the launcher is
//! asked to run the trial, after its tasks ended), at SCHED_OTHER, on the trial's CPUs: a
//! pinned trial's CPUs, else every CPU this process may use. Each CPU runs a few chunks of
//! spin units (0.5 ms each at the calibrated spin rate); a chunk's speed is its units over its
//! wall time, a CPU's speed the median of its chunks (so one preemption of one chunk does not
//! count, a CPU that is slower throughout does), and the trial's speed that of its slowest CPU.
//!
//! The loop has a calibration of its own, measured the same way (chunk medians over every
//! CPU) and stored with the other calibrations of this kernel and CPU model: the spin
//! calibration times 40 ms batches by CPU time, which counts the interrupts of those 40 ms,
//! so chunk medians run 5-20 % faster than it on this machine, and comparing the two would
//! flag every trial. 1.0 is the calibrated speed; 0.8 means the same work took 25 % longer.

use super::cells::Calibrator;
use crate::error::Result;
use schedlab_core::workload::{CpuKernel, CpuState, Workload, WorkloadKind};
use schedlab_core::Warning;
use schedlab_procfs::{parse_per_cpu_ticks, CpuTicks};

/// A trial whose reference speed before or after it is off the calibration by more than this
/// share is flagged noisy, in percent.
pub const SPEED_WARN_PCT: f64 = 10.0;
/// Wall time of one chunk of the reference loop at the calibrated speed, ns.
const CHUNK_NS: u64 = 500_000;
/// Chunks per CPU and measurement (3 ms of spinning per CPU).
const CHUNKS: usize = 6;
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
            "reference-loop|spin|chunk={CHUNK_NS}ns|{}",
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
                let r = spin_rate * Reference::with_rate(spin_rate).calibrate();
                if let Some(sink) = cal.sink.as_deref_mut() {
                    sink.save_calibration(&key, &cal.kernel, &cal.cpu_model, r)?;
                }
                r
            }
        };
        Ok(Reference {
            units_per_sec: rate,
            units_per_chunk: ((spin_rate * CHUNK_NS as f64 / 1e9) as u64).max(1),
        })
    }

    /// The loop's speed against `units_per_sec` measured for its calibration: the median over
    /// every CPU this process may use of each CPU's median of 5 measurements.
    fn calibrate(&self) -> f64 {
        let original = schedlab_sys::allowed_cpus();
        let mut per_cpu: Vec<f64> = Vec::new();
        for &cpu in &original {
            if schedlab_sys::set_affinity(&[cpu]).is_ok() {
                let mut v: Vec<f64> = (0..5).map(|_| self.speed_here()).collect();
                v.sort_by(f64::total_cmp);
                per_cpu.push(v[2]);
            }
        }
        let _ = schedlab_sys::set_affinity(&original);
        per_cpu.sort_by(f64::total_cmp);
        match per_cpu.len() {
            0 => 1.0,
            n if n % 2 == 1 => per_cpu[n / 2],
            n => (per_cpu[n / 2 - 1] + per_cpu[n / 2]) / 2.0,
        }
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

    /// The median speed of [`CHUNKS`] chunks on the CPU this thread runs on.
    fn speed_here(&self) -> f64 {
        let mut state = CpuState::new(1);
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

/// What is measured around one trial: started by [`Around::before`] just before the trial,
/// finished by [`Around::after`] just after it.
pub struct Around {
    speed_before: Option<f64>,
    ticks: Vec<(usize, CpuTicks)>,
    busy: Option<super::interference::Busy>,
}

impl Around {
    /// Runs the reference loop on `cpus`, then reads the CPUs' tick and busy counters.
    pub fn before(reference: &Reference, cpus: Option<&[usize]>) -> Around {
        let speed_before = reference.speed(cpus);
        Around {
            speed_before,
            ticks: cpu_ticks(),
            busy: super::interference::Busy::read(cpus),
        }
    }

    /// Reads the counters again (steal and interference over the trial, whose outcome is
    /// `outcome`), runs the reference loop, and records all in `meta`; returns the warning
    /// for a noisy trial (trial number `trial`, from 1, of cell `cell`).
    pub fn after(
        self,
        reference: &Reference,
        cpus: Option<&[usize]>,
        outcome: &schedlab_core::records::TrialOutcome,
        meta: &mut schedlab_core::records::TrialMeta,
        (trial, cell): (usize, &str),
    ) -> Option<Warning> {
        let busy = super::interference::Busy::read(cpus);
        let own = super::interference::own_cpu_ns(outcome);
        super::interference::record(self.busy.as_ref(), busy.as_ref(), own, meta);
        meta.trial_steal_pct = steal_pct(&self.ticks, &cpu_ticks(), cpus);
        meta.speed_before = self.speed_before;
        meta.speed_after = reference.speed(cpus);
        meta.noisy = is_noisy(meta.speed_before, meta.speed_after);
        meta.noisy
            .then(|| noisy_warning(meta.speed_before, meta.speed_after, trial, cell))
    }
}

/// At most `n` of `cpus`, evenly spread (all of them when there are `n` or fewer).
fn spread(cpus: &[usize], n: usize) -> Vec<usize> {
    if cpus.len() <= n {
        return cpus.to_vec();
    }
    (0..n).map(|i| cpus[i * cpus.len() / n]).collect()
}

/// Whether a trial whose reference loop ran at `before` and `after` of the calibrated speed is
/// noisy: either is off by more than [`SPEED_WARN_PCT`].
pub fn is_noisy(before: Option<f64>, after: Option<f64>) -> bool {
    [before, after]
        .into_iter()
        .flatten()
        .any(|s| (s - 1.0).abs() * 100.0 > SPEED_WARN_PCT)
}

/// The warning stored with a noisy trial (speeds as fractions of the calibrated speed).
pub fn noisy_warning(before: Option<f64>, after: Option<f64>, trial: usize, cell: &str) -> Warning {
    Warning::TrialNoisy {
        trial,
        cell: cell.to_string(),
        before_pct: before.map(|s| s * 100.0),
        after_pct: after.map(|s| s * 100.0),
        limit_pct: SPEED_WARN_PCT,
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
mod tests {
    use super::*;

    #[test]
    fn noisy_means_more_than_ten_percent_off_either_side() {
        assert!(!is_noisy(Some(0.95), Some(1.08)));
        assert!(is_noisy(Some(0.85), Some(1.0)));
        assert!(is_noisy(None, Some(1.15)));
        assert!(!is_noisy(None, None));
        let w = noisy_warning(Some(0.85), None, 1, "other").to_string();
        assert!(w.contains("85 %") && w.contains("--exclude-noisy"), "{w}");
    }

    #[test]
    fn steal_is_the_share_of_the_chosen_cpus_ticks() {
        let t = |steal: u64, idle: u64| CpuTicks {
            steal,
            idle,
            ..CpuTicks::default()
        };
        let before = vec![(0, t(10, 100)), (1, t(0, 100))];
        // CPU 0: 20 of 100 ticks stolen; CPU 1: none of 100.
        let after = vec![(0, t(30, 180)), (1, t(0, 200))];
        assert_eq!(steal_pct(&before, &after, Some(&[0])), Some(20.0));
        assert_eq!(steal_pct(&before, &after, None), Some(10.0));
        assert_eq!(steal_pct(&before, &before, None), None);
    }

    #[test]
    fn at_most_n_cpus_are_measured_evenly_spread() {
        assert_eq!(spread(&[0, 1], 4), vec![0, 1]);
        assert_eq!(spread(&(0..16).collect::<Vec<_>>(), 4), vec![0, 4, 8, 12]);
    }

    #[test]
    fn the_reference_loop_runs_near_its_calibrated_speed_and_restores_affinity() {
        // Calibrate the loop the way a run does (no sink: nothing stored), then measure on
        // CPU 0: on a quiet CPU the speed is about 1; on this shared machine allow a band.
        let progress = crate::progress::Progress::new(0, true);
        let mut cal = Calibrator::new(None, std::path::Path::new("/tmp"), &progress);
        let r = Reference::new(&mut cal).expect("calibration");
        let before = schedlab_sys::allowed_cpus();
        let s = r.speed(Some(&before[..1])).expect("measured");
        assert!(s > 0.6 && s < 1.6, "speed {s}");
        assert_eq!(schedlab_sys::allowed_cpus(), before);
        let rate = schedlab_core::workload::calibrate::Rate {
            units_per_sec: r.units_per_sec,
        };
        // Half the calibrated rate makes the same loop look twice as fast.
        let half = Reference::with_rate(rate.units_per_sec / 2.0);
        let s2 = half.speed(Some(&before[..1])).expect("measured");
        assert!(s2 > s * 1.3, "{s2} vs {s}");
    }
}
