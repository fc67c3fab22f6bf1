//! The per-cell medians printed after a run (`schedlab run`): one [`CellLine`] per cell,
//! computed from its stored rows; `terminal::render` only formats them.

use schedlab_store::query::CellView;

/// Median of integers (mean of the two middle values for even counts); None when empty.
pub fn median(values: impl IntoIterator<Item = i64>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().map(|x| x as f64).collect();
    schedlab_analyze::median(&v)
}

/// What the table after a run shows of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellLine {
    /// Policy.
    pub policy: String,
    /// Priority mode.
    pub priorities: String,
    /// The workload with the axes only some runs have (antagonists, I/O scheduler, kernel
    /// settings).
    pub workload: String,
    /// Task count.
    pub tasks: i64,
    /// Task kind.
    pub kind: String,
    /// Start mode.
    pub start: String,
    /// The CPUs the tasks were pinned to (None: all).
    pub cpus: Option<String>,
    /// Trials ok.
    pub ok: i64,
    /// Trials in all.
    pub trials: i64,
    /// Median makespan over trials, ns.
    pub makespan_p50_ns: Option<f64>,
    /// Median response over every task of every trial, ns.
    pub response_p50_ns: Option<f64>,
    /// Largest response, ns.
    pub response_max_ns: Option<f64>,
    /// Median turnaround over every task, ns.
    pub turnaround_p50_ns: Option<f64>,
    /// Largest turnaround (the slowest task), ns.
    pub turnaround_max_ns: Option<f64>,
    /// Median CPU time per task, ns.
    pub cpu_p50_ns: Option<f64>,
    /// Median voluntary switches per task (count).
    pub vcsw_p50: Option<f64>,
    /// Median involuntary switches per task (count).
    pub ivcsw_p50: Option<f64>,
    /// Median run-queue wait per task, ns.
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
        CellLine {
            policy: c.policy.clone(),
            priorities: c.priorities.clone(),
            workload: workload_cell(c),
            tasks: c.tasks,
            kind: c.kind.clone(),
            start: c.start.clone(),
            cpus: c.cpus.clone(),
            ok: c.count("ok"),
            trials: c.statuses.iter().map(|(_, n)| n).sum(),
            makespan_p50_ns: median(c.makespans_ns.iter().copied()),
            response_p50_ns: median(resp.iter().copied()),
            response_max_ns: max(&resp),
            turnaround_p50_ns: median(turn.iter().copied()),
            turnaround_max_ns: max(&turn),
            cpu_p50_ns: median(c.task_rows.iter().map(|r| r.cpu_ns)),
            vcsw_p50: median(c.task_rows.iter().map(|r| r.nvcsw)),
            ivcsw_p50: median(c.task_rows.iter().map(|r| r.nivcsw)),
            rq_wait_p50_ns: median(c.task_rows.iter().map(|r| r.run_delay_ns)),
            note: note(c),
        }
    }
}

/// Why some of a cell's trials were not ok, if it says.
fn note(c: &CellView) -> Option<String> {
    let r = c.reason.as_ref()?;
    let bad: Vec<String> = c
        .statuses
        .iter()
        .filter(|(s, _)| s != "ok")
        .map(|(s, n)| format!("{n} {s}"))
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

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert_eq!(median([3, 1, 2]), Some(2.0));
        assert_eq!(median([4, 1, 2, 3]), Some(2.5));
        assert_eq!(median(Vec::<i64>::new()), None);
    }
}
