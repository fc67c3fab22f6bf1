//! Read side of each trial's quality: its reference speed before and after, steal, the noise
//! flag, RT throttling, interference (outside CPU time, whose it was, the disturbed flag), the
//! in-trial speed and the slowed flag, and its attempt (re-runs), in run order.

use super::db::params;
use super::Store;
use crate::error::Result;
use schedlab_core::records::TrialStatus;
use serde::Serialize;

/// What is stored about the conditions of one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrialQuality {
    /// The trial's id (run order).
    pub trial_id: i64,
    /// Its run.
    pub run_id: i64,
    /// Index of its cell in the run.
    pub cell_index: i64,
    /// Index of the trial in its cell.
    pub trial_index: i64,
    /// Its round.
    pub round: i64,
    /// Ok, timeout, skipped or failed.
    #[serde(serialize_with = "crate::query::status_name")]
    pub status: TrialStatus,
    /// Reference loop speed just before the trial, relative to its calibration.
    pub speed_before: Option<f64>,
    /// The same just after.
    pub speed_after: Option<f64>,
    /// Steal share of the trial's CPUs during the trial, percent.
    pub steal_pct: Option<f64>,
    /// Flagged noisy (a reference speed more than 10 % below the run's steady speed).
    pub noisy: bool,
    /// RT throttling cut its RT tasks short (None: nothing to judge).
    pub rt_throttled: Option<bool>,
    /// CPU time used on its CPUs by anything outside it, ns (None: not measured).
    pub outside_cpu_ns: Option<i64>,
    /// That time as a share of its CPUs' time, 0..1.
    pub outside_share: Option<f64>,
    /// Where the busy time was read (schedstat, cpuacct, cgroup2, proc-stat).
    pub interference_source: Option<String>,
    /// Flagged disturbed (other processes' share above the threshold).
    pub disturbed: bool,
    /// Other processes' CPU time on its CPUs, ns.
    pub outside_process_ns: Option<i64>,
    /// That time as a share of its CPUs' time, 0..1.
    pub outside_process_share: Option<f64>,
    /// Kernel threads' CPU time on its CPUs, ns.
    pub outside_kthread_ns: Option<i64>,
    /// Interrupts on its CPUs, ns.
    pub outside_irq_ns: Option<i64>,
    /// Kernel work it caused, ns.
    pub kernel_cpu_ns: Option<i64>,
    /// The run's steady reference speed against the calibration.
    pub speed_steady: Option<f64>,
    /// Speed of its calibrated CPU work against the calibration.
    pub speed_in_trial: Option<f64>,
    /// Flagged slowed (None: not judged).
    pub slowed: Option<bool>,
    /// 0: the planned trial; k: its k-th re-run.
    pub retry: i64,
    /// Contaminated and run again.
    pub retried: bool,
}

/// The trials of run `run_id` in run order, with their quality; warm-up trials only if
/// `warmup`. Trials stored before these columns existed read as unflagged, unmeasured.
pub fn trial_quality(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<TrialQuality>> {
    store.db.query(
        "SELECT t.trial_id, c.cell_index, t.trial_index, t.round, t.status, t.speed_before, t.speed_after,
                t.trial_steal_pct, t.noisy, t.rt_throttled, t.outside_cpu_ns, t.outside_share, t.interference_source, t.disturbed,
                t.outside_process_ns, t.outside_process_share, t.outside_kthread_ns, t.outside_irq_ns, t.kernel_cpu_ns,
                t.speed_steady, t.speed_in_trial, t.slowed, t.retry, t.retried, t.run_id
         FROM trials t JOIN cells c ON c.cell_id = t.cell_id
         WHERE t.run_id = ?1 AND (t.warmup = 0 OR ?2) ORDER BY t.trial_id",
        params![run_id, warmup],
        |r| {
            Ok(TrialQuality {
                trial_id: r.get(0)?,
                cell_index: r.get(1)?,
                trial_index: r.get(2)?,
                round: r.get(3)?,
                status: crate::query::stored(r.get(4)?, "trials.status")?,
                speed_before: r.get(5)?,
                speed_after: r.get(6)?,
                steal_pct: r.get(7)?,
                noisy: r.get::<Option<bool>>(8)?.unwrap_or(false),
                rt_throttled: r.get(9)?,
                outside_cpu_ns: r.get(10)?,
                outside_share: r.get(11)?,
                interference_source: r.get(12)?,
                disturbed: r.get::<Option<bool>>(13)?.unwrap_or(false),
                outside_process_ns: r.get(14)?,
                outside_process_share: r.get(15)?,
                outside_kthread_ns: r.get(16)?,
                outside_irq_ns: r.get(17)?,
                kernel_cpu_ns: r.get(18)?,
                speed_steady: r.get(19)?,
                speed_in_trial: r.get(20)?,
                slowed: r.get(21)?,
                retry: r.get(22)?,
                retried: r.get(23)?,
                run_id: r.get(24)?,
            })
        },
    )
}
