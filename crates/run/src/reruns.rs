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

/// Longest wait for a quiet machine before a re-run, ns.
pub(crate) const QUIET_WAIT_NS: u64 = 3_000_000_000;

/// Waits before a re-run until one settle window (100 ms) of the machine was idle (busy
/// under the settle check's threshold), at most [`QUIET_WAIT_NS`], or until `interrupted`:
/// what contaminated the trial may still be running, and a re-run at once would run into it
/// too (a 1.5 s CPU hog outlasted both re-runs of its round when they came 0.2 s apart).
/// Returns the time waited, ns.
pub(crate) fn wait_quiet(interrupted: &std::sync::atomic::AtomicBool) -> u64 {
    use super::settle::SystemSnapshot;
    let start = schedlab_sys::now_ns();
    loop {
        let before = SystemSnapshot::capture();
        std::thread::sleep(std::time::Duration::from_nanos(super::SETTLE_NS));
        let idle = SystemSnapshot::capture().busy_since(&before);
        let waited = schedlab_sys::now_ns().saturating_sub(start);
        let quiet = idle
            .busy_pct
            .is_none_or(|b| b <= super::settle::BUSY_WARN_PCT);
        if quiet || waited >= QUIET_WAIT_NS || interrupted.load(std::sync::atomic::Ordering::SeqCst)
        {
            return waited;
        }
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

    #[test]
    fn a_rerun_waits_for_a_busy_machine_at_most_its_bound_and_not_once_interrupted() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        // A spinning thread keeps one CPU busy: at least 1 / CPUs of the machine, over the
        // 10 % a quiet window allows on up to 9 CPUs (this machine has 2), so no window is
        // quiet and the wait runs to its bound (a busier machine only keeps it so).
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cpus >= 10 {
            eprintln!("skipped: one busy thread is under 10 % of {cpus} CPUs");
            return;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let spin = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let waited = wait_quiet(&AtomicBool::new(false));
        // Interrupted: one window, then back.
        let start = std::time::Instant::now();
        let interrupted = wait_quiet(&AtomicBool::new(true));
        let elapsed = start.elapsed();
        stop.store(true, Ordering::Relaxed);
        spin.join().unwrap();
        assert!(
            (QUIET_WAIT_NS..QUIET_WAIT_NS * 3).contains(&waited),
            "waited {waited} ns with a CPU busy"
        );
        assert!(
            interrupted < QUIET_WAIT_NS / 2 && elapsed.as_nanos() < u128::from(QUIET_WAIT_NS / 2),
            "interrupted, still waited {interrupted} ns"
        );
    }
}
