//! One declared claim tested in one cell: the one-sided rank tests of treatment A against
//! one or more treatments B, their combination into the p-value the family adjusts, and the
//! effect with its interval.
//!
//! Relations, with θ the effect of A against B (the ratio A/B; the difference A - B for
//! absolute amounts):
//!
//! | relation | supported when | contradicted / not equivalent when |
//! |---|---|---|
//! | `Lower` | θ < 1: A below B | θ > 1 |
//! | `Higher` | θ > 1 | θ < 1 |
//! | `RatioAtLeast(R)` | θ > R | θ < R |
//! | `RatioAtMost(R)` | θ < R | θ > R |
//! | `Equal(margin)` | equivalent: lo < θ < hi (TOST) | not equivalent: θ outside [lo, hi] |
//!
//! with lo, hi = 1 - m, 1 + m for a relative margin m and -m, +m for an absolute one.
//! `smallest_effect` is not part of the test: it is the effect at which power and the trials
//! needed are stated (`claim_power.rs`); a claim that the effect exceeds a size is
//! `RatioAtLeast` / `RatioAtMost`.
//!
//! The test at a boundary θ0 compares A with θ0·B (or B + θ0) by rank:
//! - trials without round ids: exact Mann-Whitney U of A against the moved B;
//! - trials with round ids: the Wilcoxon signed-rank test on the per-round differences
//!   (log ratios when every value is positive) against θ0, the exact permutation test that
//!   swaps A's and B's labels within each round (so round-to-round drift cancels). A round
//!   with several trials of each side uses their medians; a round lacking a side, or with
//!   more trials of one side than of the other, is dropped alone (and counted as dropped).
//!
//! Both give exact one-sided p-values (conditional on ties) for the shift model. TOST uses
//! the same tests at the two margins, so it needs no normality and works from n = 3 (where
//! its smallest p is 1/20 against 3 vs 3, reaching 0.05 only alone in the family, and 1/8
//! with 3 rounds).
//!
//! Combining, for each claim in each cell (see `family.rs` for why):
//! - p_support: the evidence for the claim. Several Bs ("each must hold") are an
//!   intersection-union test: the largest of their p-values. Equivalence: the larger of
//!   TOST's two one-sided p-values.
//! - p_against: the evidence against it, for any one B: the smallest p times the number
//!   of Bs (Bonferroni). Equivalence: significantly outside the margin, twice the smaller of
//!   "above hi" and "below lo" (the two-sided interval lies outside the margin).
//! - p_family = min(1, 2 min(p_support, p_against)) for directions and trends: testing both
//!   directions at alpha/2 each, so that the two verdict words together keep the error at
//!   alpha. Equivalence: min(p_support, p_against) (one of its two words is always right,
//!   whatever θ is, so only one can be a false one).

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use super::effect::{effect_paired_on, effect_two_sample_on, Effect, EffectScale};
use super::hypothesis::PValueMethod;
use super::rank_tests::{mann_whitney_one_sided, signed_rank_one_sided};
use super::summary::median;
use super::trend::TrendTest;

use super::claim_types::check_relation;
pub use super::claim_types::{
    Amount, Arm, ClaimError, ClaimKind, Design, Fallback, Leaning, RankTest, Relation,
};

/// One treatment B against A, as tested for a claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairTest {
    /// Trials of A used.
    pub n_a: usize,
    /// Trials of B used.
    pub n_b: usize,
    /// Which rank test.
    pub test: RankTest,
    /// Unpaired, or paired by round (with the rounds used and dropped).
    pub design: Design,
    /// How its p-values were obtained.
    pub method: PValueMethod,
    /// Why rounds were given but not used, if so.
    pub fallback: Option<Fallback>,
    /// One-sided p for the claim against this B.
    pub p_support: f64,
    /// One-sided p against the claim for this B.
    pub p_against: f64,
    /// The effect A/B (or A - B) with its interval.
    pub effect: Option<Effect>,
}

/// One claim in one cell, tested: the p-values the family adjusts and what they rest on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimTest {
    /// Direction (lower, higher, ratio bounds), equivalence, or trend.
    pub kind: ClaimKind,
    /// Evidence for the claim (see the module doc).
    pub p_support: f64,
    /// Evidence against it.
    pub p_against: f64,
    /// The p-value Holm's procedure adjusts over the family.
    pub p_family: f64,
    /// Which verdict `p_family` would give if significant.
    pub leaning: Leaning,
    /// One test per B, in input order (empty for a trend).
    pub pairs: Vec<PairTest>,
    /// The trend test, for a trend claim.
    pub trend: Option<TrendTest>,
}

