//! Adaptive trial counts (`--precision`, `--until-decided`): the settings a checked spec carries ([`Adaptive`])
//! and what the stopping rule says after each round ([`Decision`]). The spec crate parses and
//! checks the settings, the analyze crate decides, the run crate acts on the decision, and
//! the report reads the settings back from the spec as run.

use crate::metric::Metric;
use serde::{Deserialize, Serialize};

/// Rounds an adaptive run stops at unless `max_trials` says otherwise.
pub const DEFAULT_MAX_TRIALS: u32 = 30;

/// How an adaptive run decides how many rounds to run: rounds are added (each shuffled, every
/// cell once) until every cell's 95 % confidence sequence of its key metric is within
/// ± `precision` of its median (with `precision`) and every declared claim is decided (with
/// `until_decided`), or `max_trials` rounds ran, or `max_time` passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    /// Wanted half-width of each cell's 95 % interval, as a fraction of its median (0.02 =
    /// ±2 %); None: no precision asked (`until_decided` alone).
    pub precision: Option<f64>,
    /// Add rounds until no claim is inconclusive.
    #[serde(default)]
    pub until_decided: bool,
    /// Measured rounds always run (2 or more).
    pub min_trials: u32,
    /// Measured rounds never exceeded.
    pub max_trials: u32,
    /// No round starts that would end after this much time since the run (or its resumption)
    /// started, ns; None: no time limit.
    pub max_time_ns: Option<u64>,
    /// The key metric: one value per trial (per-task metrics through the median of the
    /// trial's tasks).
    pub metric: Metric,
}

/// What the judge says after a round (`src/app/judge.rs` asks analyze's stopping rule; the
/// run acts on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run another round.
    Continue,
    /// Stop: every cell is within the precision and every claim decided, as asked (and the
    /// minimum rounds ran).
    Precise,
    /// Stop: the maximum rounds ran with some cell still imprecise or some claim undecided.
    LimitReached,
}
