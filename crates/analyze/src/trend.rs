//! Trend claims: the ratio A/B moves toward a target value (e.g. 1) along an ordered axis
//! (task count, load), tested with Jonckheere-Terpstra on per-trial distances to the target.
//!
//! Per level of the axis, each trial pair gives a distance D = |ln(a/b) - ln(target)|
//! (pairs by round when both treatments have round ids, else the i-th trial of each: in a
//! schedlab plan, trial i of every cell runs in round i). The claim "moves toward the
//! target" is that D decreases with the level; Jonckheere-Terpstra tests exactly that
//! ordered alternative over all levels at once.
//!
//! Why Jonckheere-Terpstra rather than the alternatives:
//! - Spearman or Kendall on one ratio per level has too few points (3 levels: the smallest
//!   one-sided p is 1/6); JT uses every trial, so its smallest p with 3 levels of 3 trials
//!   is 1/1680.
//! - A regression of the log ratio on the level needs a numeric, linear axis and normal
//!   errors; task counts 10, 50, 100 are only ordered, and JT needs only that.
//! - JT is a rank test with an exact permutation distribution (no ties: counted exactly;
//!   ties: seeded Monte Carlo), like the other tests of the claims engine, and robust to a
//!   stalled trial.
//!
//! Its null hypothesis is "the distances have one distribution at every level"; it is
//! two-sided in the family (moving away counts as contradicting), as `claims.rs` describes.

use serde::Serialize;

use super::claim_types::{Arm, ClaimError, ClaimKind};
use super::claims::{combine, pair_data, ClaimTest, PairData};
use super::effect::{effect_paired, effect_two_sample, Effect};
use super::hypothesis::PValueMethod;
use super::rank_tests::jonckheere_one_sided;

/// One level of a trend's axis.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TrendLevel {
    /// Trial pairs (distances) at this level.
    pub pairs: usize,
    /// The ratio A/B at this level with its interval.
    pub effect: Option<Effect>,
}

/// The Jonckheere-Terpstra test of a trend claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendTest {
    /// The target ratio.
    pub toward: f64,
    /// J: pairs of trials from levels k < l whose distance grows from k to l (ties half).
    pub statistic: f64,
    /// Over all pairs of trials from different levels: the share where the later level is
    /// closer to the target minus the share where it is farther, in -1..=1 (1: always
    /// closer). The effect size of the trend.
    pub concordance: f64,
    /// How the p-values were obtained.
    pub method: PValueMethod,
    /// Levels in axis order.
    pub levels: Vec<TrendLevel>,
}

/// Test that A/B moves toward `toward` along `levels` (in axis order; each the trials of A
/// and of B at that level), with per-level ratio intervals at `level`. `seed` drives the
/// Monte Carlo p when distances tie.
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
    let mut distances: Vec<Vec<f64>> = Vec::new();
    let mut summary = Vec::new();
    for (a, b) in levels {
        let data = pair_data(*a, *b, 0)?;
        let (pairs, effect) = match &data {
            PairData::Rounds { pairs, .. } => (pairs.clone(), effect_paired(pairs, level)),
            PairData::Unpaired { a, b, .. } => (
                a.iter().copied().zip(b.iter().copied()).collect(),
                effect_two_sample(a, b, level),
            ),
        };
        if pairs.iter().any(|(x, y)| *x <= 0.0 || *y <= 0.0) {
            return Err(ClaimError::TrendNeedsPositive);
        }
        let target = toward.ln();
        distances.push(
            pairs
                .iter()
                .map(|(x, y)| (x.ln() - y.ln() - target).abs())
                .collect(),
        );
        summary.push(TrendLevel {
            pairs: pairs.len(),
            effect,
        });
    }
    let groups: Vec<&[f64]> = distances
        .iter()
        .map(|d| &d[..])
        .filter(|d| !d.is_empty())
        .collect();
    if groups.len() < 2 {
        return Err(ClaimError::TooFewLevels);
    }
    let t = jonckheere_one_sided(&groups, seed).ok_or(ClaimError::NonFinite)?;
    let sizes: Vec<f64> = groups.iter().map(|g| g.len() as f64).collect();
    let total: f64 = sizes.iter().sum();
    let cross = (total * total - sizes.iter().map(|s| s * s).sum::<f64>()) / 2.0;
    // J counts growing distances; concordance = (closer - farther) / cross = 1 - 2 J / cross.
    let concordance = 1.0 - 2.0 * t.statistic / cross;
    // Decreasing distances (toward the target) make J small: p_less speaks for the claim.
    let (p_support, p_against, p_family, leaning) =
        combine(ClaimKind::Trend, &[(t.p_less, t.p_greater)]);
    Ok(ClaimTest {
        kind: ClaimKind::Trend,
        p_support,
        p_against,
        p_family,
        leaning,
        pairs: Vec::new(),
        trend: Some(TrendTest {
            toward,
            statistic: t.statistic,
            concordance,
            method: t.method,
            levels: summary,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim_types::Leaning;

    fn arms(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
        (a.to_vec(), b.to_vec())
    }

    #[test]
    fn a_ratio_converging_to_one_is_supported_and_diverging_contradicted() {
        // Ratios 2.0, 1.5, 1.1 at three levels, three trials each with a little noise.
        let data: Vec<(Vec<f64>, Vec<f64>)> = [2.0, 1.5, 1.1]
            .iter()
            .map(|r| arms(&[r * 10.0, r * 10.2, r * 9.9], &[10.0, 10.1, 9.95]))
            .collect();
        let levels: Vec<(Arm, Arm)> = data
            .iter()
            .map(|(a, b)| (Arm::new(a), Arm::new(b)))
            .collect();
        let t = test_trend(&levels, 1.0, 0.95, 1).expect("testable");
        assert_eq!(t.leaning, Leaning::Support);
        let trend = t.trend.as_ref().expect("trend");
        assert_eq!(trend.method, PValueMethod::Exact);
        assert_eq!(trend.concordance, 1.0);
        // Every distance at a later level is smaller: the smallest p, 1 / 1680 one-sided.
        assert!((t.p_support - 1.0 / 1680.0).abs() < 1e-15, "{t:?}");
        assert!((t.p_family - 2.0 / 1680.0).abs() < 1e-15);
        let reversed: Vec<(Arm, Arm)> = levels.iter().rev().copied().collect();
        let r = test_trend(&reversed, 1.0, 0.95, 1).expect("testable");
        assert_eq!(r.leaning, Leaning::Against);
        assert!((r.p_against - 1.0 / 1680.0).abs() < 1e-15);
    }

    #[test]
    fn trends_need_positive_values_two_levels_and_a_positive_target() {
        let (a, b) = ([1.0, 2.0], [1.0, 0.0]);
        let zero = [(Arm::new(&a), Arm::new(&b)), (Arm::new(&a), Arm::new(&a))];
        assert_eq!(
            test_trend(&zero, 1.0, 0.95, 0),
            Err(ClaimError::TrendNeedsPositive)
        );
        let one = [(Arm::new(&a), Arm::new(&a))];
        assert_eq!(
            test_trend(&one, 1.0, 0.95, 0),
            Err(ClaimError::TooFewLevels)
        );
        assert_eq!(
            test_trend(&one, 0.0, 0.95, 0),
            Err(ClaimError::BadTarget(0.0))
        );
    }
}
