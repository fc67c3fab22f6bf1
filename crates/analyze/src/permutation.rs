//! Permutation test of two treatments (policies) stratified by round: trial-level values are
//! exchanged between the treatments only within the round they ran in, so round-to-round
//! drift (a noisy machine) is not mistaken for a treatment effect.
//!
//! Statistic: T = the mean over rounds of `location(A's trials) - location(B's trials)` in
//! that round (with [`Location::Median`], the median over rounds of those differences);
//! positive when A tends to be larger. Rounds weigh equally whatever their trial counts.
//! Two-sided p = the share of relabelings with |T*| >= |T| (within a tolerance of 1e-9 times
//! the largest |value|, so that equal statistics computed in another order still tie).
//! Every within-round relabeling is enumerated when there are at most
//! [`STRATIFIED_EXACT_MAX`] of them (2^rounds with one trial per treatment and round: up to
//! 17 rounds); otherwise `resamples` seeded random relabelings give p = (hits + 1) /
//! (resamples + 1).
//!
//! Hand-written: neither statrs nor any maintained crate has a stratified permutation test.
//! Checked against an explicit enumeration with numpy in `tests/fixtures/stats/`.

use serde::Serialize;

use super::hypothesis::PValueMethod;
use super::trials::Location;

/// Largest number of within-round relabelings enumerated exactly (2^17).
pub const STRATIFIED_EXACT_MAX: u64 = 1 << 17;

/// Random relabelings a caller should use when it has no reason to choose another number:
/// the standard error of p is at most 0.0025.
pub const STRATIFIED_DEFAULT_RESAMPLES: usize = 40_000;

/// Outcome of [`stratified_permutation_test`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StratifiedTest {
    /// T, in the unit of the values: the mean (or median) over rounds of A - B in the round.
    pub statistic: f64,
    /// Two-sided p-value, in 0..=1.
    pub p_value: f64,
    /// [`PValueMethod::Permutation`] (all relabelings) or [`PValueMethod::MonteCarlo`].
    pub method: PValueMethod,
    /// Relabelings counted: all of them, or the random ones drawn.
    pub relabelings: u64,
    /// The smallest p these data could give under any relabeling (the share of relabelings
    /// as extreme as the most extreme one); 1 / (resamples + 1) for Monte Carlo.
    pub min_p: f64,
    /// Rounds used (those with a trial of each treatment).
    pub rounds: usize,
    /// The location compared within each round.
    pub location: Location,
}

/// Two-sided permutation test of A vs B stratified by round (see the module doc). `rounds`
/// holds, per round, the trial-level values of A and of B in that round (one value per trial,
/// e.g. from [`super::per_trial_by_key`]). Rounds lacking either treatment are skipped.
/// `seed` and `resamples` matter only beyond [`STRATIFIED_EXACT_MAX`] relabelings.
///
/// `None` if no round has both treatments, a value is non-finite, or Monte Carlo is needed
/// and `resamples` is 0.
pub fn stratified_permutation_test(
    rounds: &[(&[f64], &[f64])],
    location: Location,
    seed: u64,
    resamples: usize,
) -> Option<StratifiedTest> {
    let strata: Vec<(&[f64], &[f64])> = rounds
        .iter()
        .copied()
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .collect();
    if strata.is_empty()
        || strata
            .iter()
            .any(|(a, b)| a.iter().chain(*b).any(|x| !x.is_finite()))
    {
        return None;
    }
    let scale = strata
        .iter()
        .flat_map(|(a, b)| a.iter().chain(*b))
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let tol = 1e-9 * scale;
    let mut diffs: Vec<f64> = strata
        .iter()
        .map(|(a, b)| Some(location.of(a)? - location.of(b)?))
        .collect::<Option<_>>()?;
    let observed = combine(&mut diffs, location);
    let total = strata.iter().try_fold(1u64, |acc, (a, b)| {
        acc.checked_mul(binomial(a.len() + b.len(), a.len())?)
    });
    let (hits, count, extreme, method) = match total {
        Some(total) if total <= STRATIFIED_EXACT_MAX => {
            let (hits, extreme) = enumerate(&strata, location, observed.abs() - tol, tol);
            (hits, total, extreme, PValueMethod::Permutation)
        }
        _ => {
            if resamples == 0 {
                return None;
            }
            let hits = monte_carlo(&strata, location, observed.abs() - tol, seed, resamples);
            (hits + 1, resamples as u64 + 1, 1, PValueMethod::MonteCarlo)
        }
    };
    Some(StratifiedTest {
        statistic: observed,
        p_value: (hits as f64 / count as f64).min(1.0),
        method,
        relabelings: if method == PValueMethod::MonteCarlo {
            resamples as u64
        } else {
            count
        },
        min_p: extreme as f64 / count as f64,
        rounds: strata.len(),
        location,
    })
}

