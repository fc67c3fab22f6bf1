//! How precisely a cell's key metric is known from a fixed number of trials (the anytime-valid
//! rule that stops adaptive runs is [`crate::sequential::AnytimeStoppingRule`]).
//!
//! The interval is the 95% Student t-interval of the mean of the per-trial values,
//! `t(0.975, n - 1) · s / sqrt(n)`, and precision is its half-width relative to |median|.
//! Why this interval: it exists from n = 2, is deterministic (no bootstrap seed, so the same
//! trials always give the same decision), and costs nothing per round. A distribution-free
//! interval for the median from order statistics needs n >= 6 to reach 95% at all, and a
//! bootstrap of 2 to 5 trials is degenerate (its median can only be one of the values).
//! Per-trial values are themselves summaries (e.g. a trial's median over its tasks), so they
//! are closer to normal than the task values they come from.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::summary::{mean, median, sample_variance};

/// How precisely one cell's key metric is known from its per-trial values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Precision {
    /// Trials.
    pub n: usize,
    /// Median of the per-trial values, in their unit.
    pub median: f64,
    /// Mean of the per-trial values, in their unit (the centre of the interval).
    pub mean: f64,
    /// Half-width of the 95% t-interval, in the unit of the values.
    pub half_width: f64,
    /// `half_width / |median|` (a fraction: 0.01 is ±1%); 0 when both are 0, infinite when
    /// only the median is 0.
    pub relative_half_width: f64,
    /// `relative_half_width <= target`, the precision asked for.
    pub within: bool,
}

/// The precision of one cell's per-trial values against `target` (a fraction of the
/// median, e.g. 0.01 for ±1%).
///
/// `None` if there are fewer than two values, a non-finite value, or `target` is not a
/// positive finite number.
pub fn precision(values: &[f64], target: f64) -> Option<Precision> {
    if values.len() < 2 || values.iter().any(|x| !x.is_finite()) {
        return None;
    }
    if !(target > 0.0 && target.is_finite()) {
        return None;
    }
    let n = values.len();
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    let half_width = t.inverse_cdf(0.975) * (sample_variance(values)? / n as f64).sqrt();
    let centre = median(values)?;
    let relative_half_width = if half_width == 0.0 {
        0.0
    } else {
        half_width / centre.abs()
    };
    Some(Precision {
        n,
        median: centre,
        mean: mean(values)?,
        half_width,
        relative_half_width,
        within: relative_half_width <= target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{assert_close, floats, items, num, reference};

    #[test]
    fn relative_half_width_matches_the_scipy_t_interval() {
        for case in items(&reference()["precision"]) {
            let values = floats(&case["values"]);
            let p = precision(&values, num(&case["precision"])).expect("n >= 2");
            let label = format!("{values:?}");
            assert_close(p.median, num(&case["median"]), 1e-12, &label);
            assert_close(p.mean, num(&case["mean"]), 1e-12, &label);
            assert_close(p.half_width, num(&case["half_width"]), 1e-9, &label);
            let rel = num(&case["relative_half_width"]);
            assert_close(p.relative_half_width, rel, 1e-9, &label);
            assert_eq!(Some(p.within), case["within"].as_bool(), "{label}");
        }
    }

    #[test]
    fn precision_needs_two_finite_values_and_a_positive_target() {
        assert_eq!(precision(&[1.0], 0.01), None);
        assert_eq!(precision(&[1.0, f64::NAN], 0.01), None);
        assert_eq!(precision(&[1.0, 2.0], 0.0), None);
        let zero = precision(&[-1.0, 0.0, 1.0], 0.5).expect("n = 3");
        assert!(zero.relative_half_width.is_infinite() && !zero.within);
        let flat = precision(&[0.0, 0.0], 0.5).expect("n = 2");
        assert!(flat.within);
    }
}
