//! Adaptive trial counts with the real binary: whole rounds stored until the precision (an
//! anytime-valid confidence sequence, finite from 10 trials), every claim decided
//! (`--until-decided`) or a limit, the report's precision table and methods, and `--resume` in
//! the middle of the added rounds.

mod common;

use common::*;
use std::time::{Duration, Instant};

/// (cell_index, round) of every stored trial.
fn rounds(s: &Scratch) -> Vec<(i64, i64)> {
    s.conn()
        .prepare(
            "SELECT c.cell_index, t.round FROM trials t JOIN cells c USING (cell_id)
             ORDER BY c.cell_index, t.round",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Every cell of `cells` has exactly the rounds 0..n, once each.
fn assert_whole_rounds(got: &[(i64, i64)], cells: i64, n: i64) {
    let want: Vec<(i64, i64)> = (0..cells)
        .flat_map(|c| (0..n).map(move |r| (c, r)))
        .collect();
    assert_eq!(got, want.as_slice(), "{cells} cells x {n} whole rounds");
}

#[test]
fn an_unreachable_precision_runs_whole_rounds_up_to_the_maximum_and_says_so() {
    let s = Scratch::new();
    let out = run_ok(
        &s,
        &[
            "--policy",
            "other",
            "--kind",
            "process,thread",
            "--tasks",
            "2",
            "--work",
            "5ms",
            "--precision",
            "0.001%",
            "--min-trials",
            "2",
            "--max-trials",
            "4",
        ],
    );
    assert_whole_rounds(&rounds(&s), 2, 4);
    assert!(out.contains("--max-trials 4"), "{out}");
    let warned = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM warnings WHERE code = 'adaptive_max_trials'
         AND json_extract(params, '$.max_trials') = 4",
    );
    assert_eq!(warned, vec![1]);
    // The methods are behind --all.
    let stats = schedlab()
        .args(["stats", "--all", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(
        text.contains("Precision of the adaptive run") && text.contains("│ no  │"),
        "{text}"
    );
    assert!(
        text.contains("Adaptive trial count"),
        "methods say how: {text}"
    );
}

#[test]
fn a_loose_precision_stops_when_the_confidence_sequence_first_closes() {
    // The tasks' CPU time varies by far less than ±99 % even on a busy machine, but the 95%
    // confidence sequence of a median is unbounded below 10 trials: the minimum of 3 rounds
    // cannot stop it, the tenth round does ([min, max] of 10 trials).
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other",
            "--tasks",
            "2",
            "--work",
            "5ms",
            "--precision",
            "99%",
            "--precision-metric",
            "cpu",
            "--min-trials",
            "3",
            "--max-trials",
            "12",
        ],
    );
    // The rounds that gave its tenth clean trial (contaminated ones, disturbed by other
    // programs or slowed, are left out as in the report): 10 on a quiet machine.
    let got = rounds(&s);
    let n = got.len() as i64;
    assert_whole_rounds(&got, 1, n);
    let clean = ints(
        &s.conn(),
        "SELECT round FROM trials WHERE COALESCE(disturbed, 0) = 0 AND COALESCE(slowed, 0) = 0 ORDER BY round",
    );
    let tenth = clean.get(9).map(|r| r + 1);
    assert_eq!(
        Some(n),
        tenth.or((n == 12).then_some(12)),
        "stopped at the round of the tenth clean trial (rounds of the clean ones: {clean:?})"
    );
    let warned = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM warnings WHERE code LIKE 'adaptive_%'",
    );
    assert_eq!(warned, vec![i64::from(tenth.is_none())]);
}

