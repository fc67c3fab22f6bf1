//! The experiment file: its serde types, parsing with positioned errors, and the check of
//! every value ([`Spec::validate`]); the plan stage ([`plan`]) expands a checked spec into cells.

#![forbid(unsafe_code)]

pub mod adaptive;
pub mod as_run;
pub mod cgroups;
mod claim_axes;
mod claim_flag;
mod claim_relation;
pub mod claims;
mod comm;
mod durations;
mod knobs;
pub mod locate;
pub mod plan;
mod problem;
mod spans;
mod syntax;
mod types;
mod validate;
mod workloads;

pub use adaptive::Adaptive;
pub use cgroups::{CgroupValue, CheckedCgroups, GroupDef, Groups, LayoutError};
pub use claims::{Claim, ClaimSpec};
pub use durations::{parse_duration_ns, MAX_DURATION_NS};
pub use knobs::{
    knob_path, CheckedKnob, KnobAxis, KnobNameError, KnobValue, ScxSpec, MAX_SLICE_NS, MIN_SLICE_NS,
};
pub use problem::{accepted_values, Problem, SpecError};
pub use types::{
    Axes, DeadlineSpec, Orders, Settings, Spec, WorkloadSpec, DEFAULT_RETRIES, MAX_RETRIES,
};
pub use validate::{Checked, MAX_TRIALS};
pub use workloads::{permutations, CheckedWorkload, MAX_IO_BYTES, MAX_ITERATIONS};

impl Spec {
    /// Reads a TOML spec; errors read `line L, column C: KEY: message (accepted: ...)`.
    /// Its values are checked by [`Spec::validate`].
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        locate::parse_text(text).map_err(|e| SpecError::located(None, e))
    }
}

#[cfg(test)]
mod tests;
