//! Benchmark of the PostgreSQL store next to SQLite, on about 1,000,000 task rows: the time
//! to store them (the run's own write path, `Store::insert_trial`, one transaction per trial)
//! and the time `schedlab report` takes to read them and compute its statistics, side by side
//! in one run. Run with `cargo bench --bench pg` (needs PostgreSQL's server binaries, as
//! tests/pg does; it starts its own server in a temporary directory). Figures are recorded in
//! bench/README.md.
//!
//! The rows are those of bench/report.rs's shape: 3 policies x 3 workloads x 4 task counts
//! (1000, 2000, 3000, 5112) x 10 trials = 360 trials, 1,000,080 tasks.

#[path = "../tests/pg/server.rs"]
#[allow(dead_code)]
mod server;

use schedlab_core::records::{TaskRecord, TrialMeta, TrialOutcome, TrialStatus};
use schedlab_core::workload::WorkloadKind;
use schedlab_report::model;
use schedlab_report::pool::load_input;
use schedlab_spec::plan::Plan;
use schedlab_store::{Location, NewRun, Store};
use std::time::Instant;

const SPEC: &str = r#"
name = "bench"
description = "1M task rows"
[axes]
policies = ["other", "fifo", "rr"]
tasks = [1000, 2000, 3000, 5112]
[[axes.workloads]]
kind = "cpu"
[[axes.workloads]]
kind = "io"
[[axes.workloads]]
kind = "mixed"
[settings]
trials = 10
warmup = 0
work = "20ms"
"#;

const MS: f64 = 1e6;
/// Rounds of the report measurement per engine (the median is kept).
const ROUNDS: usize = 3;

/// The outcome of one synthetic trial of `tasks` tasks under `policy` (real-looking numbers:
/// ~20 ms of CPU per task on 2 CPUs; FIFO in batches, the others interleaved).
fn outcome(rng: &mut fastrand::Rng, policy: &str, tasks: u32, io: i64) -> TrialOutcome {
    let n = tasks as usize;
    let span = tasks as f64 * 10.0 * MS;
    let mut out = TrialOutcome::not_run(TrialStatus::Ok, "");
    out.reason = None;
    out.tasks = (0..n)
        .map(|i| {
            let jitter = 1.0 + 0.1 * (rng.f64() - 0.5);
            let response = if policy == "fifo" {
                i as f64 / n as f64 * span
            } else {
                rng.f64() * 3.0 * MS
            };
            let turnaround = if policy == "fifo" {
                response + 20.0 * MS * jitter
            } else {
                span * (0.9 + 0.1 * rng.f64()) * jitter
            };
            let cpu = 20.0 * MS * jitter;
            TaskRecord {
                task_index: i as u32,
                pid: 1000 + i as i32,
                tid: 1000 + i as i32,
                t_release_ns: 1_000_000_000,
                t_start_ns: 1_000_000_000 + response as u64,
                t_end_ns: 1_000_000_000 + turnaround as u64,
                response_ns: Some(response as i64),
                turnaround_ns: Some(turnaround as i64),
                run_span_ns: Some((turnaround - response) as i64),
                utime_ns: (cpu * 0.95) as u64,
                stime_ns: (cpu * 0.05) as u64,
                nvcsw: (2 + io * 100 + rng.i64(0..5)) as u64,
                nivcsw: if policy == "fifo" {
                    rng.u64(0..3)
                } else {
                    10 + rng.u64(0..(tasks as u64 / 10))
                },
                run_delay_ns: (turnaround - cpu).max(0.0) as u64,
                work_units: 1000,
                ..TaskRecord::default()
            }
        })
        .collect();
    out.makespan_ns = out
        .tasks
        .iter()
        .filter_map(|t| t.turnaround_ns)
        .max()
        .map(|m| m as u64);
    out
}

