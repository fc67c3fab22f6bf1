//! Re-runs of contaminated trials on PostgreSQL: a worker queues the next attempt as it stores
//! the contaminated one, and a store of schema 7 is upgraded to trials and queue rows unique
//! with their attempt.

use super::server::Server;
use super::{ok, pg_int};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use std::process::{Child, Command, Stdio};

/// A busy shell loop pinned to CPU 0 at SCHED_OTHER, killed on drop.
struct Hog(Child);

impl Hog {
    fn start() -> Hog {
        let child = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh runs");
        let mut set = CpuSet::new();
        set.set(0).unwrap();
        sched_setaffinity(Pid::from_raw(child.id() as i32), &set).expect("pinned to CPU 0");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_workers_contaminated_trials_are_queued_again_at_the_end_of_their_rounds() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("reruns");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("reruns.toml");
    std::fs::write(
        &spec,
        "name = \"reruns\"\n[axes]\npolicies = [\"other\", \"batch\"]\ntasks = [1]\ncpus = [\"0\"]\n\
         [settings]\ntrials = 2\nwork = \"30ms\"\nsample_interval = \"off\"\nretries = 1\n",
    )
    .unwrap();
    ok(&["submit", spec.to_str().unwrap(), "--db", &url]);
    // A hog shares CPU 0 with every trial: each is disturbed and run again once.
    let hog = Hog::start();
    ok(&[
        "worker",
        "--db",
        &url,
        "--quiet",
        "--spool-file",
        dir.path().join("spool.db").to_str().unwrap(),
    ]);
    drop(hog);
    let mut c = s.client(&db);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 8);
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM trials WHERE disturbed = 1"),
        8,
        "the hog disturbed every attempt"
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM trials WHERE (retry = 0) = (retried = 1)"
        ),
        8,
        "each planned trial was run again once, no re-run again"
    );
    // A re-run has its trial's round and index, and came after every planned trial of its
    // round (trial ids are in order of storing).
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM trials r JOIN trials p ON p.cell_id = r.cell_id AND p.trial_index = r.trial_index
             WHERE r.retry = 1 AND p.retry = 0 AND r.round = p.round
               AND r.trial_id > (SELECT MAX(o.trial_id) FROM trials o WHERE o.round = r.round AND o.retry = 0)"
        ),
        4
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE state = 'done' AND retry = 1"
        ),
        4
    );
    let status: String = c.query_one("SELECT status FROM runs", &[]).unwrap().get(0);
    assert_eq!(status, "done");
}

#[test]
fn a_store_of_schema_7_is_upgraded_to_trials_unique_with_their_attempt() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("schema7");
    let url = s.url(&db);
    let tiny = [
        "--policy",
        "other",
        "--tasks",
        "1",
        "--work",
        "2ms",
        "--trials",
        "1",
        "--quiet",
        "--retries",
        "0",
    ];
    ok(&[&["run", "--db", &url][..], &tiny].concat());
    // Back to schema 7: without the columns of 8 (and 9's spec hash), trials and queue rows unique without their
    // attempt, under the names PostgreSQL gave those constraints.
    let mut c = s.client(&db);
    c.batch_execute(
        "ALTER TABLE trials DROP CONSTRAINT trials_cell_id_trial_index_retry_key;
         ALTER TABLE queue DROP CONSTRAINT queue_run_id_cell_index_trial_index_retry_key;
         ALTER TABLE trials DROP COLUMN outside_process_ns, DROP COLUMN outside_process_share,
             DROP COLUMN outside_kthread_ns, DROP COLUMN outside_irq_ns, DROP COLUMN kernel_cpu_ns,
             DROP COLUMN speed_steady, DROP COLUMN speed_in_trial, DROP COLUMN speed_in_trial_steady,
             DROP COLUMN slowed, DROP COLUMN retry, DROP COLUMN retried, DROP COLUMN descendants_cpu_ns;
         ALTER TABLE trials ADD UNIQUE (cell_id, trial_index);
         ALTER TABLE queue DROP COLUMN retry;
         ALTER TABLE queue ADD UNIQUE (run_id, cell_index, trial_index);
         ALTER TABLE calibrations DROP COLUMN spread;
         ALTER TABLE runs DROP COLUMN spec_hash;
         UPDATE schedlab_meta SET value = '7' WHERE key = 'schema_version';",
    )
    .unwrap();
    // A reading command refuses it and names what upgrades it; a run upgrades it.
    let o = super::out(&["runs", "--db", &url]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("schema 7"));
    ok(&[&["run", "--db", &url][..], &tiny].concat());
    let version: String = c
        .query_one(
            "SELECT value FROM schedlab_meta WHERE key = 'schema_version'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, "9");
    // Schema 9's backfill: the run stored before has the hash computed from its stored spec
    // (as `--spec-hash` computed it before 9), the run stored after gets it with its row.
    let runs = c
        .query("SELECT spec_toml, spec_hash FROM runs ORDER BY run_id", &[])
        .unwrap();
    assert_eq!(runs.len(), 2);
    for row in runs {
        let (spec, hash): (String, String) = (row.get(0), row.get(1));
        assert_eq!(hash, schedlab_store::query::spec_hash(&spec));
    }
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM trials WHERE retry = 0"),
        2
    );
    // Another attempt at the first trial can be stored now; the same attempt twice cannot.
    let copy = "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, timeout_ns, started_at, retry)
                SELECT run_id, cell_id, trial_index, round, warmup, status, timeout_ns, started_at, 1
                FROM trials WHERE run_id = 1";
    c.batch_execute(copy).expect("a re-run of run 1's trial");
    assert!(c.batch_execute(copy).is_err(), "unique with its attempt");
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM pg_constraint WHERE conname IN
             ('trials_cell_id_trial_index_retry_key', 'queue_run_id_cell_index_trial_index_retry_key')"
        ),
        2
    );
}
