//! The workloads' own figures in the store (schema 4): a trial's (`trials.ops` ...
//! `trials.late_max_ns`), a task's (`tasks.workload_role` ... `tasks.late_max_ns`) and the
//! histograms behind them; and their reading for reports.

use super::db::{params, Db, Value};
use anyhow::Result;
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

/// The values of a task's figure columns, in `write::TASK_COLUMNS` order (workload_role to
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
        .map(|(kind, bytes)| {
            params![trial_id, t.task_index, hist_name(*kind, f), bytes].to_vec()
        })
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
