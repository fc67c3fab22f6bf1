//! Mann-Whitney U test with the p-value scipy's default would give (exact for small tie-free
//! samples), an exact permutation p for small samples with ties, and the smallest p a design
//! can reach.
//!
//! Which p-value [`mann_whitney_u`] computes, with `m` the size of the smaller sample:
//!
//! | samples                         | p-value                                   | scipy 1.17 `method="auto"` |
//! |---------------------------------|-------------------------------------------|----------------------------|
//! | m <= 8, no ties                 | exact distribution of U ([`PValueMethod::Exact`]) | the same           |
//! | m <= 8, ties                    | exact permutation distribution of U ([`PValueMethod::Permutation`]), or seeded Monte Carlo when counting it is too costly ([`PValueMethod::MonteCarlo`]) | normal approximation (scipy's docs advise a permutation test here) |
//! | m > 8                           | normal approximation with tie and continuity corrections ([`PValueMethod::Asymptotic`]) | the same |
//!
//! scipy's rule (`_mwu_choose_method` in scipy 1.17.1) is "asymptotic if both samples have
//! more than 8 values or there are ties, else exact". Two-sided p-values follow scipy: twice
//! the smaller one-sided tail, capped at 1.
//!
//! Hand-written: statrs 0.18 has the normal distribution but no rank tests. Checked against
//! scipy's `mannwhitneyu` in `tests/fixtures/stats/reference.json`.

use statrs::distribution::{ContinuousCDF, Normal};

use super::exact;
use super::hypothesis::{clamp_p, pooled_ranks, usable, PValueMethod, TestResult};

/// Largest size of the smaller sample for which p is exact (or a permutation p with ties);
/// scipy's `method="auto"` switches at the same size.
pub const SMALL_SAMPLE_MAX: usize = 8;

/// Random relabelings for a Monte Carlo permutation p (small samples with ties whose exact
/// permutation distribution would take too long to count: the other sample has several
/// hundred values). The standard error of p is at most 0.0016.
pub const MONTE_CARLO_RESAMPLES: usize = 100_000;

/// Seed of those relabelings, fixed so that the same data always give the same p.
pub const MONTE_CARLO_SEED: u64 = 0x5eed_3a77;

/// Largest lower tail of U whose exact distribution is computed (8 bytes a value); beyond
/// it (the larger sample has more than ~260 000 values) the normal approximation is used,
/// where it agrees with the exact p to many digits.
const EXACT_MAX_TAIL: usize = 1 << 20;

/// Largest number of table updates for counting the exact permutation distribution with
/// ties (about 0.05 s); beyond it, Monte Carlo.
const PERMUTATION_MAX_WORK: usize = 20_000_000;

/// Mann-Whitney U two-sided test of `x` vs `y`; the p-value method is chosen as in the
/// module's table and named in [`TestResult::method`]. `statistic` is U of `x`: the number
/// of pairs with x > y, plus half the ties. `df` is (0, 0).
///
/// `None` if either sample has fewer than two values or a non-finite value, or all values
/// are equal.
pub fn mann_whitney_u(x: &[f64], y: &[f64]) -> Option<TestResult> {
    let ranked = Ranked::new(x, y)?;
    let small = x.len().min(y.len()) <= SMALL_SAMPLE_MAX;
    let (p, method) = if small && ranked.tie_term == 0.0 {
        match exact_p(x.len(), y.len(), ranked.u1) {
            Some(p) => (p, PValueMethod::Exact),
            None => (ranked.asymptotic_p()?, PValueMethod::Asymptotic),
        }
    } else if small {
        ranked.permutation_p()
    } else {
        (ranked.asymptotic_p()?, PValueMethod::Asymptotic)
    };
    Some(TestResult {
        statistic: ranked.u1,
        p_value: clamp_p(p)?,
        df: (0.0, 0.0),
        method,
    })
}

/// Mann-Whitney U two-sided test by the normal approximation with tie and continuity
/// corrections, whatever the sample sizes (as `scipy.stats.mannwhitneyu(x, y,
/// method="asymptotic")`). Prefer [`mann_whitney_u`]; this is for comparing with it.
///
/// `None` as for [`mann_whitney_u`].
pub fn mann_whitney_u_asymptotic(x: &[f64], y: &[f64]) -> Option<TestResult> {
    let ranked = Ranked::new(x, y)?;
    Some(TestResult {
        statistic: ranked.u1,
        p_value: clamp_p(ranked.asymptotic_p()?)?,
        df: (0.0, 0.0),
        method: PValueMethod::Asymptotic,
    })
}

