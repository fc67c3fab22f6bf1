//! Noise you can see: every trial stores its reference speed before and after and the steal
//! during it; noisy trials are flagged, warned about, and left out on request.

mod common;

use common::*;

/// A trial's (speed before, speed after, steal %, noisy, trial id).
type Conditions = (Option<f64>, Option<f64>, Option<f64>, bool, i64);

#[test]
fn every_trial_stores_its_reference_speed_and_steal_and_the_flag_follows_them() {
    let s = Scratch::new();
    // /proc/stat counts in 10 ms ticks: a trial of 10 ms on one CPU can see none (steal then
    // has no denominator and is None, as it should), so each trial is given 80 ms of work.
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "2", "--work", "40ms", "--trials", "3", "--cpus", "0",
        ],
    );
    let rows: Vec<Conditions> = s
        .conn()
        .prepare("SELECT speed_before, speed_after, trial_steal_pct, noisy, trial_id FROM trials")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    let c = s.conn();
    for (before, after, steal, noisy, id) in rows {
        let (b, a) = (before.expect("speed before"), after.expect("speed after"));
        // A chunk that ran at all ran between a third and three times the calibrated speed.
        assert!(b > 0.3 && b < 3.0 && a > 0.3 && a < 3.0, "{b} {a}");
        let steal = steal.expect("steal over the trial");
        assert!((0.0..=100.0).contains(&steal), "{steal}");
        let off = (b - 1.0).abs() > 0.10 || (a - 1.0).abs() > 0.10;
        assert_eq!(noisy, off, "flag for speeds {b} and {a}");
        let warned = ints(
            &c,
            &format!(
                "SELECT COUNT(*) FROM warnings WHERE trial_id = {id} AND code = 'trial_noisy'"
            ),
        );
        assert_eq!(warned, vec![i64::from(noisy)]);
    }
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
    c.execute("UPDATE trials SET noisy = (trial_id = 2)", [])
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
