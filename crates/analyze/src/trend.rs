//! Trend claims: the ratio A/B moves toward a target value (e.g. 1) along an ordered axis
//! (task count, load). A test of location, not of spread.
//!
//! Per level of the axis and per round, y = ln(A/B) (medians of a round's trials of each
//! side). Paired by round (one machine: every round has every level), each round gives the
//! linear contrast c = Σ_l w_l y_l with centred weights w_l = l - (L - 1) / 2: how the log
//! ratio rises along the axis within that round, so round-to-round drift cancels. Under
//! "no trend" (every level has the same centre) each c is a sum of independent symmetric
//! deviations, symmetric about 0 whatever the levels' spreads, so the Wilcoxon signed-rank
//! test on the c's is exact: a ratio that stays put while its noise shrinks with load gives
//! no trend (testing distances |y - ln target| did: they shrink with the noise).
//!
//! "Toward the target" is a rise when the ratio lies below the target and a fall when above:
//! which side is read from the median of every y together. That median does not change when
//! the level labels are permuted, and the test is two-sided in the family (moving away
//! counts as contradicting), so the choice spends no error.
//!
//! Without rounds (pooled runs of several machines) the levels' trials are independent: the
//! Jonckheere-Terpstra test of an ordered location shift on the y's, oriented the same way
//! (exact without ties, Monte Carlo with them); it assumes the levels' spreads alike.
//!
//! Effect: the ratio's change per level step, exp(HL(c) / Σ w_l²) (the Hodges-Lehmann
//! estimate of the contrast over its least-squares scale), with each level's ratio.

use std::collections::BTreeMap;

use serde::Serialize;

use super::claim_types::{Arm, ClaimError, ClaimKind};
use super::claims::{combine, pair_data, ClaimTest, PairData};
use super::effect::{effect_paired, effect_two_sample, Effect};
use super::hypothesis::PValueMethod;
use super::rank_tests::{jonckheere_one_sided, signed_rank_one_sided};
use super::summary::median;

/// One level of a trend's axis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrendLevel {
    /// Trial pairs (rounds, when paired) at this level.
    pub pairs: usize,
    /// The ratio A/B at this level with its interval.
    pub effect: Option<Effect>,
}

/// The test of a trend claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendTest {
    /// The target ratio.
    pub toward: f64,
    /// T+ of the signed-rank test on the contrasts (paired), or J (unpaired).
    pub statistic: f64,
    /// The ratio's change per level step as a factor (> 1: it rises along the axis), paired
    /// by round only.
    pub step_factor: Option<f64>,
    /// Whether the ratio lies below the target (so moving toward it is a rise).
    pub below_target: bool,
    /// Rounds with every level (paired), or trials (unpaired).
    pub used: usize,
    /// How the p-values were obtained.
    pub method: PValueMethod,
    /// Levels in axis order.
    pub levels: Vec<TrendLevel>,
}

/// ln(A/B) of each round of a pair of arms with rounds (sides' medians; a round with unequal
/// sides left out); None without rounds.
fn log_ratio_by_round(a: Arm, b: Arm) -> Option<BTreeMap<u64, f64>> {
    let (ra, rb) = (a.rounds?, b.rounds?);
    let mut by: BTreeMap<u64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (v, r) in a.values.iter().zip(ra) {
        by.entry(*r).or_default().0.push(*v);
    }
    for (v, r) in b.values.iter().zip(rb) {
        by.entry(*r).or_default().1.push(*v);
    }
    Some(
        by.into_iter()
            .filter(|(_, (x, y))| !x.is_empty() && x.len() == y.len())
            .map(|(r, (x, y))| {
                let (mx, my) = (median(&x).unwrap_or(0.0), median(&y).unwrap_or(0.0));
                (r, mx.ln() - my.ln())
            })
            .collect(),
    )
}

