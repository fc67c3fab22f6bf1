//! One-sided rank tests with exact p-values: Mann-Whitney U (two independent samples), the
//! Wilcoxon signed-rank test (paired differences, e.g. one pair per round: the permutation
//! test that swaps the labels within each round), and Jonckheere-Terpstra (ordered groups).
//!
//! p-values, by the statistic's distribution under "no difference":
//!
//! | data | Mann-Whitney | signed-rank | Jonckheere-Terpstra |
//! |---|---|---|---|
//! | no ties | exact ([`PValueMethod::Exact`]) | exact | exact |
//! | ties | exact permutation distribution conditional on the ties ([`PValueMethod::Permutation`]) | the same | seeded Monte Carlo permutation |
//! | too large to count (about 0.1 s of counting) | normal approximation with tie and continuity corrections ([`PValueMethod::Asymptotic`]) | the same | the same |
//!
//! Unlike scipy's `mannwhitneyu(method="auto")`, which switches to the normal approximation
//! when both samples have more than 8 values, Mann-Whitney stays exact while counting is
//! cheap (samples of up to a few hundred): the verdicts then hold at their stated level for
//! every sample size. Checked against scipy's `mannwhitneyu(method="exact")` and
//! `PermutationMethod`, and `wilcoxon`, in `tests/fixtures/stats/reference.json`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::exact::{self, doubled_ranks, Counts};
use super::hypothesis::PValueMethod;

/// Random relabelings of a Monte Carlo Jonckheere-Terpstra p (ties only).
pub const TREND_RESAMPLES: usize = 10_000;

/// Both one-sided p-values of a test, so that a caller can read either direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OneSided {
    /// The statistic: U of the first sample (pairs x > y, plus half the ties), T+ (the sum of
    /// the ranks of the positive differences), or J (pairs in increasing order across groups).
    pub statistic: f64,
    /// P(statistic <= observed) under the null: small when the first sample tends to be
    /// lower (Mann-Whitney), the differences negative (signed-rank), or the groups
    /// decreasing (Jonckheere-Terpstra).
    pub p_less: f64,
    /// P(statistic >= observed) under the null: the other direction.
    pub p_greater: f64,
    /// How the p-values were obtained.
    pub method: PValueMethod,
}

/// Mann-Whitney U test of `x` against `y`, both one-sided p-values (scipy's
/// `alternative="less"` and `"greater"`). `None` if a sample is empty or has a non-finite
/// value. All values equal gives p = 1 both ways.
pub fn mann_whitney_one_sided(x: &[f64], y: &[f64]) -> Option<OneSided> {
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let doubled = doubled_ranks(&pooled);
    let (m, n) = (x.len(), y.len());
    let rank_sum: i64 = doubled[..m].iter().sum();
    let u2 = rank_sum - (m * (m + 1)) as i64; // doubled U of x
    let tied = has_ties(&doubled);
    let counts = if tied {
        exact::mann_whitney_with_ties(&doubled, m).map(std::rc::Rc::new)
    } else {
        exact::mann_whitney_tie_free(m, n)
    };
    let statistic = u2 as f64 / 2.0;
    match counts {
        Some(c) => Some(from_counts(&c, u2, statistic, tied)),
        None => {
            let (mf, nf) = (m as f64, n as f64);
            let total = mf + nf;
            let variance =
                mf * nf / 12.0 * ((total + 1.0) - tie_term(&doubled) / (total * (total - 1.0)));
            Some(normal_tails(statistic, mf * nf / 2.0, variance))
        }
    }
}

/// Wilcoxon signed-rank test of paired differences `d` (zeros dropped, as scipy's default
/// `zero_method="wilcox"`), both one-sided p-values: `p_greater` is small when the
/// differences tend to be positive. `None` if `d` is empty or has a non-finite value; all
/// zeros gives p = 1 both ways.
pub fn signed_rank_one_sided(d: &[f64]) -> Option<OneSided> {
    if d.is_empty() || d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let nonzero: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    if nonzero.is_empty() {
        return Some(OneSided {
            statistic: 0.0,
            p_less: 1.0,
            p_greater: 1.0,
            method: PValueMethod::Exact,
        });
    }
    let magnitudes: Vec<f64> = nonzero.iter().map(|v| v.abs()).collect();
    let doubled = doubled_ranks(&magnitudes);
    let t2: i64 = doubled
        .iter()
        .zip(&nonzero)
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, _)| r)
        .sum();
    let tied = has_ties(&doubled);
    let statistic = t2 as f64 / 2.0;
    match exact::signed_rank(&doubled) {
        Some(c) => Some(from_counts(&c, t2, statistic, tied)),
        None => {
            let n = nonzero.len() as f64;
            // Var T+ = Σ r² / 4 with average ranks r (the tie correction included).
            let variance: f64 = doubled
                .iter()
                .map(|r| (*r as f64 / 2.0).powi(2))
                .sum::<f64>()
                / 4.0;
            Some(normal_tails(statistic, n * (n + 1.0) / 4.0, variance))
        }
    }
}

