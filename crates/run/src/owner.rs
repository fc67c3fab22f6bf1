//! The one owner of the kernel settings a process changes: the knobs of one run at a time,
//! with the process's one restore journal naming every change in force. A worker moves it from
//! run to run: the settings of the run it held are restored before the next run's originals
//! are read (so they are the machine's, not a change of its own) and before the worker waits
//! for work; whatever happens, they are restored when the owner is dropped. The run's CPU
//! cgroups are the owner's too: created after the run's knobs are journaled, removed before
//! they are restored.

use super::cgroups::{CgroupRun, GroupTrial, Refusal, Unended};
use super::knobs::Knobs;
use super::sink::Sink;
use crate::error::{Internal, KernelError, Result, RunError};
use schedlab_core::records::{KnobReading, TrialOutcome};
use schedlab_spec::plan::{Cell, Plan};
use std::collections::HashSet;

/// The kernel settings of this process, held for one run at a time.
#[derive(Default)]
pub(crate) struct KernelOwner {
    /// The run whose settings may be in force, with its knobs and cgroups.
    active: Option<(i64, Knobs, CgroupRun)>,
    /// Runs whose warnings about what they change were stored.
    warned: HashSet<i64>,
}

impl KernelOwner {
    /// Makes run `run_id` of `plan` the owner's: the settings of another run are restored
    /// first (an error when they cannot be), then this run's originals read and journaled
    /// (an error when the journal cannot be written, or a live schedlab varies the same
    /// setting). The first time, the run's warnings about what it changes go to `sink`.
    pub fn enter(&mut self, run_id: i64, plan: &Plan, sink: &mut dyn Sink) -> Result<()> {
        if self.active.as_ref().is_some_and(|(id, _, _)| *id == run_id) {
            return Ok(());
        }
        self.leave()?;
        let (mut knobs, warnings) = Knobs::prepare(plan, &plan.settings.io_dir)?;
        let cgroups = CgroupRun::enter(plan, &mut knobs)?;
        self.active = Some((run_id, knobs, cgroups));
        if self.warned.insert(run_id) {
            for w in warnings {
                sink.add_warning(run_id, None, &w)?;
            }
        }
        Ok(())
    }

    /// Puts the machine in `cell`'s settings (see [`Knobs::apply`]); the run entered last must
    /// be the cell's.
    pub fn apply(&mut self, run_id: i64, cell: &Cell) -> Result<Vec<KnobReading>, KernelError> {
        match self.active.as_mut() {
            Some((id, knobs, _)) if *id == run_id => knobs.apply(cell),
            _ => Err(Internal::NotPrepared { run_id }.into()),
        }
    }

    /// Creates the task groups of a trial of `cell` (run `run_id`, entered last), labelled
    /// `label`; None for a cell without groups.
    pub fn start_groups(
        &mut self,
        run_id: i64,
        cell: &Cell,
        label: &str,
    ) -> Result<Option<GroupTrial>, Refusal> {
        match self.active.as_mut() {
            Some((id, knobs, cg)) if *id == run_id => cg.start_trial(cell, label, knobs),
            _ => Err(Refusal::Fail(format!(
                "internal error: run {run_id}'s cgroups were not prepared"
            ))),
        }
    }

    /// Ends a trial's task groups (see [`CgroupRun::end_trial`]); returns warnings.
    pub fn end_groups(
        &mut self,
        t: GroupTrial,
        cell: &Cell,
        outcome: &mut TrialOutcome,
    ) -> Vec<Unended> {
        match self.active.as_mut() {
            Some((_, knobs, cg)) => cg.end_trial(t, cell, outcome, knobs),
            None => vec![Unended {
                problem: schedlab_core::warning::CgroupEnd::Outlived,
                groups: Vec::new(),
                error: "no run holds them".into(),
            }],
        }
    }

    /// Restores every setting in force and removes the journal; an error, naming what could
    /// not be restored, when something stays changed (its journal is kept).
    pub fn leave(&mut self) -> Result<()> {
        if let Some((run_id, mut knobs, mut cgroups)) = self.active.take() {
            let closed = cgroups.close(&mut knobs);
            knobs
                .restore()
                .map_err(|source| RunError::NotRestored { run_id, source })?;
            closed.map_err(|source| RunError::NotRestored { run_id, source })?;
        }
        Ok(())
    }
}

impl Drop for KernelOwner {
    fn drop(&mut self) {
        // The cgroups go before the knobs' journal (dropping the knobs restores them).
        if let Err(e) = self.leave() {
            say_err!("error: {e:#}");
        }
    }
}
