//! Contaminated trials are run again at the end of their round, keeping the round's number and
//! the trial's index (`retry` tells the attempts apart): a hog for part of a run, the work
//! queue, push, and a resumed run all keep every attempt once and every round whole.

mod common;

use common::*;
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus};
use schedlab_store::queue::Completed;
use schedlab_store::{NewRun, Store};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Every stored attempt: (cell index, trial index, round, retry, contaminated: disturbed or
/// slowed, retried), in the order stored.
type Attempt = (i64, i64, i64, i64, i64, i64);

fn attempts(c: &rusqlite::Connection) -> Vec<Attempt> {
    c.prepare(
        "SELECT c.cell_index, t.trial_index, t.round, t.retry,
                (COALESCE(t.disturbed, 0) = 1 OR COALESCE(t.slowed, 0) = 1), t.retried
         FROM trials t JOIN cells c ON c.cell_id = t.cell_id ORDER BY t.trial_id",
    )
    .unwrap()
    .query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

#[test]
fn a_hog_for_part_of_a_run_has_its_trials_run_again_and_every_round_stays_whole() {
    let s = Scratch::new();
    let db = s.db();
    // Two cells pinned to CPU 0, four rounds; the hog shares CPU 0 from the start until the
    // first trial it disturbed is stored.
    let hog = Hog::start();
    let mut run = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["run", "--db", db.to_str().unwrap(), "--quiet"])
        .args(["--policy", "other,batch", "--tasks", "1", "--cpus", "0"])
        .args([
            "--work",
            "40ms",
            "--trials",
            "4",
            "--retries",
            "2",
            "--seed",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let first_hit = loop {
        std::thread::sleep(Duration::from_millis(20));
        let hit = rusqlite::Connection::open(&db).ok().and_then(|c| {
            c.query_row(
                "SELECT trial_id FROM trials WHERE disturbed = 1 ORDER BY trial_id LIMIT 1",
                [],
                |r| r.get::<_, i64>(0),
            )
            .ok()
        });
        if let Some(id) = hit {
            break id;
        }
        assert!(Instant::now() < deadline, "no trial disturbed by the hog");
    };
    let hog_pid = hog.0.id();
    drop(hog);
    assert!(run.wait().unwrap().success());
    let c = s.conn();
    let all = attempts(&c);
    eprintln!("attempts (cell, index, round, retry, contaminated, retried): {all:?}");
    // The hog's first trial was run again, at the end of its round: the same cell, trial
    // index and round, the next attempt, after the round's other trial.
    let (cell, index, round, retry, _, retried) = all[first_hit as usize - 1];
    assert_eq!((retry, retried), (0, 1));
    let again = all
        .iter()
        .position(|a| (a.0, a.1, a.2, a.3) == (cell, index, round, 1))
        .expect("its re-run is stored");
    let round_planned: Vec<usize> = (0..all.len())
        .filter(|&i| all[i].2 == round && all[i].3 == 0)
        .collect();
    assert_eq!(round_planned.len(), 2, "both cells ran in round {round}");
    assert!(again > *round_planned.iter().max().unwrap(), "{all:?}");
    // Every attempt but a trial's last was flagged to be run again, and each flagged one
    // was; attempts count up from 0 within (cell, trial index), and stay in its round.
    for cell in 0..2 {
        for index in 0..4 {
            let mine: Vec<&Attempt> = all.iter().filter(|a| a.0 == cell && a.1 == index).collect();
            assert!(!mine.is_empty(), "trial {index} of cell {cell} ran");
            for (k, a) in mine.iter().enumerate() {
                assert_eq!((a.2, a.3), (index, k as i64), "{mine:?}");
                let last = k + 1 == mine.len();
                assert_eq!(a.5 == 1, !last, "{mine:?}");
                assert_eq!(
                    a.5 == 1,
                    a.4 == 1 && a.3 < 2,
                    "disturbed, with retries left: {mine:?}"
                );
            }
        }
    }
    // The hog was gone by the first re-run: no re-run's warning names it (on a quiet machine
    // its trial's re-run is clean and its round whole; others' programs may still disturb).
    let named = ints(
        &c,
        &format!(
            "SELECT COUNT(*) FROM warnings w JOIN trials t ON t.trial_id = w.trial_id
             WHERE w.code = 'trial_disturbed' AND t.retry > 0 AND w.params LIKE '%\"pid\":{hog_pid},%'"
        ),
    );
    assert_eq!(named, vec![0], "the re-runs ran without the hog: {all:?}");
    assert!(
        ints(
            &c,
            &format!("SELECT COUNT(*) FROM warnings WHERE code = 'trial_disturbed' AND params LIKE '%\"pid\":{hog_pid},%'")
        )[0] >= 1,
        "the hog is named where it disturbed"
    );
    let stats = schedlab()
        .args(["stats", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    let retried = all.iter().filter(|a| a.5 == 1).count();
    assert!(
        text.contains(&format!(
            "{retried} contaminated trials were run again at the end of their rounds"
        )),
        "{text}"
    );
}

// The work queue, push and resume, on SQLite and the store's own functions (tests/pg runs
// workers on PostgreSQL).

/// A store with one queued run of two cells and two rounds.
fn queued(dir: &std::path::Path) -> (Store, schedlab_spec::plan::Plan) {
    let mut store = Store::open(dir.join("q.db")).unwrap();
    let spec = schedlab_spec::Spec::from_toml(
        "name = \"q\"\n[axes]\npolicies = [\"other\", \"batch\"]\ntasks = [1]\n[settings]\ntrials = 2\n",
    )
    .unwrap();
    let plan = schedlab_spec::plan::build(&spec, 5).unwrap();
    let run = NewRun {
        name: &plan.name,
        seed: plan.seed,
        spec_toml: &plan.spec_toml,
        argv: "test",
        env_json: None,
        trials_planned: plan.trials.len(),
    };
    store.submit(&run, &plan.cells, &plan.trials, None).unwrap();
    (store, plan)
}

fn ok() -> TrialOutcome {
    TrialOutcome::not_run(TrialStatus::Ok, "test")
}

/// A contaminated attempt `retry`, to be run again.
fn contaminated(retry: u32) -> TrialMeta {
    TrialMeta {
        disturbed: true,
        outside_process_share: Some(0.5),
        retry,
        retried: true,
        ..TrialMeta::default()
    }
}

#[test]
fn a_contaminated_queued_trial_is_queued_again_at_the_end_of_its_round() {
    let dir = tempfile::tempdir().unwrap();
    let (store, plan) = queued(dir.path());
    let any: Vec<String> = vec![];
    // Round 0: the first trial is contaminated.
    let first = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!((first.position, first.retry), (0, 0));
    let planned = plan.trials[0];
    let stored = store.complete(&first, &planned, &ok(), &contaminated(0));
    assert!(matches!(stored.unwrap(), Completed::Stored(_)));
    // Next: round 0's other trial, then the re-run (before round 1), then round 1.
    let second = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!((second.position, second.retry), (1, 0));
    let clean = TrialMeta::default();
    store
        .complete(&second, &plan.trials[1], &ok(), &clean)
        .unwrap();
    let rerun = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!(
        (rerun.cell_index, rerun.trial_index, rerun.retry),
        (planned.cell, planned.trial_index, 1)
    );
    let meta = TrialMeta {
        retry: 1,
        ..TrialMeta::default()
    };
    assert!(matches!(
        store.complete(&rerun, &planned, &ok(), &meta).unwrap(),
        Completed::Stored(_)
    ));
    let next = store.claim("w", &any, 60_000).unwrap().unwrap();
    assert_eq!((next.position, next.retry), (2, 0), "round 1 after it");
    store
        .complete(&next, &plan.trials[2], &ok(), &clean)
        .unwrap();
    let info = schedlab_store::query::run_info(&store, 1).unwrap();
    assert_eq!(
        info.status,
        schedlab_core::records::RunStatus::Queued,
        "one trial is left"
    );
    let last = store.claim("w", &any, 60_000).unwrap().unwrap();
    store
        .complete(&last, &plan.trials[3], &ok(), &clean)
        .unwrap();
    let info = schedlab_store::query::run_info(&store, 1).unwrap();
    assert_eq!(info.status, schedlab_core::records::RunStatus::Done);
    // Five attempts stored, the re-run with its trial's round; the queue has its row.
    let c = rusqlite::Connection::open(dir.path().join("q.db")).unwrap();
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM trials"),
        vec![5],
        "each attempt once"
    );
    assert_eq!(
        ints(
            &c,
            "SELECT round FROM trials WHERE retry = 1 UNION ALL SELECT COUNT(*) FROM queue WHERE retry = 1 AND state = 'done'"
        ),
        vec![i64::from(planned.round), 1]
    );
}

#[test]
fn push_copies_every_attempt_once_and_resume_runs_the_rerun_owed() {
    let s = Scratch::new();
    // A tiny run without re-runs; then its first trial is made contaminated and owed a re-run,
    // as if the run had been killed right after storing it.
    run_ok(
        &s,
        &[
            "--policy",
            "other,batch",
            "--tasks",
            "1",
            "--work",
            "2ms",
            "--trials",
            "2",
        ],
    );
    let c = s.conn();
    c.execute_batch(
        "UPDATE trials SET disturbed = 1, retried = 1 WHERE trial_id = 1;
         UPDATE runs SET status = 'interrupted';",
    )
    .unwrap();
    let (cell, index, round): (i64, i64, i64) = c
        .query_row(
            "SELECT c.cell_index, t.trial_index, t.round FROM trials t JOIN cells c USING (cell_id) WHERE trial_id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    drop(c);
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args([
            "run",
            "--resume",
            "--db",
            s.db().to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = s.conn();
    let all = attempts(&c);
    assert_eq!(
        all.len(),
        5,
        "the four planned trials and the re-run owed: {all:?}"
    );
    assert_eq!(
        (all[4].0, all[4].1, all[4].2, all[4].3),
        (cell, index, round, 1)
    );
    drop(c);
    // Push it twice to another store: every attempt once, keyed with its retry.
    let target = s.path().join("target.db");
    for _ in 0..2 {
        let o = schedlab()
            .args(["push", s.db().to_str().unwrap()])
            .args(["--to", target.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let t = rusqlite::Connection::open(&target).unwrap();
    assert_eq!(attempts(&t), all);
}
