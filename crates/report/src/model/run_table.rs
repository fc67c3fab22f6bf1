//! The per-cell medians printed after a run (`schedlab run`): one [`CellLine`] per cell,
//! computed from its stored rows; `terminal::render` only formats them. The medians are those
//! of the trial values, as everywhere in the report (per-task metrics: the median over trials
//! of each trial's median over its tasks), so a cell and metric has one median in every output.

use super::trials::{trial_values, values};
use super::Metric;
use schedlab_core::policy::{PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind, TrialStatus};
use schedlab_store::query::CellView;

/// Median of integers (mean of the two middle values for even counts); None when empty.
pub fn median(values: impl IntoIterator<Item = i64>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().map(|x| x as f64).collect();
    schedlab_analyze::median(&v)
}

/// What the table after a run shows of each of `cells`, in their order.
pub fn lines(cells: &[CellView]) -> Vec<CellLine> {
    cells.iter().map(CellLine::of).collect()
}

/// What the table after a run shows of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellLine {
    /// Policy.
    pub policy: PolicyKind,
    /// Priority mode.
    pub priorities: PriorityMode,
    /// The workload with the axes only some runs have (antagonists, I/O scheduler, kernel
    /// settings).
    pub workload: String,
    /// Task count.
    pub tasks: i64,
    /// Task kind.
    pub kind: TaskKind,
    /// Start mode.
    pub start: StartMode,
    /// The CPUs the tasks were pinned to (None: all).
    pub cpus: Option<String>,
    /// Trials ok.
    pub ok: i64,
    /// Trials in all.
    pub trials: i64,
    /// Median makespan over trials, ns.
    pub makespan_p50_ns: Option<f64>,
    /// Median over trials of each trial's median response, ns.
    pub response_p50_ns: Option<f64>,
    /// Largest response of any task, ns.
    pub response_max_ns: Option<f64>,
    /// Median over trials of each trial's median turnaround, ns.
    pub turnaround_p50_ns: Option<f64>,
    /// Largest turnaround (the slowest task of any trial), ns.
    pub turnaround_max_ns: Option<f64>,
    /// Median over trials of each trial's median CPU time per task, ns.
    pub cpu_p50_ns: Option<f64>,
    /// Median over trials of each trial's median voluntary switches per task (count).
    pub vcsw_p50: Option<f64>,
    /// Median over trials of each trial's median involuntary switches per task (count).
    pub ivcsw_p50: Option<f64>,
    /// Median over trials of each trial's median run-queue wait per task, ns.
    pub rq_wait_p50_ns: Option<f64>,
    /// Why trials were not ok, as "policy workload xN: 2 skipped: REASON", if any.
    pub note: Option<String>,
}

impl CellLine {
    /// The line of one cell.
    pub fn of(c: &CellView) -> CellLine {
        let resp: Vec<i64> = c.task_rows.iter().filter_map(|r| r.response_ns).collect();
        let turn: Vec<i64> = c.task_rows.iter().filter_map(|r| r.turnaround_ns).collect();
        let max = |v: &[i64]| v.iter().max().map(|&v| v as f64);
        // The report's trial values, in the metrics' units (ms for times).
        let per_trial = trial_values(c);
        let p50 = |m: Metric| schedlab_analyze::median(&values(&per_trial[m.index()]));
        let p50_ns = |m: Metric| p50(m).map(|ms| ms * 1e6);
        CellLine {
            policy: c.policy,
            priorities: c.priorities,
            workload: workload_cell(c),
            tasks: c.tasks,
            kind: c.kind,
            start: c.start,
            cpus: c.cpus.clone(),
            ok: c.count(TrialStatus::Ok),
            trials: c.statuses.iter().map(|(_, n)| n).sum(),
            makespan_p50_ns: median(c.makespans_ns.iter().copied()),
            response_p50_ns: p50_ns(Metric::Response),
            response_max_ns: max(&resp),
            turnaround_p50_ns: p50_ns(Metric::Turnaround),
            turnaround_max_ns: max(&turn),
            cpu_p50_ns: p50_ns(Metric::Cpu),
            vcsw_p50: p50(Metric::Vcsw),
            ivcsw_p50: p50(Metric::Ivcsw),
            rq_wait_p50_ns: p50_ns(Metric::RqWait),
            note: note(c),
        }
    }
}

/// Why some of a cell's trials were not ok, if it says.
fn note(c: &CellView) -> Option<String> {
    let r = c.reason.as_ref()?;
    let bad: Vec<String> = super::notes::not_ok(&c.statuses)
        .iter()
        .map(|(s, n)| format!("{n} {}", s.name()))
        .collect();
    Some(format!(
        "{} {} x{}: {}: {}",
        c.policy,
        c.workload,
        c.tasks,
        bad.join(", "),
        r
    ))
}

/// The workload with the axes that only some runs have (antagonists, I/O scheduler, kernel
/// settings).
fn workload_cell(c: &CellView) -> String {
    let mut s = c.workload.clone();
    if c.antagonists > 0 {
        s.push_str(&format!(" +{} antagonists", c.antagonists));
    }
    if let Some(io) = &c.io_scheduler {
        s.push_str(&format!(" io={io}"));
    }
    if let Some(settings) = &c.settings {
        s.push(' ');
        s.push_str(settings);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(trial_id: i64, response_ms: i64, nivcsw: i64) -> schedlab_store::query::TaskRow {
        schedlab_store::query::TaskRow {
            trial_id,
            round: trial_id,
            response_ns: Some(response_ms * 1_000_000),
            turnaround_ns: Some(20_000_000),
            nivcsw,
            ..Default::default()
        }
    }

    #[test]
    fn per_task_medians_are_medians_of_trial_medians_as_in_the_report() {
        // Trial 1's responses 1, 2, 9 ms (median 2), trial 2's 3, 4, 5 ms (median 4): the
        // median of the trial medians is 3 ms; every task pooled would give 3.5 ms.
        let c = CellView {
            tasks: 3,
            makespans_ns: vec![30_000_000, 40_000_000],
            trial_rounds: vec![1, 2],
            task_rows: vec![
                task(1, 1, 1),
                task(1, 2, 1),
                task(1, 9, 2),
                task(2, 3, 4),
                task(2, 4, 4),
                task(2, 5, 6),
            ],
            ..Default::default()
        };
        let line = CellLine::of(&c);
        assert_eq!(line.response_p50_ns, Some(3_000_000.0));
        assert_eq!(line.response_max_ns, Some(9_000_000.0));
        // Involuntary switches: trial medians 1 and 4, their median 2.5 (pooled: 3).
        assert_eq!(line.ivcsw_p50, Some(2.5));
        assert_eq!(line.makespan_p50_ns, Some(35_000_000.0));
        // The report's summary of the same cell and metric (stats, HTML, claims): one median.
        let report =
            schedlab_analyze::summarize(&values(&trial_values(&c)[Metric::Response.index()]))
                .expect("summary");
        assert_eq!(line.response_p50_ns, Some(report.median * 1e6));
    }

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert_eq!(median([3, 1, 2]), Some(2.0));
        assert_eq!(median([4, 1, 2, 3]), Some(2.5));
        assert_eq!(median(Vec::<i64>::new()), None);
    }
}