/// The smallest two-sided p-value [`mann_whitney_u`] can give for samples of `n1` and `n2`
/// values without ties (reached when the samples do not overlap): 2 / C(n1 + n2, n1) for an
/// exact p, e.g. 0.1 for 3 vs 3, 0.0286 for 4 vs 4, 0.0079 for 5 vs 5; the normal
/// approximation's p at U = n1 n2 when either sample has more than 8 values. Ties only make
/// the smallest p larger.
///
/// `None` if either size is below 2 (no test).
pub fn mann_whitney_min_p(n1: usize, n2: usize) -> Option<f64> {
    if n1 < 2 || n2 < 2 {
        return None;
    }
    if n1.min(n2) <= SMALL_SAMPLE_MAX {
        if let Some(p) = exact_p(n1, n2, 0.0) {
            return Some(p);
        }
    }
    let (a, b) = (n1 as f64, n2 as f64);
    asymptotic_tail(a * b, a, b, 0.0).map(|p| p.min(1.0))
}

/// The smallest number of values (trials) per group with which [`mann_whitney_u`] can reach
/// p <= `alpha` on two equal-sized groups, e.g. 4 for alpha = 0.05 (3 vs 3 cannot go below
/// 0.1) and 5 for 0.01. For several comparisons pass the alpha that Holm's first step needs
/// (alpha / number of comparisons).
///
/// `None` if `alpha` is not in (0, 1) or more than 10 000 values would be needed.
pub fn mann_whitney_trials_needed(alpha: f64) -> Option<usize> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    (2..=10_000).find(|&n| mann_whitney_min_p(n, n).is_some_and(|p| p <= alpha))
}

/// The pooled ranks of two samples and U of the first.
struct Ranked {
    /// Twice the average ranks (integers), `x` first then `y`.
    doubled: Vec<i64>,
    n1: usize,
    /// Σ(t³ - t) over tied blocks; 0 without ties.
    tie_term: f64,
    /// U of `x`.
    u1: f64,
}

impl Ranked {
    /// `None` if the samples are unusable or all values are equal.
    fn new(x: &[f64], y: &[f64]) -> Option<Ranked> {
        if !usable(&[x, y]) {
            return None;
        }
        let (ranks, tie_term) = pooled_ranks(&[x, y]);
        let n = ranks.len() as f64;
        if tie_term >= n * n * n - n {
            return None;
        }
        let n1 = x.len() as f64;
        let r1: f64 = ranks[..x.len()].iter().sum();
        Some(Ranked {
            doubled: ranks.iter().map(|r| (2.0 * r).round() as i64).collect(),
            n1: x.len(),
            tie_term,
            u1: r1 - n1 * (n1 + 1.0) / 2.0,
        })
    }

    fn asymptotic_p(&self) -> Option<f64> {
        let n1 = self.n1 as f64;
        let n2 = (self.doubled.len() - self.n1) as f64;
        asymptotic_tail(self.u1.max(n1 * n2 - self.u1), n1, n2, self.tie_term)
    }

    /// Two-sided permutation p of U, as scipy's `permutation_test` computes it: twice the
    /// smaller of P(U* <= U) and P(U* >= U), capped at 1. The rank sum of the smaller sample
    /// stands for U (a monotone function of it, so the tails are the same).
    fn permutation_p(&self) -> (f64, PValueMethod) {
        let (n1, n) = (self.n1, self.doubled.len());
        let small = if n1 <= n - n1 {
            &self.doubled[..n1]
        } else {
            &self.doubled[n1..]
        };
        let observed: i64 = small.iter().sum();
        let mut sorted = self.doubled.clone();
        sorted.sort_unstable();
        match rank_sum_distribution(&sorted, small.len()) {
            Some((offset, counts)) => {
                let at = (observed - offset) as usize;
                let less: f64 = counts[..=at].iter().sum();
                let greater: f64 = counts[at..].iter().sum();
                let total: f64 = counts.iter().sum();
                (
                    (2.0 * less.min(greater) / total).min(1.0),
                    PValueMethod::Permutation,
                )
            }
            None => {
                let mut rng = fastrand::Rng::with_seed(MONTE_CARLO_SEED);
                let (less, greater) =
                    monte_carlo_tails(&mut sorted, small.len(), observed, &mut rng);
                let r = (MONTE_CARLO_RESAMPLES + 1) as f64;
                let p = 2.0 * ((less + 1) as f64).min((greater + 1) as f64) / r;
                (p.min(1.0), PValueMethod::MonteCarlo)
            }
        }
    }
}

