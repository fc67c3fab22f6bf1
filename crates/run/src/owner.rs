//! The one owner of the kernel settings a process changes: the knobs of one run at a time,
//! with the process's one restore journal naming every change in force. A worker moves it from
//! run to run: the settings of the run it held are restored before the next run's originals
//! are read (so they are the machine's, not a change of its own) and before the worker waits
//! for work; whatever happens, they are restored when the owner is dropped.

use super::knobs::Knobs;
use super::sink::Sink;
use crate::error::{KernelError, Result, RunError};
use schedlab_core::records::KnobReading;
use schedlab_spec::plan::{Cell, Plan};
use std::collections::HashSet;

/// The kernel settings of this process, held for one run at a time.
#[derive(Default)]
pub(crate) struct KernelOwner {
    /// The run whose settings may be in force, with its knobs.
    active: Option<(i64, Knobs)>,
    /// Runs whose warnings about what they change were stored.
    warned: HashSet<i64>,
}

impl KernelOwner {
    /// Makes run `run_id` of `plan` the owner's: the settings of another run are restored
    /// first (an error when they cannot be), then this run's originals read and journaled
    /// (an error when the journal cannot be written, or a live schedlab varies the same
    /// setting). The first time, the run's warnings about what it changes go to `sink`.
    pub fn enter(&mut self, run_id: i64, plan: &Plan, sink: &mut dyn Sink) -> Result<()> {
        if self.active.as_ref().is_some_and(|(id, _)| *id == run_id) {
            return Ok(());
        }
        self.leave()?;
        let (knobs, warnings) = Knobs::prepare(plan, &plan.settings.io_dir)?;
        self.active = Some((run_id, knobs));
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
            Some((id, knobs)) if *id == run_id => knobs.apply(cell),
            _ => Err(KernelError::Internal(format!(
                "run {run_id}'s kernel settings were not prepared"
            ))),
        }
    }

    /// Restores every setting in force and removes the journal; an error, naming what could
    /// not be restored, when something stays changed (its journal is kept).
    pub fn leave(&mut self) -> Result<()> {
        if let Some((run_id, mut knobs)) = self.active.take() {
            knobs
                .restore()
                .map_err(|source| RunError::NotRestored { run_id, source })?;
        }
        Ok(())
    }
}
