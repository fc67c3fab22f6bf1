//! Task groups (CPU cgroups) of trials: written with the trial (`task_groups`), and read back
//! per ok trial for `stats` and `report`.

use super::db::{params, Db};
use super::Store;
use crate::error::Result;
use schedlab_core::records::GroupRecord;

/// Columns of a `task_groups` row.
const COLUMNS: [&str; 17] = [
    "trial_id",
    "group_index",
    "name",
    "tasks",
    "weight",
    "quota_us",
    "period_us",
    "idle",
    "cpus",
    "is_partition",
    "rt_runtime_us",
    "usage_ns",
    "nr_periods",
    "nr_throttled",
    "throttled_ns",
    "contended_ns",
    "usage_contended_ns",
];

/// Stores the groups of trial `trial_id`, in the trial's transaction.
pub(super) fn insert_groups(db: &Db, trial_id: i64, groups: &[GroupRecord]) -> Result<()> {
    let n = |v: Option<u64>| v.map(|v| v as i64);
    let rows: Vec<_> = groups
        .iter()
        .map(|g| {
            params![
                trial_id,
                g.index,
                g.name.as_str(),
                g.tasks,
                g.weight,
                n(g.quota_us),
                n(g.period_us),
                g.idle,
                g.cpus.as_deref(),
                g.partition,
                n(g.rt_runtime_us),
                n(g.usage_ns),
                n(g.nr_periods),
                n(g.nr_throttled),
                n(g.throttled_ns),
                n(g.contended_ns),
                n(g.usage_contended_ns),
            ]
            .to_vec()
        })
        .collect();
    db.insert_rows("task_groups", &COLUMNS, &rows)
}

/// One group of one ok trial, with its settings, figures and tasks' tails.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupRow {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// The trial.
    pub trial_id: i64,
    /// Index of the group in its cell.
    pub group_index: i64,
    /// Its name.
    pub name: String,
    /// Its measured tasks.
    pub tasks: i64,
    /// `cpu.weight` (None: the default, 100).
    pub weight: Option<i64>,
    /// Bandwidth quota, µs per `period_us` (None: no limit).
    pub quota_us: Option<i64>,
    /// Bandwidth period, µs.
    pub period_us: Option<i64>,
    /// Its CPUs (None: all).
    pub cpus: Option<String>,
    /// A partition.
    pub partition: bool,
    /// CPU time of its tasks over the measured period, ns.
    pub usage_ns: Option<i64>,
    /// `nr_periods` over the measured period.
    pub nr_periods: Option<i64>,
    /// `nr_throttled` over the measured period.
    pub nr_throttled: Option<i64>,
    /// Throttled time over the measured period, ns.
    pub throttled_ns: Option<i64>,
    /// Length of the contended window, ns.
    pub contended_ns: Option<i64>,
    /// CPU time of its tasks in the contended window, ns.
    pub usage_contended_ns: Option<i64>,
    /// The largest p99 wake-up latency of its tasks (periodic work), ns.
    pub lat_p99_ns: Option<i64>,
    /// The longest turnaround of its tasks, ns.
    pub turnaround_max_ns: Option<i64>,
}

/// Every group of every ok trial of run `run_id` (warm-up trials only if `warmup`), in cell,
/// trial and group order.
pub fn group_rows(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<GroupRow>> {
    store.db.query(
        "SELECT c.cell_index, g.trial_id, g.group_index, g.name, g.tasks, g.weight, g.quota_us, g.period_us, g.cpus,
                g.is_partition, g.usage_ns, g.nr_periods, g.nr_throttled, g.throttled_ns, g.contended_ns,
                g.usage_contended_ns,
                (SELECT MAX(t.lat_p99_ns) FROM tasks t
                  WHERE t.trial_id = g.trial_id AND t.group_name = g.name AND t.role = 'task'),
                (SELECT MAX(t.turnaround_ns) FROM tasks t
                  WHERE t.trial_id = g.trial_id AND t.group_name = g.name AND t.role = 'task')
         FROM task_groups g JOIN trials tr ON tr.trial_id = g.trial_id JOIN cells c ON c.cell_id = tr.cell_id
         WHERE tr.run_id = ?1 AND tr.status = 'ok' AND (tr.warmup = 0 OR ?2)
         ORDER BY c.cell_index, g.trial_id, g.group_index",
        params![run_id, warmup],
        |r| {
            Ok(GroupRow {
                cell_index: r.get(0)?,
                trial_id: r.get(1)?,
                group_index: r.get(2)?,
                name: r.get(3)?,
                tasks: r.get(4)?,
                weight: r.get(5)?,
                quota_us: r.get(6)?,
                period_us: r.get(7)?,
                cpus: r.get(8)?,
                partition: r.get::<i64>(9)? != 0,
                usage_ns: r.get(10)?,
                nr_periods: r.get(11)?,
                nr_throttled: r.get(12)?,
                throttled_ns: r.get(13)?,
                contended_ns: r.get(14)?,
                usage_contended_ns: r.get(15)?,
                lat_p99_ns: r.get(16)?,
                turnaround_max_ns: r.get(17)?,
            })
        },
    )
}
