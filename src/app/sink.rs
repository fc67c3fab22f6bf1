//! The results store as the run stage's sink: the one place where `run` meets `store`, for a
//! local run, a run on a server and a worker's queued runs alike.
//!
//! The store is a local SQLite file or a PostgreSQL server ([`Remote`]). While a server cannot
//! be reached, finished trials, their warnings and a run's end go to the local spool (a copy of
//! the server's run, same UUID) and are pushed when it is back. A worker's trial completes its
//! claim as it is stored; a trial whose claim another worker took over is dropped, with its
//! warnings.

use super::remote::Remote;
use super::remote::{RemoteError, Result, RunCopy};
use schedlab_core::metric::Metric;
use schedlab_core::records::{RunStatus, TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_machine::HostIdentity;
use schedlab_run::sink::{Sink, Stored};
use schedlab_run::SinkResult;
use schedlab_spec::plan::{Plan, PlannedTrial};
use schedlab_store::queue::{Claim, Completed};
use schedlab_store::{Location, Store};
use std::collections::HashMap;

/// Where the last trial went, so that its warnings follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Server(i64),
    Spool(i64),
    /// Not stored: its claim lapsed and another worker took the trial over.
    Dropped,
}

/// The id a dropped trial is given (its warnings are dropped with it).
const DROPPED: i64 = -1;

/// The sink of a run, or of a worker's queued runs.
pub struct StoreSink {
    /// The store, and the spool while a server cannot be reached.
    pub remote: Remote,
    /// What the spool needs to hold each run's trials, by run id.
    runs: HashMap<i64, RunCopy>,
    last: Option<Last>,
    /// A worker's claim of the trial under way: storing the trial completes it.
    pub claim: Option<Claim>,
}

impl StoreSink {
    /// A sink writing to `remote`.
    pub fn new(remote: Remote) -> StoreSink {
        StoreSink {
            remote,
            runs: HashMap::new(),
            last: None,
            claim: None,
        }
    }

    /// A sink writing to the open local store `store` at `location`.
    pub fn local(location: &Location, store: Store) -> StoreSink {
        StoreSink::new(Remote::local(location, store))
    }

    /// The store, if it can be reached now (no attempt to reconnect).
    pub fn store(&self) -> Option<&Store> {
        self.remote.current()
    }

    /// Makes run `run_id` known (as `copy`), so that its trials can go to the spool.
    pub fn know_run(&mut self, run_id: i64, copy: RunCopy) {
        self.runs.insert(run_id, copy);
    }

    /// Records that cell `cell` of run `run_id` has `units` units per task unless it has
    /// units already (another worker calibrated it first); returns the units in force.
    pub fn settle_cell_units(&mut self, run_id: i64, cell: usize, units: u64) -> Result<u64> {
        let settled = self
            .remote
            .try_server(|s| s.settle_cell_units(run_id, cell, units))?
            .unwrap_or(units);
        self.note_units(run_id, cell, settled);
        Ok(settled)
    }

    fn note_units(&mut self, run_id: i64, cell: usize, units: u64) {
        if let Some(copy) = self.runs.get_mut(&run_id) {
            copy.units.retain(|(c, _)| *c != cell);
            copy.units.push((cell, units));
        }
    }

    /// The spool, and run `run_id` as it keeps it.
    fn spool(&mut self, run_id: i64) -> Result<(&Store, &RunCopy)> {
        let run = self
            .runs
            .get(&run_id)
            .ok_or(RemoteError::Internal("a run neither created nor claimed"))?;
        Ok((self.remote.spool()?, run))
    }

    /// Stores a trial on the server (completing the claim, if any); None when the server
    /// cannot be reached; Some(None) when the claim was lost.
    fn store_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<Option<Option<i64>>> {
        let Some(claim) = self.claim.take() else {
            let stored = self
                .remote
                .try_server(|s| s.insert_trial(run_id, planned, outcome, meta))?;
            return Ok(stored.map(Some));
        };
        let done = self
            .remote
            .try_server(|s| s.complete(&claim, planned, outcome, meta))?;
        Ok(done.map(|c| match c {
            Completed::Stored(id) => Some(id),
            Completed::Lost => {
                warnln!(
                    "schedlab: run {run_id} trial {}: its lease lapsed and another worker took it over; this result is dropped",
                    claim.position + 1
                );
                None
            }
        }))
    }

