//! The run's order of trials, and for an adaptive run (`--precision`, `--until-decided`) the
//! decision after each round whether to add another: whole shuffled rounds only, until every
//! cell is precise enough and every claim decided, or a limit (`--max-trials`, `--max-time`)
//! is reached.
//!
//! The statistics are not the run stage's: `app` plugs in a [`Judge`] (the analyze layer's
//! anytime-valid stopping rules) and the sink reads the key metric and the claims' verdicts
//! back from the stored trials, so the run stops on exactly the numbers the report will show.

use crate::error::Result;
use schedlab_core::Warning;
use schedlab_spec::plan::{Adaptive, Plan, PlannedTrial};
use std::collections::HashSet;
use std::time::Instant;

use schedlab_core::precision::Decision;

/// What the judge decides from after a round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Measured rounds stored so far.
    pub rounds: u32,
    /// Every judged cell's key-metric values, one per ok measured trial (with a precision).
    pub cells: Vec<Vec<f64>>,
    /// Claims and claim cells still inconclusive (with `until_decided`).
    pub undecided: Option<usize>,
    /// Cells (by index) that no undecided claim needs any more: they leave later rounds.
    pub finished_cells: Vec<usize>,
}

/// Where an `--until-decided` run's claims stand (see [`crate::sink::Sink::claims_progress`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimsProgress {
    /// Claims and claim cells still inconclusive.
    pub undecided: usize,
    /// Cells whose every claim is decided, with all its cells.
    pub finished_cells: Vec<usize>,
}

/// Decides from the evidence whether an adaptive run needs another round.
pub trait Judge: std::fmt::Debug + Send + Sync {
    /// The decision under `adaptive`'s targets and limits.
    fn decide(&self, adaptive: &Adaptive, evidence: &Evidence) -> Decision;
}

/// Why the run stopped adding rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every judged cell is within the precision and every claim decided, as asked.
    Precise,
    /// `max_trials` rounds ran.
    MaxTrials,
    /// The next round would have ended after `max_time`.
    MaxTime,
}

/// The trials of a run in order: the plan's, then, for an adaptive run, one round at a time
/// while the judge asks for more.
pub struct Schedule<'a> {
    plan: &'a Plan,
    trials: Vec<PlannedTrial>,
    next: usize,
    /// Rounds scheduled so far, warm-up rounds included.
    rounds: u32,
    /// Rounds that have trials stored already (a resumed run completes them first).
    stored_rounds: HashSet<u32>,
    /// Cells whose claims are all decided: later rounds leave them out.
    finished: HashSet<usize>,
    started: Instant,
    /// Why rounds stopped being added (adaptive runs, once they stop).
    pub stop: Option<Stop>,
}

