//! The communicating workloads (messaging, request, pipe) and rt-app's figures of periodic
//! work, through the real binary: what they store must follow from their parameters.

mod common;

use common::*;

#[test]
fn every_messaging_receiver_gets_every_message_of_its_group_in_processes_and_threads() {
    let s = Scratch::new();
    for ipc in ["pipe", "socket"] {
        run_ok(
            &s,
            &[
                "--workload",
                "messaging",
                "--message-groups",
                "2",
                "--fds",
                "3",
                "--loops",
                "40",
                "--data-size",
                "100",
                "--ipc",
                ipc,
                "--kind",
                "process,thread",
                "--trials",
                "1",
                "--sample-interval",
                "off",
            ],
        );
    }
    let c = s.conn();
    // 4 trials (2 transports x 2 kinds), each of 2 groups x 3 senders and 3 receivers.
    let per_trial = ints(&c, "SELECT COUNT(*) FROM tasks GROUP BY trial_id");
    assert_eq!(per_trial, vec![12; 4]);
    // A receiver reads 3 senders x 40 loops of 100 bytes; a sender writes 3 receivers x 40.
    for role in ["receiver", "sender"] {
        let got = rows::<(i64, i64)>(
            &c,
            &format!("SELECT bytes, work_units FROM tasks WHERE workload_role = '{role}'"),
        );
        assert_eq!(got.len(), 4 * 6, "{role}s");
        assert!(got.iter().all(|&p| p == (12_000, 120)), "{role}: {got:?}");
    }
    // The trial counts G x F^2 x L = 720 messages, over a positive time.
    let trials = rows::<(i64, i64)>(&c, "SELECT ops, makespan_ns FROM trials");
    assert_eq!(trials.len(), 4);
    assert!(
        trials.iter().all(|&(ops, t)| ops == 720 && t > 0),
        "{trials:?}"
    );
    let kinds = ints(
        &c,
        "SELECT COUNT(DISTINCT t.pid) FROM tasks t JOIN trials USING (trial_id) JOIN cells c USING (cell_id) GROUP BY trial_id ORDER BY c.kind",
    );
    // Processes: 12 pids; threads: one.
    assert_eq!(kinds, vec![12, 12, 1, 1]);
}

#[test]
fn a_request_workload_on_one_cpu_cannot_beat_its_work() {
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--workload",
            "request",
            "--message-threads",
            "1",
            "--workers",
            "2",
            "--run",
            "1ms",
            "--duration",
            "500ms",
            "--cpus",
            "0",
            "--trials",
            "1",
            "--sample-interval",
            "off",
        ],
    );
    let c = s.conn();
    let rps: f64 = c
        .query_row("SELECT ops_per_s FROM trials", [], |r| r.get(0))
        .unwrap();
    // One CPU, 1 ms of work per request: at most 1000 requests a second.
    assert!(rps > 0.0 && rps <= 1000.0, "{rps} requests/s");
    let p50 = ints(&c, "SELECT op_p50_ns FROM trials");
    assert!(p50[0] >= 1_000_000, "request latency p50 {} ns", p50[0]);
    // Every completed request was timed, by the worker that did it.
    let workers = rows::<(i64, i64)>(
        &c,
        "SELECT work_units, op_count FROM tasks WHERE workload_role = 'worker'",
    );
    assert_eq!(workers.len(), 2);
    assert!(
        workers.iter().all(|&(n, timed)| n == timed && n > 0),
        "{workers:?}"
    );
    // Against the kernel's CPU clocks: on one CPU all tasks' CPU time (work, and spinning on
    // the CPU's lock while its holder is preempted) fits in the trial.
    let makespan = ints(&c, "SELECT makespan_ns FROM trials")[0];
    let cpu = ints(&c, "SELECT SUM(cpu_ns) FROM tasks")[0];
    assert!(
        cpu <= makespan + makespan / 20,
        "CPU {cpu} ns in {makespan} ns"
    );
    let hists = ints(
        &c,
        "SELECT COUNT(*) FROM histograms WHERE metric IN ('wakeup_latency_ns', 'request_latency_ns')",
    );
    assert_eq!(
        hists,
        vec![4],
        "two histograms per worker, none for the message thread"
    );
}

