//! The results store seen from the command line: reading commands never change the file, and a
//! file that is not a schedlab database is refused with a clear message.

mod common;

use common::*;

/// Runs the tiny quick experiment into the scratch database.
fn tiny_run(s: &Scratch) {
    run_ok(
        s,
        &[
            "--policy", "other", "--tasks", "1", "--work", "2ms", "--trials", "1",
        ],
    );
}

/// Every reading command, with its arguments, on `db`.
fn reading_commands(db: &str, out: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["runs", "--db", db]),
        v(&["show", "--db", db]),
        v(&["export", "--db", db]),
        v(&["export", "--table", "trials", "--db", db]),
        v(&["stats", "--db", db]),
        v(&["report", "--format", "csv", "--out", out, "--db", db]),
        v(&["compare", "1", "1", "--db", db]),
    ]
}

#[test]
fn reading_commands_leave_the_database_byte_for_byte_unchanged() {
    let s = Scratch::new();
    tiny_run(&s);
    let db = s.db();
    let before = std::fs::read(&db).unwrap();
    let out = s.path().join("report");
    for args in reading_commands(db.to_str().unwrap(), out.to_str().unwrap()) {
        let o = schedlab().args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            std::fs::read(&db).unwrap() == before,
            "{args:?} changed the file"
        );
    }
    let journal = db.with_extension("db-journal");
    assert!(!journal.exists(), "no journal left behind");
}

#[test]
fn a_file_that_is_not_a_schedlab_database_is_refused_and_left_as_it_was() {
    let s = Scratch::new();
    // An empty file, another program's SQLite database with its own `runs` table, and text.
    let empty = s.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let other = s.path().join("other.db");
    let c = rusqlite::Connection::open(&other).unwrap();
    c.execute_batch(
        "CREATE TABLE runs (id INTEGER, athlete TEXT); INSERT INTO runs VALUES (1, 'x');",
    )
    .unwrap();
    drop(c);
    let text = s.path().join("notes.db");
    std::fs::write(&text, "these are my notes, not a database\n".repeat(100)).unwrap();
    let out = s.path().join("report");
    for file in [&empty, &other, &text] {
        let before = std::fs::read(file).unwrap();
        for args in reading_commands(file.to_str().unwrap(), out.to_str().unwrap()) {
            let o = schedlab().args(&args).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("not a schedlab results database")
                    || err.contains("not a SQLite database"),
                "{args:?}: {err}"
            );
            assert!(err.contains("--db"), "the message says what to do: {err}");
            assert!(
                std::fs::read(file).unwrap() == before,
                "{args:?} changed {file:?}"
            );
        }
    }
    // A run refuses another program's database too, without touching it.
    let before = std::fs::read(&other).unwrap();
    let o = schedlab()
        .args(["run", "--db", other.to_str().unwrap(), "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a schedlab results database"));
    assert!(std::fs::read(&other).unwrap() == before);
}

#[test]
fn a_database_of_the_previous_schema_is_read_without_being_changed() {
    let s = Scratch::new();
    tiny_run(&s);
    let db = s.db();
    // Make it a schema-2 file: without the runner columns, the knob columns and table, the
    // tasks' exact CPU time and the trials' conditions.
    let c = s.conn();
    c.execute_batch(
        "ALTER TABLE runs DROP COLUMN runner_pid; ALTER TABLE runs DROP COLUMN runner_boot_id;
         ALTER TABLE runs DROP COLUMN runner_start_ticks;
         ALTER TABLE cells DROP COLUMN slice_ns; ALTER TABLE cells DROP COLUMN knobs;
         ALTER TABLE cells DROP COLUMN scx; ALTER TABLE tasks DROP COLUMN slice_getattr_ns;
         ALTER TABLE tasks DROP COLUMN slice_proc_ns; DROP TABLE knob_readings;
         ALTER TABLE tasks DROP COLUMN cpu_ns;
         ALTER TABLE trials DROP COLUMN speed_before; ALTER TABLE trials DROP COLUMN speed_after;
         ALTER TABLE trials DROP COLUMN trial_steal_pct; ALTER TABLE trials DROP COLUMN noisy;
         ALTER TABLE trials DROP COLUMN rt_throttled; PRAGMA user_version = 2; VACUUM;",
    )
    .unwrap();
    drop(c);
    let before = std::fs::read(&db).unwrap();
    let o = schedlab()
        .args(["runs", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"));
    assert!(std::fs::read(&db).unwrap() == before);
    // A run upgrades it in place and adds its run.
    tiny_run(&s);
    let c = s.conn();
    assert_eq!(ints(&c, "PRAGMA user_version")[0], 3);
    assert_eq!(ints(&c, "SELECT COUNT(*) FROM runs")[0], 2);
}