    fn insert(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<i64> {
        let (last, id) = match self.store_trial(run_id, planned, outcome, meta)? {
            Some(Some(id)) => (Last::Server(id), id),
            Some(None) => (Last::Dropped, DROPPED),
            None => {
                let (spool, run) = self.spool(run_id)?;
                let (_, id) = spool.spool_trial(&run.spooled(), planned, outcome, meta)?;
                self.remote.spooled += 1;
                (Last::Spool(id), id)
            }
        };
        self.last = Some(last);
        Ok(id)
    }

    fn warning(&mut self, run_id: i64, trial_id: Option<i64>, warning: &Warning) -> Result<()> {
        let spooled_trial = match (trial_id, self.last) {
            (Some(DROPPED), Some(Last::Dropped)) => return Ok(()),
            (Some(t), Some(Last::Spool(s))) if t == s => Some(t),
            _ => None,
        };
        if spooled_trial.is_none()
            && self
                .remote
                .try_server(|s| s.add_warning(run_id, trial_id, warning))?
                .is_some()
        {
            return Ok(());
        }
        let (spool, run) = self.spool(run_id)?;
        Ok(spool.spool_warning(&run.spooled(), spooled_trial, warning)?)
    }

    fn finish(&mut self, run_id: i64, status: RunStatus) -> Result<()> {
        if self
            .remote
            .try_server(|s| s.finish_run(run_id, status))?
            .is_some()
        {
            return Ok(());
        }
        let (spool, run) = self.spool(run_id)?;
        Ok(spool.spool_finish(&run.spooled(), status)?)
    }

    fn resume(&mut self, run_id: i64) -> Result<Stored> {
        let server = self.remote.reachable()?;
        server.mark_running(run_id)?;
        let stored = Stored {
            trials: server.stored_trials(run_id)?,
            reruns: server.owed_reruns(run_id)?,
            units: server.cell_units(run_id)?,
        };
        let (mut copy, _) = RunCopy::read(server, run_id, HostIdentity::capture())?;
        copy.units = stored
            .units
            .iter()
            .filter_map(|&(c, u)| u.map(|u| (c, u)))
            .collect();
        self.know_run(run_id, copy);
        Ok(stored)
    }

    /// The store a run judges itself on: an adaptive run (`run` says how) needs its stored
    /// trials, which a server out of reach does not give.
    fn judged_on(&self, run: &'static str) -> Result<&Store> {
        self.remote.current().ok_or_else(|| RemoteError::Judging {
            run,
            location: self.remote.location().to_string(),
            spool: self.remote.spool_path().to_path_buf(),
        })
    }
}

impl Sink for StoreSink {
    fn create_run(&mut self, plan: &Plan, argv: &str, env_json: &str) -> SinkResult<i64> {
        let copy = RunCopy::new(plan, argv, env_json);
        let server = self.remote.reachable()?;
        let run_id = server.create_run_as(&copy.spooled().run, &plan.cells, &copy.id)?;
        self.know_run(run_id, copy);
        Ok(run_id)
    }

    fn resume_run(&mut self, run_id: i64) -> SinkResult<Stored> {
        Ok(self.resume(run_id)?)
    }

    fn set_cell_units(&mut self, run_id: i64, cell_index: usize, units: u64) -> SinkResult<()> {
        self.note_units(run_id, cell_index, units);
        // Without the server the spool gets the units with the cell's first trial.
        self.remote
            .try_server(|s| s.set_cell_units(run_id, cell_index, units))?;
        Ok(())
    }

    fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> SinkResult<i64> {
        Ok(self.insert(run_id, planned, outcome, meta)?)
    }