#[test]
fn fifo_workers_wake_sooner_than_other_workers_beside_a_cpu_hog() {
    if !root("SCHED_FIFO workers") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--workload",
            "request",
            "--message-threads",
            "1",
            "--workers",
            "1",
            "--run",
            "1ms",
            "--duration",
            "500ms",
            "--cpus",
            "0",
            "--policy",
            "other,fifo",
            "--antagonists",
            "1",
            "--antagonist-policy",
            "other",
            "--trials",
            "1",
            "--sample-interval",
            "off",
        ],
    );
    let c = s.conn();
    let p99 = |p: &str| {
        ints(
            &c,
            &format!(
                "SELECT tr.wake_p99_ns FROM trials tr JOIN cells c USING (cell_id) WHERE c.policy = '{p}'"
            ),
        )[0]
    };
    let (other, fifo) = (p99("other"), p99("fifo"));
    assert!(fifo < other, "FIFO wake-up p99 {fifo} ns, OTHER {other} ns");
}

/// (units, voluntary, involuntary switches) of every task of the cells of `policy`.
fn switches(c: &rusqlite::Connection, policy: &str) -> Vec<(i64, i64, i64)> {
    let sql = format!(
        "SELECT t.work_units, t.nvcsw, t.nivcsw FROM tasks t JOIN trials USING (trial_id)
         JOIN cells c USING (cell_id) WHERE c.policy = '{policy}'"
    );
    let mut st = c.prepare(&sql).unwrap();
    let rows: Vec<(i64, i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    rows
}

#[test]
fn pipe_round_trips_are_the_loops_and_each_side_switches_at_least_once_per_loop() {
    let root = schedlab_sys::is_root();
    let policies = if root { "other,fifo" } else { "other" };
    let _turn = rt_turn();
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--workload",
            "pipe",
            "--loops",
            "2000",
            "--cpus",
            "0",
            "--kind",
            "process,thread",
            "--policy",
            policies,
            "--trials",
            "1",
            "--sample-interval",
            "off",
        ],
    );
    let c = s.conn();
    let trials = ints(&c, "SELECT ops FROM trials");
    assert!(
        trials.len() >= 2 && trials.iter().all(|&n| n == 2000),
        "{trials:?}"
    );
    // Against the kernel's CPU clocks: on one CPU the two sides never run at once, so the
    // trial (whose makespan / loops is the round-trip figure) lasts at least their CPU time.
    let serial = rows::<(i64, i64)>(
        &c,
        "SELECT tr.makespan_ns, SUM(t.cpu_ns) FROM trials tr JOIN tasks t USING (trial_id)
         GROUP BY tr.trial_id",
    );
    assert!(
        serial.iter().all(|&(m, cpu)| m >= cpu - cpu / 20),
        "makespan vs CPU: {serial:?}"
    );
    // On one CPU the token comes back only after the other side ran: each side leaves the
    // CPU at least once per loop, asleep in its read or preempted (under OTHER a wake-up may
    // preempt the writer, which then finds the token waiting; so may another task's tick).
    let other = switches(&c, "other");
    assert_eq!(other.len(), 4);
    assert!(
        other.iter().all(|r| r.0 == 2000 && r.1 + r.2 >= 2000),
        "other: {other:?}"
    );
    if !root {
        eprintln!("skipping the FIFO half: needs root");
        return;
    }
    // FIFO tasks of one priority are preempted neither by each other's wake-ups nor by
    // ticks or OTHER tasks: each sleeps in its read every loop, a voluntary switch per loop.
    let fifo = switches(&c, "fifo");
    assert_eq!(fifo.len(), 4);
    assert!(
        fifo.iter().all(|r| r.0 == 2000 && r.1 >= 2000),
        "fifo: {fifo:?}"
    );
}

