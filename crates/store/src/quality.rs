//! Read side of each trial's quality: its reference speed before and after, steal, the noise
//! flag, RT throttling and interference (outside CPU time, the disturbed flag), in run order.

use super::db::params;
use super::Store;
use crate::error::Result;
use serde::Serialize;

/// What is stored about the conditions of one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrialQuality {
    /// The trial's id (run order).
    pub trial_id: i64,
    /// Index of its cell in the run.
    pub cell_index: i64,
    /// Index of the trial in its cell.
    pub trial_index: i64,
    /// Its round.
    pub round: i64,
    /// ok, timeout, skipped or failed.
    pub status: String,
    /// Reference loop speed just before the trial, relative to its calibration.
    pub speed_before: Option<f64>,
    /// The same just after.
    pub speed_after: Option<f64>,
    /// Steal share of the trial's CPUs during the trial, percent.
    pub steal_pct: Option<f64>,
    /// Flagged noisy (a reference speed more than 10 % off).
    pub noisy: bool,
    /// RT throttling cut its RT tasks short (None: nothing to judge).
    pub rt_throttled: Option<bool>,
    /// CPU time used on its CPUs by anything outside it, ns (None: not measured).
    pub outside_cpu_ns: Option<i64>,
    /// That time as a share of its CPUs' time, 0..1.
    pub outside_share: Option<f64>,
    /// Where the busy time was read (schedstat, cpuacct, cgroup2, proc-stat).
    pub interference_source: Option<String>,
    /// Flagged disturbed (outside share above the threshold).
    pub disturbed: bool,
}

/// The trials of run `run_id` in run order, with their quality; warm-up trials only if
/// `warmup`. Trials stored before these columns existed read as unflagged, unmeasured.
pub fn trial_quality(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<TrialQuality>> {
    store.db.query(
        "SELECT t.trial_id, c.cell_index, t.trial_index, t.round, t.status, t.speed_before, t.speed_after,
                t.trial_steal_pct, t.noisy, t.rt_throttled, t.outside_cpu_ns, t.outside_share, t.interference_source, t.disturbed
         FROM trials t JOIN cells c ON c.cell_id = t.cell_id
         WHERE t.run_id = ?1 AND (t.warmup = 0 OR ?2) ORDER BY t.trial_id",
        params![run_id, warmup],
        |r| {
            Ok(TrialQuality {
                trial_id: r.get(0)?,
                cell_index: r.get(1)?,
                trial_index: r.get(2)?,
                round: r.get(3)?,
                status: r.get(4)?,
                speed_before: r.get(5)?,
                speed_after: r.get(6)?,
                steal_pct: r.get(7)?,
                noisy: r.get::<Option<bool>>(8)?.unwrap_or(false),
                rt_throttled: r.get(9)?,
                outside_cpu_ns: r.get(10)?,
                outside_share: r.get(11)?,
                interference_source: r.get(12)?,
                disturbed: r.get::<Option<bool>>(13)?.unwrap_or(false),
            })
        },
    )
}
