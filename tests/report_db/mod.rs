//! A small synthetic results database with fixed numbers, shared by the report tests.

#![allow(dead_code)] // each test crate uses some of the helpers

use rusqlite::params;
use schedlab_report::model::{self, Report};
use schedlab_report::pool::load_input;
use schedlab_store::Store;
use std::path::{Path, PathBuf};

pub const MS: i64 = 1_000_000;

/// Cells of the synthetic run: (policy, tasks); rr is skipped (refused).
pub const CELLS: [(&str, i64); 5] = [
    ("other", 2),
    ("other", 4),
    ("fifo", 2),
    ("fifo", 4),
    ("rr", 2),
];
/// Measured trials per cell.
pub const TRIALS: i64 = 6;

/// Per-task numbers of one task, ns and counts: (response, turnaround, cpu, nvcsw, nivcsw, run_delay).
pub fn task_numbers(
    policy: &str,
    n: i64,
    trial: i64,
    i: i64,
    slow: f64,
) -> (i64, i64, i64, i64, i64, i64) {
    if policy == "fifo" {
        // FIFO: tasks run one after another on each CPU, hardly preempted.
        let response = 40_000 + 1_000 * i + 3_000 * trial + (i / 2) * 20 * MS;
        let turnaround =
            ((20 * MS + (i / 2) * 20 * MS + 150_000 * trial + 10_000 * i) as f64 * slow) as i64;
        (
            response,
            turnaround,
            20 * MS + 20_000 * i + 5_000 * trial,
            2,
            1 + trial % 2,
            (i / 2) * 20 * MS,
        )
    } else {
        // OTHER: every task shares the CPUs and ends near the end of the trial.
        let response = 900_000 * (i + 1) + 7_000 * trial;
        let turnaround = (n * 10 * MS) * 11 / 10 + 400_000 * trial + 60_000 * i;
        (
            response,
            turnaround,
            20_500_000 + 30_000 * i + 8_000 * trial,
            2 + i % 2,
            10 + 3 * i + trial,
            n * 5 * MS + 100_000 * trial,
        )
    }
}

/// A database with one run of CELLS (fifo turnaround scaled by `slow`), returned as its path.
pub fn synthetic_db(dir: &Path, name: &str, slow: f64) -> PathBuf {
    let path = dir.join(name);
    drop(Store::open(&path).expect("schema applies to a new file"));
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "INSERT INTO runs (name, started_at, finished_at, status, seed, spec_toml, argv, env_json, version, trials_planned, spec_hash)
         VALUES ('synthetic', '2026-01-02T03:04:05Z', '2026-01-02T03:09:10Z', 'done', 42, 'name = \"synthetic\"', 'schedlab run --policy other,fifo,rr --tasks 2,4 --trials 6',
                 '{\"kernel_release\":\"6.8.0\",\"cpu_count\":2,\"privileges\":{\"is_root\":true}}', '0.1.0', 32, ?1)",
        // The hash the store writes with a run's row.
        [schedlab_store::query::spec_hash("name = \"synthetic\"")],
    )
    .expect("run row");
    let run_id = c.last_insert_rowid();
    c.execute("INSERT INTO warnings (run_id, trial_id, message) VALUES (?1, NULL, 'the CPU frequency governor is powersave; set it to performance')", [run_id])
        .expect("warning row");
    for (ci, (policy, n)) in CELLS.iter().enumerate() {
        c.execute(
            "INSERT INTO cells (run_id, cell_index, policy, priorities, workload, workload_json, kind, start, tasks, cpus,
                                dl_runtime_ns, dl_deadline_ns, dl_period_ns, work_ns, units, split)
             VALUES (?1, ?2, ?3, 'same', 'cpu:pi', '{\"kind\":\"cpu\"}', 'process', 'barrier', ?4, NULL, 5000000, 50000000, 50000000, 20000000, 1000, 0)",
            params![run_id, ci as i64, policy, n],
        )
        .expect("cell row");
        let cell_id = c.last_insert_rowid();
        let trial = |index: i64,
                     warmup: bool,
                     status: &str,
                     reason: Option<&str>,
                     makespan: Option<i64>| {
            c.execute(
                "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, reason, makespan_ns, timeout_ns, started_at)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, 10000000000, '2026-01-02T03:05:00Z')",
                params![run_id, cell_id, index, warmup, status, reason, makespan],
            )
            .expect("trial row");
            c.last_insert_rowid()
        };
        if *policy == "rr" {
            for t in 0..TRIALS {
                trial(
                    t,
                    false,
                    "skipped",
                    Some("SCHED_RR refused (EPERM): run as root or grant CAP_SYS_NICE"),
                    None,
                );
            }
            continue;
        }
        for t in 0..TRIALS + 1 {
            // Trial 0 is a warm-up with outlying numbers, to show it is left out.
            let warmup = t == 0;
            let rows: Vec<_> = (0..*n)
                .map(|i| {
                    let (r, ta, cpu, v, iv, d) = task_numbers(policy, *n, t, i, slow);
                    if warmup {
                        (r * 3, ta * 3, cpu, v, iv, d)
                    } else {
                        (r, ta, cpu, v, iv, d)
                    }
                })
                .collect();
            let makespan = rows.iter().map(|r| r.1).max();
            let tid = trial(t, warmup, "ok", None, makespan);
            for (i, (r, ta, cpu, v, iv, d)) in rows.into_iter().enumerate() {
                let release = 1_000_000_000 * (t + 1);
                c.execute(
                    "INSERT INTO tasks (trial_id, task_index, pid, tid, policy_in_force, t_release_ns, t_start_ns, t_end_ns, response_ns,
                                        turnaround_ns, run_span_ns, utime_ns, stime_ns, nvcsw, nivcsw, run_delay_ns, work_units, exit_status)
                     VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 0, ?12, ?13, ?14, 1000, 0)",
                    params![tid, i as i64, 1000 + i as i64, policy, release, release + r, release + ta, r, ta, ta - r, cpu, v, iv, d],
                )
                .expect("task row");
            }
        }
        if *policy == "other" && *n == 4 {
            trial(
                TRIALS + 1,
                false,
                "timeout",
                Some("deadline of 10 s passed; every task was killed"),
                None,
            );
        }
    }
    path
}

pub fn report_of(db: &Path, warmup: bool) -> Report {
    let store = Store::open(db).expect("db opens");
    model::report::build(&load_input(&store, 1, warmup).expect("run 1 loads"))
}

/// Keeps only the measured trials 1..=n (and the warm-up) of every cell of `db`.
pub fn keep_trials(db: &Path, n: i64) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(
        "DELETE FROM tasks WHERE trial_id IN (SELECT trial_id FROM trials WHERE trial_index > ?1)",
        [n],
    )
    .unwrap();
    c.execute("DELETE FROM trials WHERE trial_index > ?1", [n])
        .unwrap();
}
