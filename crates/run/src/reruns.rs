//! The re-runs of contaminated trials: each is run at the end of its round, so that every
//! round keeps one clean trial per cell as long as retries last, and rounds stay paired.

use super::measure::Attempt;
use schedlab_spec::plan::{Plan, PlannedTrial};

/// Re-runs owed, in the order they were asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reruns {
    pending: Vec<Attempt>,
}

impl Reruns {
    /// The re-runs a resumed run still owes (`stored`: planned trial, re-run number).
    pub fn owed(plan: &Plan, stored: &[(PlannedTrial, u32)]) -> Reruns {
        Reruns {
            pending: stored
                .iter()
                .map(|&(planned, retry)| Attempt {
                    n: position(plan, &planned),
                    planned,
                    retry,
                    shown: 0,
                })
                .collect(),
        }
    }

    /// Asks for `a` to be run again.
    pub fn push(&mut self, a: &Attempt) {
        self.pending.push(Attempt {
            retry: a.retry + 1,
            ..*a
        });
    }

    /// Re-runs owed.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// The next re-run due before a trial of round `next_round` (None: the run ends, or the
    /// rounds scheduled so far are used up): the first owed of an earlier round.
    pub fn due(&mut self, next_round: Option<u32>) -> Option<Attempt> {
        let i = self
            .pending
            .iter()
            .position(|a| next_round.is_none_or(|r| a.planned.round < r))?;
        Some(self.pending.remove(i))
    }
}

/// The number of `planned` in the run's order, from 0: its place in the plan, or in the
/// adaptive round that added it.
fn position(plan: &Plan, planned: &PlannedTrial) -> usize {
    let same = |t: &PlannedTrial| t.cell == planned.cell && t.trial_index == planned.trial_index;
    plan.trials.iter().position(same).unwrap_or_else(|| {
        let within = schedlab_spec::plan::round(plan, planned.round)
            .iter()
            .position(same)
            .unwrap_or(0);
        planned.round as usize * plan.cells.len() + within
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(cell: usize, round: u32, retry: u32) -> Attempt {
        Attempt {
            n: 0,
            planned: PlannedTrial {
                cell,
                trial_index: round,
                round,
                warmup: false,
            },
            retry,
            shown: 0,
        }
    }

    #[test]
    fn a_rerun_is_due_once_its_round_is_over_and_keeps_its_round() {
        let mut r = Reruns::default();
        r.push(&attempt(1, 0, 0));
        r.push(&attempt(0, 1, 0));
        // Round 0 still running: nothing due.
        assert!(r.due(Some(0)).is_none());
        // The next trial is of round 1: round 0's re-run first, same cell, trial and round.
        let a = r.due(Some(1)).unwrap();
        assert_eq!(
            (
                a.planned.cell,
                a.planned.round,
                a.planned.trial_index,
                a.retry
            ),
            (1, 0, 0, 1)
        );
        assert!(r.due(Some(1)).is_none());
        // At the end of the run everything owed is due; a second re-run counts on.
        r.push(&a);
        assert_eq!(r.len(), 2);
        let rest: Vec<(usize, u32, u32)> = std::iter::from_fn(|| r.due(None))
            .map(|a| (a.planned.cell, a.planned.round, a.retry))
            .collect();
        assert_eq!(rest, vec![(0, 1, 1), (1, 0, 2)]);
        assert_eq!(r.len(), 0);
    }
}
