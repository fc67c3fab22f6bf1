//! The results store seen from the command line: reading commands never change the file, and a
//! file that is not a schedlab database is refused with a clear message.

mod common;

use common::*;
use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus};
use schedlab_store::queue::{Completed, Idle, MAX_ATTEMPTS};
use schedlab_store::{NewRun, Store};

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
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
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
        .args(NO_RETRIES)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a schedlab results database"));
    assert!(std::fs::read(&other).unwrap() == before);
}

#[test]
fn a_database_of_the_previous_schema_is_read_without_being_changed() {
    let s = Scratch::new();
    tiny_run(&s);
    let db = s.db();
    // Make it a schema-2 file: the runs table without the runner and identity columns, trials
    // without their host, warnings without their id, no queue; without the knob columns and
    // table, the tasks' exact CPU time, the trials' conditions and interference, and the
    // workloads' figures (trials and tasks); trials unique by (cell, trial index) alone,
    // calibrations without their spread and runs without their spec hash.
    let c = s.conn();
    c.execute_batch(
        "PRAGMA foreign_keys = OFF;
         ALTER TABLE runs DROP COLUMN runner_pid; ALTER TABLE runs DROP COLUMN runner_boot_id;
         ALTER TABLE runs DROP COLUMN runner_start_ticks; DROP INDEX runs_by_uuid;
         ALTER TABLE runs DROP COLUMN uuid; ALTER TABLE runs DROP COLUMN host; ALTER TABLE runs DROP COLUMN machine_id;
         ALTER TABLE runs DROP COLUMN kernel; ALTER TABLE runs DROP COLUMN cpu_model; ALTER TABLE runs DROP COLUMN git_commit;
         ALTER TABLE runs DROP COLUMN spec_hash;
         CREATE TABLE trials_2 (trial_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(run_id),
             cell_id INTEGER NOT NULL REFERENCES cells(cell_id), trial_index INTEGER NOT NULL, round INTEGER NOT NULL,
             warmup INTEGER NOT NULL, status TEXT NOT NULL, reason TEXT, makespan_ns INTEGER, timeout_ns INTEGER NOT NULL,
             harness_cpu_ns INTEGER, pgid INTEGER, load1 REAL, busy_pct REAL, steal_pct REAL, psi_cpu_some_pct REAL,
             io_scheduler TEXT, trace_lost_events INTEGER, started_at TEXT NOT NULL, UNIQUE (cell_id, trial_index));
         INSERT INTO trials_2 SELECT trial_id, run_id, cell_id, trial_index, round, warmup, status, reason, makespan_ns,
             timeout_ns, harness_cpu_ns, pgid, load1, busy_pct, steal_pct, psi_cpu_some_pct, io_scheduler,
             trace_lost_events, started_at FROM trials;
         DROP TABLE trials; ALTER TABLE trials_2 RENAME TO trials; CREATE INDEX trials_by_run ON trials(run_id);
         ALTER TABLE calibrations DROP COLUMN spread; DROP TABLE queue;
         DROP INDEX samples_by_trial; DROP INDEX slices_by_trial;
         CREATE TABLE w2 (run_id INTEGER NOT NULL REFERENCES runs(run_id), trial_id INTEGER, message TEXT NOT NULL);
         INSERT INTO w2 VALUES (1, NULL, 'second'); INSERT INTO w2 VALUES (1, NULL, 'first');
         DROP TABLE warnings; ALTER TABLE w2 RENAME TO warnings;
         ALTER TABLE cells DROP COLUMN slice_ns; ALTER TABLE cells DROP COLUMN knobs;
         ALTER TABLE cells DROP COLUMN scx; ALTER TABLE tasks DROP COLUMN slice_getattr_ns;
         ALTER TABLE tasks DROP COLUMN slice_proc_ns; DROP TABLE knob_readings;
         ALTER TABLE tasks DROP COLUMN cpu_ns;
         ALTER TABLE tasks DROP COLUMN workload_role; ALTER TABLE tasks DROP COLUMN bytes;
         ALTER TABLE tasks DROP COLUMN misses; ALTER TABLE tasks DROP COLUMN op_count;
         ALTER TABLE tasks DROP COLUMN op_p50_ns; ALTER TABLE tasks DROP COLUMN op_p99_ns;
         ALTER TABLE tasks DROP COLUMN op_max_ns; ALTER TABLE tasks DROP COLUMN slack_p1_ns;
         ALTER TABLE tasks DROP COLUMN slack_p50_ns; ALTER TABLE tasks DROP COLUMN slack_p99_ns;
         ALTER TABLE tasks DROP COLUMN late_max_ns;
         ALTER TABLE cells DROP COLUMN cgroups; ALTER TABLE tasks DROP COLUMN group_name;
         DROP TABLE task_groups;
         PRAGMA user_version = 2; VACUUM;",
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
    // Warnings keep their stored order; the run's host and kernel come from its environment
    // record.
    let o = schedlab()
        .args(["show", "1", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let (second, first) = (
        text.find("- second").unwrap(),
        text.find("- first").unwrap(),
    );
    assert!(second < first, "{text}");
    // A run upgrades it in place and adds its run; the old run gets a UUID, its host and kernel.
    tiny_run(&s);
    let c = s.conn();
    assert_eq!(ints(&c, "PRAGMA user_version")[0], 9);
    // The old run's spec hash is the one computed from its stored spec before schema 9.
    let (spec, hash): (String, String) = c
        .query_row(
            "SELECT spec_toml, spec_hash FROM runs WHERE run_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(hash, schedlab_store::query::spec_hash(&spec));
    // The old trial is its trial's planned attempt; another attempt at it can be stored now,
    // the same attempt twice still cannot.
    assert_eq!(
        ints(&c, "SELECT retry + retried FROM trials WHERE trial_id = 1"),
        vec![0]
    );
    let copy = "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, timeout_ns, started_at, retry)
                SELECT run_id, cell_id, trial_index, round, warmup, status, timeout_ns, started_at, ?1 FROM trials WHERE trial_id = 1";
    c.execute(copy, [1]).expect("a re-run of trial 1");
    assert!(c.execute(copy, [1]).is_err(), "unique with its retry");
    c.execute("DELETE FROM trials WHERE retry = 1", []).unwrap();
    assert_eq!(ints(&c, "SELECT COUNT(*) FROM task_groups")[0], 0);
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM tasks WHERE group_name IS NULL")[0],
        ints(&c, "SELECT COUNT(*) FROM tasks")[0]
    );
    assert_eq!(ints(&c, "SELECT COUNT(*) FROM runs")[0], 2);
    assert_eq!(
        ints(
            &c,
            "SELECT COUNT(DISTINCT uuid) FROM runs WHERE length(uuid) = 36"
        )[0],
        2
    );
    let (host, kernel): (String, String) = c
        .query_row("SELECT host, kernel FROM runs WHERE run_id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let uname = nix::sys::utsname::uname().unwrap();
    assert_eq!(host, uname.nodename().to_string_lossy());
    assert_eq!(kernel, uname.release().to_string_lossy());
    assert_eq!(
        ints(
            &c,
            "SELECT COUNT(*) FROM warnings WHERE run_id = 1 AND warning_id IS NOT NULL"
        )[0],
        2
    );
    // Warnings stored before codes existed have none (nor parameters); they keep their text.
    assert_eq!(
        ints(
            &c,
            "SELECT COUNT(*) FROM warnings WHERE run_id = 1 AND code IS NULL AND params IS NULL"
        )[0],
        2
    );
    // The upgraded file has the work queue too.
    let o = schedlab()
        .args(["queue", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("is empty"));
}

// The work queue's rules, on SQLite (tests/pg runs workers on PostgreSQL).
fn queued(dir: &std::path::Path, labels: &[Option<&str>]) -> (Store, schedlab_spec::plan::Plan) {
    let mut store = Store::open(dir.join("q.db")).unwrap();
    let plan = schedlab_spec::plan::build(&schedlab_spec::Spec::default_quick(), 1).unwrap();
    let run = NewRun {
        name: &plan.name,
        seed: plan.seed,
        spec_toml: &plan.spec_toml,
        argv: "test",
        env_json: None,
        trials_planned: plan.trials.len(),
    };
    for l in labels {
        store.submit(&run, &plan.cells, &plan.trials, *l).unwrap();
    }
    (store, plan)
}

fn ok_outcome() -> TrialOutcome {
    TrialOutcome::not_run(TrialStatus::Ok, "test")
}

#[test]
fn claims_follow_run_order_and_labels_and_never_give_a_trial_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (store, plan) = queued(dir.path(), &[Some("a"), Some("b")]);
    let a = vec!["a".to_string()];
    let first = store.claim("w1", &a, 60_000).unwrap().unwrap();
    assert_eq!((first.run_id, first.position, first.attempt), (1, 0, 1));
    assert_eq!(first.cell_index, plan.trials[0].cell);
    let second = store.claim("w2", &a, 60_000).unwrap().unwrap();
    assert_eq!(second.position, 1, "a claimed trial is not given again");
    // Only run 1 is labelled a; a worker labelled c finds nothing at all.
    let mut n = 2;
    while let Ok(c) = store.claim("w1", &a, 60_000).unwrap() {
        assert_eq!(c.run_id, 1);
        n += 1;
    }
    assert_eq!(n, plan.trials.len());
    assert_eq!(store.claim("w1", &a, 60_000).unwrap(), Err(Idle::Claimed));
    assert_eq!(
        store.claim("w3", &["c".to_string()], 60_000).unwrap(),
        Err(Idle::Empty)
    );
    let b = store
        .claim("w3", &["c".into(), "b".into()], 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(b.run_id, 2);
}

#[test]
fn a_lapsed_claim_goes_to_the_next_worker_and_its_late_result_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (store, plan) = queued(dir.path(), &[None]);
    let any: Vec<String> = vec!["me".into()];
    let slow = store.claim("slow", &any, 0).unwrap().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let fast = store.claim("fast", &any, 60_000).unwrap().unwrap();
    assert_eq!(
        fast.queue_id, slow.queue_id,
        "the lapsed claim is claimed again"
    );
    assert_eq!(fast.attempt, 2);
    assert!(
        !store.extend_lease(&slow, 60_000).unwrap(),
        "the old claim is gone"
    );
    let planned = &plan.trials[slow.position];
    let meta = TrialMeta::default();
    let done = store
        .complete(&fast, planned, &ok_outcome(), &meta)
        .unwrap();
    assert!(matches!(done, Completed::Stored(_)));
    assert_eq!(
        store
            .complete(&slow, planned, &ok_outcome(), &meta)
            .unwrap(),
        Completed::Lost
    );
    assert_eq!(store.trial_count().unwrap(), 1, "stored once");
    // A released claim is pending again, with its attempt given back.
    let next = store.claim("w", &any, 60_000).unwrap().unwrap();
    store.release(&next).unwrap();
    let again = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!((again.queue_id, again.attempt), (next.queue_id, 1));
}

#[test]
fn a_trial_whose_workers_keep_dying_fails_and_the_run_ends_when_all_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (store, plan) = queued(dir.path(), &[None]);
    let any: Vec<String> = vec![];
    let mut last = None;
    for attempt in 1..=MAX_ATTEMPTS {
        let c = store.claim("dies", &any, 0).unwrap().unwrap();
        assert_eq!((c.position, c.attempt), (0, attempt));
        last = Some(c);
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    // The next claim gives the trial up and takes the next one.
    let c = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!(c.position, 1);
    assert_ne!(Some(c.queue_id), last.map(|l| l.queue_id));
    let lines = store.queue_lines().unwrap();
    assert_eq!((lines[0].failed, lines[0].claimed), (1, 1));
    store
        .complete(&c, &plan.trials[1], &ok_outcome(), &TrialMeta::default())
        .unwrap();
    while let Ok(c) = store.claim("w", &any, 60_000).unwrap() {
        store
            .complete(
                &c,
                &plan.trials[c.position],
                &ok_outcome(),
                &TrialMeta::default(),
            )
            .unwrap();
    }
    let info = schedlab_store::query::run_info(&store, 1).unwrap();
    assert_eq!(info.status, schedlab_core::records::RunStatus::Done);
    assert_eq!(store.trial_count().unwrap() as usize, plan.trials.len() - 1);
}

#[test]
fn a_push_from_a_file_whose_column_names_are_sql_is_refused_and_changes_nothing() {
    let s = Scratch::new();
    tiny_run(&s);
    let source = s.path().join("crafted.db");
    let o = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["run", "--quiet", "--db", source.to_str().unwrap()])
        .args(NO_RETRIES)
        .args(["--policy", "other", "--tasks", "1", "--work", "2ms"])
        .args(["--trials", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    common::crafted::craft_argv_injection(&source);
    let argv = |c: &rusqlite::Connection| -> Vec<String> {
        c.prepare("SELECT argv FROM runs ORDER BY run_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = argv(&s.conn());
    let before_trials = ints(&s.conn(), "SELECT COUNT(*) FROM trials");
    let o = schedlab()
        .args(["push", source.to_str().unwrap(), "--to"])
        .arg(s.db())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let after = argv(&s.conn());
    assert!(
        !o.status.success(),
        "the crafted push was accepted; the target's argv now: {after:?}"
    );
    assert!(
        err.contains("has a column") && err.contains("nothing of it is pushed"),
        "{err}"
    );
    assert_eq!(after, before, "the target's runs are unchanged");
    assert_eq!(
        ints(&s.conn(), "SELECT COUNT(*) FROM trials"),
        before_trials
    );
}

#[test]
fn the_trials_export_carries_every_column_of_the_trials_table() {
    let s = Scratch::new();
    tiny_run(&s);
    let o = schedlab()
        .args([
            "export",
            "--table",
            "trials",
            "--db",
            s.db().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let c = s.conn();
    let mut st = c
        .prepare("SELECT name FROM pragma_table_info('trials')")
        .unwrap();
    let columns: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(columns.len() > 50, "{columns:?}");
    // The trial's io_scheduler (read back) is exported beside the cell's, under its own name.
    fn exported(col: &str) -> &str {
        match col {
            "io_scheduler" => "io_scheduler_read",
            other => other,
        }
    }
    let missing: Vec<&String> = columns
        .iter()
        .filter(|c| !header.contains(&exported(c)))
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
    // The row holds the values stored, e.g. the split of the outside time and the attempt.
    let row: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    let at = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    let stored: (i64, i64, i64) = c
        .query_row(
            "SELECT outside_kthread_ns, retry, descendants_cpu_ns FROM trials",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (
            at("outside_kthread_ns"),
            at("retry"),
            at("descendants_cpu_ns")
        ),
        (
            stored.0.to_string().as_str(),
            stored.1.to_string().as_str(),
            stored.2.to_string().as_str()
        )
    );
    assert!(!at("kernel_cpu_ns").is_empty(), "kernel_cpu_ns is stored");
}
