//! Tests of the quality part of the report: targets, noisy and left-out trials, drift.

use super::*;
use schedlab_core::metric::Metric;
use schedlab_store::query::TaskRow;

#[test]
fn the_target_is_read_from_the_spec_as_run() {
    let run = |spec: &str| {
        let mut run = RunInfo::default();
        run.set_spec_toml(spec.into());
        run
    };
    let t = target(&run("[settings]\ntrials = 3\nprecision = \"2%\"\nprecision_metric = \"turnaround\"\nmax_trials = 20\n")).unwrap();
    assert_eq!(t.precision, 0.02);
    assert_eq!(t.adaptive.metric, Metric::Turnaround);
    assert_eq!((t.adaptive.min_trials, t.adaptive.max_trials), (3, 20));
    assert_eq!(target(&run("[settings]\ntrials = 3\n")), None);
    // A spec this version cannot read has no target (the report warns about it).
    assert_eq!(
        target(&run("[settings]\nprecision = \"2%\"\nquantum = 1\n")),
        None
    );
}

#[test]
fn excluding_noisy_trials_drops_their_makespans_and_tasks() {
    let row = |trial_id| TaskRow {
        trial_id,
        ..TaskRow::default()
    };
    let mut c = CellView {
        statuses: vec![(Tally::Status(TrialStatus::Ok), 3)],
        makespans_ns: vec![10, 20, 30],
        trial_rounds: vec![0, 1, 2],
        trial_ids: vec![7, 8, 9],
        task_rows: vec![row(7), row(8), row(8), row(9)],
        ..CellView::default()
    };
    assert_eq!(drop_trials(&mut c, &[8].into(), Reason::Noisy), 1);
    assert_eq!(c.makespans_ns, vec![10, 30]);
    assert_eq!(c.trial_rounds, vec![0, 2]);
    assert_eq!(c.task_rows.len(), 2);
    assert_eq!(c.count(TrialStatus::Ok), 2);
    assert_eq!(
        c.statuses[1..],
        [(Tally::LeftOut(Reason::Noisy), 1)],
        "counted as left out, after the stored statuses"
    );
}

#[test]
fn the_drift_table_pools_consecutive_trials_into_at_most_ten_rows() {
    let trials: Vec<TrialQuality> = (0..25)
        .map(|i| TrialQuality {
            trial_id: i,
            round: i / 5,
            speed_before: Some(1.0 - i as f64 / 100.0),
            speed_after: Some(1.0),
            speed_steady: Some(1.3),
            steal_pct: Some(2.0),
            noisy: i == 24,
            ..TrialQuality::default()
        })
        .collect();
    let q = Quality {
        trials,
        ..Quality::default()
    };
    let segments = drift(&q);
    assert_eq!(segments.len(), 9);
    // By hand: trials 1-3 ran at 1.00, 0.99, 0.98 before; trial 25 alone, round 24 / 5 = 4.
    assert_eq!((segments[0].first, segments[0].last), (1, 3));
    let before = segments[0].speed_before.unwrap();
    for (got, want) in [(before.median, 0.99), (before.min, 0.98), (before.max, 1.0)] {
        assert!((got - want).abs() < 1e-12, "{before:?}");
    }
    assert_eq!(
        (segments[8].first, segments[8].last, segments[8].rounds),
        (25, 25, (4, 4))
    );
    assert_eq!(
        (segments[8].steal_pct, segments[8].noisy),
        (Some((2.0, 2.0)), 1)
    );
    assert!(matches!(
        warnings(&q)[0],
        Warning::Noisy {
            noisy: 1,
            measured: 25
        }
    ));
    assert!(drift(&Quality::default()).is_empty());
}

/// A trial of run 1: (id, cell, trial index, retry, status, disturbed, slowed, retried).
fn attempt(t: (i64, i64, i64, i64, &str, bool, Option<bool>, bool)) -> TrialQuality {
    TrialQuality {
        trial_id: t.0,
        run_id: 1,
        cell_index: t.1,
        trial_index: t.2,
        round: t.2,
        retry: t.3,
        status: t.4.parse().unwrap(),
        disturbed: t.5,
        slowed: t.6,
        retried: t.7,
        ..TrialQuality::default()
    }
}

#[test]
fn each_trial_keeps_its_first_clean_attempt_and_the_flags_keep_the_planned_one() {
    let q: Vec<TrialQuality> = [
        // Cell 0, round 0: disturbed, re-run clean.
        (1, 0, 0, 0, "ok", true, Some(false), true),
        (5, 0, 0, 1, "ok", false, Some(false), false),
        // Cell 1, round 0: clean.
        (2, 1, 0, 0, "ok", false, Some(false), false),
        // Cell 0, round 1: slowed, re-run disturbed, re-run again clean.
        (3, 0, 1, 0, "ok", false, Some(true), true),
        (6, 0, 1, 1, "ok", true, None, true),
        (7, 0, 1, 2, "ok", false, Some(false), false),
        // Cell 1, round 1: disturbed with no retry left; a failed trial.
        (4, 1, 1, 0, "ok", true, Some(false), false),
        (8, 1, 2, 0, "failed", false, None, false),
    ]
    .into_iter()
    .map(attempt)
    .collect();
    let by = |ex: &Excluded| {
        let sorted = |s: &HashSet<i64>| {
            let mut v: Vec<i64> = s.iter().copied().collect();
            v.sort();
            v
        };
        (
            sorted(&ex.disturbed),
            sorted(&ex.slowed),
            sorted(&ex.superseded),
        )
    };
    let clean = excluded_of(&q, false, false);
    assert_eq!(by(&clean), (vec![1, 4, 6], vec![3], vec![]));
    assert_eq!(clean.ids.len(), 4);
    assert_eq!(clean.retried, 3);
    // Every (cell, round) keeps at most one trial: 5, 2, 7; round 1 of cell 1 has none.
    // --include-disturbed: the planned disturbed trials stand, their re-runs are not used.
    let d = excluded_of(&q, true, false);
    assert_eq!(by(&d), (vec![], vec![3], vec![5, 7]));
    // Both flags: exactly the planned trials, as a run without re-runs would have them.
    let both = excluded_of(&q, true, true);
    assert_eq!(by(&both), (vec![], vec![], vec![5, 6, 7]));
    let l = left_out(&clean).unwrap();
    assert_eq!(
        (l.retried, l.left_out, l.disturbed, l.slowed, l.superseded),
        (3, 4, 3, 1, 0)
    );
}
