//! The effect of treatment A against B with a confidence interval whose coverage is known:
//! the Hodges-Lehmann estimate and the interval that inverts the rank test actually run.
//!
//! - Two independent samples: the median of the m·n pairwise differences a_i - b_j, and
//!   [D_(k), D_(mn+1-k)] from the exact Mann-Whitney distribution (Moses' interval).
//! - Paired by round: the median of the Walsh averages (d_i + d_j)/2, i <= j, of the
//!   per-round differences, and [W_(k), W_(M+1-k)] from the exact signed-rank distribution.
//!
//! Both cover the true shift with probability exactly 1 - 2 P(statistic <= k - 1) for
//! continuous data under the shift model (B's distribution moved by the effect), whatever
//! its shape; that achieved coverage is reported, and flagged where no interval reaches
//! the level at this n (3 vs 3: 90%; 3 rounds: 75%; 5 rounds: 93.75%).
//!
//! Scale: when every value of both sides is positive, differences are taken of logarithms
//! and the effect is the ratio A/B (a shift of the logs is a change of scale). Otherwise (a
//! zero or a negative value, e.g. a count that is 0 in some trial) the effect is the
//! difference A - B: no ratio is given where one side is zero.
//!
//! Hand-written: no maintained crate has these intervals. The ranks k come from the exact
//! distributions in `exact.rs`; checked against scipy in `tests/fixtures/stats/`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::exact;
use super::summary::percentile_sorted;

/// Whether an [`Effect`] is a ratio or a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectScale {
    /// A / B (all values positive); 1 means no effect.
    Ratio,
    /// A - B, in the unit of the values; 0 means no effect.
    Difference,
}

impl EffectScale {
    /// The scale for samples `a` and `b`: a ratio when every value is positive.
    pub fn for_values<'a>(values: impl IntoIterator<Item = &'a f64>) -> EffectScale {
        if values.into_iter().all(|v| *v > 0.0) {
            EffectScale::Ratio
        } else {
            EffectScale::Difference
        }
    }

    /// This scale, or a difference where a ratio would need a value <= 0.
    fn or_difference<'a>(self, values: impl IntoIterator<Item = &'a f64>) -> EffectScale {
        match self {
            EffectScale::Ratio => EffectScale::for_values(values),
            EffectScale::Difference => EffectScale::Difference,
        }
    }

    /// The value meaning "no effect": 1 for a ratio, 0 for a difference.
    pub fn null(self) -> f64 {
        match self {
            EffectScale::Ratio => 1.0,
            EffectScale::Difference => 0.0,
        }
    }

    /// A value on the scale to the additive (log) scale the intervals are computed on.
    fn to_additive(self, v: f64) -> f64 {
        match self {
            EffectScale::Ratio => v.ln(),
            EffectScale::Difference => v,
        }
    }

    fn off_additive(self, v: f64) -> f64 {
        match self {
            EffectScale::Ratio => v.exp(),
            EffectScale::Difference => v,
        }
    }
}

/// How an [`Effect`]'s estimate and interval were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectMethod {
    /// Hodges-Lehmann over all pairs, Moses' interval from the exact Mann-Whitney
    /// distribution.
    HodgesLehmannPairs,
    /// Hodges-Lehmann over the Walsh averages of per-round differences, interval from the
    /// exact signed-rank distribution.
    HodgesLehmannRounds,
    /// As either, with the interval's ranks from the normal approximation (samples too
    /// large to count the exact distribution).
    HodgesLehmannApproximate,
    /// Over several cells: the effect and interval that invert the stratified rank test
    /// (`stratified.rs`).
    Stratified,
}

impl EffectMethod {
    /// A phrase for the methods section and the claims table.
    pub fn label(self) -> &'static str {
        match self {
            EffectMethod::HodgesLehmannPairs => "Hodges-Lehmann, exact Mann-Whitney interval",
            EffectMethod::HodgesLehmannRounds => {
                "Hodges-Lehmann on rounds, exact signed-rank interval"
            }
            EffectMethod::HodgesLehmannApproximate => {
                "Hodges-Lehmann, normal-approximation interval"
            }
            EffectMethod::Stratified => "inverted stratified rank test over cells",
        }
    }
}

/// The effect of A against B with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Effect {
    /// Ratio A/B or difference A - B.
    pub scale: EffectScale,
    /// The Hodges-Lehmann estimate on that scale.
    pub estimate: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
    /// The coverage asked for.
    pub level: f64,
    /// The coverage the interval has (exact for continuous data under the shift model);
    /// at least `level` unless `below_level`.
    pub coverage: f64,
    /// No interval of this kind reaches `level` with these trials; the widest one is given.
    pub below_level: bool,
    /// How it was computed.
    pub method: EffectMethod,
}

/// The effect of `a` against `b` (independent samples) at `level`. `None` if a side is
/// empty, a value is non-finite, or `level` is not in (0, 1).
pub fn effect_two_sample(a: &[f64], b: &[f64], level: f64) -> Option<Effect> {
    effect_two_sample_on(a, b, level, EffectScale::for_values(a.iter().chain(b)))
}

