//! Kernel limits named, not silently measured: DEADLINE refused on pinned CPUs gets its real
//! cause, and a trial cut short by RT throttling is flagged with cause and remedy.

mod common;

use common::*;

/// The budget of RT time per period in force, in us: (runtime, period).
fn rt_budget() -> (i64, i64) {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .unwrap()
            .trim()
            .parse::<i64>()
            .unwrap()
    };
    (read("sched_rt_runtime_us"), read("sched_rt_period_us"))
}

#[test]
fn deadline_on_pinned_cpus_is_refused_with_the_root_domain_as_cause_and_unpinned_runs() {
    if !root("SCHED_DEADLINE") {
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return skip(
            Need::Kernel,
            "one CPU cannot be narrower than the root domain (needs 2 CPUs)",
        );
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    let out = run_ok(
        &s,
        &[
            "--policy", "deadline", "--tasks", "2", "--work", "5ms", "--trials", "1", "--cpus", "0",
        ],
    );
    let c = s.conn();
    let (status, reason): (String, String) = c
        .query_row("SELECT status, reason FROM trials", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "skipped");
    assert!(
        reason.contains("root domain") && reason.contains("EPERM") && reason.contains("unpinned"),
        "{reason}"
    );
    assert!(
        !reason.contains("lacks CAP_SYS_NICE"),
        "root has it: {reason}"
    );
    assert!(out.contains("root domain"), "the run says so too: {out}");
    drop(c);
    // What the reason says works does: unpinned, the same deadline cell runs.
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "deadline", "--tasks", "2", "--work", "5ms", "--trials", "1",
        ],
    );
    let ok = ints(&s.conn(), "SELECT COUNT(*) FROM trials WHERE status = 'ok'");
    assert_eq!(ok, vec![1]);
}

#[test]
fn a_trial_cut_short_by_rt_throttling_is_flagged_with_cause_and_remedy() {
    if !root("SCHED_FIFO") {
        return;
    }
    let (runtime, period) = rt_budget();
    if runtime < 0 || runtime >= period || runtime > 980_000 {
        return skip(
            Need::Kernel,
            format!("RT throttling is off or too loose here ({runtime}/{period} us)"),
        );
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    // Three FIFO tasks of 1 s on CPU 0: 3 s back to back. The kernel throttles RT tasks once
    // they used 0.95 s since the last period boundary, so demand of more than twice that is
    // throttled wherever the period starts (1.63 s once escaped, the boundary falling late);
    // 3 s stays above 1.9 s even if the calibration was made on a slow moment. And a short
    // cell that stays within the budget.
    let spec = s.path().join("rt.toml");
    std::fs::write(
        &spec,
        r#"
name = "rt-throttling"
[axes]
policies = ["fifo"]
tasks = [3]
cpus = ["0"]
workloads = [{ kind = "cpu", cpu_kernel = "spin", work = "1s" }, { kind = "cpu", cpu_kernel = "pi", work = "50ms" }]
[settings]
trials = 1
sample_interval = "off"
"#,
    )
    .unwrap();
    run_ok(&s, &[spec.to_str().unwrap()]);
    let c = s.conn();
    let flags: Vec<(String, Option<i64>)> = c
        .prepare(
            "SELECT c.workload, tr.rt_throttled FROM trials tr JOIN cells c USING (cell_id)
             ORDER BY c.cell_index",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let spans: Vec<(i64, i64, i64)> = c
        .prepare("SELECT trial_id, run_span_ns, cpu_ns FROM tasks")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(
        flags,
        vec![("cpu:spin".into(), Some(1)), ("cpu:pi".into(), Some(0))],
        "the long cell is throttled, the short one not; (trial, span, cpu): {spans:?}"
    );
    let warnings: Vec<(Option<i64>, String, String)> = c
        .prepare("SELECT trial_id, code, message FROM warnings WHERE code IN ('rt_budget_demand', 'rt_throttled')")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    // The plan-time warning (no trial) and the trial's own, each with a remedy.
    assert!(
        warnings
            .iter()
            .any(|(t, code, m)| t.is_none() && code == "rt_budget_demand" && m.contains("3000 ms")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|(t, code, m)| t.is_some() && code == "rt_throttled" && m.contains("Remedy")),
        "{warnings:?}"
    );
    drop(c);
    let stats = schedlab()
        .args(["stats", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(
        text.contains("RT throttling") && text.contains("cut short by RT throttling"),
        "{text}"
    );
}
