//! The vocabulary of claims: relations and amounts (the one type of `schedlab-claim`, which
//! the spec reads), the trials of one treatment, and the errors a claim can have before any
//! test runs.

use std::fmt;

use serde::Serialize;

pub use schedlab_claim::{Amount, ClaimKind, Relation};

/// Checks an amount: finite, above 0, and below 1 when relative.
fn check_amount(a: Amount) -> Result<(), ClaimError> {
    let v = a.value();
    let ok = v.is_finite() && v > 0.0 && !matches!(a, Amount::Relative(r) if r >= 1.0);
    if ok {
        Ok(())
    } else {
        Err(ClaimError::BadAmount(a))
    }
}

/// Checks a relation's amounts and ratios before any test runs.
pub fn check_relation(relation: &Relation) -> Result<(), ClaimError> {
    match *relation {
        Relation::Lower { smallest_effect } | Relation::Higher { smallest_effect } => {
            match smallest_effect {
                Some(e) => check_amount(e),
                None => Ok(()),
            }
        }
        Relation::RatioAtLeast {
            ratio,
            smallest_effect,
        }
        | Relation::RatioAtMost {
            ratio,
            smallest_effect,
        } => {
            if !(ratio.is_finite() && ratio > 0.0) {
                return Err(ClaimError::BadRatio(ratio));
            }
            match smallest_effect {
                Some(Amount::Absolute(_)) => Err(ClaimError::AbsoluteEffectOfRatio),
                Some(e) => check_amount(e),
                None => Ok(()),
            }
        }
        Relation::Equal { margin } => check_amount(margin),
    }
}

/// The trials of one treatment in one cell: one value per trial (e.g. the trial's median
/// over its tasks), and optionally the round each trial ran in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm<'a> {
    /// One value per trial.
    pub values: &'a [f64],
    /// The round of each trial (same length as `values`), if the run has rounds.
    pub rounds: Option<&'a [u64]>,
}

impl<'a> Arm<'a> {
    /// Trials without round ids.
    pub fn new(values: &'a [f64]) -> Arm<'a> {
        Arm {
            values,
            rounds: None,
        }
    }

    /// Trials with the round each ran in.
    pub fn with_rounds(values: &'a [f64], rounds: &'a [u64]) -> Arm<'a> {
        Arm {
            values,
            rounds: Some(rounds),
        }
    }

    /// `side`: `None` for A, `Some(i)` for the i-th B.
    pub(super) fn check(&self, side: Option<usize>) -> Result<(), ClaimError> {
        if self.values.is_empty() {
            return Err(ClaimError::NoTrials { side });
        }
        if self.values.iter().any(|v| !v.is_finite()) {
            return Err(ClaimError::NonFinite);
        }
        match self.rounds {
            Some(r) if r.len() != self.values.len() => Err(ClaimError::RoundsMismatch {
                values: self.values.len(),
                rounds: r.len(),
            }),
            _ => Ok(()),
        }
    }
}

/// Which side of a claim its family p-value speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Leaning {
    /// For the claim: supported, or equivalent.
    Support,
    /// Against it: contradicted, or not equivalent.
    Against,
}

/// Which rank test a pair used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankTest {
    /// Mann-Whitney U on independent trials.
    MannWhitney,
    /// Wilcoxon signed-rank on per-round differences (stratified by round).
    SignedRank,
    /// One rank test over several cells, each cell a stratum (`stratified.rs`).
    Stratified {
        /// Cells (strata).
        strata: usize,
    },
}

impl RankTest {
    /// The test's name for the claims table.
    pub fn label(self) -> &'static str {
        match self {
            RankTest::MannWhitney => "Mann-Whitney U",
            RankTest::SignedRank => "Wilcoxon signed-rank on rounds",
            RankTest::Stratified { .. } => "stratified rank test over cells",
        }
    }
}

/// How a pair's trials were used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Independent samples.
    Unpaired,
    /// Paired by round.
    Rounds {
        /// Rounds with both treatments.
        used: usize,
        /// Rounds with only one of them (left out).
        dropped: usize,
    },
}

/// Why trials with round ids were tested unpaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// No round has trials of both.
    NoCommonRound,
}

/// Why a claim could not be tested.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClaimError {
    /// No treatment to compare A with.
    NoComparison,
    /// A side has no trials (`side`: None for A, Some(i) for the i-th B).
    NoTrials { side: Option<usize> },
    /// A value is NaN or infinite.
    NonFinite,
    /// Round ids and values differ in number.
    RoundsMismatch { values: usize, rounds: usize },
    /// A ratio other than 1 was asked of values that include negatives.
    NeedsNonNegative,
    /// A ratio bound that is not a positive number.
    BadRatio(f64),
    /// A margin or smallest effect that is not positive (or a relative one of 100% or more).
    BadAmount(Amount),
    /// An absolute smallest effect given for a ratio bound.
    AbsoluteEffectOfRatio,
    /// A confidence level outside (0, 1).
    BadLevel(f64),
    /// A trend needs at least two levels with trials of both treatments.
    TooFewLevels,
    /// A trend of the ratio needs positive values.
    TrendNeedsPositive,
    /// A trend target that is not a positive number.
    BadTarget(f64),
}

impl fmt::Display for ClaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaimError::NoComparison => write!(f, "the claim compares with no treatment; name one in `than`"),
            ClaimError::NoTrials { side: None } => write!(f, "the claimed treatment has no trials in this cell; run it or narrow the claim's scope"),
            ClaimError::NoTrials { side: Some(i) } => write!(f, "compared treatment {} has no trials in this cell; run it or narrow the claim's scope", i + 1),
            ClaimError::NonFinite => write!(f, "a trial value is not a finite number; the metric cannot be tested"),
            ClaimError::RoundsMismatch { values, rounds } => write!(f, "{values} trial values but {rounds} round ids; give one round id per trial"),
            ClaimError::NeedsNonNegative => write!(f, "a ratio bound needs values of one sign, but some are negative; state the claim as a difference"),
            ClaimError::BadRatio(r) => write!(f, "ratio bound {r} is not a positive number"),
            ClaimError::BadAmount(a) => write!(f, "{a:?} is not a usable margin or effect: it must be positive (and below 100% when relative)"),
            ClaimError::AbsoluteEffectOfRatio => write!(f, "a ratio bound's smallest effect must be relative (e.g. \"5%\")"),
            ClaimError::BadLevel(l) => write!(f, "confidence level {l} is not between 0 and 1"),
            ClaimError::TooFewLevels => write!(f, "a trend needs at least two levels of its axis with trials of both treatments"),
            ClaimError::TrendNeedsPositive => write!(f, "a trend of a ratio needs positive values, but some trial value is zero or negative"),
            ClaimError::BadTarget(t) => write!(f, "trend target {t} is not a positive ratio"),
        }
    }
}

impl std::error::Error for ClaimError {}
