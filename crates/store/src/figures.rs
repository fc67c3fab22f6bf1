//! The workloads' own figures in the store (schema 7): a trial's (`trials.ops` ...
//! `trials.late_max_ns`), a task's (`tasks.workload_role` ... `tasks.late_max_ns`) and the
//! histograms behind them; and their reading for reports.

use super::db::{params, Db, Value};
use crate::Result;
use schedlab_core::records::{TaskRecord, TrialFigures};
use schedlab_core::workload::HistKind;

/// Stores trial `trial_id`'s figures (nothing when it has none).
pub(super) fn update_trial(db: &Db, trial_id: i64, f: Option<&TrialFigures>) -> Result<()> {
    let Some(f) = f else {
        return Ok(());
    };
    let w = f.wakeup.as_ref();
    let o = f.op.as_ref();
    let slack = |i: usize| f.slack_ns.map(|s| s[i]);
    db.execute(
        "UPDATE trials SET ops = ?2, ops_per_s = ?3, wake_p50_ns = ?4, wake_p90_ns = ?5, wake_p99_ns = ?6,
                wake_p999_ns = ?7, op_p50_ns = ?8, op_p90_ns = ?9, op_p99_ns = ?10, op_p999_ns = ?11,
                misses = ?12, miss_pct = ?13, slack_p1_ns = ?14, slack_p50_ns = ?15, slack_p99_ns = ?16,
                late_max_ns = ?17
         WHERE trial_id = ?1",
        params![
            trial_id,
            f.ops as i64,
            f.ops_per_s,
            w.map(|l| l.p50_ns as i64),
            w.map(|l| l.p90_ns as i64),
            w.map(|l| l.p99_ns as i64),
            w.map(|l| l.p999_ns as i64),
            o.map(|l| l.p50_ns as i64),
            o.map(|l| l.p90_ns as i64),
            o.map(|l| l.p99_ns as i64),
            o.map(|l| l.p999_ns as i64),
            f.misses as i64,
            f.miss_pct,
            slack(0),
            slack(1),
            slack(2),
            f.late_max_ns.map(|v| v as i64),
        ],
    )?;
    Ok(())
}

/// The values of a task's figure columns, in `rows::TASK_COLUMNS` order (workload_role to
/// late_max_ns; NULL for a task without figures).
pub(super) fn task_values(t: &TaskRecord) -> Vec<Value> {
    let Some(f) = t.figures.as_ref() else {
        return vec![Value::Null; 11];
    };
    let op = f.op.as_ref();
    let slack = |i: usize| f.slack_ns.map(|s| s[i]);
    params![
        f.role.map(|r| r.name()),
        f.role.map(|_| f.bytes as i64),
        f.misses as i64,
        op.map(|l| l.count as i64),
        op.map(|l| l.p50_ns as i64),
        op.map(|l| l.p99_ns as i64),
        op.map(|l| l.max_ns as i64),
        slack(0),
        slack(1),
        slack(2),
        f.late_max_ns.map(|v| v as i64),
    ]
    .to_vec()
}

/// The `histograms` rows of a task's figures (the wake-up latency is stored apart).
pub(super) fn task_histograms(trial_id: i64, t: &TaskRecord) -> Vec<Vec<Value>> {
    let Some(f) = t.figures.as_ref() else {
        return Vec::new();
    };
    f.hists
        .iter()
        .map(|(kind, bytes)| params![trial_id, t.task_index, hist_name(*kind, f), bytes].to_vec())
        .collect()
}

/// The store's name of a task's histogram: the operation histogram after what it times.
fn hist_name(kind: HistKind, f: &schedlab_core::workload::TaskFigures) -> &'static str {
    use schedlab_core::workload::{Role, WorkloadKind};
    let workload = match f.role {
        Some(Role::Receiver { .. } | Role::Sender { .. }) => WorkloadKind::Messaging,
        _ => WorkloadKind::Request,
    };
    kind.metric(workload)
}

/// A trial's stored figures, as reports read them (ns, counts; None where the workload has
/// no such figure).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FigureRow {
    /// The trial.
    pub trial_id: i64,
    /// Its round.
    pub round: i64,
    /// Its makespan, ns.
    pub makespan_ns: Option<i64>,
    /// Operations (messages, requests, round trips, periods).
    pub ops: Option<i64>,
    /// Operations per second of the makespan.
    pub ops_per_s: Option<f64>,
    /// Wake-up latency p50, p90, p99, p99.9, ns.
    pub wake_ns: [Option<i64>; 4],
    /// Operation latency p50, p90, p99, p99.9, ns.
    pub op_ns: [Option<i64>; 4],
    /// Missed periods or dropped requests.
    pub misses: Option<i64>,
    /// Missed periods, percent.
    pub miss_pct: Option<f64>,
    /// Slack p1, p50, p99, ns.
    pub slack_ns: [Option<i64>; 3],
    /// Largest lateness, ns.
    pub late_max_ns: Option<i64>,
    /// Voluntary plus involuntary switches of the trial's measured tasks.
    pub switches: Option<i64>,
}

/// The figures of cell `cell_id`'s ok trials (warm-up ones too if `warmup`) that have any, in
/// trial order.
pub(super) fn rows(db: &Db, cell_id: i64, warmup: bool) -> Result<Vec<FigureRow>> {
    db.query(
        "SELECT tr.trial_id, tr.round, tr.makespan_ns, tr.ops, tr.ops_per_s, tr.wake_p50_ns, tr.wake_p90_ns,
                tr.wake_p99_ns, tr.wake_p999_ns, tr.op_p50_ns, tr.op_p90_ns, tr.op_p99_ns, tr.op_p999_ns,
                tr.misses, tr.miss_pct, tr.slack_p1_ns, tr.slack_p50_ns, tr.slack_p99_ns, tr.late_max_ns,
                (SELECT SUM(COALESCE(t.nvcsw, 0) + COALESCE(t.nivcsw, 0)) FROM tasks t
                  WHERE t.trial_id = tr.trial_id AND t.role = 'task')
         FROM trials tr
         WHERE tr.cell_id = ?1 AND tr.status = 'ok' AND (tr.warmup = 0 OR ?2) AND tr.ops IS NOT NULL
         ORDER BY tr.trial_id",
        params![cell_id, warmup],
        |r| {
            Ok(FigureRow {
                trial_id: r.get(0)?,
                round: r.get(1)?,
                makespan_ns: r.get(2)?,
                ops: r.get(3)?,
                ops_per_s: r.get(4)?,
                wake_ns: [r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?],
                op_ns: [r.get(9)?, r.get(10)?, r.get(11)?, r.get(12)?],
                misses: r.get(13)?,
                miss_pct: r.get(14)?,
                slack_ns: [r.get(15)?, r.get(16)?, r.get(17)?],
                late_max_ns: r.get(18)?,
                switches: r.get(19)?,
            })
        },
    )
}
