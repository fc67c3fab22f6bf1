//! Speed drift where it happens: the speed of a trial's calibrated CPU work, its measured
//! tasks' units per CPU second against the workload's calibration (1 = as calibrated), and
//! the slowed flag against the run's steady in-trial speed.
//!
//! A slower host (another guest's load, a lower CPU frequency) makes each unit of work take
//! more CPU time, which no busy-time counter shows: the tasks' own CPU clocks do. The speed
//! is judged against the median of the speeds so far (this trial's included) of its cell once
//! the cell has [`MIN_STEADY`] of them, of the whole run before that, and against the
//! calibration for the run's first trials: a cell whose policy costs cache misses is not
//! slowed for that, and a calibration taken at a slow moment does not flag a steady run.

use schedlab_core::records::{TrialMeta, TrialOutcome, SLOWED_PCT};
use schedlab_core::workload::{Workload, WorkloadKind};
use std::collections::HashMap;

/// Speeds a steady reference needs.
pub const MIN_STEADY: usize = 3;

/// The speed of `outcome`'s calibrated CPU work against `units_per_sec` (its workload's
/// calibration, units per CPU second): the measured tasks' units over their CPU time. None
/// when `workload` is not calibrated CPU work or no task finished with its CPU clock read.
pub fn speed(workload: &Workload, units_per_sec: f64, outcome: &TrialOutcome) -> Option<f64> {
    if workload.kind != WorkloadKind::Cpu || units_per_sec <= 0.0 {
        return None;
    }
    let (units, cpu_ns) = outcome
        .tasks
        .iter()
        .filter(|t| !t.antagonist && t.work_units > 0)
        .filter_map(|t| Some((t.work_units, t.cpu_ns.filter(|&ns| ns > 0)?)))
        .fold((0u64, 0u64), |(u, c), (tu, tc)| (u + tu, c + tc));
    (cpu_ns > 0).then(|| units as f64 * 1e9 / cpu_ns as f64 / units_per_sec)
}

/// The in-trial speeds of a run so far, per cell and all together.
#[derive(Debug, Clone, Default)]
pub struct Steady {
    per_cell: HashMap<usize, Vec<f64>>,
    all: Vec<f64>,
}

impl Steady {
    /// Adds `speed`, a trial of cell `cell`, and judges it against the steady speed (see the
    /// module doc): (the steady speed, whether it is slowed, more than [`SLOWED_PCT`] below).
    pub fn judge(&mut self, cell: usize, speed: f64) -> (f64, bool) {
        let cell_speeds = self.per_cell.entry(cell).or_default();
        cell_speeds.push(speed);
        self.all.push(speed);
        let steady = if cell_speeds.len() >= MIN_STEADY {
            super::noise::median(cell_speeds)
        } else if self.all.len() >= MIN_STEADY {
            super::noise::median(&self.all)
        } else {
            None
        }
        .unwrap_or(1.0);
        (steady, speed < steady * (1.0 - SLOWED_PCT / 100.0))
    }
}

