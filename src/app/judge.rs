//! The adaptive run's judge: the analyze layer's stopping rule applied to the key-metric
//! values the store reads back after each round.

use schedlab_analyze::StoppingRule;
use schedlab_run::adaptive::{Decision, Judge};
use schedlab_spec::plan::Adaptive;

/// [`StoppingRule`] with an adaptive run's precision and limits.
#[derive(Debug, Clone, Copy)]
pub struct StoppingJudge;

impl Judge for StoppingJudge {
    fn decide(&self, a: &Adaptive, cells: &[Vec<f64>]) -> Decision {
        let rule = StoppingRule {
            min_trials: a.min_trials as usize,
            max_trials: a.max_trials as usize,
            precision: a.precision,
        };
        rule.decide(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_run::adaptive::{Schedule, Stop};
    use schedlab_spec::plan::{Plan, PlannedTrial};
    use std::collections::HashSet;

    fn plan(min: u32, max: u32) -> Plan {
        let mut spec = schedlab_spec::Spec::default_quick();
        spec.settings.precision = Some("1%".into());
        spec.settings.min_trials = Some(min);
        spec.settings.max_trials = Some(max);
        schedlab_spec::plan::build(&spec, 11).unwrap()
    }

    /// Runs the schedule of `p` as the run loop does, each trial of cell c giving `value(c)`;
    /// returns the trials run and why it stopped.
    fn run(p: &Plan, mut value: impl FnMut(usize) -> f64) -> (Vec<PlannedTrial>, Option<Stop>) {
        let mut s = Schedule::new(p, &HashSet::new());
        let mut stored: Vec<(PlannedTrial, f64)> = Vec::new();
        loop {
            let next = s
                .next(Some(&StoppingJudge), |through| {
                    Ok((0..p.cells.len())
                        .map(|c| {
                            stored
                                .iter()
                                .filter(|(t, _)| t.cell == c && t.round <= through)
                                .map(|&(_, v)| v)
                                .collect()
                        })
                        .collect())
                })
                .unwrap();
            let Some((_, t)) = next else { break };
            stored.push((t, value(t.cell)));
        }
        (stored.into_iter().map(|(t, _)| t).collect(), s.stop)
    }

    #[test]
    fn the_run_loop_stops_at_the_minimum_on_a_constant_metric() {
        let p = plan(3, 20);
        let (trials, stop) = run(&p, |c| 100.0 + c as f64);
        assert_eq!(stop, Some(Stop::Precise));
        assert_eq!(trials.len(), 3 * p.cells.len());
    }

    #[test]
    fn the_run_loop_reaches_the_maximum_on_a_noisy_metric_in_whole_rounds() {
        // 30 % coefficient of variation against ±1 %: never precise within 12 rounds.
        let p = plan(3, 12);
        let mut rng = fastrand::Rng::with_seed(9);
        let (trials, stop) = run(&p, |_| 100.0 * (0.7 + 0.6 * rng.f64()));
        assert_eq!(stop, Some(Stop::MaxTrials));
        assert_eq!(trials.len(), 12 * p.cells.len());
        for c in 0..p.cells.len() {
            assert_eq!(trials.iter().filter(|t| t.cell == c).count(), 12);
        }
    }

    #[test]
    fn one_noisy_cell_keeps_the_precise_ones_running() {
        // Cell 0 is noisy for 6 rounds, then constant: the run stops once its CI closes,
        // and every cell has the same number of trials.
        let p = plan(3, 30);
        let mut seen = vec![0u32; p.cells.len()];
        let (trials, stop) = run(&p, |c| {
            seen[c] += 1;
            if c == 0 && seen[c] <= 6 {
                [98.0, 102.0][seen[c] as usize % 2]
            } else {
                100.0
            }
        });
        assert_eq!(stop, Some(Stop::Precise));
        let n = trials.len() / p.cells.len();
        assert!(n > 6 && n < 30, "{n} rounds");
        assert_eq!(trials.len() % p.cells.len(), 0);
    }
}