/// As [`effect_two_sample`] on a given scale: a difference even where every value is
/// positive (a claim with an absolute margin is about A - B). A ratio asked of values not
/// all positive is a difference.
pub fn effect_two_sample_on(
    a: &[f64],
    b: &[f64],
    level: f64,
    scale: EffectScale,
) -> Option<Effect> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) || !unit(level) {
        return None;
    }
    let scale = scale.or_difference(a.iter().chain(b));
    let (x, y): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|v| scale.to_additive(*v)).collect(),
        b.iter().map(|v| scale.to_additive(*v)).collect(),
    );
    let mut diffs: Vec<f64> = x
        .iter()
        .flat_map(|xi| y.iter().map(move |yj| xi - yj))
        .collect();
    diffs.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let (k, coverage, method) = match exact::mann_whitney_tie_free(a.len(), b.len()) {
        Some(c) => {
            let (k, cov) = rank_from(|j| c.le(2 * j as i64), diffs.len(), tail);
            (k, cov, EffectMethod::HodgesLehmannPairs)
        }
        None => {
            let (m, n) = (a.len() as f64, b.len() as f64);
            let sd = (m * n * (m + n + 1.0) / 12.0).sqrt();
            let (k, cov) = normal_rank(m * n / 2.0, sd, diffs.len(), tail);
            (k, cov, EffectMethod::HodgesLehmannApproximate)
        }
    };
    Some(build(scale, &diffs, k, level, coverage, method))
}

/// The effect from per-round pairs `(a, b)` at `level`. `None` if there are no pairs, a
/// value is non-finite, or `level` is not in (0, 1).
pub fn effect_paired(pairs: &[(f64, f64)], level: f64) -> Option<Effect> {
    let scale = EffectScale::for_values(pairs.iter().flat_map(|(a, b)| [a, b]));
    effect_paired_on(pairs, level, scale)
}

/// As [`effect_paired`] on a given scale (see [`effect_two_sample_on`]).
pub fn effect_paired_on(pairs: &[(f64, f64)], level: f64, scale: EffectScale) -> Option<Effect> {
    if pairs.is_empty()
        || pairs.iter().any(|(a, b)| !a.is_finite() || !b.is_finite())
        || !unit(level)
    {
        return None;
    }
    let scale = scale.or_difference(pairs.iter().flat_map(|(a, b)| [a, b]));
    let d: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| scale.to_additive(*a) - scale.to_additive(*b))
        .collect();
    let mut walsh: Vec<f64> = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for (i, di) in d.iter().enumerate() {
        walsh.extend(d[i..].iter().map(|dj| (di + dj) / 2.0));
    }
    walsh.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let (k, coverage, method) = match exact::signed_rank_tie_free(d.len()) {
        Some(c) => {
            let (k, cov) = rank_from(|j| c.le(2 * j as i64), walsh.len(), tail);
            (k, cov, EffectMethod::HodgesLehmannRounds)
        }
        None => {
            let n = d.len() as f64;
            let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
            let (k, cov) = normal_rank(n * (n + 1.0) / 4.0, sd, walsh.len(), tail);
            (k, cov, EffectMethod::HodgesLehmannApproximate)
        }
    };
    Some(build(scale, &walsh, k, level, coverage, method))
}

fn unit(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// The largest k (1-based, at most half of `count`) with P(statistic <= k - 1) <= `tail`,
/// and the coverage 1 - 2 P(statistic <= k - 1); k = 1 if none qualifies.
fn rank_from(cdf: impl Fn(usize) -> f64, count: usize, tail: f64) -> (usize, f64) {
    let mut k = 1;
    while k < count.div_ceil(2) && cdf(k) <= tail * (1.0 + 1e-12) {
        k += 1;
    }
    (k, (1.0 - 2.0 * cdf(k - 1)).max(0.0))
}

/// As [`rank_from`] with the normal approximation of a statistic with `mean` and `sd`.
fn normal_rank(mean: f64, sd: f64, count: usize, tail: f64) -> (usize, f64) {
    let z = Normal::new(0.0, 1.0).expect("standard normal");
    rank_from(|j| z.cdf((j as f64 + 0.5 - mean) / sd), count, tail)
}

fn build(
    scale: EffectScale,
    sorted: &[f64],
    k: usize,
    level: f64,
    coverage: f64,
    method: EffectMethod,
) -> Effect {
    let n = sorted.len();
    let centre = percentile_sorted(sorted, 50.0).unwrap_or(0.0);
    Effect {
        scale,
        estimate: scale.off_additive(centre),
        lo: scale.off_additive(sorted[k - 1]),
        hi: scale.off_additive(sorted[n - k]),
        level,
        coverage,
        below_level: coverage < level,
        method,
    }
}

#[cfg(test)]
#[path = "effect_tests.rs"]
mod tests;
