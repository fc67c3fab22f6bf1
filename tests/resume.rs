//! A run killed with SIGKILL at any moment loses at most its trial in flight and can be resumed.

mod common;

use common::*;
use std::time::{Duration, Instant};

#[test]
fn a_run_killed_with_sigkill_and_resumed_ends_with_exactly_the_planned_trials() {
    let s = Scratch::new();
    let io_dir = s.path().join("io");
    std::fs::create_dir(&io_dir).unwrap();
    let spec = s.path().join("tiny.toml");
    std::fs::write(
        &spec,
        format!(
            r#"
name = "tiny"
[axes]
policies = ["other", "batch"]
tasks = [2]
workloads = [{{ kind = "mixed", io_every = 5000 }}]
[settings]
trials = 6
work = "60ms"
seed = 7
retries = 0
io_dir = "{}"
"#,
            io_dir.display()
        ),
    )
    .unwrap();
    let db = s.db();
    let tag = Tag::new();
    let mut child = tag
        .mark(&mut schedlab())
        .args([
            "run",
            spec.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let stored = rusqlite::Connection::open(&db)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM trials", [], |r| r.get::<_, i64>(0))
                    .ok()
            })
            .unwrap_or(0);
        if stored >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "no trials stored in time");
    }
    // Kill it with a trial in flight: the main process, the launcher, the trial's host and
    // its two tasks.
    let running = tag.wait_for(5, Duration::from_secs(30));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Nothing of the run is left, the trial in flight (never stored) included: it dies with
    // the launcher (PR_SET_PDEATHSIG through the host).
    let left = tag.wait_gone(Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "left after the kill: {left:?} (running before it: {running:?})"
    );
    let c = s.conn();
    let integrity: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let before = ints(&c, "SELECT COUNT(*) FROM trials")[0];
    assert!(
        (3..12).contains(&before),
        "{before} trials stored before the kill"
    );
    let status: String = c
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        status, "running",
        "a killed run is left unfinished, ready to resume"
    );
    let units_before = ints(&c, "SELECT units FROM cells ORDER BY cell_index");
    drop(c);
    // The stored status says running; the runner (pid, boot id, start time) is gone, so the
    // listing says interrupted.
    let runs = schedlab()
        .args(["runs", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&runs.stdout);
    assert!(
        listing.contains("interrupted") && !listing.contains("running"),
        "a run whose runner is dead shows as interrupted: {listing}"
    );

    let out = schedlab()
        .args(["run", "--resume", "--db", db.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = s.conn();
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM runs")[0],
        1,
        "resume continues the same run"
    );
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM trials")[0],
        12,
        "exactly the planned trials"
    );
    let distinct = ints(
        &c,
        "SELECT COUNT(*) FROM (SELECT DISTINCT cell_id, trial_index FROM trials)",
    )[0];
    assert_eq!(distinct, 12, "no trial stored twice");
    let status: String = c
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "done");
    // The cells keep the units they were calibrated with before the kill, and every task of
    // every trial, before the kill or after the resume, ran exactly its cell's units.
    let units = ints(&c, "SELECT units FROM cells ORDER BY cell_index");
    assert_eq!(units.len(), 2);
    assert!(units.iter().all(|&u| u > 0), "{units:?}");
    assert_eq!(
        units, units_before,
        "resume keeps the units the cells were given"
    );
    let off = ints(
        &c,
        "SELECT COUNT(*) FROM tasks JOIN trials USING (trial_id) JOIN cells USING (cell_id)
         WHERE tasks.work_units IS NOT cells.units",
    )[0];
    let tasks = ints(&c, "SELECT COUNT(*) FROM tasks")[0];
    assert_eq!(tasks, 12 * 2, "two tasks per trial");
    assert_eq!(off, 0, "tasks whose work differs from their cell's units");
    let left: Vec<_> = std::fs::read_dir(&io_dir).unwrap().collect();
    assert!(
        left.is_empty(),
        "the killed trial's files were removed on resume: {left:?}"
    );
    let again = schedlab()
        .args(["run", "--resume", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing to resume"));
}

#[test]
fn runs_and_show_describe_the_stored_run() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "2", "--work", "5ms", "--trials", "2", "--seed", "99",
        ],
    );
    let db = s.db();
    let out = schedlab()
        .args(["runs", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2/2") && text.contains("done"), "{text}");
    let out = schedlab()
        .args(["show", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("seed = 99"),
        "the spec as run carries the seed: {text}"
    );
    assert!(
        text.contains("kernel_release"),
        "the environment record is shown: {text}"
    );
    assert!(text.contains("rt_runtime_us"), "{text}");
}

#[test]
fn resuming_a_run_whose_stored_spec_does_not_read_is_refused_as_bad_input() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "1", "--work", "2ms", "--trials", "1",
        ],
    );
    // As if written by another version: a key this one does not know, and left unfinished.
    s.conn()
        .execute_batch(
            "UPDATE runs SET status = 'interrupted', spec_toml = 'quantum = 4' || char(10) || spec_toml",
        )
        .unwrap();
    let o = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["run", "--resume", "1", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the spec stored with the run does not read") && err.contains("quantum"),
        "{err}"
    );
    assert_eq!(ints(&s.conn(), "SELECT COUNT(*) FROM trials")[0], 1);
}