/// Stores the plan's trials in `store`; returns (task rows, seconds).
fn fill(store: &mut Store, plan: &Plan) -> (usize, f64) {
    let t = Instant::now();
    let run_id = store
        .create_run(
            &NewRun {
                name: &plan.name,
                seed: plan.seed,
                spec_toml: &plan.spec_toml,
                argv: "bench",
                env_json: None,
                trials_planned: plan.trials.len(),
            },
            &plan.cells,
        )
        .expect("run");
    let mut rng = fastrand::Rng::with_seed(1);
    let mut rows = 0;
    for p in &plan.trials {
        let cell = &plan.cells[p.cell];
        let io = match cell.workload.kind {
            WorkloadKind::Cpu => 0,
            WorkloadKind::Io => 1,
            _ => 2,
        };
        let o = outcome(&mut rng, cell.policy.name(), cell.tasks, io);
        rows += o.tasks.len();
        let meta = TrialMeta {
            timeout_ns: 100_000_000_000,
            started_at: "2026-11-24T00:00:00Z".into(),
            ..TrialMeta::default()
        };
        store.insert_trial(run_id, p, &o, &meta).expect("trial");
    }
    store
        .finish_run(run_id, schedlab_core::records::RunStatus::Done)
        .expect("finish");
    (rows, t.elapsed().as_secs_f64())
}

/// Opens `db` read-only, loads run 1 as `report` does and computes the report; returns the
/// seconds (load, load + statistics).
fn report(db: &Location) -> (f64, f64) {
    let t = Instant::now();
    let store = Store::open_read(db).expect("open");
    let input = load_input(&store, 1, false).expect("load");
    let loaded = t.elapsed().as_secs_f64();
    let r = model::report::build(&input);
    assert!(!r.cells.is_empty());
    (loaded, t.elapsed().as_secs_f64())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let server = match server::Server::start() {
        Ok(s) => s,
        Err(reason) => {
            println!("skipping the PostgreSQL benchmark: {reason}");
            return;
        }
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, plan) = schedlab_spec::plan::build_from_text("bench.toml", SPEC, 7).expect("plan");
    // Store the rows ROUNDS times in each engine, alternating, into fresh databases; the
    // last pair is the one reported from.
    let (mut lite_s, mut pg_s) = (Vec::new(), Vec::new());
    let (mut file, mut url) = (Location::default(), Location::default());
    let mut rows = 0;
    for round in 0..ROUNDS {
        file = dir.path().join(format!("bench{round}.db")).into();
        let db = server.fresh_db("bench");
        url = server.url(&db).parse().expect("url");
        let (lite_rows, s) = fill(&mut Store::open(&file).expect("sqlite"), &plan);
        lite_s.push(s);
        let (pg_rows, s) = fill(&mut Store::open(&url).expect("postgres"), &plan);
        pg_s.push(s);
        assert_eq!(lite_rows, pg_rows);
        rows = pg_rows;
    }
    let (lite_s, pg_s) = (median(lite_s), median(pg_s));
    println!(
        "store {rows} task rows in {} trials (one transaction each), median of {ROUNDS}: SQLite {lite_s:.2} s ({:.0} rows/s), PostgreSQL {pg_s:.2} s ({:.0} rows/s), ratio {:.2}",
        plan.trials.len(),
        rows as f64 / lite_s,
        rows as f64 / pg_s,
        pg_s / lite_s
    );
    let (mut lite, mut pg) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        lite.push(report(&file));
        pg.push(report(&url));
    }
    let show = |name: &str, v: &[(f64, f64)]| {
        let load = median(v.iter().map(|x| x.0).collect());
        let total = median(v.iter().map(|x| x.1).collect());
        println!("report of run 1 from {name}: load {load:.2} s, load + statistics {total:.2} s (median of {ROUNDS})");
        (load, total)
    };
    let (ll, lt) = show("SQLite", &lite);
    let (pl, pt) = show("PostgreSQL", &pg);
    println!(
        "PostgreSQL / SQLite: load {:.2}, load + statistics {:.2}",
        pl / ll,
        pt / lt
    );
}
