//! The judge in the run loop's schedule: the confidence sequence's stops (never before 10
//! rounds), the maximum, and `--until-decided` on the count of undecided claims.

use super::*;
use schedlab_run::adaptive::{Schedule, Stop};
use schedlab_spec::plan::{Plan, PlannedTrial};
use std::collections::HashSet;

fn plan(min: u32, max: u32, until_decided: bool) -> Plan {
    let mut spec = schedlab_spec::Spec::default_quick();
    if until_decided {
        spec.claims
            .push(schedlab_spec::claims::parse_claim_flag("turnaround: fifo < other").unwrap());
        spec.settings.until_decided = true;
    } else {
        spec.settings.precision = Some("1%".into());
    }
    spec.settings.min_trials = Some(min);
    spec.settings.max_trials = Some(max);
    schedlab_spec::plan::build(&spec, 11).unwrap()
}

/// Runs the schedule of `p` as the run loop does, each trial of cell c giving `value(c)`,
/// and `undecided(rounds)` claims open after each round; returns the trials and the stop.
fn run(
    p: &Plan,
    mut value: impl FnMut(usize) -> f64,
    undecided: impl Fn(u32) -> usize,
) -> (Vec<PlannedTrial>, Option<Stop>) {
    let mut s = Schedule::new(p, &HashSet::new());
    let mut stored: Vec<(PlannedTrial, f64)> = Vec::new();
    loop {
        let next = s
            .next(Some(&StoppingJudge), |through, measured| {
                Ok(Evidence {
                    rounds: measured,
                    cells: (0..p.cells.len())
                        .map(|c| {
                            stored
                                .iter()
                                .filter(|(t, _)| t.cell == c && t.round <= through)
                                .map(|&(_, v)| v)
                                .collect()
                        })
                        .collect(),
                    undecided: Some(undecided(measured)),
                    finished_cells: Vec::new(),
                })
            })
            .unwrap();
        let Some((_, t)) = next else { break };
        stored.push((t, value(t.cell)));
    }
    (stored.into_iter().map(|(t, _)| t).collect(), s.stop)
}

#[test]
fn a_constant_metric_stops_when_the_sequence_first_closes_at_ten_rounds() {
    // The 95% confidence sequence is unbounded below 10 trials, whatever the values: the
    // minimum of 3 is not enough to stop (the fixed-n t-interval used to stop at 3).
    let p = plan(3, 20, false);
    let (trials, stop) = run(&p, |c| 100.0 + c as f64, |_| 1);
    assert_eq!(stop, Some(Stop::Precise));
    assert_eq!(trials.len(), 10 * p.cells.len());
}

#[test]
fn a_noisy_metric_runs_to_the_maximum_in_whole_rounds() {
    // 30 % coefficient of variation against ±1 %: never precise within 12 rounds.
    let p = plan(3, 12, false);
    let mut rng = fastrand::Rng::with_seed(9);
    let (trials, stop) = run(&p, |_| 100.0 * (0.7 + 0.6 * rng.f64()), |_| 1);
    assert_eq!(stop, Some(Stop::MaxTrials));
    assert_eq!(trials.len(), 12 * p.cells.len());
    for c in 0..p.cells.len() {
        assert_eq!(trials.iter().filter(|t| t.cell == c).count(), 12);
    }
}

#[test]
fn one_noisy_cell_keeps_the_precise_ones_running() {
    // Cell 0 alternates 98 and 102 for 6 rounds, then stays at 100: its sequence closes on
    // 100 once the three values on each side fall outside its order statistics (20 rounds:
    // [x_(4), x_(17)]).
    let p = plan(3, 30, false);
    let mut seen = vec![0u32; p.cells.len()];
    let (trials, stop) = run(
        &p,
        |c| {
            seen[c] += 1;
            if c == 0 && seen[c] <= 6 {
                [98.0, 102.0][seen[c] as usize % 2]
            } else {
                100.0
            }
        },
        |_| 1,
    );
    assert_eq!(stop, Some(Stop::Precise));
    let n = trials.len() / p.cells.len();
    assert!(n > 10 && n <= 20, "{n} rounds");
    assert_eq!(trials.len() % p.cells.len(), 0);
}

#[test]
fn until_decided_stops_at_the_first_look_with_no_claim_open_or_at_the_maximum() {
    let p = plan(3, 15, true);
    let (trials, stop) = run(&p, |_| 1.0, |rounds| if rounds >= 7 { 0 } else { 2 });
    assert_eq!(stop, Some(Stop::Precise));
    assert_eq!(trials.len(), 7 * p.cells.len());
    let (trials, stop) = run(&p, |_| 1.0, |_| 1);
    assert_eq!(stop, Some(Stop::MaxTrials));
    assert_eq!(trials.len(), 15 * p.cells.len());
    // Decided before the minimum still runs the minimum.
    let (trials, _) = run(&p, |_| 1.0, |_| 0);
    assert_eq!(trials.len(), 3 * p.cells.len());
}
