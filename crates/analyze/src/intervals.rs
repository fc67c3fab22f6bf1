//! Confidence intervals that keep their stated coverage: the median's from order statistics
//! (distribution-free, with the coverage actually achieved), and the mean's from Student's t
//! (exact for normal values, named as such).
//!
//! Why order statistics for the median: [x_(k), x_(n+1-k)] covers the median of any
//! continuous distribution with probability exactly 1 - 2 P(Binomial(n, 1/2) <= k - 1),
//! whatever the shape (bimodal included), so the coverage can be stated, not hoped for.
//! Only some levels are reachable: 93.75% is the most at n = 5 ([min, max]), so for n < 6
//! no 95% interval exists and [min, max] is returned with its coverage 1 - 2 (1/2)^n and
//! `below_level` set. From n = 6 the widest k whose coverage is at least the level is used
//! (as scipy's `quantile_test(...).confidence_interval`); the achieved coverage is then
//! above the level (e.g. 96.5% at n = 15).
//! Hand-written: statrs has no order-statistic intervals. Checked against scipy in
//! `tests/fixtures/stats/reference.json`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::exact::binomial_half_cdf;
use super::summary::{mean, percentile_sorted, sample_variance};

/// A distribution-free confidence interval of the median, in the unit of the values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianCi {
    /// Values.
    pub n: usize,
    /// The sample median (linear interpolation).
    pub median: f64,
    /// Lower end: the k-th smallest value.
    pub lo: f64,
    /// Upper end: the k-th largest value.
    pub hi: f64,
    /// The rank k of the ends (1 = [min, max]).
    pub rank: usize,
    /// The coverage asked for, e.g. 0.95.
    pub level: f64,
    /// The coverage this interval has for continuous data: 1 - 2 P(Bin(n, 1/2) <= k - 1).
    /// At least `level` unless `below_level`. With ties it is at least this.
    pub coverage: f64,
    /// No interval of this kind reaches `level` at this n: [min, max] is the widest there
    /// is, and `coverage` is what it has.
    pub below_level: bool,
}

/// The order-statistic confidence interval of the median of `values` at `level` (e.g.
/// 0.95); see the module doc. `None` if `values` is empty, a value is non-finite, or
/// `level` is not in (0, 1).
pub fn median_ci(values: &[f64], level: f64) -> Option<MedianCi> {
    if values.is_empty() || values.iter().any(|x| !x.is_finite()) || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    median_ci_sorted(&sorted, level)
}

/// [`median_ci`] of values already sorted ascending, finite and non-empty, with `level` in
/// (0, 1) (the caller checked): for a caller that sorted them anyway.
pub(crate) fn median_ci_sorted(sorted: &[f64], level: f64) -> Option<MedianCi> {
    let n = sorted.len();
    let rank = median_rank(n, (1.0 - level) / 2.0);
    let coverage = 1.0 - 2.0 * binomial_half_cdf(n, rank - 1);
    Some(MedianCi {
        n,
        median: percentile_sorted(sorted, 50.0)?,
        lo: sorted[rank - 1],
        hi: sorted[n - rank],
        rank,
        level,
        coverage,
        below_level: coverage < level,
    })
}

/// The largest k (at most n/2 rounded up) with P(Bin(n, 1/2) <= k - 1) <= `tail`; 1 when
/// none has. The binomial terms are summed one by one in logs, so the cost is O(k) and a
/// summary of a million values stays cheap (the terms grow up to n/2, so the newest is the
/// largest and scales the sum).
fn median_rank(n: usize, tail: f64) -> usize {
    let mut ln_term = -(n as f64) * std::f64::consts::LN_2; // ln P(Bin = 0)
    let mut scaled_cdf = 1.0; // P(Bin <= j) / P(Bin = j)
    let mut rank = 1;
    while rank < n.div_ceil(2) {
        let j = rank as f64;
        let next = ln_term + ((n as f64 + 1.0 - j).ln() - j.ln());
        scaled_cdf = scaled_cdf * (ln_term - next).exp() + 1.0;
        ln_term = next;
        if next.exp() * scaled_cdf > tail * (1.0 + 1e-12) {
            break;
        }
        rank += 1;
    }
    rank
}

/// How a [`MeanCi`] was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeanCiMethod {
    /// mean ± t(1 - (1 - level)/2, n - 1) · s / √n: exact coverage when the values are
    /// normal; below it for skewed values (a 95% interval covers the mean of log-normal
    /// values with log-SD 0.5 about 91.6% of the time at n = 5, 92.6% at n = 15; see
    /// [`crate::MEAN_CI_LABEL`]).
    StudentT,
}

impl MeanCiMethod {
    /// A phrase for the methods section.
    pub fn label(self) -> &'static str {
        match self {
            MeanCiMethod::StudentT => "Student t interval (exact for normal values)",
        }
    }
}

/// A confidence interval of the mean, in the unit of the values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanCi {
    /// Values.
    pub n: usize,
    /// The sample mean.
    pub mean: f64,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The coverage asked for.
    pub level: f64,
    /// How it was computed (and what its coverage rests on).
    pub method: MeanCiMethod,
}

