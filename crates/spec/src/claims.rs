//! Declared claims in an experiment file (`[[claims]]`): what a study says it found, as a
//! hypothesis about a metric, two or more treatments and a relation, checked against the
//! spec's axes into a typed [`Claim`] (the report decides each one, `crates/report/src/claims/`).
//!
//! ```toml
//! [[claims]]
//! name = "fifo-turnaround"                 # short id, shown in tables (required, unique)
//! text = "FIFO finishes tasks sooner than OTHER"
//! metric = "turnaround"                     # a report metric key
//! lower = "fifo"                            # or higher = ...
//! than = "other"                            # a treatment, or a list (each must hold)
//! where = { workload = "cpu", tasks = [10, 50] }   # scope; default: every cell
//! smallest_effect = "5%"                    # or a number in the metric's unit (ms, count)
//! scope = "overall"                         # or "every": it must hold in every cell
//!
//! [[claims]]
//! name = "makespan-conserved"
//! metric = "makespan"
//! equal = ["fifo", "other"]                 # equivalence within margin (TOST)
//! margin = "5%"
//!
//! [[claims]]
//! name = "other-switches-more"
//! metric = "ivcsw"
//! ratio = ["other", "fifo"]                 # other / fifo
//! ratio_at_least = 10                       # or ratio_at_most, or trend = { along, toward }
//! ```
//!
//! A **treatment** names an axis value: a bare string is a value of one axis (a policy, a
//! priority mode, a workload kind or label, an I/O scheduler, a slice, ...; it must be a value
//! of exactly one axis of the spec), a table names one or more axes:
//! `{ slice = "0.1ms" }`, `{ policy = "fifo", priorities = "spread" }`,
//! `{ "kernel.sched_rr_timeslice_ms" = 10 }` (a knob), `{ host = "b" }` or
//! `{ kernel = "6.12.1" }` (runs pooled from several machines). Every treatment of a claim
//! names the same axes; the claim is tested in each combination of the other axes' values
//! (a claim cell), within its scope.

use super::claim_axes::{AxisValues, Resolver};
use super::{Problem, Spec};
use serde::{Deserialize, Serialize};

pub use super::claim_axes::ClaimAxis;
pub use super::claim_flag::{parse_claim_flag, ClaimFlagError, ClaimFlagFault};

/// One `[[claims]]` entry as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// Short id, shown in tables.
    pub name: String,
    /// The claim in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The metric key (`makespan`, `turnaround`, `ivcsw`, ...).
    pub metric: String,
    /// A is lower than every treatment of `than`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<toml::Value>,
    /// A is higher than every treatment of `than`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher: Option<toml::Value>,
    /// The treatment(s) `lower`/`higher` compares with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub than: Option<toml::Value>,
    /// Two treatments equal within `margin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equal: Option<toml::Value>,
    /// The equivalence margin: "5%" or a number in the metric's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<toml::Value>,
    /// Two treatments [A, B] whose ratio A/B the claim is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<toml::Value>,
    /// A/B is at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_at_least: Option<f64>,
    /// A/B is at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_at_most: Option<f64>,
    /// A/B moves toward a value along an ordered axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend: Option<TrendSpec>,
    /// The cells the claim is about (axis = value or list); default: every cell.
    #[serde(rename = "where", default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<toml::Table>,
    /// The smallest difference that matters: "5%" or a number in the metric's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smallest_effect: Option<toml::Value>,
    /// How the claim reads over its cells: "overall" (default: on balance, one stratified
    /// test) or "every" (it must hold in every cell).
    #[serde(rename = "scope", default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<String>,
}

/// `trend = { along = "tasks", toward = 1.0 }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrendSpec {
    /// The ordered axis: tasks, antagonists, slice, or a knob with numeric values.
    pub along: String,
    /// The value the ratio moves toward.
    pub toward: f64,
}

/// An amount: a fraction of B ("5%") or a value in the metric's report unit (ms, count): the
/// one type the analysis tests too (`schedlab-claim`).
pub use schedlab_claim::Amount as ClaimAmount;
/// What a claim says about A against one B: the one type the analysis tests (`schedlab-claim`).
pub use schedlab_claim::Relation;

/// What a claim says about A against B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimRelation {
    /// A against every B, tested pair by pair.
    Pair(Relation),
    /// A/B moves toward `toward` as `along` grows.
    Trend {
        /// The ordered axis.
        along: ClaimAxis,
        /// The target ratio.
        toward: f64,
    },
}

impl ClaimRelation {
    /// The relation in a few words, for tables: "<", ">", "≥ 10x", "= ±5%", "→ 1 along tasks".
    pub fn symbol(&self) -> String {
        match self {
            ClaimRelation::Pair(r) => r.symbol(),
            ClaimRelation::Trend { along, toward } => {
                format!("ratio → {toward} along {}", along.key())
            }
        }
    }
}

/// A treatment: the axis values that pick its cells, e.g. policy = fifo.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Treatment {
    /// (axis, value), sorted by axis; values normalised as the store writes them.
    pub values: Vec<(ClaimAxis, String)>,
}