#[test]
fn plan_shows_the_bounds_of_an_adaptive_run() {
    let s = Scratch::new();
    let out = schedlab()
        .args([
            "plan",
            "--db",
            s.db().to_str().unwrap(),
            "--policy",
            "other,fifo",
            "--tasks",
            "2",
            "--work",
            "5ms",
            "--precision",
            "2%",
            "--max-trials",
            "12",
            "--max-time",
            "10m",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("2 cells x 3..12 trials"), "{text}");
    assert!(
        text.contains("within ±2% of its median") && text.contains("10 min 00 s"),
        "{text}"
    );
    let bad = schedlab()
        .args([
            "plan",
            "--db",
            s.db().to_str().unwrap(),
            "--max-trials",
            "5",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("settings.precision"));
}

#[test]
fn an_adaptive_run_killed_in_an_added_round_resumes_to_whole_rounds() {
    let s = Scratch::new();
    let spec = s.path().join("adaptive.toml");
    std::fs::write(
        &spec,
        r#"
name = "adaptive"
[axes]
policies = ["other", "batch"]
tasks = [2]
[settings]
work = "40ms"
seed = 3
precision = "0.001%"
min_trials = 2
max_trials = 5
sample_interval = "off"
retries = 0
"#,
    )
    .unwrap();
    let db = s.db();
    let mut child = schedlab()
        .args([
            "run",
            "--retries",
            "0",
            spec.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it is inside the added rounds (the plan holds 2 x 2 trials).
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let stored = rusqlite::Connection::open(&db)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM trials", [], |r| r.get::<_, i64>(0))
                    .ok()
            })
            .unwrap_or(0);
        if stored >= 5 {
            break;
        }
        assert!(Instant::now() < deadline, "no trials stored in time");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = rounds(&s).len();
    assert!((5..10).contains(&before), "{before} trials before the kill");
    let out = schedlab()
        .args(["run", "--resume", "--db", db.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_whole_rounds(&rounds(&s), 2, 5);
    let status: String = s
        .conn()
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "done");
}

#[test]
fn until_decided_stops_once_every_claim_is_decided() {
    if !root("SCHED_FIFO and SCHED_RR") {
        return;
    }
    let _turn = rt_turn();
    // 4 tasks of 200 ms on CPU 0: FIFO runs them one after another (turnarounds 200, 400,
    // 600, 800 ms: median 500), RR rotates them every 100 ms quantum (500..800: median 650).
    // Both are RT classes, so outside work hardly disturbs them. The work is twice the
    // quantum so that RR still rotates when this VM runs faster than it was calibrated (with
    // 120 ms tasks, a moment at 125 % speed made them fit one quantum, RR ran them like FIFO,
    // and the claim could not be decided). With the signed-rank test on rounds (at best
    // 2 / 2^n after n rounds) and looks only where that can pass, weighted k^-1/2 over the
    // looks up to 24 rounds, the first look is after 9 rounds (alpha 0.0075 there: 2/2^9 =
    // 0.0039 passes, 2/2^8 would not have), far below the maximum of 24 (the rule before
    // could not decide before round 13).
    let s = Scratch::new();
    let out = run_ok(
        &s,
        &[
            "--policy",
            "fifo,rr",
            "--tasks",
            "4",
            "--cpus",
            "0",
            "--work",
            "200ms",
            "--claim",
            "turnaround: fifo < rr",
            "--until-decided",
            "--max-trials",
            "24",
        ],
    );
    let got = rounds(&s);
    let n = got.len() as i64 / 2;
    assert_whole_rounds(&got, 2, n);
    assert!((9..24).contains(&n), "{n} rounds: {out}");
    let warned = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM warnings WHERE code IN ('adaptive_max_trials', 'adaptive_max_time')",
    );
    assert_eq!(warned, vec![0], "decided before the maximum");
    let stats = schedlab()
        .args(["stats", "--all", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(
        text.contains("turnaround: fifo < rr: supported (every cell)"),
        "{text}"
    );
    assert!(
        text.contains("--until-decided") && text.contains("k^-1/2"),
        "the methods name the rule: {text}"
    );
}

#[test]
fn until_decided_stops_once_a_claim_is_found_negligible() {
    if !root("SCHED_FIFO and SCHED_RR") {
        return;
    }
    let _turn = rt_turn();
    // FIFO and RR run 4 tasks of 30 ms on CPU 0 back to back alike (RR's 100 ms quantum never
    // expires), so their makespans differ only by the machine's drift, a few %; RT tasks are
    // not disturbed by other programs' fair-class work, so rounds stay clean on a busy
    // machine. A claim that FIFO is lower by at least 20 % is answered negligible once its
    // interval lies within [0.8, 1.25], which a handful of rounds shows, and the run stops
    // there instead of running to its maximum of 30 rounds.
    let s = Scratch::new();
    let spec = s.path().join("negligible.toml");
    std::fs::write(
        &spec,
        r#"
name = "negligible"
[axes]
policies = ["fifo", "rr"]
tasks = [4]
cpus = ["0"]
[settings]
work = "30ms"
trials = 4
until_decided = true
max_trials = 30
sample_interval = "off"
[[claims]]
name = "fifo-faster"
metric = "makespan"
lower = "fifo"
than = "rr"
smallest_effect = "20%"
"#,
    )
    .unwrap();
    let out = run_ok(&s, &[spec.to_str().unwrap()]);
    let got = rounds(&s);
    let n = got.len() as i64 / 2;
    assert_whole_rounds(&got, 2, n);
    assert!(n < 30, "{n} rounds: {out}");
    let stats = schedlab()
        .args(["stats", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    // The verdict the run stopped on, on the trials it used; the summary and the table agree.
    assert!(text.contains("- fifo-faster: negligible"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("│ fifo-faster ") && l.contains("│ negligible ")),
        "{text}"
    );
}