/// Where the null hypothesis sits: A against B times a factor, or B plus an amount.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Boundary {
    /// A vs θ0 · B.
    Scale(f64),
    /// A vs B + θ0.
    Shift(f64),
}

/// The trials of one pair, as the test will use them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PairData {
    /// Independent samples.
    Unpaired {
        a: Vec<f64>,
        b: Vec<f64>,
        fallback: Option<Fallback>,
    },
    /// One (A, B) pair per round.
    Rounds {
        pairs: Vec<(f64, f64)>,
        dropped: usize,
    },
}

/// Test `relation` of A against every B in `others` (each must hold), with effects at
/// `level` (e.g. 0.95, or the level a sequential look may use). See the module doc.
pub fn test_claim(
    a: Arm,
    others: &[Arm],
    relation: &Relation,
    level: f64,
) -> Result<ClaimTest, ClaimError> {
    check_relation(relation)?;
    if !(level > 0.0 && level < 1.0) {
        return Err(ClaimError::BadLevel(level));
    }
    if others.is_empty() {
        return Err(ClaimError::NoComparison);
    }
    let mut pairs = Vec::with_capacity(others.len());
    for (i, b) in others.iter().enumerate() {
        let data = pair_data(a, *b, i)?;
        pairs.push(test_pair(&data, relation, level)?);
    }
    let kind = relation.kind();
    let sides: Vec<(f64, f64)> = pairs.iter().map(|p| (p.p_support, p.p_against)).collect();
    let (p_support, p_against, p_family, leaning) = combine(kind, &sides);
    Ok(ClaimTest {
        kind,
        p_support,
        p_against,
        p_family,
        leaning,
        pairs,
        trend: None,
    })
}

/// Combine per-B (support, against) p-values into the claim's (support, against, family,
/// leaning); see the module doc.
pub(super) fn combine(kind: ClaimKind, sides: &[(f64, f64)]) -> (f64, f64, f64, Leaning) {
    let k = sides.len().max(1) as f64;
    let support = sides.iter().map(|s| s.0).fold(0.0f64, f64::max).min(1.0);
    let against = (k * sides.iter().map(|s| s.1).fold(1.0f64, f64::min)).min(1.0);
    let family = match kind {
        ClaimKind::Equivalence => support.min(against),
        ClaimKind::Direction | ClaimKind::Trend => (2.0 * support.min(against)).min(1.0),
    };
    let leaning = if support <= against {
        Leaning::Support
    } else {
        Leaning::Against
    };
    (support, against, family, leaning)
}

/// The trials of A and B as the test will use them: paired by round when both have round
/// ids (rounds with unequal sides dropped), else unpaired.
pub(super) fn pair_data(a: Arm, b: Arm, index: usize) -> Result<PairData, ClaimError> {
    a.check(None)?;
    b.check(Some(index))?;
    let unpaired = |fallback| PairData::Unpaired {
        a: a.values.to_vec(),
        b: b.values.to_vec(),
        fallback,
    };
    let (Some(ra), Some(rb)) = (a.rounds, b.rounds) else {
        return Ok(unpaired(None));
    };
    let mut by_round: BTreeMap<u64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (v, r) in a.values.iter().zip(ra) {
        by_round.entry(*r).or_default().0.push(*v);
    }
    for (v, r) in b.values.iter().zip(rb) {
        by_round.entry(*r).or_default().1.push(*v);
    }
    let mut pairs = Vec::new();
    let mut dropped = 0;
    for (xa, xb) in by_round.values() {
        // A round lacking a side, or with more trials of one side than of the other, is
        // left out alone: the other rounds stay paired.
        if xa.is_empty() || xb.is_empty() || xa.len() != xb.len() {
            dropped += 1;
        } else {
            pairs.push((median(xa).unwrap_or(0.0), median(xb).unwrap_or(0.0)));
        }
    }
    if pairs.is_empty() {
        return Ok(unpaired(Some(Fallback::NoCommonRound)));
    }
    Ok(PairData::Rounds { pairs, dropped })
}

