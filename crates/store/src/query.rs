//! Read-side queries: a run, its cells with their rows, warnings and problems, for reports and listings.

use super::db::params;
use super::Store;
use crate::error::{Result, StoreError};
use schedlab_core::records::{RunStatus, TrialStatus};
use serde::Serialize;

mod cell;
mod run;
pub use cell::{cells, CellView, LeftOut, Tally, TaskRow};
pub(crate) use cell::{settings_label, stored};
pub use run::{run_info, RunInfo};

/// A trial status serialised as its stored name (`ok`), as it was when it was text.
pub(crate) fn status_name<S: serde::Serializer>(
    status: &TrialStatus,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(status.name())
}

/// A trial that did not end `ok` (timeout or failed), for the warnings.
#[derive(Debug, Clone, Serialize)]
pub struct TrialProblem {
    /// Index of its cell in the run.
    pub cell_index: i64,
    /// Index of the trial in its cell.
    pub trial_index: i64,
    /// Timeout or failed.
    #[serde(serialize_with = "status_name")]
    pub status: TrialStatus,
    /// Why, as stored.
    pub reason: Option<String>,
}

/// One line of `schedlab runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub run_id: i64,
    /// Spec name.
    pub name: String,
    /// Start, UTC.
    pub started_at: String,
    /// Queued, running, done, interrupted or failed.
    pub status: RunStatus,
    /// Number of cells.
    pub cells: i64,
    /// Planned trials stored (their re-runs not counted).
    pub trials_done: i64,
    /// Trials planned.
    pub trials_planned: i64,
    /// Host name of the machine that ran it, if known.
    pub host: Option<String>,
    /// Its kernel release, if known.
    pub kernel: Option<String>,
    /// The run's UUID, if it has one.
    pub uuid: Option<String>,
    /// Hash of its spec as run (seed aside), see [`spec_hash`], as stored with the run.
    pub spec_hash: String,
}

/// Every stored run, oldest first; with `host`, only the runs of that host name.
pub fn runs(store: &Store, host: Option<&str>) -> Result<Vec<RunRow>> {
    let rows = store.db.query(
        "SELECT r.run_id, r.name, r.started_at, r.status, r.trials_planned,
                (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.run_id),
                (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.retry = 0),
                r.runner_pid, r.runner_boot_id, r.runner_start_ticks, r.host, r.kernel, r.uuid, r.spec_hash
         FROM runs r ORDER BY r.run_id",
        &[],
        |r| {
            let runner = Runner {
                pid: r.get(7)?,
                boot_id: r.get(8)?,
                start_ticks: r.get(9)?,
            };
            Ok(RunRow {
                run_id: r.get(0)?,
                name: r.get(1)?,
                started_at: r.get(2)?,
                status: runner.status(stored(r.get(3)?, "runs.status")?),
                trials_planned: r.get(4)?,
                cells: r.get(5)?,
                trials_done: r.get(6)?,
                host: r.get(10)?,
                kernel: r.get(11)?,
                uuid: r.get(12)?,
                spec_hash: r.get(13)?,
            })
        },
    )?;
    Ok(rows
        .into_iter()
        .filter(|r| host.is_none_or(|h| r.host.as_deref() == Some(h)))
        .collect())
}

/// The hash of a stored spec as run, seed aside (see `Spec::hash_as_run`).
pub use schedlab_spec::as_run::spec_hash;

/// The ids of the runs whose spec hash starts with `prefix` (at least 4 hex digits, any
/// case), oldest first: selected in SQL by the hash stored with each run.
pub fn runs_of_spec(store: &Store, prefix: &str) -> Result<Vec<i64>> {
    if prefix.len() < 4 {
        return Err(StoreError::ShortSpecHash);
    }
    let prefix = prefix.to_ascii_lowercase();
    // A hash is lowercase hex digits: a prefix with anything else starts none (and so no
    // wildcard of LIKE ever reaches the pattern).
    if !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Vec::new());
    }
    store.db.query(
        "SELECT run_id FROM runs WHERE spec_hash LIKE ?1 ORDER BY run_id",
        params![format!("{prefix}%")],
        |r| r.get(0),
    )
}

/// A stored warning: its code ([`schedlab_core::warning::Warning::code`]; None when stored
/// before schema 6) and its sentence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredWarning {
    /// The stable code of its kind, if stored.
    pub code: Option<String>,
    /// The sentence, as shown.
    pub message: String,
}

/// The warnings stored for a run with their codes, in order.
pub fn coded_warnings(store: &Store, run_id: i64) -> Result<Vec<StoredWarning>> {
    store.db.query(
        "SELECT code, message FROM warnings WHERE run_id = ?1 ORDER BY warning_id",
        params![run_id],
        |r| {
            Ok(StoredWarning {
                code: r.get(0)?,
                message: r.get(1)?,
            })
        },
    )
}

/// The warnings stored for a run, in order.
pub fn warnings(store: &Store, run_id: i64) -> Result<Vec<String>> {
    store.db.query(
        "SELECT message FROM warnings WHERE run_id = ?1 ORDER BY warning_id",
        params![run_id],
        |r| r.get(0),
    )
}

/// The trials of run `run_id` that timed out or failed; warm-up trials only if `warmup`.
pub fn problems(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<TrialProblem>> {
    store.db.query(
        "SELECT c.cell_index, t.trial_index, t.status, t.reason FROM trials t JOIN cells c ON c.cell_id = t.cell_id
         WHERE t.run_id = ?1 AND t.status IN ('timeout', 'failed') AND (t.warmup = 0 OR ?2)
         ORDER BY c.cell_index, t.trial_index",
        params![run_id, warmup],
        |r| {
            Ok(TrialProblem {
                cell_index: r.get(0)?,
                trial_index: r.get(1)?,
                status: stored(r.get(2)?, "trials.status")?,
                reason: r.get(3)?,
            })
        },
    )
}

/// The process that ran (or runs) a run, as stored when it started.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// Its pid.
    pub pid: Option<i64>,
    /// The kernel's boot id when it started (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22), which tells a
    /// reused pid from the runner.
    pub start_ticks: Option<i64>,
}

impl Runner {
    /// The calling process, as a runner.
    pub fn this_process() -> Runner {
        let pid = std::process::id() as i32;
        Runner {
            pid: Some(i64::from(pid)),
            boot_id: schedlab_machine::boot_id(),
            start_ticks: schedlab_machine::process_start_ticks(pid).map(|t| t as i64),
        }
    }

    /// The status to show for a run stored as `stored`: a run stored as `running` whose runner
    /// is gone (another boot, or no process with its pid and start time) was `interrupted`.
    pub fn status(&self, stored: RunStatus) -> RunStatus {
        if stored == RunStatus::Running && !self.alive() {
            RunStatus::Interrupted
        } else {
            stored
        }
    }

    /// Whether the runner still exists.
    pub fn alive(&self) -> bool {
        let (Some(pid), Some(boot)) = (self.pid, self.boot_id.as_deref()) else {
            // Stored without a runner record: nothing to tell, trust the stored status.
            return true;
        };
        if schedlab_machine::boot_id().as_deref() != Some(boot) {
            return false;
        }
        match schedlab_machine::process_start_ticks(pid as i32) {
            Some(ticks) => self.start_ticks.is_none_or(|t| t == ticks as i64),
            None => false,
        }
    }
}