impl<'a> Schedule<'a> {
    /// The schedule of `plan`; `stored` are the (cell, trial index) pairs already stored.
    pub fn new(plan: &'a Plan, stored: &HashSet<(usize, u32)>) -> Schedule<'a> {
        Schedule {
            plan,
            trials: plan.trials.clone(),
            next: 0,
            rounds: plan.trials.iter().map(|t| t.round + 1).max().unwrap_or(0),
            stored_rounds: stored.iter().map(|&(_, t)| t).collect(),
            finished: HashSet::new(),
            started: Instant::now(),
            stop: None,
        }
    }

    /// Trials scheduled so far.
    pub fn len(&self) -> usize {
        self.trials.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.trials.is_empty()
    }

    /// The round of the next trial, if it is scheduled already (None: the trials scheduled so
    /// far are used up; an adaptive run may add a round).
    pub fn peek_round(&self) -> Option<u32> {
        self.trials.get(self.next).map(|t| t.round)
    }

    /// Measured rounds scheduled so far.
    pub fn measured_rounds(&self) -> u32 {
        self.rounds.saturating_sub(self.plan.settings.warmup)
    }

    /// The next trial and its position in the run (from 0). When the scheduled trials are
    /// used up, an adaptive run asks `evidence(last_round, measured_rounds)` for what the
    /// rounds up to `last_round` show, and `judge` whether to add a round.
    pub fn next(
        &mut self,
        judge: Option<&dyn Judge>,
        evidence: impl FnOnce(u32, u32) -> Result<Evidence>,
    ) -> Result<Option<(usize, PlannedTrial)>> {
        if self.next == self.trials.len() {
            let (Some(adaptive), Some(judge)) = (&self.plan.settings.adaptive, judge) else {
                return Ok(None);
            };
            if !self.another_round(adaptive, judge, evidence)? {
                return Ok(None);
            }
            let finished = &self.finished;
            self.trials.extend(
                schedlab_spec::plan::round(self.plan, self.rounds)
                    .into_iter()
                    .filter(|t| !finished.contains(&t.cell)),
            );
            self.rounds += 1;
            if self.next == self.trials.len() {
                // Every cell of the round has left: every claim is decided.
                self.stop = Some(Stop::Precise);
                return Ok(None);
            }
        }
        let t = self.trials[self.next];
        self.next += 1;
        Ok(Some((self.next - 1, t)))
    }

    /// Whether to add round `self.rounds`; sets `stop` when not.
    fn another_round(
        &mut self,
        adaptive: &Adaptive,
        judge: &dyn Judge,
        evidence: impl FnOnce(u32, u32) -> Result<Evidence>,
    ) -> Result<bool> {
        // A round begun before an interruption is completed whatever the numbers say.
        if self.stored_rounds.contains(&self.rounds) {
            return Ok(true);
        }
        if self.measured_rounds() >= adaptive.max_trials {
            self.stop = Some(Stop::MaxTrials);
            return Ok(false);
        }
        let measured = self.measured_rounds();
        let mut e = evidence(self.rounds.saturating_sub(1), measured)?;
        e.rounds = measured;
        self.finished.extend(e.finished_cells.iter().copied());
        match judge.decide(adaptive, &e) {
            Decision::Precise => {
                self.stop = Some(Stop::Precise);
                return Ok(false);
            }
            Decision::LimitReached => {
                self.stop = Some(Stop::MaxTrials);
                return Ok(false);
            }
            Decision::Continue => {}
        }
        if let Some(limit) = adaptive.max_time_ns {
            // The mean round so far predicts the next (a resumed run's stored rounds took no
            // time here, which makes the prediction short, never long).
            let elapsed = self.started.elapsed().as_nanos() as u64;
            let per_round = elapsed / u64::from(self.rounds.max(1));
            if elapsed.saturating_add(per_round) > limit {
                self.stop = Some(Stop::MaxTime);
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The warning stored when an adaptive run stopped short of its targets, or `None` when it
/// met them.
pub fn stop_warning(adaptive: &Adaptive, stop: Stop, rounds: u32) -> Option<Warning> {
    let (precision, metric, until_decided) = (
        adaptive.precision,
        adaptive.metric.key().to_string(),
        adaptive.until_decided,
    );
    match stop {
        Stop::Precise => None,
        Stop::MaxTrials => Some(Warning::AdaptiveMaxTrials {
            precision,
            metric,
            until_decided,
            rounds,
            max_trials: adaptive.max_trials,
        }),
        Stop::MaxTime => Some(Warning::AdaptiveMaxTime {
            precision,
            metric,
            until_decided,
            rounds,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_spec::plan::Cell;

    /// A judge that stops when every cell has `enough` values.
    #[derive(Debug)]
    struct Count(usize);

    impl Judge for Count {
        fn decide(&self, a: &Adaptive, e: &Evidence) -> Decision {
            let n = e.cells.iter().map(Vec::len).min().unwrap_or(0);
            if n >= self.0 {
                Decision::Precise
            } else if n >= a.max_trials as usize {
                Decision::LimitReached
            } else {
                Decision::Continue
            }
        }
    }

    fn plan(min: u32, max: u32, warmup: u32) -> Plan {
        Plan {
            name: "t".into(),
            description: String::new(),
            spec_toml: String::new(),
            settings: schedlab_spec::plan::RunSettings {
                trials: min,
                warmup,
                retries: 2,
                timeout_ns: None,
                io_dir: "/tmp".into(),
                sample_interval_ns: None,
                device: None,
                trace: false,
                allow_knobs: Vec::new(),
                adaptive: Some(Adaptive {
                    precision: Some(0.02),
                    until_decided: false,
                    min_trials: min,
                    max_trials: max,
                    max_time_ns: None,
                    metric: schedlab_core::metric::Metric::Makespan,
                }),
            },
            cells: vec![cell(), cell()],
            trials: schedlab_spec::plan::order(2, min, warmup, 3),
            seed: 3,
        }
    }

    fn cell() -> Cell {
        schedlab_spec::plan::Cell {
            policy: schedlab_core::policy::PolicyKind::Other,
            priorities: schedlab_core::policy::PriorityMode::Same,
            workload: schedlab_core::workload::Workload::default(),
            size: schedlab_core::records::WorkSize::Iterations(1),
            split: false,
            tasks: 1,
            kind: schedlab_core::records::TaskKind::Process,
            start: schedlab_core::records::StartMode::Barrier,
            cpus: None,
            nice: None,
            rt_priority: None,
            deadline: schedlab_core::policy::DeadlineParams {
                runtime_ns: 1_000_000,
                deadline_ns: 10_000_000,
                period_ns: 10_000_000,
            },
            antagonists: 0,
            antagonist_policy: schedlab_core::policy::PolicyKind::Other,
            antagonist_workload: schedlab_core::workload::WorkloadKind::Cpu,
            io_scheduler: None,
            slice_ns: None,
            knobs: Vec::new(),
            scx: None,
            groups: Vec::new(),
        }
    }

    /// Runs the schedule to its end, "storing" one value per measured trial; returns the
    /// trials in order, the rounds asked about, and the stop.
    fn drain(p: &Plan, judge: &dyn Judge) -> (Vec<PlannedTrial>, Vec<u32>, Option<Stop>) {
        let mut s = Schedule::new(p, &HashSet::new());
        let mut done: Vec<PlannedTrial> = Vec::new();
        let mut asked = Vec::new();
        while let Some((n, t)) = s
            .next(Some(judge), |through, _| {
                asked.push(through);
                Ok(Evidence {
                    cells: (0..p.cells.len())
                        .map(|c| {
                            done.iter()
                                .filter(|t| t.cell == c && !t.warmup && t.round <= through)
                                .map(|_| 1.0)
                                .collect()
                        })
                        .collect(),
                    ..Evidence::default()
                })
            })
            .unwrap()
        {
            assert_eq!(n, done.len());
            done.push(t);
        }
        (done, asked, s.stop)
    }

    #[test]
    fn rounds_are_added_whole_until_the_judge_is_satisfied() {
        let p = plan(3, 10, 1);
        let (trials, asked, stop) = drain(&p, &Count(5));
        assert_eq!(stop, Some(Stop::Precise));
        // 1 warm-up + 5 measured rounds of 2 cells; asked after rounds 3, 4 and 5 (0-based).
        assert_eq!(trials.len(), 2 * 6);
        assert_eq!(asked, vec![3, 4, 5]);
        for r in 0..6 {
            let cells: HashSet<usize> = trials
                .iter()
                .filter(|t| t.round == r)
                .map(|t| t.cell)
                .collect();
            assert_eq!(cells.len(), 2, "round {r} is whole");
        }
    }

    #[test]
    fn the_maximum_rounds_end_an_imprecise_run() {
        let p = plan(2, 4, 0);
        let (trials, _, stop) = drain(&p, &Count(usize::MAX));
        assert_eq!(stop, Some(Stop::MaxTrials));
        assert_eq!(trials.len(), 2 * 4);
        let w = stop_warning(p.settings.adaptive.as_ref().unwrap(), Stop::MaxTrials, 4);
        let w = w.unwrap();
        assert_eq!(w.code(), "adaptive_max_trials");
        assert!(w.to_string().contains("--max-trials 4"));
    }

    #[test]
    fn a_fixed_plan_or_a_run_without_a_judge_runs_the_plan_only() {
        let mut p = plan(3, 10, 0);
        let mut s = Schedule::new(&p, &HashSet::new());
        let mut n = 0;
        while s.next(None, |_, _| unreachable!()).unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 6);
        p.settings.adaptive = None;
        let (trials, asked, stop) = drain(&p, &Count(100));
        assert_eq!((trials.len(), asked.len(), stop), (6, 0, None));
    }

    #[test]
    fn a_resumed_run_completes_a_begun_round_before_judging() {
        let p = plan(2, 10, 0);
        // Round 2 had one trial stored before the interruption; the judge would stop at 2.
        let stored: HashSet<(usize, u32)> = [(0, 0), (1, 0), (0, 1), (1, 1), (1, 2)].into();
        let mut s = Schedule::new(&p, &stored);
        let mut rounds = Vec::new();
        while let Some((_, t)) = s
            .next(Some(&Count(2)), |_, _| {
                Ok(Evidence {
                    cells: vec![vec![1.0; 2]; 2],
                    ..Evidence::default()
                })
            })
            .unwrap()
        {
            rounds.push(t.round);
        }
        assert_eq!(rounds, vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(s.stop, Some(Stop::Precise));
    }

    /// A judge that never stops before the maximum.
    #[derive(Debug)]
    struct Never;

    impl Judge for Never {
        fn decide(&self, a: &Adaptive, e: &Evidence) -> Decision {
            if e.rounds >= a.max_trials {
                Decision::LimitReached
            } else {
                Decision::Continue
            }
        }
    }

    #[test]
    fn cells_whose_claims_are_decided_leave_later_rounds() {
        let p = plan(3, 6, 0);
        let mut s = Schedule::new(&p, &HashSet::new());
        let mut done: Vec<PlannedTrial> = Vec::new();
        while let Some((_, t)) = s
            .next(Some(&Never), |through, measured| {
                Ok(Evidence {
                    rounds: measured,
                    // After round 3 (index 3) cell 1's claims are all decided.
                    finished_cells: if through >= 3 { vec![1] } else { Vec::new() },
                    ..Evidence::default()
                })
            })
            .unwrap()
        {
            done.push(t);
        }
        let of = |c: usize| done.iter().filter(|t| t.cell == c).count();
        // Cell 0 runs all 6 rounds; cell 1 the 3 planned and round 3, then leaves.
        assert_eq!((of(0), of(1)), (6, 4), "{done:?}");
        assert_eq!(s.stop, Some(Stop::MaxTrials));
    }
}