    fn add_warning(
        &mut self,
        run_id: i64,
        trial_id: Option<i64>,
        warning: &Warning,
    ) -> SinkResult<()> {
        Ok(self.warning(run_id, trial_id, warning)?)
    }

    /// Called by the run loop only: a worker's queued run is done when its last trial is
    /// stored (see `Store::complete`).
    fn finish_run(&mut self, run_id: i64, status: RunStatus) -> SinkResult<()> {
        Ok(self.finish(run_id, status)?)
    }

    fn key_values(
        &self,
        run_id: i64,
        metric: Metric,
        through_round: u32,
    ) -> SinkResult<Vec<Option<Vec<f64>>>> {
        let store = self.judged_on("an adaptive run judges its precision")?;
        Ok(key_values(store, run_id, metric, through_round)?)
    }

    fn claims_progress(&self, run_id: i64) -> SinkResult<schedlab_run::adaptive::ClaimsProgress> {
        let store = self.judged_on("an --until-decided run decides its claims")?;
        Ok(claims_progress(store, run_id)?)
    }

    fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> SinkResult<Option<f64>> {
        Ok(self.remote.calibration(key, kernel, cpu_model)?)
    }

    /// Stored when the server can be reached (else the workload is calibrated again later).
    fn save_calibration(
        &mut self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
        spread: Option<f64>,
    ) -> SinkResult<()> {
        self.remote
            .try_server(|s| s.save_calibration(key, kernel, cpu_model, units_per_sec, spread))?;
        Ok(())
    }
}

/// Per cell of run `run_id` (by cell index), the `metric` value of each ok, measured, clean
/// trial of rounds up to `through_round`, as the report computes it; None for a cell without
/// an ok measured trial (see [`Sink::key_values`]).
pub fn key_values(
    store: &Store,
    run_id: i64,
    m: Metric,
    through_round: u32,
) -> Result<Vec<Option<Vec<f64>>>> {
    let all = schedlab_store::query::cells(store, run_id, false)?;
    // Cells with an ok trial of those rounds are judged, on their clean trials, as the report
    // summarises them (none clean yet: not precise).
    let judged: Vec<i64> = all
        .iter()
        .filter(|c| {
            c.trial_rounds
                .iter()
                .any(|&r| r <= i64::from(through_round))
        })
        .map(|c| c.cell_index)
        .collect();
    let (cells, _) = schedlab_report::model::quality::clean_cells(
        all,
        schedlab_store::quality::trial_quality(store, run_id, false)?,
    );
    let n = cells
        .iter()
        .map(|c| c.cell_index + 1)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    let mut out = vec![None; n];
    for c in cells.iter().filter(|c| judged.contains(&c.cell_index)) {
        let per_trial = &schedlab_report::model::trial_values(c)[m.index()];
        out[c.cell_index as usize] = Some(
            per_trial
                .iter()
                .filter(|&&(round, _)| round <= i64::from(through_round))
                .map(|&(_, v)| v)
                .collect(),
        );
    }
    Ok(out)
}

/// Where the claims of `--until-decided` run `run_id` stand after its stored trials: its
/// looks replayed exactly as the report will replay them (power is not computed here).
pub fn claims_progress(
    store: &Store,
    run_id: i64,
) -> Result<schedlab_run::adaptive::ClaimsProgress> {
    use schedlab_report::claims::eval::{build, progress};
    use schedlab_report::claims::ClaimsRequest;
    let mut input = schedlab_report::pool::load_input(store, run_id, false)?;
    input.claims = ClaimsRequest {
        no_power: true,
        ..ClaimsRequest::default()
    };
    Ok(build(&input).map_or_else(Default::default, |o| {
        let p = progress(&input, &o);
        schedlab_run::adaptive::ClaimsProgress {
            undecided: p.undecided,
            finished_cells: p.finished_cells,
        }
    }))
}

#[cfg(test)]
#[path = "sink_tests.rs"]
mod tests;