#[test]
fn periodic_work_misses_no_period_at_low_load_and_every_period_past_full_load() {
    if !root("SCHED_FIFO periodic tasks") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    // 10 ms periods at 40 % and 250 %. The work is calibrated CPU time, and this machine's
    // speed drifts by tens of percent between calibration and trial (a 150 % run once took
    // ~10 ms a period here): 250 % and 40 % stay past and below 100 % through such a drift.
    for run in ["4ms", "25ms"] {
        run_ok(
            &s,
            &[
                "--workload",
                "periodic",
                "--period",
                "10ms",
                "--run",
                run,
                "--work",
                "300ms",
                "--tasks",
                "1",
                "--cpus",
                "0",
                "--policy",
                "fifo",
                "--trials",
                "1",
                "--sample-interval",
                "off",
            ],
        );
    }
    let c = s.conn();
    let misses = rows::<(i64, i64)>(
        &c,
        "SELECT tr.misses, tr.ops FROM trials tr ORDER BY tr.trial_id",
    );
    assert_eq!(
        misses,
        vec![(0, 30), (30, 30)],
        "misses and periods at 40 % and 250 %"
    );
    let slack = rows::<(i64, i64)>(
        &c,
        "SELECT slack_p1_ns, slack_p99_ns FROM trials ORDER BY trial_id",
    );
    assert!(slack[0].0 > 0, "every slack positive at 40 %: {slack:?}");
    assert!(
        slack[1].1 <= 0,
        "every slack negative or zero at 250 %: {slack:?}"
    );
    // Against the kernel's CPU clock: a FIFO task alone on its CPU runs its work in about its
    // CPU time, so the median slack is the period minus the task's CPU time per period
    // (rt-app's relative timer: an overrun period starts the next one at once, so each misses
    // by its own overrun, and the lag never accumulates).
    let kernel = rows::<(i64, i64)>(
        &c,
        "SELECT cpu_ns, slack_p50_ns FROM tasks ORDER BY trial_id",
    );
    // Tolerance: 1 ms plus a fifth of the work: interrupts, RT throttling's 5 % when a FIFO
    // task overruns for the whole trial, and a median of periods set against a mean (the CPU
    // time over 30 periods) on a machine whose speed drifts within the trial: a CI run saw
    // -15.1 ms against -19.7 ms. A lag that accumulated (an absolute timer) would be off by
    // many periods, not a fraction of one.
    for (cpu_ns, p50) in kernel {
        let per_period = cpu_ns / 30;
        let expected = 10_000_000 - per_period;
        assert!(
            (p50 - expected).abs() < 1_000_000 + per_period / 5,
            "slack p50 {p50} ns, period - CPU per period {expected} ns"
        );
    }
    let late = ints(&c, "SELECT late_max_ns FROM tasks WHERE misses > 0");
    assert!(late[0] < 50_000_000, "{late:?}");
}

/// Runs `schedlab run` with `args` (through `sh -c` with `ulimit`) and expects exit 2 naming
/// `key`, with no database left behind.
fn refused(ulimit: Option<u32>, args: &[&str], key: &str) {
    let s = Scratch::new();
    let db = s.db();
    let mut cmd = match ulimit {
        Some(n) => {
            let mut c = std::process::Command::new("sh");
            let bin = assert_cmd::cargo::cargo_bin("schedlab");
            c.args([
                "-c",
                &format!("ulimit -n {n} && exec \"$0\" \"$@\""),
                bin.to_str().unwrap(),
            ]);
            c
        }
        None => schedlab(),
    };
    let out = cmd
        .args(["run", "--db", db.to_str().unwrap()])
        .args(NO_RETRIES)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(key), "{args:?} should name {key}: {err}");
    assert!(!db.exists(), "{args:?}: nothing may be stored");
}

#[test]
fn impossible_parameters_exit_2_naming_the_key_and_store_nothing() {
    refused(
        None,
        &["--workload", "messaging", "--message-groups", "0"],
        "groups",
    );
    refused(None, &["--workload", "messaging", "--fds", "0"], "fds");
    refused(
        None,
        &["--workload", "request", "--workers", "0"],
        "workers",
    );
    refused(None, &["--workload", "pipe", "--loops", "0"], "loops");
    refused(
        None,
        &[
            "--workload",
            "messaging",
            "--message-latency",
            "--data-size",
            "4",
        ],
        "data_size",
    );
    refused(None, &["--workload", "messaging", "--work", "50ms"], "work");
    refused(
        None,
        &["--workload", "cpu", "--message-groups", "2"],
        "--message-groups",
    );
    // 10 groups of 20 threads hold 400 descriptors in one process: over a limit of 256.
    refused(
        Some(256),
        &[
            "--workload",
            "messaging",
            "--message-groups",
            "10",
            "--kind",
            "thread",
        ],
        "groups = 10",
    );
    refused(
        Some(100),
        &[
            "--workload",
            "messaging",
            "--fds",
            "30",
            "--kind",
            "process",
        ],
        "fds = 30",
    );
}
