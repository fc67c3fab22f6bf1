//! The spool: a local SQLite store that keeps the trials of a server's run while the server
//! cannot be reached. A spooled run has the server run's UUID, so pushing the spool merges its
//! trials into that run (see [`super::push`]).

use super::db::params;
use super::write::RunIdentity;
use super::{NewRun, Store};
use crate::error::{Result, StoreError};
use schedlab_core::records::{RunStatus, TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_spec::plan::{Cell, PlannedTrial};

/// A server's run as a spool keeps it.
#[derive(Debug, Clone, Copy)]
pub struct SpooledRun<'a> {
    /// The run as created on the server.
    pub run: NewRun<'a>,
    /// Its cells.
    pub cells: &'a [Cell],
    /// Its identity; the UUID must be set.
    pub id: &'a RunIdentity,
    /// Units per task of the cells calibrated so far: (cell index, units).
    pub units: &'a [(usize, u64)],
}

impl Store {
    /// Stores one trial of `run` in this (spool) store, creating the run with its cells the
    /// first time, in one transaction; returns (the spool's run id, trial id).
    pub fn spool_trial(
        &self,
        run: &SpooledRun,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<(i64, i64)> {
        self.db.transaction(|| {
            let run_id = self.spooled_run(run)?;
            Ok((
                run_id,
                self.insert_trial_rows(run_id, planned, outcome, meta)?.0,
            ))
        })
    }

    /// The spool's id of `run`, which is created (with its cells) if absent and given the
    /// units known so far; inside the caller's transaction.
    fn spooled_run(&self, run: &SpooledRun) -> Result<i64> {
        let Some(uuid) = &run.id.uuid else {
            return Err(StoreError::Internal("a spooled run needs its UUID".into()));
        };
        let run_id = match self.run_by_uuid(uuid)? {
            Some(id) => id,
            None => self.create_run_rows(&run.run, run.cells, run.id)?,
        };
        for &(cell, units) in run.units {
            self.db.execute(
                "UPDATE cells SET units = ?3 WHERE run_id = ?1 AND cell_index = ?2 AND units IS NULL",
                params![run_id, cell as i64, units as i64],
            )?;
        }
        Ok(run_id)
    }

    /// Records in this (spool) store how `run` ended, creating the run if absent.
    pub fn spool_finish(&self, run: &SpooledRun, status: RunStatus) -> Result<()> {
        self.db.transaction(|| {
            let run_id = self.spooled_run(run)?;
            self.finish_run(run_id, status)
        })
    }

    /// Stores a warning about `run` (or its spooled trial `trial_id`) in this (spool) store.
    pub fn spool_warning(
        &self,
        run: &SpooledRun,
        trial_id: Option<i64>,
        warning: &Warning,
    ) -> Result<()> {
        self.db.transaction(|| {
            let run_id = self.spooled_run(run)?;
            self.add_warning(run_id, trial_id, warning)
        })
    }
}
