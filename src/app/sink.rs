//! The results store as the run stage's sink: the one place where `run` meets `store`.

use schedlab_core::metric::Metric;
use schedlab_core::records::{TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_run::sink::{Sink, Stored};
use schedlab_run::SinkResult as Result;
use schedlab_spec::plan::{Plan, PlannedTrial};
use schedlab_store::{NewRun, Store};

/// A [`Store`] seen by the run stage.
pub struct StoreSink<'a>(pub &'a mut Store);

impl Sink for StoreSink<'_> {
    fn create_run(&mut self, plan: &Plan, argv: &str, env_json: &str) -> Result<i64> {
        Ok(self.0.create_run(
            &NewRun {
                name: &plan.name,
                seed: plan.seed,
                spec_toml: &plan.spec_toml,
                argv,
                env_json: Some(env_json),
                trials_planned: plan.trials.len(),
            },
            &plan.cells,
        )?)
    }

    fn resume_run(&mut self, run_id: i64) -> Result<Stored> {
        self.0.mark_running(run_id)?;
        Ok(Stored {
            trials: self.0.stored_trials(run_id)?,
            units: self.0.cell_units(run_id)?,
        })
    }

    fn set_cell_units(&mut self, run_id: i64, cell_index: usize, units: u64) -> Result<()> {
        Ok(self.0.set_cell_units(run_id, cell_index, units)?)
    }

    fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<i64> {
        Ok(self.0.insert_trial(run_id, planned, outcome, meta)?)
    }

    fn add_warning(&mut self, run_id: i64, trial_id: Option<i64>, message: &Warning) -> Result<()> {
        Ok(self.0.add_warning(run_id, trial_id, message)?)
    }

    fn finish_run(&mut self, run_id: i64, status: &str) -> Result<()> {
        Ok(self.0.finish_run(run_id, status)?)
    }

    fn key_values(&self, run_id: i64, metric: Metric, through_round: u32) -> Result<Vec<Vec<f64>>> {
        Ok(key_values(self.0, run_id, metric, through_round)?)
    }

    fn undecided_claims(&self, run_id: i64, look: usize) -> Result<usize> {
        undecided_claims(self.0, run_id, look)
    }

    fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> Result<Option<f64>> {
        Ok(self.0.calibration(key, kernel, cpu_model)?)
    }

    fn save_calibration(
        &mut self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
    ) -> Result<()> {
        Ok(self
            .0
            .save_calibration(key, kernel, cpu_model, units_per_sec)?)
    }
}

/// Per cell of run `run_id` (by cell index), the `metric` value of each ok, measured trial of
/// rounds up to `through_round`, as the report computes it (see [`Sink::key_values`]).
pub fn key_values(
    store: &Store,
    run_id: i64,
    m: Metric,
    through_round: u32,
) -> anyhow::Result<Vec<Vec<f64>>> {
    let cells = schedlab_store::query::cells(store, run_id, false)?;
    let n = cells
        .iter()
        .map(|c| c.cell_index + 1)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    let mut out = vec![Vec::new(); n];
    for c in &cells {
        let per_trial = &schedlab_report::model::trial_values(c)[m.index()];
        out[c.cell_index as usize] = per_trial
            .iter()
            .filter(|&&(round, _)| round <= i64::from(through_round))
            .map(|&(_, v)| v)
            .collect();
    }
    Ok(out)
}

/// The claim cells of run `run_id` still inconclusive at look `look` of an `--until-decided`
/// run: every stored trial, decided at that look's alpha (`schedlab_analyze::look_alpha`),
/// exactly as the report will decide them; power is not computed here.
pub fn undecided_claims(store: &Store, run_id: i64, look: usize) -> Result<usize> {
    use schedlab_report::claims::{build, verdicts, ClaimsRequest, CLAIMS_ALPHA};
    let mut input = schedlab_report::cmd::load_input(store, run_id, false)?;
    input.claims = ClaimsRequest {
        alpha: Some(schedlab_analyze::look_alpha(CLAIMS_ALPHA, look)),
        no_power: true,
        ..ClaimsRequest::default()
    };
    Ok(build(&input).map_or(0, |o| {
        verdicts(&o)
            .iter()
            .filter(|v| **v == schedlab_analyze::Verdict::Inconclusive)
            .count()
    }))
}