/// Jonckheere-Terpstra test of `groups` in their given order, both one-sided p-values:
/// `p_greater` is small when values tend to increase from group to group. J counts, over
/// every pair of groups k < l, the pairs of values with the one in l above the one in k,
/// plus half the ties. Exact without ties; with ties, `TREND_RESAMPLES` random relabelings
/// seeded with `seed`, p = (hits + 1) / (resamples + 1).
///
/// `None` with fewer than two non-empty groups or a non-finite value.
pub fn jonckheere_one_sided(groups: &[&[f64]], seed: u64) -> Option<OneSided> {
    let groups: Vec<&[f64]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
    if groups.len() < 2 || groups.iter().any(|g| g.iter().any(|v| !v.is_finite())) {
        return None;
    }
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    let pooled: Vec<f64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    let j2 = jonckheere_doubled(&pooled, &sizes);
    let statistic = j2 as f64 / 2.0;
    let doubled = doubled_ranks(&pooled);
    if !has_ties(&doubled) {
        if let Some(c) = exact::jonckheere_tie_free(&sizes) {
            return Some(from_counts(&c, j2, statistic, false));
        }
    } else if pooled.len() <= 2000 {
        return Some(jonckheere_monte_carlo(&pooled, &sizes, j2, seed));
    }
    let n = pooled.len() as f64;
    let sum_sq: f64 = sizes.iter().map(|&s| (s * s) as f64).sum();
    let mean = (n * n - sum_sq) / 4.0;
    let cube = |x: f64| x * x * (2.0 * x + 3.0);
    let variance = (cube(n) - sizes.iter().map(|&s| cube(s as f64)).sum::<f64>()) / 72.0;
    Some(normal_tails(statistic, mean, variance))
}

/// Doubled J of `pooled` split into consecutive groups of `sizes`.
fn jonckheere_doubled(pooled: &[f64], sizes: &[usize]) -> i64 {
    let mut j2 = 0i64;
    let mut start = 0;
    let bounds: Vec<(usize, usize)> = sizes
        .iter()
        .map(|&s| {
            let b = (start, start + s);
            start += s;
            b
        })
        .collect();
    for (k, &(s0, e0)) in bounds.iter().enumerate() {
        for &(s1, e1) in &bounds[k + 1..] {
            for x in &pooled[s0..e0] {
                for y in &pooled[s1..e1] {
                    j2 += if y > x {
                        2
                    } else if y == x {
                        1
                    } else {
                        0
                    };
                }
            }
        }
    }
    j2
}

fn jonckheere_monte_carlo(pooled: &[f64], sizes: &[usize], observed: i64, seed: u64) -> OneSided {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut pool = pooled.to_vec();
    let (mut le, mut ge) = (0usize, 0usize);
    for _ in 0..TREND_RESAMPLES {
        rng.shuffle(&mut pool);
        let j2 = jonckheere_doubled(&pool, sizes);
        le += usize::from(j2 <= observed);
        ge += usize::from(j2 >= observed);
    }
    let r = (TREND_RESAMPLES + 1) as f64;
    OneSided {
        statistic: observed as f64 / 2.0,
        p_less: ((le + 1) as f64 / r).min(1.0),
        p_greater: ((ge + 1) as f64 / r).min(1.0),
        method: PValueMethod::MonteCarlo,
    }
}

fn from_counts(c: &Counts, observed2: i64, statistic: f64, tied: bool) -> OneSided {
    OneSided {
        statistic,
        p_less: c.le(observed2),
        p_greater: c.ge(observed2),
        method: if tied {
            PValueMethod::Permutation
        } else {
            PValueMethod::Exact
        },
    }
}

/// One-sided normal-approximation tails with a continuity correction of 1/2.
fn normal_tails(statistic: f64, mean: f64, variance: f64) -> OneSided {
    let (p_less, p_greater) = if variance > 0.0 {
        let sd = variance.sqrt();
        let z = Normal::new(0.0, 1.0).expect("standard normal");
        (
            z.cdf((statistic - mean + 0.5) / sd),
            z.sf((statistic - mean - 0.5) / sd),
        )
    } else {
        (1.0, 1.0)
    };
    OneSided {
        statistic,
        p_less: p_less.min(1.0),
        p_greater: p_greater.min(1.0),
        method: PValueMethod::Asymptotic,
    }
}

fn has_ties(doubled: &[i64]) -> bool {
    let mut sorted = doubled.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

/// Σ(t³ - t) over tied blocks of the doubled ranks.
fn tie_term(doubled: &[i64]) -> f64 {
    let mut sorted = doubled.to_vec();
    sorted.sort_unstable();
    let mut term = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        term += t * t * t - t;
        i = j;
    }
    term
}

#[cfg(test)]
#[path = "rank_tests_tests.rs"]
mod tests;
