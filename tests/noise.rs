//! Noise you can see: every trial stores its reference speed before and after and the steal
//! during it, and the run's steady speed; noisy trials (off the steady speed) are flagged,
//! warned about, and left out on request; a calibration taken at a slow moment flags none.

mod common;

use common::*;

/// A trial's (speed before, speed after, steal %, noisy, trial id, the run's steady speed,
/// (in-trial speed, its steady speed, slowed)).
type Conditions = (
    Option<f64>,
    Option<f64>,
    Option<f64>,
    bool,
    i64,
    Option<f64>,
    (Option<f64>, Option<f64>, Option<bool>),
);

/// Each trial of run `run_id`: (speed before, speed after, steal %, noisy, trial id, steady
/// speed, (in-trial speed, its steady speed, slowed)).
fn conditions(s: &Scratch, run_id: i64) -> Vec<Conditions> {
    s.conn()
        .prepare(
            "SELECT speed_before, speed_after, trial_steal_pct, noisy, trial_id, speed_steady,
                    speed_in_trial, speed_in_trial_steady, slowed FROM trials
             WHERE run_id = ?1 ORDER BY trial_id",
        )
        .unwrap()
        .query_map([run_id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                (r.get(6)?, r.get(7)?, r.get(8)?),
            ))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// The flags and the warning follow the stored speeds exactly: a trial of calibrated CPU work
/// is judged by its own in-trial speed (slowed when more than 10 % below its steady speed,
/// never noisy), any other by the reference loop (noisy when a reading is more than 10 % below
/// the run's steady speed). Returns every reference-loop speed measured.
fn check_flags(s: &Scratch, rows: &[Conditions]) -> Vec<f64> {
    let c = s.conn();
    let mut speeds = Vec::new();
    let mut so_far = Vec::new();
    for &(before, after, steal, noisy, id, steady, in_trial) in rows {
        let (b, a) = (before.expect("speed before"), after.expect("speed after"));
        let steal = steal.expect("steal over the trial");
        assert!((0.0..=100.0).contains(&steal), "{steal}");
        // The steady speed is the median of the run's speeds so far, this trial's included.
        so_far.extend([b, a]);
        let m = median(so_far.clone());
        let steady = steady.expect("steady speed");
        assert!((steady - m).abs() < 1e-9, "steady {steady}, median {m}");
        let off = b / steady < 0.90 || a / steady < 0.90;
        match in_trial {
            (Some(v), Some(v_steady), Some(slowed)) => {
                assert!(
                    !noisy,
                    "calibrated CPU work is judged by its in-trial speed"
                );
                assert_eq!(
                    slowed,
                    v < v_steady * 0.90,
                    "slowed for {v} against {v_steady}"
                );
            }
            (None, None, None) => assert_eq!(noisy, off, "flag for speeds {b} and {a}"),
            other => panic!("in-trial speed, steady and slowed are stored together: {other:?}"),
        }
        let warned = ints(
            &c,
            &format!(
                "SELECT COUNT(*) FROM warnings WHERE trial_id = {id} AND code = 'trial_noisy'"
            ),
        );
        assert_eq!(warned, vec![i64::from(noisy)]);
        speeds.extend([b, a]);
    }
    speeds
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn a_calibration_taken_at_a_slow_moment_flags_no_trial_of_a_steady_run() {
    let s = Scratch::new();
    // /proc/stat counts in 10 ms ticks: a trial of 10 ms on one CPU can see none (steal then
    // has no denominator and is None, as it should), so each trial is given 80 ms of work.
    let args = [
        "--policy", "other", "--tasks", "2", "--work", "40ms", "--trials", "3", "--cpus", "0",
    ];
    run_ok(&s, &args);
    let first = conditions(&s, 1);
    assert_eq!(first.len(), 3);
    let speeds = check_flags(&s, &first);
    // A speed is the loop's rate over the rate stored as its calibration. Claim that the
    // machine was 8 times faster when calibrated (a calibration taken at a fast moment; a
    // slow one is the same the other way): the same loop, run the same way a moment later,
    // must come out at an eighth of the speed, and the run's steady speed with it, but no
    // trial is noisy, since none is off the run's own steady speed (the old flag, against
    // the calibration, flagged every one).
    let changed = s
        .conn()
        .execute(
            "UPDATE calibrations SET units_per_sec = units_per_sec * 8 WHERE key LIKE 'reference-loop|%'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1, "the reference loop's calibration is stored");
    run_ok(&s, &args);
    let second = conditions(&s, 2);
    assert_eq!(second.len(), 3);
    let slowed = check_flags(&s, &second);
    assert!(
        second
            .iter()
            .filter(|r| r.3 || r.6 .2 == Some(true))
            .count()
            < second.len(),
        "a steady run is never all flagged: {second:?}"
    );
    // Medians of 6 speeds each, side by side a few seconds apart: the machine's drift (tens
    // of % at worst here) stays within a factor 1.6 either way; ignoring the stored
    // calibration would give a ratio near 1, and applying it the wrong way near 64.
    let ratio = median(slowed.clone()) / median(speeds.clone());
    assert!(
        (1.0 / 8.0 / 1.6..1.0 / 8.0 * 1.6).contains(&ratio),
        "speeds {slowed:?} against {speeds:?}: ratio {ratio}, expected 1/8"
    );
    let steady = second[2].5.unwrap() / first[2].5.unwrap();
    assert!(
        (1.0 / 8.0 / 1.6..1.0 / 8.0 * 1.6).contains(&steady),
        "the steady speed against the calibration shows it: {steady}"
    );
}

#[test]
fn exclude_noisy_leaves_flagged_trials_out_and_says_so() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "2", "--work", "5ms", "--trials", "4",
        ],
    );
    let c = s.conn();
    // Only the noise flag here: no trial is left out as disturbed or slowed.
    c.execute(
        "UPDATE trials SET noisy = (trial_id = 2), disturbed = 0, slowed = 0",
        [],
    )
    .unwrap();
    drop(c);
    let stats = |extra: &[&str]| {
        let out = schedlab()
            .args(["stats", "--db", s.db().to_str().unwrap(), "--wide"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let kept = stats(&[]);
    assert!(kept.contains("1 of 4 trials were flagged noisy"), "{kept}");
    assert!(kept.contains("Drift over the run"), "{kept}");
    let left = stats(&["--exclude-noisy"]);
    assert!(
        left.contains("Noisy trials are left out (--exclude-noisy): 1 trial flagged noisy is"),
        "{left}"
    );
    assert!(
        left.contains("3/4") && left.contains("1 noisy, left out"),
        "{left}"
    );
    assert!(
        !left.contains("were flagged noisy (the reference"),
        "{left}"
    );
    // The report says it too.
    let out = s.path().join("report");
    let r = schedlab()
        .args([
            "report",
            "--db",
            s.db().to_str().unwrap(),
            "--format",
            "markdown",
        ])
        .args(["--exclude-noisy", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success());
    let md = std::fs::read_to_string(out.join("1").join("report.md")).unwrap();
    assert!(md.contains("--exclude-noisy"), "{md}");
}