impl Treatment {
    /// "fifo", or "policy=fifo priorities=spread" when it names more than one axis.
    pub fn label(&self) -> String {
        match self.values.as_slice() {
            [(_, v)] => v.clone(),
            many => many
                .iter()
                .map(|(a, v)| format!("{}={v}", a.key()))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The axes it names.
    pub fn axes(&self) -> Vec<ClaimAxis> {
        self.values.iter().map(|(a, _)| a.clone()).collect()
    }
}

/// How a claim reads over its cells (`scope = "overall"` or `"every"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimScope {
    /// On balance across its cells: one stratified test, then its cells behind it.
    #[default]
    Overall,
    /// In every one of its cells (intersection-union).
    Every,
}

impl ClaimScope {
    /// The key's value as written.
    pub fn key(self) -> &'static str {
        match self {
            ClaimScope::Overall => "overall",
            ClaimScope::Every => "every",
        }
    }
}

/// Whether a claim was declared before the data (in the experiment) or after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Declared {
    /// In the experiment file or `run --claim`: confirmatory.
    Before,
    /// With `stats`/`report --claim`, after the data were seen: exploratory.
    PostHoc,
}

/// One claim, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// Short id.
    pub name: String,
    /// The claim in words (the name when none was given).
    pub text: String,
    /// The metric key.
    pub metric: String,
    /// Treatment A (the one named by lower/higher, or the first of equal/ratio).
    pub a: Treatment,
    /// The treatments A is compared with (each must hold).
    pub others: Vec<Treatment>,
    /// The relation.
    pub relation: ClaimRelation,
    /// Scope: each axis with the values the claim is about (empty: every cell).
    pub scope: Vec<(ClaimAxis, Vec<String>)>,
    /// Overall or in every cell.
    #[serde(default)]
    pub reading: ClaimScope,
    /// Confirmatory or post hoc.
    pub declared: Declared,
}

/// The metrics a claim may name (every metric's key).
pub fn claim_metrics() -> &'static [&'static str] {
    &schedlab_core::metric::Metric::KEYS
}

/// Checks every `[[claims]]` of `spec` against its axes; the first mistake names its key
/// (`claims[1].than`). Only the axes are read, so a stored spec can be checked anywhere.
pub fn check_claims(spec: &Spec) -> Result<Vec<Claim>, Problem> {
    let axes = AxisValues::of(spec);
    let mut out: Vec<Claim> = Vec::with_capacity(spec.claims.len());
    for (i, c) in spec.claims.iter().enumerate() {
        let claim = check_one(&axes, c, &format!("claims[{i}]"), Declared::Before)?;
        if out.iter().any(|o| o.name == claim.name) {
            return Err(Problem::new(
                format!("claims[{i}].name"),
                format!("'{}' names an earlier claim too", claim.name),
            )
            .accepting("a name no other claim has"));
        }
        out.push(claim);
    }
    Ok(out)
}

/// Checks claims given after the data (`stats --claim`) against a stored spec's axes.
pub fn check_post_hoc(spec: &Spec, claims: &[ClaimSpec]) -> Result<Vec<Claim>, Problem> {
    let axes = AxisValues::of(spec);
    claims
        .iter()
        .enumerate()
        .map(|(i, c)| check_one(&axes, c, &format!("--claim {}", i + 1), Declared::PostHoc))
        .collect()
}

/// Checks one claim; `key` is its place (`claims[0]`).
fn check_one(
    axes: &AxisValues,
    c: &ClaimSpec,
    key: &str,
    declared: Declared,
) -> Result<Claim, Problem> {
    let k = |sub: &str| format!("{key}.{sub}");
    let name = c.name.trim();
    if name.is_empty() {
        return Err(
            Problem::new(k("name"), "is empty").accepting("a short id such as \"fifo-turnaround\"")
        );
    }
    let metric = c.metric.trim();
    if !claim_metrics().contains(&metric) {
        return Err(
            Problem::new(k("metric"), format!("'{metric}' is not a metric"))
                .accepting(claim_metrics().join(", ")),
        );
    }
    let r = Resolver { axes, key };
    let (a, others, relation) = r.relation(c)?;
    let reading = match c.reading.as_deref().map(str::trim) {
        None | Some("overall") => ClaimScope::Overall,
        Some("every") => ClaimScope::Every,
        Some(other) => {
            return Err(Problem::new(
                k("scope"),
                format!("'{other}' is not a way to read a claim over its cells"),
            )
            .accepting("\"overall\" (on balance across its cells, the default) or \"every\" (it must hold in every cell)"))
        }
    };
    if reading == ClaimScope::Every && matches!(relation, ClaimRelation::Trend { .. }) {
        return Err(
            Problem::new(k("scope"), "a trend is one test along its axis")
                .accepting("\"overall\", or leave scope out"),
        );
    }
    let scope = r.scope(c.scope.as_ref())?;
    let named = a.axes();
    if let Some((i, t)) = others.iter().enumerate().find(|(_, t)| t.axes() != named) {
        return Err(Problem::new(
            r.others_key(c, i),
            format!(
                "names {} but the claim's first treatment names {}",
                axis_list(&t.axes()),
                axis_list(&named)
            ),
        )
        .accepting("treatments that name the same axes, e.g. \"fifo\" and \"other\", or { slice = \"0.1ms\" } and { slice = \"3ms\" }"));
    }
    if let Some(t) = others.iter().find(|t| **t == a) {
        return Err(Problem::new(
            r.others_key(c, 0),
            format!("compares '{}' with itself", t.label()),
        )
        .accepting("two different treatments"));
    }
    Ok(Claim {
        name: name.to_string(),
        text: if c.text.trim().is_empty() {
            name.to_string()
        } else {
            c.text.trim().to_string()
        },
        metric: metric.to_string(),
        a,
        others,
        relation,
        scope,
        reading,
        declared,
    })
}

fn axis_list(axes: &[ClaimAxis]) -> String {
    axes.iter()
        .map(|a| a.key())
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