/// The Student t confidence interval of the mean of `values` at `level`. `None` with fewer
/// than two values, a non-finite value, or `level` outside (0, 1).
pub fn mean_ci(values: &[f64], level: f64) -> Option<MeanCi> {
    if values.len() < 2 || values.iter().any(|x| !x.is_finite()) || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let n = values.len();
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let half =
        t.inverse_cdf(1.0 - (1.0 - level) / 2.0) * (sample_variance(values)? / n as f64).sqrt();
    let m = mean(values)?;
    Some(MeanCi {
        n,
        mean: m,
        lo: m - half,
        hi: m + half,
        level,
        method: MeanCiMethod::StudentT,
    })
}

#[cfg(test)]
mod tests {
    use super::super::draws::standard_normal;
    use super::*;
    use crate::fixtures::{assert_close, floats, items, num, reference};
    use crate::sim::Shape;

    #[test]
    fn median_ci_matches_scipy_quantile_test_and_binomial_coverage() {
        for case in items(&reference()["claims"]["median_ci"]) {
            let values = floats(&case["values"]);
            let ci = median_ci(&values, 0.95).expect("usable");
            let label = format!("n = {}", values.len());
            assert_eq!(ci.lo, num(&case["lo"]), "{label}");
            assert_eq!(ci.hi, num(&case["hi"]), "{label}");
            assert_eq!(ci.rank as f64, num(&case["rank"]), "{label}");
            assert_close(ci.coverage, num(&case["coverage"]), 1e-12, &label);
            let exists = case["scipy_has_95"].as_bool().expect("bool");
            assert_eq!(ci.below_level, !exists, "{label}");
        }
    }

    #[test]
    fn below_six_values_the_interval_is_min_max_with_its_coverage() {
        for (n, want) in [(1, 0.0), (2, 0.5), (3, 0.75), (4, 0.875), (5, 0.9375)] {
            let values: Vec<f64> = (0..n).map(|i| (i * 7 % 5) as f64).collect();
            let ci = median_ci(&values, 0.95).expect("usable");
            assert_eq!((ci.rank, ci.below_level), (1, true), "n = {n}");
            assert!(
                (ci.coverage - want).abs() < 1e-15,
                "n = {n}: {}",
                ci.coverage
            );
        }
        let six = median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95).expect("usable");
        assert!(!six.below_level && (six.coverage - 0.96875).abs() < 1e-15);
        assert_eq!(median_ci(&[], 0.95), None);
        assert_eq!(median_ci(&[1.0], 1.0), None);
    }

    #[test]
    fn the_rank_summed_term_by_term_is_the_rank_of_the_binomial_cdf() {
        for level in [0.5, 0.9, 0.95, 0.99] {
            let tail = (1.0 - level) / 2.0;
            for n in 1usize..400 {
                let mut naive = 1;
                while naive < n.div_ceil(2) && binomial_half_cdf(n, naive) <= tail * (1.0 + 1e-12) {
                    naive += 1;
                }
                assert_eq!(median_rank(n, tail), naive, "n = {n} at {level}");
            }
        }
        // n = 10^6: the normal approximation puts k - 1 at n/2 - 1.96 sqrt(n)/2 = 499 020.
        let k = median_rank(1_000_000, 0.025);
        assert!((k as i64 - 499_021).abs() <= 2, "{k}");
    }

    #[test]
    fn mean_ci_matches_scipy_t_interval() {
        for case in items(&reference()["claims"]["mean_ci"]) {
            let values = floats(&case["values"]);
            let level = num(&case["level"]);
            let ci = mean_ci(&values, level).expect("usable");
            let label = format!("{values:?} at {level}");
            assert_close(ci.lo, num(&case["lo"]), 1e-9, &label);
            assert_close(ci.hi, num(&case["hi"]), 1e-9, &label);
        }
        assert_eq!(mean_ci(&[1.0], 0.95), None);
    }

    /// Simulated coverage of the median CI, 2000 replications per configuration: the
    /// standard error of a coverage near 0.95 is 0.005, so 2 points is 4 standard errors.
    #[test]
    fn median_ci_covers_as_stated_at_5_8_and_15_on_three_shapes() {
        let reps = 2000;
        let mut rng = fastrand::Rng::with_seed(1805);
        for shape in Shape::ALL {
            for n in [5usize, 8, 15] {
                let mut hits = 0;
                let mut stated = 0.0;
                for _ in 0..reps {
                    let values: Vec<f64> = (0..n).map(|_| shape.draw(&mut rng)).collect();
                    let ci = median_ci(&values, 0.95).expect("usable");
                    stated = ci.coverage;
                    hits += usize::from(ci.lo <= shape.median() && shape.median() <= ci.hi);
                }
                let got = hits as f64 / reps as f64;
                eprintln!("median CI {shape:?} n = {n}: covered {got}, stated {stated:.4}");
                assert!(
                    (got - stated).abs() <= 0.02,
                    "{shape:?} n = {n}: covered {got}, stated {stated}"
                );
            }
        }
    }

    /// The t interval's coverage on normal values, 2000 replications (standard error 0.005).
    #[test]
    fn mean_ci_covers_as_stated_on_normal_values() {
        let mut rng = fastrand::Rng::with_seed(1806);
        for n in [3usize, 5, 15] {
            let hits = (0..2000)
                .filter(|_| {
                    let v: Vec<f64> = (0..n).map(|_| 10.0 + standard_normal(&mut rng)).collect();
                    let ci = mean_ci(&v, 0.95).expect("usable");
                    ci.lo <= 10.0 && 10.0 <= ci.hi
                })
                .count();
            let got = hits as f64 / 2000.0;
            assert!((got - 0.95).abs() <= 0.02, "n = {n}: {got}");
        }
    }
}
