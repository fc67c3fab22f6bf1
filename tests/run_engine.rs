//! End-to-end tests of `schedlab run`: measurement, policies, refusals, timeouts, interruption.

mod common;

use common::*;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

#[test]
fn fifo_tasks_at_equal_priority_are_not_preempted_like_other_tasks() {
    if !root("SCHED_FIFO") {
        return;
    }
    let s = Scratch::new();
    // More tasks than CPUs: four CPU-bound tasks share CPU 0.
    run_ok(
        &s,
        &[
            "--policy",
            "other,fifo",
            "--workload",
            "cpu",
            "--tasks",
            "4",
            "--cpus",
            "0",
            "--work",
            "40ms",
            "--trials",
            "1",
        ],
    );
    let c = s.conn();
    let q = |p: &str| {
        ints(
            &c,
            &format!("SELECT t.nivcsw FROM tasks t JOIN trials tr USING (trial_id) JOIN cells c USING (cell_id) WHERE c.policy = '{p}' AND tr.status = 'ok'"),
        )
    };
    let (other, fifo) = (q("other"), q("fifo"));
    assert_eq!(other.len(), 4);
    assert_eq!(fifo.len(), 4);
    let (mo, mf) = (median(other.clone()), median(fifo.clone()));
    // 40 ms of CPU each at HZ=250 and a 1.4 ms EEVDF slice: OTHER tasks are preempted many times.
    assert!(mo >= 4, "OTHER should be preempted: {other:?}");
    assert!(
        mf * 4 <= mo,
        "FIFO involuntary switches {fifo:?} should be far below OTHER's {other:?}"
    );
    let read_back = ints(
        &c,
        "SELECT COUNT(*) FROM tasks WHERE policy_in_force = 'fifo' AND rt_priority = 98",
    );
    assert_eq!(
        read_back,
        vec![4],
        "FIFO tasks run at 98, read back from the kernel"
    );
}

#[test]
fn barrier_start_gives_nonnegative_responses_and_turnarounds_after_them() {
    let s = Scratch::new();
    // CLOCK_MONOTONIC is the machine's: every stored instant lies between these two readings.
    let before = schedlab_sys::now_ns() as i64;
    run_ok(
        &s,
        &[
            "--policy",
            "other",
            "--tasks",
            "3",
            "--work",
            "10ms",
            "--trials",
            "2",
            "--kind",
            "process,thread",
        ],
    );
    let after = schedlab_sys::now_ns() as i64;
    let c = s.conn();
    type Row = (i64, i64, i64, i64, i64, i64, i64);
    let rows: Vec<Row> = rows(
        &c,
        "SELECT response_ns, turnaround_ns, run_span_ns, t_release_ns, t_start_ns, t_end_ns,
                utime_ns + stime_ns FROM tasks",
    );
    assert_eq!(rows.len(), 2 * 2 * 3);
    // One clock tick (HZ 250): rusage CPU time is tick-sampled.
    let tick = 4_000_000;
    for (resp, turn, span, release, start, end, cpu) in rows {
        assert!(
            before < release && release <= start && start < end && end < after,
            "instants inside the run: {before} {release} {start} {end} {after}"
        );
        assert!(resp >= 0, "response {resp}");
        assert!(turn >= resp, "turnaround {turn} < response {resp}");
        assert!(span > 0 && span <= turn, "span {span}, turnaround {turn}");
        assert!(
            cpu <= span + tick,
            "a task cannot use more CPU ({cpu} ns) than the time it ran ({span} ns)"
        );
    }
    let cpu = ints(&c, "SELECT utime_ns + stime_ns FROM tasks");
    assert!(
        cpu.iter().all(|&v| v > 1_000_000),
        "every task used CPU: {cpu:?}"
    );
}

