//! The whole command line against PostgreSQL, side by side with SQLite.

use super::server::Server;
use super::{ok, pg_int};

/// A tiny experiment: one task of 2 ms, two policies, two trials each.
const TINY: &[&str] = &[
    "--policy",
    "other,batch",
    "--tasks",
    "1",
    "--work",
    "2ms",
    "--trials",
    "2",
    "--seed",
    "7",
    "--quiet",
];

/// Row counts of every table, to tell whether anything was written.
fn counts(c: &mut postgres::Client) -> Vec<i64> {
    [
        "runs",
        "cells",
        "trials",
        "tasks",
        "samples",
        "warnings",
        "calibrations",
        "queue",
    ]
    .iter()
    .map(|t| pg_int(c, &format!("SELECT COUNT(*) FROM {t}")))
    .collect()
}

#[test]
fn cli_runs_and_reads_on_postgres() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("cli");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("local.db");
    let file = file.to_str().unwrap();
    let run = |db: &str| {
        let mut a = vec!["run", "--db", db, "--retries", "0"];
        a.extend_from_slice(TINY);
        ok(&a)
    };
    // By host name: the store resolves it itself, so that connecting starts no thread and the
    // run's launcher can still fork.
    let printed = run(&url.replace("127.0.0.1", "localhost"));
    assert!(printed.contains("run 1"), "{printed}");
    run(file);
    let mut c = s.client(&db);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 4);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM tasks"), 4);
    let host: String = c
        .query_one("SELECT host FROM runs WHERE run_id = 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        host,
        nix::sys::utsname::uname()
            .unwrap()
            .nodename()
            .to_string_lossy()
    );
    let before = counts(&mut c);
    // Every reading command works and writes nothing.
    let report_dir = dir.path().join("report");
    let report_dir = report_dir.to_str().unwrap();
    for (i, db) in [url.as_str(), file].iter().enumerate() {
        let runs = ok(&["runs", "--db", db]);
        assert!(runs.contains("done"), "{runs}");
        let show = ok(&["show", "--db", db]);
        assert!(show.contains("# spec as run"), "{show}");
        let stats = ok(&["stats", "--db", db]);
        assert!(stats.contains("Exploratory comparisons"), "{stats}");
        let out = format!("{report_dir}{i}");
        ok(&[
            "report",
            "--format",
            "csv,markdown",
            "--out",
            &out,
            "--db",
            db,
        ]);
        assert!(std::path::Path::new(&out).join("1/report.md").exists());
        let cmp = ok(&["compare", "1", "1", "--db", db]);
        assert!(cmp.contains("other"), "{cmp}");
    }
    for table in ["tasks", "trials", "samples"] {
        let pg = ok(&["export", "--table", table, "--db", &url]);
        let lite = ok(&["export", "--table", table, "--db", file]);
        assert_eq!(
            pg.lines().next(),
            lite.lines().next(),
            "the {table} export has the same columns on both engines"
        );
        if table != "samples" {
            // (How many samples a trial gets depends on its length.)
            assert_eq!(pg.lines().count(), lite.lines().count(), "{table}");
        }
    }
    let json = ok(&["export", "--format", "json", "--db", &url]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(counts(&mut c), before, "reading commands wrote nothing");
    // The reading commands' session cannot write even if asked to.
    let read_only = schedlab_store::Store::open_read(
        s.client_url(&db)
            .parse::<schedlab_store::Location>()
            .unwrap(),
    )
    .unwrap();
    let err = read_only
        .add_warning(
            1,
            None,
            &schedlab_core::Warning::IoDirTmpfs {
                dir: "must not be stored".into(),
            },
        )
        .unwrap_err();
    // Refused by the server as a write in a read-only transaction (SQLSTATE 25006).
    let refused = match err.root() {
        schedlab_store::StoreError::Postgres(e) => e.code().map(|c| c.code().to_string()),
        _ => None,
    };
    assert_eq!(refused.as_deref(), Some("25006"), "{err:?}");
    assert_eq!(counts(&mut c), before);
    // SCHEDLAB_DB stands in for --db.
    let o = super::schedlab()
        .args(["runs"])
        .env("SCHEDLAB_DB", &url)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"));
}
