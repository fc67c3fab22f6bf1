//! Server loss and offline machines: the spool, and `push`.

use super::server::Server;
use super::{ok, pg_int, schedlab};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Trials stored on the server, or None while it cannot be reached.
fn trials_on(s: &Server, db: &str) -> Option<i64> {
    let mut c = postgres::Client::connect(&s.client_url(db), postgres::NoTls).ok()?;
    c.query_one("SELECT COUNT(*) FROM trials", &[])
        .ok()
        .map(|r| r.get(0))
}

#[test]
fn server_stopped_mid_run_loses_no_trial_and_stores_none_twice() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("loss");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool.db");
    let child = schedlab()
        .args(["run", "--db", &url, "--spool-file", spool.to_str().unwrap()])
        .args(["--retries", "0"])
        .args([
            "--policy", "other", "--tasks", "1", "--work", "20ms", "--trials", "16",
        ])
        .args(["--seed", "3", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while trials_on(s, &db).unwrap_or(0) < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run stores nothing"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    s.stop();
    std::thread::sleep(Duration::from_millis(1200));
    s.start_again().unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("spool"),
        "the run says where its trials went: {err}"
    );
    // Whatever is still in the spool goes now.
    ok(&[
        "push",
        "--spool",
        "--spool-file",
        spool.to_str().unwrap(),
        "--to",
        &url,
    ]);
    let mut c = s.client(&db);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 16, "{err}");
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(DISTINCT (cell_id, trial_index)) FROM trials"
        ),
        16
    );
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM tasks"),
        16,
        "one task per trial"
    );
    let status: String = c.query_one("SELECT status FROM runs", &[]).unwrap().get(0);
    assert_eq!(status, "done");
    let spooled = rusqlite::Connection::open(&spool)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM trials", [], |r| r.get::<_, i64>(0))
        .unwrap();
    assert_eq!(spooled, 0, "the spool keeps nothing the server has");
}

#[test]
fn pushing_twice_stores_each_run_once_with_the_same_rows() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("push");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("offline.db");
    let file = file.to_str().unwrap();
    for seed in ["1", "2"] {
        ok(&[
            "run",
            "--retries",
            "0",
            "--db",
            file,
            "--policy",
            "other,batch",
            "--tasks",
            "1,20",
            "--work",
            "15ms",
        ]
        .iter()
        .chain(&[
            "--trials",
            "2",
            "--seed",
            seed,
            "--quiet",
            "--sample-interval",
            "10ms",
        ])
        .copied()
        .collect::<Vec<_>>());
    }
    let first = ok(&["push", file, "--to", &url]);
    assert!(first.contains("2 runs added"), "{first}");
    let mut c = s.client(&db);
    let counts = |c: &mut postgres::Client| {
        [
            "runs",
            "cells",
            "trials",
            "tasks",
            "samples",
            "warnings",
            "histograms",
        ]
        .map(|t| pg_int(c, &format!("SELECT COUNT(*) FROM {t}")))
    };
    let after_first = counts(&mut c);
    assert_eq!(after_first[0], 2);
    assert_eq!(after_first[2], 16);
    assert!(after_first[4] > 0, "the runs have samples to compare");
    assert!(after_first[3] > 100, "trials of 20 tasks (copied by COPY)");
    let second = ok(&["push", file, "--to", &url]);
    assert!(
        second.contains("0 runs added, 2 runs already there (0 trials added, 16 already there)"),
        "{second}"
    );
    assert_eq!(counts(&mut c), after_first, "the second push adds nothing");
    // The same run reads the same on both engines: every export table, byte for byte, and the
    // statistics.
    for run in ["1", "2"] {
        for table in ["tasks", "trials", "samples"] {
            for format in ["csv", "json"] {
                let args = |db: &str| {
                    ok(&[
                        "export", "--run", run, "--table", table, "--format", format, "--db", db,
                    ])
                };
                assert_eq!(args(&url), args(file), "run {run}, {table} as {format}");
            }
        }
        let stats = |db: &str| ok(&["stats", "--run", run, "--db", db]);
        assert_eq!(stats(&url), stats(file), "run {run}: stats");
    }
    let cmp = |db: &str| ok(&["compare", "1", "2", "--db", db]);
    assert_eq!(cmp(&url), cmp(file));
    let report = |db: &str, out: &std::path::Path| {
        ok(&[
            "report",
            "--run",
            "2",
            "--format",
            "csv",
            "--out",
            out.to_str().unwrap(),
            "--db",
            db,
        ]);
        let mut files: Vec<(String, String)> = std::fs::read_dir(out.join("2/csv"))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into(),
                    std::fs::read_to_string(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    assert_eq!(
        report(&url, &dir.path().join("pg")),
        report(file, &dir.path().join("lite")),
        "the report's CSV tables"
    );
}