#[test]
fn a_trial_past_its_timeout_is_stored_as_timeout_and_leaves_no_process() {
    let s = Scratch::new();
    let started = Instant::now();
    let out = run_ok(
        &s,
        &[
            "--policy",
            "other",
            "--tasks",
            "2",
            "--iterations",
            "100000000000",
            "--timeout",
            "1s",
            "--trials",
            "1",
            "--kind",
            "process",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the timeout ended the trial"
    );
    let c = s.conn();
    let status: String = c
        .query_row("SELECT status FROM trials", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "timeout", "{out}");
    let reason: String = c
        .query_row("SELECT reason FROM trials", [], |r| r.get(0))
        .unwrap();
    assert!(reason.contains("--timeout"), "{reason}");
    let pgid = ints(&c, "SELECT pgid FROM trials")[0] as i32;
    assert!(pgid > 1);
    assert!(!group_alive(pgid), "process group {pgid} still has members");
    for pid in ints(&c, "SELECT pid FROM tasks") {
        assert!(!pid_alive(pid as i32), "task {pid} survived");
    }
}

#[test]
fn sigint_keeps_finished_trials_and_leaves_no_process_or_file() {
    let s = Scratch::new();
    let io_dir = s.path().join("io");
    std::fs::create_dir(&io_dir).unwrap();
    let tag = Tag::new();
    let mut child = tag
        .mark(&mut schedlab())
        .args([
            "run",
            "--retries",
            "0",
            "--db",
            s.db().to_str().unwrap(),
            "--policy",
            "other",
            "--workload",
            "mixed",
            "--io-every",
            "2000",
        ])
        .args([
            "--tasks",
            "2",
            "--work",
            "150ms",
            "--trials",
            "40",
            "--io-dir",
            io_dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until at least two trials are stored, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let stored = rusqlite::Connection::open(s.db())
            .ok()
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM trials", [], |r| r.get::<_, i64>(0))
                    .ok()
            })
            .unwrap_or(0);
        if stored >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "no trial stored in time");
    }
    // Interrupt it with a trial in flight: the main process, the launcher, the trial's host
    // and its two tasks.
    let running = tag.wait_for(5, Duration::from_secs(30));
    signal(child.id(), Signal::SIGINT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // The process table, not the stored trials (the trial in flight is never stored).
    let left = tag.wait_gone(Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "left after the interrupted run exited: {left:?} (running before: {running:?})"
    );
    let c = s.conn();
    let ok = ints(&c, "SELECT COUNT(*) FROM trials WHERE status = 'ok'")[0];
    let statuses: Vec<String> = c
        .prepare("SELECT status || ': ' || COALESCE(reason, '') FROM trials")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(
        (2..40).contains(&ok),
        "{ok} finished trials kept: {statuses:?}"
    );
    let run_status: String = c
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(run_status, "interrupted");
    let left: Vec<_> = std::fs::read_dir(&io_dir).unwrap().collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
}