/// One-sided p-values (A below the boundary, A above it) and their method.
pub(super) fn at_boundary(
    data: &PairData,
    boundary: Boundary,
) -> Result<(f64, f64, PValueMethod), ClaimError> {
    let moved = |b: f64| match boundary {
        Boundary::Scale(r) => r * b,
        Boundary::Shift(d) => b + d,
    };
    let t = match data {
        PairData::Unpaired { a, b, .. } => {
            if let Boundary::Scale(r) = boundary {
                if r != 1.0 && a.iter().chain(b).any(|v| *v < 0.0) {
                    return Err(ClaimError::NeedsNonNegative);
                }
            }
            let y: Vec<f64> = b.iter().map(|v| moved(*v)).collect();
            mann_whitney_one_sided(a, &y)
        }
        PairData::Rounds { pairs, .. } => {
            let positive = pairs.iter().all(|(x, y)| *x > 0.0 && *y > 0.0);
            let d: Vec<f64> = match boundary {
                Boundary::Scale(r) if positive => pairs
                    .iter()
                    .map(|(x, y)| x.ln() - y.ln() - r.ln())
                    .collect(),
                Boundary::Scale(r) => {
                    if r != 1.0 && pairs.iter().any(|(x, y)| *x < 0.0 || *y < 0.0) {
                        return Err(ClaimError::NeedsNonNegative);
                    }
                    pairs.iter().map(|(x, y)| x - r * y).collect()
                }
                Boundary::Shift(s) => pairs.iter().map(|(x, y)| x - y - s).collect(),
            };
            signed_rank_one_sided(&d)
        }
    };
    let t = t.ok_or(ClaimError::NonFinite)?;
    Ok((t.p_less, t.p_greater, t.method))
}

/// The boundaries a relation tests at: one for a direction, (lo, hi) for equivalence.
pub(super) fn boundaries(relation: &Relation) -> Vec<Boundary> {
    match *relation {
        Relation::Lower { .. } | Relation::Higher { .. } => vec![Boundary::Scale(1.0)],
        Relation::RatioAtLeast { ratio, .. } | Relation::RatioAtMost { ratio, .. } => {
            vec![Boundary::Scale(ratio)]
        }
        Relation::Equal {
            margin: Amount::Relative(m),
        } => vec![Boundary::Scale(1.0 - m), Boundary::Scale(1.0 + m)],
        Relation::Equal {
            margin: Amount::Absolute(m),
        } => vec![Boundary::Shift(-m), Boundary::Shift(m)],
    }
}

/// (support, against) for one B from the one-sided p's (below, above) at each boundary.
pub(super) fn sides(relation: &Relation, at: &[(f64, f64)]) -> (f64, f64) {
    match relation {
        Relation::Lower { .. } | Relation::RatioAtMost { .. } => at[0],
        Relation::Higher { .. } | Relation::RatioAtLeast { .. } => (at[0].1, at[0].0),
        Relation::Equal { .. } => {
            let (below_lo, above_lo) = at[0];
            let (below_hi, above_hi) = at[1];
            (
                above_lo.max(below_hi),
                (2.0 * above_hi.min(below_lo)).min(1.0),
            )
        }
    }
}

fn test_pair(data: &PairData, relation: &Relation, level: f64) -> Result<PairTest, ClaimError> {
    let mut at = Vec::with_capacity(2);
    let mut method = PValueMethod::Exact;
    for boundary in boundaries(relation) {
        let (below, above, m) = at_boundary(data, boundary)?;
        at.push((below, above));
        method = worst(method, m);
    }
    let (p_support, p_against) = sides(relation, &at);
    // An absolute margin is a difference A - B: its effect is one too, in the metric's unit.
    let scale = |values: &mut dyn Iterator<Item = &f64>| match relation {
        Relation::Equal {
            margin: Amount::Absolute(_),
        } => EffectScale::Difference,
        _ => EffectScale::for_values(values),
    };
    let (n_a, n_b, test, design, fallback, effect) = match data {
        PairData::Unpaired { a, b, fallback } => (
            a.len(),
            b.len(),
            RankTest::MannWhitney,
            Design::Unpaired,
            *fallback,
            effect_two_sample_on(a, b, level, scale(&mut a.iter().chain(b.iter()))),
        ),
        PairData::Rounds { pairs, dropped } => (
            pairs.len(),
            pairs.len(),
            RankTest::SignedRank,
            Design::Rounds {
                used: pairs.len(),
                dropped: *dropped,
            },
            None,
            effect_paired_on(
                pairs,
                level,
                scale(&mut pairs.iter().flat_map(|(a, b)| [a, b])),
            ),
        ),
    };
    Ok(PairTest {
        n_a,
        n_b,
        test,
        design,
        method,
        fallback,
        p_support,
        p_against,
        effect,
    })
}

/// The less exact of two methods (for a test run at two boundaries).
fn worst(a: PValueMethod, b: PValueMethod) -> PValueMethod {
    let rank = |m| match m {
        PValueMethod::Exact => 0,
        PValueMethod::Permutation => 1,
        PValueMethod::MonteCarlo => 2,
        PValueMethod::Asymptotic | PValueMethod::Parametric => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

impl fmt::Display for PairTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.test.label(), self.method.label())
    }
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
