//! The spec as run: the [`Spec`] a plan was built from, with its defaults and seed filled in,
//! written as TOML with the run ([`Spec::to_as_run`]) and read back by every later stage as the
//! same serde type ([`Spec::read_as_run`]), never as loose TOML.

use super::adaptive::check_adaptive;
use super::{locate, Adaptive, Spec, SpecError};
use schedlab_core::policy::PolicyKind;
use std::hash::Hasher;

impl Spec {
    /// The spec as run, as TOML: `self` with the seed set (an adaptive run's limits and key
    /// metric too, so that its report can name them), so that it runs again alike.
    pub fn to_as_run(&self, seed: u64, adaptive: Option<&Adaptive>) -> Result<String, SpecError> {
        let mut as_run = self.clone();
        as_run.settings.seed = Some(seed);
        if let Some(a) = adaptive {
            as_run.settings.min_trials = Some(a.min_trials);
            as_run.settings.max_trials = Some(a.max_trials);
            as_run.settings.precision_metric = Some(a.metric.key().to_string());
        }
        Ok(toml::to_string(&as_run)?)
    }

    /// Reads back a spec as run stored by [`Spec::to_as_run`] (by this or an older schedlab:
    /// keys added since have defaults). A spec this version cannot read (a key since removed,
    /// a value since renamed) is an error that says where and what to do.
    pub fn read_as_run(text: &str) -> Result<Spec, SpecError> {
        locate::parse_text(text).map_err(SpecError::StoredAsRun)
    }

    /// The policies of the policy axis, in the spec's order.
    pub fn policy_order(&self) -> &[PolicyKind] {
        &self.axes.policies
    }

    /// The metric the report leads with (`settings.primary_metric`); makespan when unset or
    /// not a metric key (a stored spec was checked when it ran).
    pub fn primary_metric(&self) -> schedlab_core::metric::Metric {
        super::validate::check_primary_metric(&self.settings)
            .unwrap_or(schedlab_core::metric::Metric::Makespan)
    }

    /// What an adaptive run asked for (`settings.precision` and its limits), if the spec
    /// asks for one and its settings are valid.
    pub fn adaptive(&self) -> Option<Adaptive> {
        check_adaptive(&self.settings).ok().flatten()
    }

    /// A short hash (16 hex digits, FNV-1a 64) of the spec with its seed left out: runs of
    /// the same experiment share it whatever their seed and wherever they ran. It hashes the
    /// TOML of the spec's keys in sorted order, so that it does not change with the order of
    /// the fields of [`Spec`].
    pub fn hash_as_run(&self) -> String {
        let mut spec = self.clone();
        spec.settings.seed = None;
        // A spec that reads also writes (only values above i64::MAX do not, and they do not
        // read either); should it fail, the hash falls back to the Debug form.
        let text = toml::Table::try_from(&spec)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| format!("{spec:?}"));
        fnv_hex(&text)
    }
}

/// The hash of a stored spec as run, see [`Spec::hash_as_run`]; a text that does not read as
/// a spec is hashed as it is.
pub fn spec_hash(text: &str) -> String {
    read_spec_hash(Spec::read_as_run(text).as_ref().ok(), text)
}

/// [`spec_hash`] of a stored spec already read: `spec`, the spec `text` reads as (None: it
/// does not read, and `text` is hashed as it is).
pub fn read_spec_hash(spec: Option<&Spec>, text: &str) -> String {
    match spec {
        Some(spec) => spec.hash_as_run(),
        None => fnv_hex(text),
    }
}

/// FNV-1a 64 of `text`, as 16 hex digits.
fn fnv_hex(text: &str) -> String {
    let mut h = fnv::FnvHasher::default();
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

#[cfg(test)]
#[path = "as_run_tests.rs"]
mod tests;
