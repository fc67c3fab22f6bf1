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
io_dir = "{}"
"#,
            io_dir.display()
        ),
    )
    .unwrap();
    let db = s.db();
    let mut child = schedlab()
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
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
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
    // The trial in flight dies with the launcher (PR_SET_PDEATHSIG through the host).
    std::thread::sleep(Duration::from_millis(300));
    for pgid in ints(&c, "SELECT pgid FROM trials") {
        assert!(!group_alive(pgid as i32), "group {pgid} survived the kill");
    }
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
    let units = ints(&c, "SELECT COUNT(DISTINCT units) FROM cells")[0];
    assert!(units >= 1);
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
