//! The records that pass between stages: the vocabulary of cells and what a trial produces.
//!
//! Plain data with no behaviour beyond naming and parsing; every stage may use it, and it uses
//! no stage (only the neutral modules `policy` and `workload`).

mod cell;
mod denied;
mod figures;
mod group;
mod knob;
mod run;
mod trial;

pub use cell::{StartMode, TaskKind, WorkSize};
pub use denied::{check_knob_value, denied, program_value, runs_program, MAX_KNOB_VALUE_BYTES};
pub use figures::TrialFigures;
pub use group::GroupRecord;
pub use knob::{slice_label, KnobReading, KnobSetting, ScxCommand};
pub use run::RunStatus;
pub use trial::{
    now_utc, Sample, Slice, TaskRecord, TaskTrace, TrialMeta, TrialOutcome, TrialStatus,
    DISTURBED_PCT, SLOWED_PCT,
};
