//! The adaptive run's judge: the analyze layer's anytime-valid rules applied to what the store
//! reads back after each round. `--precision`: [`AnytimeStoppingRule`], a confidence sequence
//! per cell (valid however often it is looked at; finite from 10 trials). `--until-decided`:
//! every claim and claim cell decided (the sink replays the run's planned looks,
//! [`schedlab_analyze::LookSchedule`], as the report does; this judge counts what is left
//! undecided).

use schedlab_analyze::{AnytimeStoppingRule, ALPHA};
use schedlab_core::precision::Decision;
use schedlab_run::adaptive::{Evidence, Judge};
use schedlab_spec::plan::Adaptive;

/// The rules of an adaptive run's targets and limits.
#[derive(Debug, Clone, Copy)]
pub struct StoppingJudge;

impl Judge for StoppingJudge {
    fn decide(&self, a: &Adaptive, e: &Evidence) -> Decision {
        let min = (a.min_trials as usize).max(2);
        let max = (a.max_trials as usize).max(min);
        let rounds = e.rounds as usize;
        if rounds < min {
            return Decision::Continue;
        }
        let precise = a.precision.is_none_or(|precision| {
            let rule = AnytimeStoppingRule {
                min_trials: min,
                max_trials: max,
                precision,
                alpha: ALPHA,
            };
            rule.precise(&e.cells)
        });
        let decided = !a.until_decided || e.undecided == Some(0);
        if precise && decided {
            Decision::Precise
        } else if rounds >= max {
            Decision::LimitReached
        } else {
            Decision::Continue
        }
    }
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
