//! One value per trial for every metric of a cell, with the round it ran in: the unit the
//! report's tests run on (trials are the replicates; the tasks of one trial are not).

use super::{cell_samples, Metric};
use schedlab_analyze::Location;
use schedlab_store::query::CellView;

/// What one tested value stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TestUnit {
    /// A per-trial metric: the trial's own value.
    Trial,
    /// A per-task metric: the median of the trial's tasks.
    TrialMedian,
}

impl TestUnit {
    /// The unit of `metric`'s tests.
    pub fn of(metric: Metric) -> TestUnit {
        if metric.per_task() {
            TestUnit::TrialMedian
        } else {
            TestUnit::Trial
        }
    }

    /// "trials" or "trial medians", as in "6 vs 6 trial medians".
    pub fn plural(self) -> &'static str {
        match self {
            TestUnit::Trial => "trials",
            TestUnit::TrialMedian => "trial medians",
        }
    }
}

/// Per metric (indexed by [`Metric::index`]), one `(round, value)` per ok trial of the cell,
/// in trial order, in the metric's unit: per-trial metrics as they are, per-task metrics as
/// the median of the trial's tasks. Trials without a value for a metric are left out.
pub fn trial_values(c: &CellView) -> Vec<Vec<(i64, f64)>> {
    let mut out: Vec<Vec<(i64, f64)>> = vec![Vec::new(); Metric::ALL.len()];
    let n = c.tasks.max(1) as f64;
    for (i, &m) in c.makespans_ns.iter().enumerate() {
        let round = c.trial_rounds.get(i).copied().unwrap_or(i as i64);
        let ms = m as f64 / 1e6;
        out[Metric::Makespan.index()].push((round, ms));
        out[Metric::MakespanPerTask.index()].push((round, ms / n));
    }
    for rows in c.task_rows.chunk_by(|a, b| a.trial_id == b.trial_id) {
        let one = CellView {
            tasks: c.tasks,
            task_rows: rows.to_vec(),
            ..CellView::default()
        };
        let samples = cell_samples(&one);
        for m in Metric::ALL {
            if matches!(m, Metric::Makespan | Metric::MakespanPerTask) {
                continue;
            }
            if let Some(v) = Location::Median.of(&samples[m.index()]) {
                out[m.index()].push((rows[0].round, v));
            }
        }
    }
    // The workloads' own figures are one value per trial already.
    for (round, values) in super::workload::per_trial(c) {
        for (m, v) in values {
            out[m.index()].push((round, v));
        }
    }
    out
}

/// The values of `trial_values(..)[metric]` without their rounds.
pub fn values(per_trial: &[(i64, f64)]) -> Vec<f64> {
    per_trial.iter().map(|&(_, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_store::query::TaskRow;

    fn task(trial_id: i64, round: i64, turnaround_ms: i64, nivcsw: i64) -> TaskRow {
        TaskRow {
            trial_id,
            round,
            response_ns: Some(1_000_000),
            turnaround_ns: Some(turnaround_ms * 1_000_000),
            cpu_ns: 4_000_000,
            nivcsw,
            ..TaskRow::default()
        }
    }

    #[test]
    fn per_task_metrics_become_the_median_of_each_trials_tasks_with_its_round() {
        // Trial 11 (round 0): turnarounds 10, 20, 90 ms -> median 20; trial 12 (round 1):
        // 30, 40 ms -> median 35. Pooled, the five tasks would have a median of 30.
        let c = CellView {
            tasks: 3,
            makespans_ns: vec![90_000_000, 40_000_000],
            trial_rounds: vec![0, 1],
            task_rows: vec![
                task(11, 0, 10, 1),
                task(11, 0, 20, 2),
                task(11, 0, 90, 9),
                task(12, 1, 30, 4),
                task(12, 1, 40, 6),
            ],
            ..CellView::default()
        };
        let v = trial_values(&c);
        assert_eq!(v[Metric::Turnaround.index()], vec![(0, 20.0), (1, 35.0)]);
        assert_eq!(v[Metric::Ivcsw.index()], vec![(0, 2.0), (1, 5.0)]);
        assert_eq!(v[Metric::Makespan.index()], vec![(0, 90.0), (1, 40.0)]);
        assert_eq!(
            v[Metric::MakespanPerTask.index()],
            vec![(0, 30.0), (1, 40.0 / 3.0)]
        );
        // Per-trial totals stay totals: 3 tasks x 4 ms and 2 x 4 ms of CPU.
        assert_eq!(v[Metric::TrialCpu.index()], vec![(0, 12.0), (1, 8.0)]);
        assert_eq!(values(&v[Metric::TrialIvcsw.index()]), vec![12.0, 10.0]);
        assert_eq!(TestUnit::of(Metric::Turnaround), TestUnit::TrialMedian);
        assert_eq!(TestUnit::of(Metric::Makespan).plural(), "trials");
    }
}