/// The smallest two-sided p an exact stratified permutation test can give for a design of
/// `(trials of A, trials of B)` per round, for tie-free data: 2 / (number of relabelings)
/// when every round has as many trials of A as of B (swapping all labels gives -T, as
/// extreme as T), else 1 / (number of relabelings). E.g. 0.25 for 3 rounds of one trial
/// each, 0.0625 for 5, 0.03125 for 6. Rounds lacking either treatment do not count. With
/// more than [`STRATIFIED_EXACT_MAX`] relabelings the test is Monte Carlo, whose smallest
/// p is 1 / (resamples + 1) instead.
///
/// `None` if no round has both treatments or the count overflows.
pub fn stratified_min_p(design: &[(usize, usize)]) -> Option<f64> {
    let used: Vec<(usize, usize)> = design
        .iter()
        .copied()
        .filter(|&(a, b)| a > 0 && b > 0)
        .collect();
    if used.is_empty() {
        return None;
    }
    let total = used
        .iter()
        .try_fold(1u64, |acc, &(a, b)| acc.checked_mul(binomial(a + b, a)?))?;
    let mirrored = used.iter().all(|&(a, b)| a == b);
    Some((if mirrored { 2.0 } else { 1.0 } / total as f64).min(1.0))
}

/// The rounds' differences combined into T (`diffs` is reordered for the median).
fn combine(diffs: &mut [f64], location: Location) -> f64 {
    match location {
        Location::Mean => diffs.iter().sum::<f64>() / diffs.len() as f64,
        Location::Median => {
            diffs.sort_unstable_by(f64::total_cmp);
            let n = diffs.len();
            if n % 2 == 1 {
                diffs[n / 2]
            } else {
                0.5 * (diffs[n / 2 - 1] + diffs[n / 2])
            }
        }
    }
}

/// C(n, k) as an integer; `None` on overflow.
fn binomial(n: usize, k: usize) -> Option<u64> {
    let k = k.min(n - k);
    let mut c: u64 = 1;
    for i in 1..=k as u64 {
        c = c.checked_mul(n as u64 - k as u64 + i)? / i;
    }
    Some(c)
}

/// Every split of a round's pooled values (A's first) into groups of A's and B's sizes, as
/// location(A*) - location(B*); the first split is the observed one.
fn round_differences(a: &[f64], b: &[f64], location: Location) -> Vec<f64> {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (n, k) = (pooled.len(), a.len());
    let mut chosen: Vec<usize> = (0..k).collect();
    let mut out = Vec::new();
    let (mut xa, mut xb) = (Vec::with_capacity(k), Vec::with_capacity(n - k));
    loop {
        xa.clear();
        xb.clear();
        let mut next = chosen.iter().peekable();
        for (i, &v) in pooled.iter().enumerate() {
            if next.peek() == Some(&&i) {
                next.next();
                xa.push(v);
            } else {
                xb.push(v);
            }
        }
        // Both groups are non-empty and finite, so both locations exist.
        out.push(location.of(&xa).unwrap_or(0.0) - location.of(&xb).unwrap_or(0.0));
        // Next k-subset in lexicographic order.
        let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
            return out;
        };
        chosen[i] += 1;
        for j in i + 1..k {
            chosen[j] = chosen[j - 1] + 1;
        }
    }
}

/// Over all relabelings: how many have |T*| >= `threshold`, and how many are as extreme as
/// the most extreme one (within `tol`).
fn enumerate(
    strata: &[(&[f64], &[f64])],
    location: Location,
    threshold: f64,
    tol: f64,
) -> (u64, u64) {
    let options: Vec<Vec<f64>> = strata
        .iter()
        .map(|(a, b)| round_differences(a, b, location))
        .collect();
    let mut digits = vec![0usize; options.len()];
    let mut buf = vec![0.0; options.len()];
    let mut stats = Vec::new();
    loop {
        for ((slot, opts), &d) in buf.iter_mut().zip(&options).zip(&digits) {
            *slot = opts[d];
        }
        stats.push(combine(&mut buf, location).abs());
        // Mixed-radix increment.
        let mut r = 0;
        loop {
            if r == digits.len() {
                let hits = stats.iter().filter(|t| **t >= threshold).count() as u64;
                let top = stats.iter().fold(0.0f64, |m, t| m.max(*t));
                let extreme = stats.iter().filter(|t| **t >= top - tol).count() as u64;
                return (hits, extreme);
            }
            digits[r] += 1;
            if digits[r] < options[r].len() {
                break;
            }
            digits[r] = 0;
            r += 1;
        }
    }
}

/// How many of `resamples` random within-round relabelings have |T*| >= `threshold`.
fn monte_carlo(
    strata: &[(&[f64], &[f64])],
    location: Location,
    threshold: f64,
    seed: u64,
    resamples: usize,
) -> u64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut pools: Vec<Vec<f64>> = strata
        .iter()
        .map(|(a, b)| a.iter().chain(*b).copied().collect())
        .collect();
    let mut diffs = vec![0.0; strata.len()];
    let mut hits = 0;
    for _ in 0..resamples {
        for ((pool, (a, _)), d) in pools.iter_mut().zip(strata).zip(diffs.iter_mut()) {
            let k = a.len();
            for i in 0..k {
                let j = rng.usize(i..pool.len());
                pool.swap(i, j);
            }
            *d = location.of(&pool[..k]).unwrap_or(0.0) - location.of(&pool[k..]).unwrap_or(0.0);
        }
        hits += u64::from(combine(&mut diffs, location).abs() >= threshold);
    }
    hits
}

#[cfg(test)]
#[path = "permutation_tests.rs"]
mod tests;
