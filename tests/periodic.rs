//! Periodic tasks: wake-up latency per period, under load from antagonists.

mod common;

use common::*;

#[test]
fn a_periodic_fifo_task_among_cpu_hogs_wakes_up_sooner_than_under_other() {
    if !root_or_skip("a_periodic_fifo_task_among_cpu_hogs_wakes_up_sooner_than_under_other") {
        return;
    }
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--workload",
            "periodic",
            "--period",
            "2ms",
            "--run",
            "100us",
            "--work",
            "400ms",
            "--tasks",
            "1",
            "--policy",
            "other,fifo",
            "--antagonists",
            "2",
            "--antagonist-policy",
            "other",
            "--cpus",
            "0",
            "--trials",
            "1",
        ],
    );
    let c = s.conn();
    let p99 = |p: &str| {
        ints(
            &c,
            &format!(
                "SELECT t.lat_p99_ns FROM tasks t JOIN trials USING (trial_id) JOIN cells c USING (cell_id)
                 WHERE c.policy = '{p}' AND t.role = 'task'"
            ),
        )
    };
    let (other, fifo) = (p99("other"), p99("fifo"));
    assert_eq!((other.len(), fifo.len()), (1, 1));
    assert!(
        fifo[0] < other[0],
        "FIFO p99 {} ns should be below OTHER p99 {} ns",
        fifo[0],
        other[0]
    );
    let counts = ints(&c, "SELECT lat_count FROM tasks WHERE role = 'task'");
    assert!(
        counts.iter().all(|&n| n == 200),
        "one latency per 2 ms period over 400 ms: {counts:?}"
    );
    let hogs = ints(
        &c,
        "SELECT COUNT(*) FROM tasks WHERE role = 'antagonist' AND utime_ns > 0",
    );
    assert_eq!(
        hogs,
        vec![4],
        "two antagonists per trial ran and were stopped"
    );
    let hist = ints(
        &c,
        "SELECT COUNT(*) FROM histograms WHERE metric = 'wakeup_latency_ns'",
    );
    assert_eq!(
        hist,
        vec![2],
        "raw histograms are stored for the measured tasks"
    );
}

#[test]
fn periodic_parameters_are_checked() {
    let s = Scratch::new();
    let out = schedlab()
        .args([
            "run",
            "--db",
            s.db().to_str().unwrap(),
            "--workload",
            "periodic",
            "--period",
            "1ms",
            "--run",
            "2ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shorter than the period"), "{err}");
}
