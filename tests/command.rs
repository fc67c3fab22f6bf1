//! Real programs as tasks: started under the cell's policy, measured, stopped by a window.

mod common;

use common::*;
use std::time::{Duration, Instant};

/// Status and reason of the only trial.
fn only_trial(c: &rusqlite::Connection) -> (String, String) {
    c.query_row("SELECT status, reason FROM trials", [], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .unwrap()
}

fn write_spec(s: &Scratch, body: &str) -> String {
    let path = s.path().join("spec.toml");
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn programs_run_in_every_start_order_and_are_measured_like_tasks() {
    let s = Scratch::new();
    let spec = write_spec(
        &s,
        r#"
name = "orders"
[axes]
policies = ["other"]
start = ["staggered"]
[[axes.workloads]]
kind = "command"
commands = [{ argv = ["sh", "-c", "sleep 0.01; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"] }, { argv = ["true"] }]
orders = "all"
start_gap = "5ms"
[settings]
trials = 1
"#,
    );
    run_ok(&s, &[&spec]);
    let c = s.conn();
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM cells WHERE tasks = 2")[0],
        2,
        "two orders, two cells of two tasks"
    );
    assert_eq!(
        ints(&c, "SELECT COUNT(*) FROM trials WHERE status = 'ok'")[0],
        2
    );
    let cpu = ints(
        &c,
        "SELECT MAX(utime_ns + stime_ns) FROM tasks GROUP BY trial_id",
    );
    assert!(
        cpu.iter().all(|&v| v > 1_000_000),
        "the shell loop used CPU: {cpu:?}"
    );
    let gaps = ints(
        &c,
        "SELECT MAX(t_release_ns) - MIN(t_release_ns) FROM tasks GROUP BY trial_id",
    );
    assert!(
        gaps.iter().all(|&g| g >= 5_000_000),
        "programs start 5 ms apart: {gaps:?}"
    );
    let bad = ints(
        &c,
        "SELECT COUNT(*) FROM tasks WHERE response_ns < 0 OR turnaround_ns < response_ns",
    );
    assert_eq!(bad, vec![0]);
    // The shell waits for its `sleep`, so it leaves the CPU at least once; `true` may run in
    // the slice it was forked in (0 new timeslices).
    let slices = ints(&c, "SELECT MAX(timeslices) FROM tasks GROUP BY trial_id");
    assert!(
        slices.iter().all(|&n| n >= 1),
        "each program's scheduler counters are read from its zombie: {slices:?}"
    );
}

#[test]
fn a_missing_program_is_a_failed_trial_with_the_reason() {
    let s = Scratch::new();
    let spec = write_spec(
        &s,
        r#"
name = "missing"
[[axes.workloads]]
kind = "command"
commands = [{ argv = ["true"] }, { argv = ["no-such-program-schedlab"] }]
[settings]
trials = 1
"#,
    );
    run_ok(&s, &[&spec]);
    let c = s.conn();
    let (status, reason) = only_trial(&c);
    assert_eq!(status, "failed");
    assert!(
        reason.contains("no-such-program-schedlab") && reason.contains("ENOENT"),
        "{reason}"
    );
}

#[test]
fn a_duration_window_stops_every_program_it_started() {
    let s = Scratch::new();
    let spec = write_spec(
        &s,
        r#"
name = "window"
[[axes.workloads]]
kind = "command"
commands = [{ argv = ["sleep", "30"] }, { argv = ["sh", "-c", "sleep 30 & sleep 30"] }]
duration = "1s"
[settings]
trials = 1
"#,
    );
    let started = Instant::now();
    run_ok(&s, &[&spec]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the window ended the trial"
    );
    let c = s.conn();
    let status: String = c
        .query_row("SELECT status FROM trials", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "ok");
    let turnaround = ints(&c, "SELECT turnaround_ns FROM tasks");
    assert!(
        turnaround
            .iter()
            .all(|&t| (900_000_000..3_000_000_000).contains(&t)),
        "stopped at the 1 s window: {turnaround:?}"
    );
    let slices = ints(&c, "SELECT timeslices FROM tasks");
    assert!(
        slices.iter().all(|&n| n >= 1),
        "stopped programs' scheduler counters are read before reaping: {slices:?}"
    );
    for pid in ints(&c, "SELECT pid FROM tasks") {
        assert!(!pid_alive(pid as i32), "program {pid} survived the window");
    }
    let pgid = ints(&c, "SELECT pgid FROM trials")[0] as i32;
    assert!(
        !group_alive(pgid),
        "a program's child survived in group {pgid}"
    );
}

#[test]
fn programs_start_in_the_trial_directory_with_their_environment_and_it_is_removed() {
    let s = Scratch::new();
    let io = s.path().join("io");
    std::fs::create_dir(&io).unwrap();
    let elsewhere = s.path().to_str().unwrap();
    let spec = write_spec(
        &s,
        &format!(
            r#"
name = "dirs"
[[axes.workloads]]
kind = "command"
commands = [
  {{ argv = ["sh", "-c", "[ \"$(pwd)\" = \"$SCHEDLAB_TRIAL_DIR\" ] && [ \"$SCHEDLAB_TASK_INDEX\" = 0 ] && [ \"$TMPDIR\" = \"$SCHEDLAB_TRIAL_DIR\" ] && echo x > written || exit 3"] }},
  {{ argv = ["sh", "-c", "[ \"$(pwd)\" = \"{elsewhere}\" ] && [ \"$GREETING\" = hi ] || exit 4"], cwd = {elsewhere:?}, env = {{ GREETING = "hi" }} }},
]
[settings]
trials = 1
io_dir = {io:?}
"#
        ),
    );
    run_ok(&s, &[&spec]);
    let c = s.conn();
    let status: String = c
        .query_row("SELECT status FROM trials", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "ok");
    assert_eq!(
        ints(&c, "SELECT exit_status FROM tasks ORDER BY task_index"),
        vec![0, 0],
        "0 = in the trial directory with its index; 3/4 = wrong directory or environment"
    );
    let left: Vec<_> = std::fs::read_dir(&io).unwrap().collect();
    assert!(left.is_empty(), "the trial directory was removed: {left:?}");
}

#[test]
fn a_failing_program_fails_its_trial_with_its_status_and_last_stderr_line() {
    let s = Scratch::new();
    let spec = write_spec(
        &s,
        r#"
name = "exit"
[[axes.workloads]]
kind = "command"
commands = [{ argv = ["sh", "-c", "echo printed-by-$((40+2)); echo first >&2; echo cannot open the input >&2; exit 3"] }]
[settings]
trials = 1
"#,
    );
    let out = run_ok(&s, &[&spec]);
    assert!(
        !out.contains("printed-by-42"),
        "a program's output goes to its log, not to schedlab's terminal: {out}"
    );
    let c = s.conn();
    let (status, reason) = only_trial(&c);
    assert_eq!(status, "failed");
    assert!(
        reason.contains("exited with status 3")
            && reason.contains("last stderr line: cannot open the input"),
        "{reason}"
    );
}

#[test]
fn a_programs_children_cut_off_by_the_window_count_as_the_trials_own_cpu_not_outside_work() {
    if !root("SCHED_FIFO") {
        return;
    }
    let _turn = rt_turn();
    // The program starts a child that spins and waits for it; the 1 s window stops both. The
    // spinner is never reaped by the program, so its CPU time is not in the program's rusage:
    // the launcher reaps it and counts it as the trial's. FIFO on CPU 0, so that work outside
    // the trial hardly gets that CPU (the fair server's 5 % at most): before, the spinner's
    // second counted as outside work and every such trial was flagged disturbed.
    let s = Scratch::new();
    let spec = write_spec(
        &s,
        r#"
name = "window-children"
[axes]
policies = ["fifo"]
cpus = ["0"]
[[axes.workloads]]
kind = "command"
commands = [{ argv = ["sh", "-c", "sh -c 'while :; do :; done' & wait"] }]
duration = "1s"
[settings]
trials = 2
"#,
    );
    run_ok(&s, &[&spec]);
    let c = s.conn();
    let rows: Vec<(String, f64, i64)> = c
        .prepare("SELECT status, outside_share, disturbed FROM trials ORDER BY trial_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for (status, share, disturbed) in &rows {
        assert_eq!(status, "ok", "{rows:?}");
        assert!(*share < 0.25, "outside share {share}: {rows:?}");
        assert_eq!(*disturbed, 0, "{rows:?}");
    }
}