/// Upper-tail normal approximation of U (>= n1 n2 / 2) with continuity correction and the
/// tie term Σ(t³ - t), doubled for a two-sided p (as scipy's `_get_mwu_z`).
fn asymptotic_tail(u: f64, n1: f64, n2: f64, tie_term: f64) -> Option<f64> {
    let n = n1 + n2;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        return None;
    }
    let z = (u - n1 * n2 / 2.0 - 0.5) / variance.sqrt();
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some(2.0 * normal.sf(z))
}

/// Exact two-sided p of U of the first sample (tie-free, so U is an integer): twice
/// P(U* <= min(U, n1 n2 - U)), capped at 1; the distribution is symmetric. `None` if
/// the tail is too long to count (see [`EXACT_MAX_TAIL`]).
fn exact_p(n1: usize, n2: usize, u1: f64) -> Option<f64> {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let u = u1.round() as usize;
    let tail = u.min(n1 * n2 - u);
    if tail > EXACT_MAX_TAIL {
        return None;
    }
    let counts = u_counts_head(m, n, tail);
    let below: f64 = counts.iter().sum();
    Some((2.0 * below / binomial(m + n, m)).min(1.0))
}

/// The number of ways U = 0, 1, ..., `tail` for samples of `m` and `n` tie-free values: the
/// first coefficients of the Gaussian binomial [m + n choose m]_q, built as
/// Π_{i=1..m} (1 - q^(n+i)) / (1 - q^i), truncated after q^tail. O(m · tail).
fn u_counts_head(m: usize, n: usize, tail: usize) -> Vec<f64> {
    let mut c = vec![0.0; tail + 1];
    c[0] = 1.0;
    for i in 1..=m {
        let d = n + i;
        // Multiply by (1 - q^d): descending, so c[j - d] is still the old coefficient.
        for j in (d..=tail).rev() {
            c[j] -= c[j - d];
        }
        // Divide by (1 - q^i): a running sum with stride i.
        for j in i..=tail {
            c[j] += c[j - i];
        }
    }
    c
}

/// C(n, k) as a float.
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (1..=k).fold(1.0, |acc, i| acc * (n - k + i) as f64 / i as f64)
}

/// How many subsets of size `m` of `sorted` (doubled ranks, ascending) have each rank sum,
/// as (smallest sum, counts from that sum up); `None` if counting would exceed
/// [`PERMUTATION_MAX_WORK`]. Tied values are one block: choosing j of its t members
/// multiplies the count by C(t, j).
fn rank_sum_distribution(sorted: &[i64], m: usize) -> Option<(i64, Vec<f64>)> {
    let lowest: i64 = sorted[..m].iter().sum();
    let highest: i64 = sorted[sorted.len() - m..].iter().sum();
    let width = (highest - lowest) as usize + 1;
    let blocks = exact::tie_blocks(sorted);
    let base = sorted[0];
    let span = exact::shifted_span(sorted, m);
    let work: usize = blocks.iter().map(|&(_, t)| t.min(m) * (m + 1) * span).sum();
    if work > PERMUTATION_MAX_WORK {
        return None;
    }
    let row = exact::subset_sums(&blocks, base, span, m);
    let start = (lowest - base * m as i64) as usize;
    Some((lowest, row[start..start + width].to_vec()))
}

/// Counts of random subsets of size `m` of `pool` with rank sum <= and >= `observed`, over
/// [`MONTE_CARLO_RESAMPLES`] draws (partial Fisher-Yates shuffles; `pool` is permuted).
fn monte_carlo_tails(
    pool: &mut [i64],
    m: usize,
    observed: i64,
    rng: &mut fastrand::Rng,
) -> (usize, usize) {
    let n = pool.len();
    let (mut less, mut greater) = (0, 0);
    for _ in 0..MONTE_CARLO_RESAMPLES {
        let mut sum = 0;
        for i in 0..m {
            let j = rng.usize(i..n);
            pool.swap(i, j);
            sum += pool[i];
        }
        less += usize::from(sum <= observed);
        greater += usize::from(sum >= observed);
    }
    (less, greater)
}

#[cfg(test)]
#[path = "mann_whitney_tests.rs"]
mod tests;
