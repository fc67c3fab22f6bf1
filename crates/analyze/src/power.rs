//! What a run's trials could have detected: the minimum detectable difference of a
//! two-sample t-test for the observed spread and trial counts.
//!
//! Method: MDD = (t(1 - alpha/2, df) + t(power, df)) · s_p · sqrt(1/n1 + 1/n2), with s_p the
//! pooled standard deviation (n - 1 variances) and df = n1 + n2 - 2: the usual closed form
//! for a two-sided two-sample t-test, which replaces the noncentral t by a shifted central
//! t. Its true power is slightly below the nominal one for very small samples (0.79 instead
//! of 0.80 with 3 vs 3 at alpha 0.05; the fixtures record it from scipy's noncentral t).
//! For the smallest p a rank test can reach with n trials see
//! [`super::mann_whitney_min_p`] and [`super::mann_whitney_trials_needed`].

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::summary::sample_variance;

/// Power of the minimum detectable difference unless a caller has a reason for another.
pub const MDD_POWER: f64 = 0.8;

/// The smallest difference of means a two-sided two-sample t-test on these trials would
/// detect with the given power (see the module doc for the method).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinDetectable {
    /// The minimum detectable difference, in the unit of the values.
    pub difference: f64,
    /// Pooled standard deviation of the two groups, in the unit of the values.
    pub sd_pooled: f64,
    /// Degrees of freedom, n1 + n2 - 2.
    pub df: f64,
    /// Values (trials) in the first group.
    pub n1: usize,
    /// Values (trials) in the second group.
    pub n2: usize,
    /// Two-sided significance level.
    pub alpha: f64,
    /// Power (probability of detecting a true difference of `difference`).
    pub power: f64,
}

/// The minimum detectable difference of two groups of trial-level values `a` and `b` at
/// `alpha` (two-sided) and `power` (e.g. [`crate::ALPHA`], [`MDD_POWER`]), from their pooled
/// standard deviation.
///
/// `None` if either group has fewer than two values or a non-finite value, or alpha or
/// power is outside (0, 1). A pooled SD of 0 gives a difference of 0.
pub fn min_detectable_difference(
    a: &[f64],
    b: &[f64],
    alpha: f64,
    power: f64,
) -> Option<MinDetectable> {
    if a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (va, vb) = (sample_variance(a)?, sample_variance(b)?);
    let df = (n1 + n2 - 2) as f64;
    let sd_pooled = (((n1 - 1) as f64 * va + (n2 - 1) as f64 * vb) / df).sqrt();
    Some(MinDetectable {
        difference: min_detectable_difference_for(sd_pooled, n1, n2, alpha, power)?,
        sd_pooled,
        df,
        n1,
        n2,
        alpha,
        power,
    })
}

/// The minimum detectable difference for a known (pooled) standard deviation `sd` and
/// group sizes `n1`, `n2`, e.g. to plan how many trials a wanted difference needs.
///
/// `None` if a group has fewer than two values, `sd` is negative or non-finite, or alpha or
/// power is outside (0, 1).
pub fn min_detectable_difference_for(
    sd: f64,
    n1: usize,
    n2: usize,
    alpha: f64,
    power: f64,
) -> Option<f64> {
    let unit = |p: f64| p > 0.0 && p < 1.0;
    if n1 < 2 || n2 < 2 || !(sd >= 0.0 && sd.is_finite()) || !unit(alpha) || !unit(power) {
        return None;
    }
    let df = (n1 + n2 - 2) as f64;
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let quantiles = t.inverse_cdf(1.0 - alpha / 2.0) + t.inverse_cdf(power);
    let se = sd * (1.0 / n1 as f64 + 1.0 / n2 as f64).sqrt();
    Some(quantiles * se)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{assert_close, floats, items, num, reference};

    #[test]
    fn mdd_matches_the_scipy_t_quantile_computation() {
        let cases = items(&reference()["mdd"]);
        assert!(cases.len() >= 5);
        for case in cases {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let (alpha, power) = (num(&case["alpha"]), num(&case["power"]));
            let label = format!("{} vs {} at {alpha}/{power}", a.len(), b.len());
            let m = min_detectable_difference(&a, &b, alpha, power).expect("usable");
            assert_close(m.sd_pooled, num(&case["sd_pooled"]), 1e-12, &label);
            assert_eq!(m.df, num(&case["df"]), "{label}");
            assert_close(m.difference, num(&case["mdd"]), 1e-9, &label);
            assert_eq!(
                (m.n1, m.n2, m.alpha, m.power),
                (a.len(), b.len(), alpha, power)
            );
            // The closed form's real power (scipy's noncentral t) is near the nominal one.
            let real = num(&case["power_actual"]);
            assert!(
                real > power - 0.03 && real < power + 0.01,
                "{label}: {real}"
            );
        }
    }

    #[test]
    fn mdd_by_hand_for_3_vs_3_and_its_scaling_with_n() {
        // t(0.975, 4) = 2.776445, t(0.8, 4) = 0.940965 (tables); sd 1; sqrt(2/3).
        let hand = (2.776_445 + 0.940_965) * (2.0f64 / 3.0).sqrt();
        let got = min_detectable_difference_for(1.0, 3, 3, 0.05, 0.8).expect("mdd");
        assert!((got - hand).abs() < 1e-5, "{got} vs {hand}");
        // Four times the trials: a bit less than half the difference (smaller t quantiles).
        let more = min_detectable_difference_for(1.0, 12, 12, 0.05, 0.8).expect("mdd");
        assert!(more < got / 2.0 && more > got / 3.0, "{more} vs {got}");
        // Stricter alpha or more power need a larger difference.
        assert!(min_detectable_difference_for(1.0, 3, 3, 0.01, 0.8).expect("mdd") > got);
        assert!(min_detectable_difference_for(1.0, 3, 3, 0.05, 0.9).expect("mdd") > got);
    }

    #[test]
    fn mdd_needs_two_values_per_group_and_sensible_levels() {
        assert_eq!(
            min_detectable_difference(&[1.0], &[2.0, 3.0], 0.05, 0.8),
            None
        );
        assert_eq!(
            min_detectable_difference(&[1.0, f64::NAN], &[2.0, 3.0], 0.05, 0.8),
            None
        );
        assert_eq!(min_detectable_difference_for(1.0, 3, 3, 0.0, 0.8), None);
        assert_eq!(min_detectable_difference_for(1.0, 3, 3, 0.05, 1.0), None);
        assert_eq!(min_detectable_difference_for(-1.0, 3, 3, 0.05, 0.8), None);
        let flat = min_detectable_difference(&[2.0, 2.0], &[5.0, 5.0, 5.0], 0.05, 0.8);
        assert_eq!(flat.map(|m| m.difference), Some(0.0));
    }
}
