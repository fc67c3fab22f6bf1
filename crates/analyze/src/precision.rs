//! Adaptive trial counts: whether a cell's key metric is known precisely enough, and when to
//! stop adding shuffled rounds (every cell precise, or the trial limit reached).
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

/// When to stop adding rounds (one more trial of every cell per round).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StoppingRule {
    /// Rounds always run, at least 2.
    pub min_trials: usize,
    /// Rounds never exceeded.
    pub max_trials: usize,
    /// Wanted half-width of every cell's 95% interval, as a fraction of its median.
    pub precision: f64,
}

/// What [`StoppingRule::decide`] says after a round (the run stage acts on it).
pub use schedlab_core::precision::Decision;

impl StoppingRule {
    /// Decide from every cell's per-trial key-metric values so far. The rounds run are the
    /// fewest trials any cell has; a cell whose precision cannot be computed (fewer than two
    /// trials, a non-finite value) counts as imprecise. `min_trials` below 2 counts as 2 and
    /// `max_trials` below the minimum as the minimum.
    pub fn decide<S: AsRef<[f64]>>(&self, cells: &[S]) -> Decision {
        let min = self.min_trials.max(2);
        let max = self.max_trials.max(min);
        let rounds = cells.iter().map(|c| c.as_ref().len()).min().unwrap_or(min);
        if rounds < min {
            return Decision::Continue;
        }
        let precise = cells
            .iter()
            .all(|c| precision(c.as_ref(), self.precision).is_some_and(|p| p.within));
        if precise {
            Decision::Precise
        } else if rounds >= max {
            Decision::LimitReached
        } else {
            Decision::Continue
        }
    }

    /// Run rounds until the rule stops: `round(i)` (i from 0) returns one new key-metric
    /// value per cell (always the same number of cells). Returns the values per cell and the
    /// final decision. The rule itself does no I/O: `round` may run real trials or draw
    /// synthetic numbers.
    pub fn run<F>(&self, mut round: F) -> (Vec<Vec<f64>>, Decision)
    where
        F: FnMut(usize) -> Vec<f64>,
    {
        let mut cells: Vec<Vec<f64>> = Vec::new();
        for i in 0.. {
            let values = round(i);
            if cells.is_empty() {
                cells = vec![Vec::new(); values.len()];
            }
            for (cell, v) in cells.iter_mut().zip(values) {
                cell.push(v);
            }
            let decision = self.decide(&cells);
            if decision != Decision::Continue {
                return (cells, decision);
            }
        }
        unreachable!("the rule stops at max_trials")
    }
}

#[cfg(test)]
mod tests {
    use super::super::draws::standard_normal;
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

    fn rule() -> StoppingRule {
        StoppingRule {
            min_trials: 3,
            max_trials: 30,
            precision: 0.01,
        }
    }

    #[test]
    fn a_constant_metric_stops_at_the_minimum() {
        let (cells, decision) = rule().run(|_| vec![12.5, 40.0, 7.0]);
        assert_eq!(decision, Decision::Precise);
        assert!(cells.iter().all(|c| c.len() == 3), "{cells:?}");
    }

    #[test]
    fn a_noisy_metric_reaches_the_maximum() {
        // Log-normal with a 30% coefficient of variation: ±1% would need ~3500 trials.
        let sigma = (1.0f64 + 0.3 * 0.3).ln().sqrt();
        let mut rng = fastrand::Rng::with_seed(2024);
        let (cells, decision) =
            rule().run(|_| vec![10.0, (3.0 + sigma * standard_normal(&mut rng)).exp()]);
        assert_eq!(decision, Decision::LimitReached);
        assert_eq!(cells[1].len(), 30);
        let p = precision(&cells[1], 0.01).expect("30 trials");
        assert!(p.relative_half_width > 0.05, "{p:?}");
        // The constant cell alone would have stopped at the minimum.
        assert_eq!(rule().decide(&[&cells[0][..3]]), Decision::Precise);
    }

    #[test]
    fn a_moderately_noisy_metric_stops_between_the_limits_once_precise() {
        // 2% CV against a ±2% target: t(0.975, n-1) * 0.02 / sqrt(n) <= 0.02 from about n = 7.
        let mut rng = fastrand::Rng::with_seed(7);
        let r = StoppingRule {
            precision: 0.02,
            ..rule()
        };
        let (cells, decision) = r.run(|_| vec![100.0 * (1.0 + 0.02 * standard_normal(&mut rng))]);
        assert_eq!(decision, Decision::Precise);
        let n = cells[0].len();
        assert!(n > 3 && n < 30, "{n}");
        // One round earlier the rule had not been satisfied.
        assert_eq!(r.decide(&[&cells[0][..n - 1]]), Decision::Continue);
    }

    #[test]
    fn decisions_respect_the_minimum_and_count_rounds_by_the_shortest_cell() {
        let r = rule();
        assert_eq!(r.decide(&[[5.0, 5.0]]), Decision::Continue, "below minimum");
        assert_eq!(r.decide(&[[5.0, 5.0, 5.0]]), Decision::Precise);
        let long: Vec<f64> = (0..30).map(|i| f64::from(i % 2) + 1.0).collect();
        assert_eq!(r.decide(&[&long[..]]), Decision::LimitReached);
        assert_eq!(r.decide(&[&long[..], &long[..29]]), Decision::Continue);
        let none: [&[f64]; 0] = [];
        assert_eq!(r.decide(&none), Decision::Precise);
    }
}