#[test]
fn a_sigkilled_run_takes_its_trial_in_flight_with_it_at_once() {
    // Tasks of 20 s each: left alone, the trial in flight would run on for 20 s.
    let s = Scratch::new();
    let tag = Tag::new();
    let mut child = tag
        .mark(&mut schedlab())
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(NO_RETRIES)
        .args(["--policy", "other", "--tasks", "2", "--work", "20s"])
        .args(["--trials", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The main process, the launcher, the host and its two tasks.
    let running = tag.wait_for(5, Duration::from_secs(60));
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let left = tag.wait_gone(Duration::from_secs(5));
    assert!(
        left.is_empty(),
        "left 5 s after the SIGKILL: {left:?} (running before it: {running:?})"
    );
    let stored = ints(&s.conn(), "SELECT COUNT(*) FROM trials")[0];
    assert_eq!(stored, 0, "the trial in flight is not stored");
}

/// The schedlab binary under util-linux's `prlimit`, which sets RLIMIT_RTPRIO to 0 (soft and
/// hard) and execs it: an unprivileged user may then not raise a real-time priority at all.
/// The limit is the child's alone, not this process's, whose other tests go on.
fn schedlab_without_rtprio() -> std::process::Command {
    let mut c = std::process::Command::new("prlimit");
    c.args(["--rtprio=0:0", "--"])
        .arg(assert_cmd::cargo::cargo_bin("schedlab"));
    c
}

#[test]
fn an_unprivileged_run_skips_rt_policies_with_the_reason_and_runs_other() {
    if !root("drops to an unprivileged user to see RT policies refused")
        || !program("prlimit", "--version", "util-linux")
    {
        return;
    }
    let s = Scratch::new();
    // The ordinary user writes the database in a directory of its own (schedlab refuses a
    // database in a directory others may write).
    std::fs::set_permissions(
        s.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .unwrap();
    let home = s.path().join("nobody");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    let db = home.join("t.db");
    let mut cmd = schedlab_without_rtprio();
    cmd.args([
        "run",
        "--retries",
        "0",
        "--db",
        db.to_str().unwrap(),
        "--quiet",
        "--policy",
        "other,fifo,rr",
        "--tasks",
        "2",
        "--work",
        "10ms",
        "--trials",
        "2",
    ])
    .current_dir(&home)
    .env("HOME", &home)
    .uid(65534)
    .gid(65534);
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("CAP_SYS_NICE"),
        "the printed reason names the capability: {text}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let by_policy = |p: &str, st: &str| {
        ints(
            &c,
            &format!("SELECT COUNT(*) FROM trials JOIN cells USING (cell_id) WHERE policy = '{p}' AND status = '{st}'"),
        )[0]
    };
    assert_eq!(by_policy("other", "ok"), 2);
    assert_eq!(by_policy("fifo", "skipped"), 2);
    assert_eq!(by_policy("rr", "skipped"), 2);
    let reason: String = c
        .query_row(
            "SELECT reason FROM trials JOIN cells USING (cell_id) WHERE policy = 'fifo' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        reason.contains("EPERM") && reason.contains("RLIMIT_RTPRIO"),
        "{reason}"
    );

    // --strict turns the skipped cells into a failure.
    let mut strict = schedlab_without_rtprio();
    strict
        .args([
            "run",
            "--retries",
            "0",
            "--db",
            db.to_str().unwrap(),
            "--quiet",
            "--strict",
            "--policy",
            "fifo",
            "--tasks",
            "1",
            "--work",
            "5ms",
            "--trials",
            "1",
        ])
        .current_dir(&home)
        .env("HOME", &home)
        .uid(65534)
        .gid(65534);
    let out = strict.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--strict"));
}

#[test]
fn export_writes_the_documented_columns_as_csv_and_json() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "2", "--work", "5ms", "--trials", "1",
        ],
    );
    let out = schedlab()
        .args([
            "export",
            "--db",
            s.db().to_str().unwrap(),
            "--table",
            "tasks",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    for col in [
        "run_id",
        "trial_id",
        "trial_index",
        "warmup",
        "policy",
        "priorities",
        "workload",
        "kind",
        "start",
        "tasks",
        "task_index",
        "response_ns",
        "turnaround_ns",
        "run_span_ns",
        "utime_ns",
        "stime_ns",
        "nvcsw",
        "nivcsw",
        "run_delay_ns",
        "timeslices",
        "migrations",
        "work_units",
        "status",
        "cpu_ns",
    ] {
        assert!(
            header.split(',').any(|h| h == col),
            "missing column {col} in {header}"
        );
    }
    assert_eq!(text.lines().count(), 3, "header + 2 tasks");
    let out = schedlab()
        .args([
            "export",
            "--db",
            s.db().to_str().unwrap(),
            "--table",
            "trials",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["status"], "ok");
    assert!(v[0]["makespan_ns"].as_i64().unwrap() > 0);
    let out = schedlab()
        .args([
            "export",
            "--db",
            s.db().to_str().unwrap(),
            "--table",
            "samples",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().contains("cs_per_s"), "{text}");
    assert!(
        text.lines().count() >= 2,
        "every trial has at least one sample: {text}"
    );
    let bad = schedlab()
        .args(["export", "--db", s.db().to_str().unwrap(), "--run", "99"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("schedlab runs"));
}

#[test]
fn bad_flags_exit_2_and_name_the_problem() {
    let s = Scratch::new();
    let out = schedlab()
        .args(["run", "--db", s.db().to_str().unwrap(), "--tasks", "0"])
        .args(NO_RETRIES)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("axes.tasks"));
    let out = schedlab()
        .args(["run", "--db", s.db().to_str().unwrap(), "--work", "fast"])
        .args(NO_RETRIES)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a duration"));
    assert!(!s.db().exists(), "nothing is stored for bad input");
}
