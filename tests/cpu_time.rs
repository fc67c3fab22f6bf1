//! Exact CPU time per task: an unpreempted FIFO task on one CPU used the CPU for its whole run
//! span, and its stored CPU time says so, for threads and for processes.

mod common;

use common::*;

/// (kind, cpu_ns, run_span_ns, nivcsw, steal % of its trial) of every task of the run.
fn tasks(s: &Scratch) -> Vec<(String, i64, i64, i64, f64)> {
    s.conn()
        .prepare(
            "SELECT c.kind, t.cpu_ns, t.run_span_ns, t.nivcsw, COALESCE(tr.trial_steal_pct, 0)
             FROM tasks t JOIN trials tr USING (trial_id) JOIN cells c USING (cell_id)
             WHERE tr.status = 'ok'",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn an_unpreempted_fifo_task_has_cpu_time_equal_to_its_run_span_for_threads_and_processes() {
    if !root("SCHED_FIFO") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    // The command: four FIFO tasks take turns on CPU 0, each running to completion.
    run_ok(
        &s,
        &[
            "--policy",
            "fifo",
            "--kind",
            "thread,process",
            "--tasks",
            "4",
            "--cpus",
            "0",
            "--cpu-kernel",
            "spin",
            "--work",
            "20ms",
            "--trials",
            "2",
            "--sample-interval",
            "off",
        ],
    );
    let rows = tasks(&s);
    assert_eq!(rows.len(), 2 * 2 * 4);
    for kind in ["thread", "process"] {
        let unpreempted: Vec<_> = rows.iter().filter(|r| r.0 == kind && r.3 == 0).collect();
        assert!(
            unpreempted.len() >= 4,
            "{kind}: most FIFO tasks run unpreempted: {rows:?}"
        );
        for (_, cpu, span, _, steal) in unpreempted {
            // The CPU clock excludes time stolen by the hypervisor (paravirt steal
            // accounting): allow the trial's steal share on top of 3 %.
            let tolerance = (0.03 + steal / 100.0) * *span as f64 + 200_000.0;
            assert!(
                ((*cpu - *span) as f64).abs() <= tolerance,
                "{kind}: CPU {cpu} ns vs run span {span} ns (steal {steal:.1} %)"
            );
        }
    }
}
