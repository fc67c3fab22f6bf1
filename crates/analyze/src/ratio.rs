//! Ratio of medians of a treatment to its baseline, with a seeded percentile-bootstrap 95%
//! CI that resamples trials within each group (the trial is the unit of replication).

use serde::Serialize;

use super::bootstrap::bootstrap_median_draw;
use super::summary::{percentile_sorted, CI_LEVEL};

/// Number of bootstrap resamples used when a caller has no reason to choose another.
pub const DEFAULT_RESAMPLES: usize = 2000;

/// median(other) / median(baseline) with its bootstrap CI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioCi {
    /// median(other) / median(baseline) of the data themselves.
    pub ratio: f64,
    /// Lower end of the 95% percentile-bootstrap CI of the ratio.
    pub lo: f64,
    /// Upper end of that CI.
    pub hi: f64,
    /// Values (trials) of the baseline.
    pub n_baseline: usize,
    /// Values (trials) of the other group.
    pub n_other: usize,
    /// Bootstrap resamples drawn.
    pub resamples: usize,
}

/// The ratio of medians `median(other) / median(baseline)` and its 95% percentile-bootstrap
/// CI. Each resample draws `baseline.len()` values from `baseline` and `other.len()` from
/// `other`, with replacement (stratified by group: each group keeps its size), from a
/// generator seeded with `seed`; resamples whose baseline median is 0 are dropped. Pass
/// one value per trial (e.g. [`super::per_trial`]) so that trials, not tasks, are resampled.
/// With three trials a bootstrap median can only be one of the three values, so the CI is
/// coarse; it is still the honest one.
///
/// The same inputs, `seed` and `resamples` always give the same result. A resample's median
/// is drawn in O(1) from its exact distribution, so cost is O(n log n + resamples).
///
/// `None` if a group is empty or has a non-finite value, `resamples` is 0, every value of
/// either group is 0 (0 / x = 0 with a CI of [0, 0] says nothing: show the difference
/// instead), the baseline's median is 0, or more than half the resamples have a baseline
/// median of 0.
pub fn median_ratio_ci(
    baseline: &[f64],
    other: &[f64],
    seed: u64,
    resamples: usize,
) -> Option<RatioCi> {
    if baseline.is_empty()
        || other.is_empty()
        || resamples == 0
        || baseline.iter().chain(other).any(|x| !x.is_finite())
        || baseline.iter().all(|x| *x == 0.0)
        || other.iter().all(|x| *x == 0.0)
    {
        return None;
    }
    let sort = |xs: &[f64]| {
        let mut v = xs.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let (a, b) = (sort(baseline), sort(other));
    let median_a = percentile_sorted(&a, 50.0)?;
    if median_a == 0.0 {
        return None;
    }
    let ratio = percentile_sorted(&b, 50.0)? / median_a;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let ma = bootstrap_median_draw(&a, &mut rng);
        let mb = bootstrap_median_draw(&b, &mut rng);
        if ma != 0.0 {
            ratios.push(mb / ma);
        }
    }
    if ratios.len() * 2 < resamples {
        return None;
    }
    ratios.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - CI_LEVEL) / 2.0 * 100.0;
    Some(RatioCi {
        ratio,
        lo: percentile_sorted(&ratios, tail)?,
        hi: percentile_sorted(&ratios, 100.0 - tail)?,
        n_baseline: a.len(),
        n_other: b.len(),
        resamples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{assert_close, floats, items, num, reference};

    #[test]
    fn ci_ends_are_the_quantiles_of_the_exact_bootstrap_distribution_for_three_to_five_trials() {
        // numpy enumerated every resample (n^n per group) to get the exact bootstrap
        // distribution of the ratio; the fixture checks that its 2.5% and 97.5% quantiles
        // are atoms with at least 0.0066 of probability on each side, four standard
        // errors of a 10 000-resample estimate.
        let cases = items(&reference()["ratio_bootstrap"]);
        assert!(cases.len() >= 3);
        for case in cases {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let label = format!("{a:?} vs {b:?}");
            let r = median_ratio_ci(&a, &b, 17, 10_000).expect("usable");
            assert_close(r.ratio, num(&case["ratio"]), 1e-12, &label);
            for (got, end, q) in [(r.lo, "lo", 0.025), (r.hi, "hi", 0.975)] {
                let below = num(&case[format!("{end}_cdf_below")]);
                let at = num(&case[format!("{end}_cdf_at")]);
                assert!(below <= q - 0.0066 && at >= q + 0.0066, "{label} {end}");
                assert_close(got, num(&case[end]), 1e-12, &format!("{label} {end}"));
            }
            assert_eq!((r.n_baseline, r.n_other), (a.len(), b.len()));
        }
    }

    #[test]
    fn the_ci_brackets_a_true_ratio_narrows_with_more_trials_and_repeats_for_a_seed() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut trials = |n: usize, level: f64| -> Vec<f64> {
            (0..n)
                .map(|_| level * (1.0 + 0.1 * (rng.f64() - 0.5)))
                .collect()
        };
        let (a5, b5) = (trials(5, 100.0), trials(5, 150.0));
        let (a40, b40) = (trials(40, 100.0), trials(40, 150.0));
        let few = median_ratio_ci(&a5, &b5, 1, 2000).expect("ci");
        let many = median_ratio_ci(&a40, &b40, 1, 2000).expect("ci");
        for r in [few, many] {
            assert!(r.lo < 1.5 && 1.5 < r.hi, "{r:?}");
            assert!(r.lo <= r.ratio && r.ratio <= r.hi, "{r:?}");
        }
        assert!(
            many.hi - many.lo < 0.6 * (few.hi - few.lo),
            "{few:?} {many:?}"
        );
        assert_eq!(median_ratio_ci(&a5, &b5, 1, 2000), Some(few));
        assert_ne!(median_ratio_ci(&a5, &b5, 2, 2000), Some(few));
    }

    #[test]
    fn a_zero_or_missing_baseline_gives_no_ratio() {
        assert_eq!(median_ratio_ci(&[0.0, 0.0, 1.0], &[1.0], 0, 100), None);
        assert_eq!(median_ratio_ci(&[], &[1.0], 0, 100), None);
        assert_eq!(median_ratio_ci(&[1.0], &[1.0], 0, 0), None);
        assert_eq!(median_ratio_ci(&[1.0, f64::NAN], &[1.0], 0, 10), None);
        let r = median_ratio_ci(&[2.0], &[3.0], 0, 10).expect("one trial each");
        assert_eq!((r.ratio, r.lo, r.hi), (1.5, 1.5, 1.5));
    }

    #[test]
    fn a_side_of_all_zeros_gives_no_ratio_not_zero_with_a_ci_of_zero() {
        // Before: 0 / x = 0 with the CI [0, 0], or the baseline's zero median.
        assert_eq!(
            median_ratio_ci(&[4.0, 5.0, 6.0], &[0.0, 0.0, 0.0], 0, 100),
            None
        );
        assert_eq!(
            median_ratio_ci(&[0.0, 0.0, 0.0], &[4.0, 5.0, 6.0], 0, 100),
            None
        );
        assert_eq!(median_ratio_ci(&[0.0, 0.0], &[0.0], 0, 100), None);
        // One zero among other values still has a ratio: 0 is a value, not the whole side.
        let r = median_ratio_ci(&[4.0, 5.0, 6.0], &[0.0, 5.0, 10.0], 0, 100).expect("ratio");
        assert_eq!(r.ratio, 1.0);
    }
}
