//! Benchmark of `schedlab report` on a synthetic database of about 1,000,000 task rows: wall time
//! (per phase) and peak memory. Run with `cargo bench --bench report`; results are recorded in
//! bench/README.md. Target: under 10 s and under 1 GiB.
//!
//! The database (3 policies x 3 workloads x 4 task counts x 10 trials, 1,000,080 tasks) is built
//! in one transaction; the report is then made in a fresh child process (this program again,
//! with `--measure`) so that its peak RSS (VmHWM) counts the report alone. Set
//! SCHEDLAB_BENCH_DIR=DIR to keep the database and the report in DIR.

use schedlab_report::cmd::{write_report, ReportFormat};
use schedlab_report::model;
use schedlab_report::pool::load_input;
use schedlab_store::Store;
use std::path::{Path, PathBuf};
use std::time::Instant;

const POLICIES: [&str; 3] = ["other", "fifo", "rr"];
const WORKLOADS: [&str; 3] = ["cpu:pi", "io:sync-copy", "mixed:pi+sync-copy"];
const TASKS: [i64; 4] = [1000, 2000, 3000, 5112];
const TRIALS: i64 = 10;
const MS: f64 = 1e6;

/// Builds the database; returns the number of task rows.
fn build(path: &Path) -> rusqlite::Result<u64> {
    drop(Store::open(path).expect("schema applies to a new file"));
    let conn = rusqlite::Connection::open(path)?;
    let tx = conn.unchecked_transaction()?;
    tx.execute(
        "INSERT INTO runs (name, started_at, finished_at, status, seed, spec_toml, argv, env_json, version, trials_planned)
         VALUES ('bench', '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z', 'done', 7, '', 'bench', '{\"cpu_count\":2}', '0.1.0', ?1)",
        [(POLICIES.len() * WORKLOADS.len() * TASKS.len()) as i64 * TRIALS],
    )?;
    let run_id = tx.last_insert_rowid();
    let mut rng = fastrand::Rng::with_seed(1);
    let mut rows = 0u64;
    let mut cell_index = 0i64;
    {
        let mut cell_st = tx.prepare(
            "INSERT INTO cells (run_id, cell_index, policy, priorities, workload, workload_json, kind, start, tasks,
                                dl_runtime_ns, dl_deadline_ns, dl_period_ns, units, split)
             VALUES (?1, ?2, ?3, 'same', ?4, '{}', 'process', 'barrier', ?5, 5000000, 50000000, 50000000, 1000, 0)",
        )?;
        let mut trial_st = tx.prepare(
            "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, makespan_ns, timeout_ns, started_at)
             VALUES (?1, ?2, ?3, ?3, 0, 'ok', ?4, 100000000000, '2026-01-01T00:00:00Z')",
        )?;
        let mut task_st = tx.prepare(
            "INSERT INTO tasks (trial_id, task_index, response_ns, turnaround_ns, run_span_ns, utime_ns, stime_ns, nvcsw, nivcsw, run_delay_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for (pi, policy) in POLICIES.iter().enumerate() {
            for (wi, workload) in WORKLOADS.iter().enumerate() {
                for &n in &TASKS {
                    cell_st.execute(rusqlite::params![run_id, cell_index, policy, workload, n])?;
                    let cell_id = tx.last_insert_rowid();
                    cell_index += 1;
                    for t in 0..TRIALS {
                        // Real-looking numbers: ~20 ms of CPU per task on 2 CPUs; FIFO runs tasks in
                        // batches, OTHER and RR interleave them; I/O adds voluntary switches.
                        let span = n as f64 * 10.0 * MS * (1.0 + 0.05 * pi as f64);
                        let rows_of_trial: Vec<[i64; 8]> = (0..n)
                            .map(|i| {
                                let jitter = 1.0 + 0.1 * (rng.f64() - 0.5);
                                let order = i as f64 / n as f64;
                                let response = if *policy == "fifo" {
                                    order * span
                                } else {
                                    rng.f64() * 3.0 * MS
                                };
                                let turnaround = if *policy == "fifo" {
                                    response + 20.0 * MS * jitter
                                } else {
                                    span * (0.9 + 0.1 * rng.f64()) * jitter
                                };
                                let cpu = 20.0 * MS * jitter;
                                let vcsw = 2 + wi as i64 * 100 + rng.i64(0..5);
                                let ivcsw = if *policy == "fifo" {
                                    rng.i64(0..3)
                                } else {
                                    10 + rng.i64(0..(n / 10))
                                };
                                [
                                    response as i64,
                                    turnaround as i64,
                                    (turnaround - response) as i64,
                                    (cpu * 0.95) as i64,
                                    (cpu * 0.05) as i64,
                                    vcsw,
                                    ivcsw,
                                    (turnaround - cpu).max(0.0) as i64,
                                ]
                            })
                            .collect();
                        let makespan = rows_of_trial.iter().map(|r| r[1]).max().unwrap_or(0);
                        trial_st.execute(rusqlite::params![run_id, cell_id, t, makespan])?;
                        let trial_id = tx.last_insert_rowid();
                        for (i, r) in rows_of_trial.iter().enumerate() {
                            task_st.execute(rusqlite::params![
                                trial_id, i as i64, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
                            ])?;
                            rows += 1;
                        }
                    }
                }
            }
        }
    }
    tx.commit()?;
    Ok(rows)
}

/// Peak resident set size of this process, from /proc/self/status (VmHWM), in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The child: `schedlab report` on `db` into `out`, timed per phase.
fn measure(db: &Path, out: &Path) {
    let start = Instant::now();
    let formats = [
        ReportFormat::Html,
        ReportFormat::Latex,
        ReportFormat::Markdown,
        ReportFormat::Csv,
    ];
    let store = Store::open_read(schedlab_store::Location::from(db)).expect("bench db opens");
    let input = load_input(&store, 1, false).expect("run 1 loads");
    let loaded = start.elapsed();
    let report = model::report::build(&input);
    let built = start.elapsed();
    drop(input);
    let written = write_report(&report, &formats, &out.join("1")).expect("report written");
    let total = start.elapsed();
    println!(
        "report: load {:.2} s, statistics {:.2} s, write {:.2} s ({} outputs), total {:.2} s; peak RSS {:.0} MiB",
        loaded.as_secs_f64(),
        (built - loaded).as_secs_f64(),
        (total - built).as_secs_f64(),
        written.len(),
        total.as_secs_f64(),
        peak_rss_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--measure") {
        measure(Path::new(&args[2]), Path::new(&args[3]));
        return;
    }
    // SCHEDLAB_BENCH_DIR keeps the database and the report there, to look at them.
    let temp = tempfile::tempdir().expect("temp dir");
    let dir: PathBuf = std::env::var_os("SCHEDLAB_BENCH_DIR")
        .map_or_else(|| temp.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let db = dir.join("bench.db");
    let _ = std::fs::remove_file(&db);
    let t = Instant::now();
    let rows = build(&db).expect("bench database builds");
    println!(
        "built {} task rows in {:.2} s ({:.0} MiB on disk)",
        rows,
        t.elapsed().as_secs_f64(),
        std::fs::metadata(&db).map_or(0.0, |m| m.len() as f64 / 1048576.0)
    );
    let out = dir.join("report");
    let t = Instant::now();
    let status = std::process::Command::new(std::env::current_exe().expect("own path"))
        .arg("--measure")
        .arg(&db)
        .arg(&out)
        .status()
        .expect("child runs");
    assert!(status.success(), "report child failed: {status}");
    println!(
        "child process wall time {:.2} s (target: under 10 s and 1 GiB)",
        t.elapsed().as_secs_f64()
    );
}
