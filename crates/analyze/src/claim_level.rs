//! A claim as one hypothesis across its cells: the claim-level test the family decides
//! (`family.rs`), before any of its cells is judged on its own.
//!
//! Two readings of a claim over several cells (the claim's `scope`):
//! - [`Scope::Overall`] (the default): "on balance across its cells". One stratified rank test
//!   over every (cell, round) pair with cells as strata (`stratified.rs`) at each boundary;
//!   several compared treatments must each hold (the largest p), as in a cell. Its null is
//!   "at the boundary in every cell", so a claim over many cells is decided from far fewer
//!   rounds than any one cell (N rounds in all give p down to 2^-N).
//! - [`Scope::Every`]: "in every cell" (intersection-union). Supported only when every cell
//!   is, at the same level (the largest cell p, no adjustment needed); contradicted when any
//!   cell is against it (the smallest against-p times the number of cells, Bonferroni).
//!
//! The effect of an overall claim is the one that inverts the stratified test, with its
//! interval at the level the caller asks (the verdict's: 1 - alpha / m, or 1 - 2 alpha / m
//! for an equality), so the interval excludes the boundary exactly when the claim-level p
//! is below that level.

use serde::Serialize;

use super::claim_types::{
    check_relation, Amount, Arm, ClaimError, ClaimKind, Design, RankTest, Relation,
};
use super::claims::{boundaries, combine, pair_data, sides, ClaimTest, PairData, PairTest};
use super::effect::{Effect, EffectMethod, EffectScale};
use super::hypothesis::PValueMethod;
use super::stratified::{stratified_at, stratified_effect};

/// How a claim reads over its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// On balance across its cells (one stratified test).
    #[default]
    Overall,
    /// In every one of its cells (intersection-union).
    Every,
}

/// One cell of a claim: A's trials and each B's (same order in every cell).
#[derive(Debug, Clone, PartialEq)]
pub struct CellArms<'a> {
    /// The claimed treatment.
    pub a: Arm<'a>,
    /// Each compared treatment.
    pub others: Vec<Arm<'a>>,
}

/// The overall (stratified) test of `relation` over `cells`, with the effect of the binding
/// compared treatment at `level` (None: no effect, e.g. at a look that only decides). A
/// single cell gives the same p-values as [`super::test_claim`] on it.
pub fn test_claim_over_cells(
    cells: &[CellArms],
    relation: &Relation,
    level: Option<f64>,
) -> Result<ClaimTest, ClaimError> {
    if let Some(level) = level.filter(|l| !(*l > 0.0 && *l < 1.0)) {
        return Err(ClaimError::BadLevel(level));
    }
    check_relation(relation)?;
    let k = cells.first().map_or(0, |c| c.others.len());
    if k == 0 || cells.iter().any(|c| c.others.len() != k) {
        return Err(ClaimError::NoComparison);
    }
    let mut pairs = Vec::with_capacity(k);
    for i in 0..k {
        let strata: Vec<PairData> = cells
            .iter()
            .map(|c| pair_data(c.a, c.others[i], i))
            .collect::<Result<_, _>>()?;
        pairs.push(stratified_pair(&strata, relation, level)?);
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

/// One compared treatment over every stratum.
fn stratified_pair(
    strata: &[PairData],
    relation: &Relation,
    level: Option<f64>,
) -> Result<PairTest, ClaimError> {
    let mut at = Vec::with_capacity(2);
    let mut method = PValueMethod::Exact;
    for boundary in boundaries(relation) {
        let p = stratified_at(strata, boundary)?;
        at.push((p.p_less, p.p_greater));
        if p.method != PValueMethod::Exact {
            method = p.method;
        }
    }
    let (p_support, p_against) = sides(relation, &at);
    let all_values = strata.iter().flat_map(|s| match s {
        PairData::Rounds { pairs, .. } => pairs.iter().flat_map(|(a, b)| [*a, *b]).collect(),
        PairData::Unpaired { a, b, .. } => a.iter().chain(b).copied().collect::<Vec<f64>>(),
    });
    let values: Vec<f64> = all_values.collect();
    let scale = match relation {
        Relation::Equal {
            margin: Amount::Absolute(_),
        } => EffectScale::Difference,
        _ => EffectScale::for_values(&values),
    };
    let (mut used, mut dropped, mut n_a, mut n_b, mut paired) = (0, 0, 0, 0, true);
    for s in strata {
        match s {
            PairData::Rounds { pairs, dropped: d } => {
                used += pairs.len();
                dropped += d;
                n_a += pairs.len();
                n_b += pairs.len();
            }
            PairData::Unpaired { a, b, .. } => {
                paired = false;
                n_a += a.len();
                n_b += b.len();
            }
        }
    }
    let effect = level
        .and_then(|level| stratified_effect(strata, scale, level))
        .map(|e| Effect {
            scale: e.scale,
            estimate: e.estimate,
            lo: e.lo,
            hi: e.hi,
            level: e.level,
            coverage: e.level,
            below_level: !match e.scale {
                EffectScale::Ratio => e.lo > 0.0 && e.hi.is_finite(),
                EffectScale::Difference => e.lo.is_finite() && e.hi.is_finite(),
            },
            method: EffectMethod::Stratified,
        });
    Ok(PairTest {
        n_a,
        n_b,
        test: RankTest::Stratified {
            strata: strata.len(),
        },
        design: if paired {
            Design::Rounds { used, dropped }
        } else {
            Design::Unpaired
        },
        method,
        fallback: None,
        p_support,
        p_against,
        effect,
    })
}

/// The intersection-union reading of per-cell tests (see [`Scope::Every`]): support is the
/// largest cell's, against the smallest times the number of cells.
pub fn every_of(kind: ClaimKind, cells: &[ClaimTest]) -> ClaimTest {
    let n = cells.len().max(1) as f64;
    let support = cells.iter().map(|c| c.p_support).fold(0.0f64, f64::max);
    let against = (n * cells.iter().map(|c| c.p_against).fold(1.0f64, f64::min)).min(1.0);
    let (p_support, p_against, p_family, leaning) = combine(kind, &[(support, against)]);
    // The binding cell (largest support p) stands for the claim's effect.
    let binding = cells
        .iter()
        .max_by(|x, y| x.p_support.total_cmp(&y.p_support));
    ClaimTest {
        kind,
        p_support,
        p_against,
        p_family,
        leaning,
        pairs: binding.map(|b| b.pairs.clone()).unwrap_or_default(),
        trend: None,
    }
}

/// Whether `effect`'s interval lies inside the band where `relation`'s effect does not
/// matter: within ± `smallest_effect` of its boundary (1 ± e, R (1 ± e), or ± e for an
/// absolute amount). Such a claim is `negligible`, whatever its p. False without a
/// smallest effect, for an equality, or with an unbounded interval.
pub fn negligible(relation: &Relation, effect: &Effect) -> bool {
    let Some(amount) = relation.smallest_effect() else {
        return false;
    };
    let centre = match relation {
        Relation::RatioAtLeast { ratio, .. } | Relation::RatioAtMost { ratio, .. } => *ratio,
        _ => effect.scale.null(),
    };
    let (lo, hi) = match (amount, effect.scale) {
        (Amount::Relative(e), EffectScale::Ratio) => (centre * (1.0 - e), centre * (1.0 + e)),
        (Amount::Absolute(e), EffectScale::Difference) => (-e, e),
        _ => return false,
    };
    effect.lo.is_finite() && effect.hi.is_finite() && effect.lo > lo && effect.hi < hi
}

#[cfg(test)]
#[path = "claim_level_tests.rs"]
mod tests;