/// Records a trial's in-trial `speed` (None: not calibrated CPU work) of cell `cell` in
/// `meta`, judged against the run's `steady` speeds. The trial's own work is measured
/// directly, so the reference loop's reading around it (a 3 ms proxy) no longer makes it
/// noisy: at its steady speed it is not, and slowed, the slowed flag says so.
pub fn record(meta: &mut TrialMeta, speed: Option<f64>, steady: &mut Steady, cell: usize) {
    meta.speed_in_trial = speed;
    if let Some(v) = speed {
        let (s, slowed) = steady.judge(cell, v);
        meta.speed_in_trial_steady = Some(s);
        meta.slowed = Some(slowed);
        meta.noisy = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::records::{TaskRecord, TrialStatus};

    fn outcome(tasks: &[(u64, u64)]) -> TrialOutcome {
        let mut o = TrialOutcome::not_run(TrialStatus::Ok, "");
        o.tasks = tasks
            .iter()
            .map(|&(units, cpu_ns)| TaskRecord {
                work_units: units,
                cpu_ns: Some(cpu_ns),
                ..TaskRecord::default()
            })
            .collect();
        o
    }

    #[test]
    fn a_trial_whose_cpu_time_per_unit_is_inflated_is_slow_and_flagged() {
        let cpu = Workload::default();
        assert_eq!(cpu.kind, WorkloadKind::Cpu);
        // Calibrated at 1000 units per CPU ms: 74 000 units are 74 ms of calibrated work.
        let rate = 1e6;
        // Two tasks of 37 000 units each did them in 37 ms of CPU: as calibrated.
        let steady = outcome(&[(37_000, 37_000_000), (37_000, 37_000_000)]);
        assert!((speed(&cpu, rate, &steady).unwrap() - 1.0).abs() < 1e-12);
        // The trial: 144.6 ms of CPU for 74 ms of calibrated work: 74 / 144.6.
        let slow = outcome(&[(37_000, 72_300_000), (37_000, 72_300_000)]);
        let s = speed(&cpu, rate, &slow).unwrap();
        assert!((s - 74.0 / 144.6).abs() < 1e-12, "{s}");
        let mut run = Steady::default();
        for _ in 0..4 {
            assert!(!run.judge(0, 1.0).1);
        }
        assert_eq!(
            run.judge(0, s),
            (1.0, true),
            "a trial at {s} of the steady speed is slowed"
        );
        assert!(!run.judge(0, 0.95).1, "5 % slower is within the limit");
        // An antagonist's work and a task without a CPU clock are not counted.
        let mut mixed = slow.clone();
        mixed.tasks.push(TaskRecord {
            work_units: 1,
            cpu_ns: Some(1_000_000_000),
            antagonist: true,
            ..TaskRecord::default()
        });
        mixed.tasks.push(TaskRecord {
            work_units: 500,
            cpu_ns: None,
            ..TaskRecord::default()
        });
        assert_eq!(speed(&cpu, rate, &mixed), Some(s));
        let io = Workload {
            kind: WorkloadKind::Io,
            ..Workload::default()
        };
        assert_eq!(speed(&io, rate, &steady), None);
    }

    #[test]
    fn a_cell_slower_by_its_nature_or_a_slow_calibration_is_not_flagged() {
        let mut run = Steady::default();
        // The calibration was taken at a slow moment: everything reads 1.3.
        for _ in 0..6 {
            assert!(!run.judge(0, 1.3).1);
        }
        // A cell that always runs at 0.85 of the others (its policy's cache misses): its first
        // trials are judged against the run (0.85 / 1.3 < 0.9: flagged), then its own.
        let flags: Vec<bool> = (0..5).map(|_| run.judge(1, 0.85 * 1.3).1).collect();
        assert_eq!(flags, vec![true, true, false, false, false]);
        // The run's first trial is judged against the calibration.
        assert!(Steady::default().judge(0, 0.5).1);
        assert!(!Steady::default().judge(0, 0.95).1);
    }

    #[test]
    fn the_trials_own_speed_decides_over_the_reference_loop() {
        // The quick experiment of 2026-11-28: the loop read half speed before a trial whose
        // tasks ran at 0.976 of the calibration, as the run's other trials did.
        let mut steady = Steady::default();
        for v in [1.01, 1.0, 1.003, 1.002] {
            record(&mut TrialMeta::default(), Some(v), &mut steady, 0);
        }
        let mut meta = TrialMeta {
            noisy: true,
            ..TrialMeta::default()
        };
        record(&mut meta, Some(0.976), &mut steady, 0);
        assert!(!meta.noisy && meta.slowed == Some(false), "{meta:?}");
        let mut slow = TrialMeta {
            noisy: true,
            ..TrialMeta::default()
        };
        record(&mut slow, Some(0.8), &mut steady, 0);
        assert_eq!(slow.slowed, Some(true));
        // Without calibrated CPU work the loop's flag stands.
        let mut io = TrialMeta {
            noisy: true,
            ..TrialMeta::default()
        };
        record(&mut io, None, &mut steady, 1);
        assert!(io.noisy && io.slowed.is_none());
    }
}