/// Test that A/B moves toward `toward` along `levels` (in axis order; each the trials of A
/// and of B at that level), with per-level ratio intervals at `level`. `seed` drives the
/// Monte Carlo p of the unpaired test when values tie.
pub fn test_trend(
    levels: &[(Arm, Arm)],
    toward: f64,
    level: f64,
    seed: u64,
) -> Result<ClaimTest, ClaimError> {
    if !(toward.is_finite() && toward > 0.0) {
        return Err(ClaimError::BadTarget(toward));
    }
    if !(level > 0.0 && level < 1.0) {
        return Err(ClaimError::BadLevel(level));
    }
    let mut summary = Vec::new();
    let mut unpaired: Vec<Vec<f64>> = Vec::new();
    for (a, b) in levels {
        let data = pair_data(*a, *b, 0)?;
        let (pairs, effect) = match &data {
            PairData::Rounds { pairs, .. } => (pairs.clone(), effect_paired(pairs, level)),
            PairData::Unpaired { a, b, .. } => (
                a.iter().copied().zip(b.iter().copied()).collect(),
                effect_two_sample(a, b, level),
            ),
        };
        if pairs.iter().any(|(x, y)| *x <= 0.0 || *y <= 0.0)
            || a.values.iter().chain(b.values).any(|v| *v <= 0.0)
        {
            return Err(ClaimError::TrendNeedsPositive);
        }
        unpaired.push(pairs.iter().map(|(x, y)| x.ln() - y.ln()).collect());
        summary.push(TrendLevel {
            pairs: pairs.len(),
            effect,
        });
    }
    if summary.iter().filter(|l| l.pairs > 0).count() < 2 {
        return Err(ClaimError::TooFewLevels);
    }
    let by_round: Option<Vec<BTreeMap<u64, f64>>> = levels
        .iter()
        .map(|(a, b)| log_ratio_by_round(*a, *b))
        .collect();
    let target = toward.ln();
    let trend = match by_round {
        Some(rounds) => paired_trend(&rounds, target)?,
        None => unpaired_trend(&unpaired, target, seed)?,
    };
    let (p_support, p_against) = trend.sides;
    let (p_support, p_against, p_family, leaning) =
        combine(ClaimKind::Trend, &[(p_support, p_against)]);
    Ok(ClaimTest {
        kind: ClaimKind::Trend,
        p_support,
        p_against,
        p_family,
        leaning,
        pairs: Vec::new(),
        trend: Some(TrendTest {
            toward,
            statistic: trend.statistic,
            step_factor: trend.step_factor,
            below_target: trend.below,
            used: trend.used,
            method: trend.method,
            levels: summary,
        }),
    })
}

/// What either trend test found: (support p, against p), its statistic and effect.
struct Found {
    sides: (f64, f64),
    statistic: f64,
    step_factor: Option<f64>,
    below: bool,
    used: usize,
    method: PValueMethod,
}

/// Whether the pooled log ratios lie below the target (ties: below).
fn below(values: impl Iterator<Item = f64>, target: f64) -> bool {
    let all: Vec<f64> = values.collect();
    median(&all).is_none_or(|m| m <= target)
}

/// The signed-rank test on per-round contrasts over the rounds every level has.
fn paired_trend(rounds: &[BTreeMap<u64, f64>], target: f64) -> Result<Found, ClaimError> {
    let levels: Vec<&BTreeMap<u64, f64>> = rounds.iter().filter(|m| !m.is_empty()).collect();
    let l = levels.len();
    let weights: Vec<f64> = (0..l).map(|i| i as f64 - (l as f64 - 1.0) / 2.0).collect();
    let common: Vec<u64> = levels[0]
        .keys()
        .copied()
        .filter(|r| levels.iter().all(|m| m.contains_key(r)))
        .collect();
    if common.is_empty() {
        return Err(ClaimError::TooFewLevels);
    }
    let contrasts: Vec<f64> = common
        .iter()
        .map(|r| levels.iter().zip(&weights).map(|(m, w)| w * m[r]).sum())
        .collect();
    let below = below(levels.iter().flat_map(|m| m.values().copied()), target);
    let t = signed_rank_one_sided(&contrasts).ok_or(ClaimError::NonFinite)?;
    // Below the target, a rise (positive contrasts, small p_greater) moves toward it.
    let sides = if below {
        (t.p_greater, t.p_less)
    } else {
        (t.p_less, t.p_greater)
    };
    let scale: f64 = weights.iter().map(|w| w * w).sum();
    let hl = walsh_median(&contrasts);
    Ok(Found {
        sides,
        statistic: t.statistic,
        step_factor: Some((hl / scale).exp()),
        below,
        used: contrasts.len(),
        method: t.method,
    })
}

/// The median of the Walsh averages (the signed-rank test's Hodges-Lehmann estimate).
fn walsh_median(d: &[f64]) -> f64 {
    let mut w: Vec<f64> = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, x) in d.iter().enumerate() {
        w.extend(d[i..].iter().map(|y| (x + y) / 2.0));
    }
    median(&w).unwrap_or(0.0)
}

/// Jonckheere-Terpstra on the levels' log ratios (independent trials).
fn unpaired_trend(levels: &[Vec<f64>], target: f64, seed: u64) -> Result<Found, ClaimError> {
    let groups: Vec<&[f64]> = levels
        .iter()
        .map(|d| &d[..])
        .filter(|d| !d.is_empty())
        .collect();
    let t = jonckheere_one_sided(&groups, seed).ok_or(ClaimError::NonFinite)?;
    let below = below(groups.iter().flat_map(|g| g.iter().copied()), target);
    let sides = if below {
        (t.p_greater, t.p_less)
    } else {
        (t.p_less, t.p_greater)
    };
    Ok(Found {
        sides,
        statistic: t.statistic,
        step_factor: None,
        below,
        used: groups.iter().map(|g| g.len()).sum(),
        method: t.method,
    })
}

#[cfg(test)]
#[path = "trend_tests.rs"]
mod tests;
