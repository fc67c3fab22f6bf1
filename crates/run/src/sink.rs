//! Where the run stage keeps what it measures: the interface the store is plugged into.
//!
//! The run stage never sees a database: `app` hands `execute` something that implements
//! [`Sink`] (the results store, through a small adapter), so a trial is stored the moment it
//! ends and a crash loses at most the trial in flight.

use crate::error::SinkResult as Result;
use schedlab_core::metric::Metric;
use schedlab_core::records::{RunStatus, TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_spec::plan::{Plan, PlannedTrial};
use std::collections::HashSet;

/// What a resumed run already has.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    /// (cell index, trial index) of every trial already stored (any attempt).
    pub trials: HashSet<(usize, u32)>,
    /// Re-runs still owed: the planned trial and the number of the re-run, for each (cell,
    /// trial index) whose latest stored attempt was flagged to be run again.
    pub reruns: Vec<(PlannedTrial, u32)>,
    /// Units of work per task each cell was given, by cell index (None: not yet calibrated).
    pub units: Vec<(usize, Option<u64>)>,
}

/// Destination of a run's records, written as the run goes.
pub trait Sink {
    /// Records a new run of `plan` (started by the command line `argv`, on the machine
    /// described by `env_json`) with all its cells; returns the run's id.
    fn create_run(&mut self, plan: &Plan, argv: &str, env_json: &str) -> Result<i64>;
    /// Marks stored run `run_id` as running again and returns what it already has.
    fn resume_run(&mut self, run_id: i64) -> Result<Stored>;
    /// Records the units of work per task cell `cell_index` runs with (after calibration).
    fn set_cell_units(&mut self, run_id: i64, cell_index: usize, units: u64) -> Result<()>;
    /// Stores one trial with all its tasks, samples and trace; returns the trial's id.
    fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<i64>;
    /// Stores a warning about the run, or about one of its trials (its code, parameters and
    /// sentence).
    fn add_warning(&mut self, run_id: i64, trial_id: Option<i64>, warning: &Warning) -> Result<()>;
    /// Marks the run finished with `status` (done, interrupted, failed).
    fn finish_run(&mut self, run_id: i64, status: RunStatus) -> Result<()>;
    /// The stored speed of a workload (units per second) on this kernel and CPU, if any.
    fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> Result<Option<f64>>;
    /// Per cell of run `run_id` (by cell index, every cell), the value of `metric` of each ok,
    /// measured, clean trial of rounds up to `through_round`, as the report summarises them:
    /// what an adaptive run judges its precision by; None for a cell without an ok measured
    /// trial (never precise, so not judged).
    fn key_values(
        &self,
        run_id: i64,
        metric: Metric,
        through_round: u32,
    ) -> Result<Vec<Option<Vec<f64>>>>;
    /// Where the claims of an `--until-decided` run `run_id` stand after its stored trials
    /// (its looks replayed as the report does): how many claims and claim cells are still
    /// inconclusive, and which cells no undecided claim needs any more.
    fn claims_progress(&self, run_id: i64) -> Result<crate::adaptive::ClaimsProgress>;
    /// Stores a measured speed (and how far its measurements spread, a fraction of it, when
    /// known), replacing an older one.
    fn save_calibration(
        &mut self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
        spread: Option<f64>,
    ) -> Result<()>;
}
