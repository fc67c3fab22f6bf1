//! Tests of reading a run's cells back: every axis and status as its type, an unknown stored
//! value refused with its column and value, and workloads stored by older versions.

use super::*;
use schedlab_core::workload::{Ipc, WorkloadKind};

/// A store in `dir` with one run of one cell (`workload_json` as given) and one ok trial;
/// returns it and the run id.
fn store_with(dir: &std::path::Path, workload_json: &str) -> (Store, i64) {
    let store = Store::open(dir.join("cells.db")).unwrap();
    let db = &store.db;
    let run_id: i64 = db
        .query_one(
            "INSERT INTO runs (name, started_at, status, seed, spec_toml, spec_hash, argv, version, trials_planned)
             VALUES ('t', '2026-01-02T03:04:05Z', 'done', 1, 'name = \"t\"', '0123456789abcdef', 'schedlab run', '0.1.0', 1) RETURNING run_id",
            &[],
            |r| r.get(0),
        )
        .unwrap();
    let cell_id: i64 = db
        .query_one(
            "INSERT INTO cells (run_id, cell_index, policy, priorities, workload, workload_json, kind, start, tasks,
                                dl_runtime_ns, dl_deadline_ns, dl_period_ns)
             VALUES (?1, 0, 'fifo', 'spread', 'cpu:pi', ?2, 'thread', 'staggered', 2, 0, 0, 0) RETURNING cell_id",
            params![run_id, workload_json],
            |r| r.get(0),
        )
        .unwrap();
    db.execute(
        "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, makespan_ns, timeout_ns, started_at)
         VALUES (?1, ?2, 0, 0, 0, 'ok', 1000, 10000000000, '2026-01-02T03:05:00Z')",
        params![run_id, cell_id],
    )
    .unwrap();
    (store, run_id)
}

#[test]
fn a_cells_axes_and_statuses_read_back_as_their_types() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = store_with(dir.path(), r#"{"kind":"cpu"}"#);
    let c = &cells(&store, run, false).unwrap()[0];
    assert_eq!(c.policy, PolicyKind::Fifo);
    assert_eq!(c.priorities, PriorityMode::Spread);
    assert_eq!(c.kind, TaskKind::Thread);
    assert_eq!(c.start, StartMode::Staggered);
    assert_eq!(c.statuses, [(Tally::Status(TrialStatus::Ok), 1)]);
    assert_eq!(
        (c.count(TrialStatus::Ok), c.count(TrialStatus::Failed)),
        (1, 0)
    );
}

#[test]
fn an_unknown_stored_value_is_refused_with_its_column_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let (store, run) = store_with(dir.path(), r#"{"kind":"cpu"}"#);
    let cases = [
        ("UPDATE cells SET policy = 'sched_lottery'", "cells.policy"),
        ("UPDATE cells SET priorities = 'random'", "cells.priorities"),
        ("UPDATE cells SET kind = 'fiber'", "cells.kind"),
        ("UPDATE cells SET start = 'later'", "cells.start"),
        ("UPDATE trials SET status = 'lost'", "trials.status"),
    ];
    for (i, (update, column)) in cases.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let (store, run) = store_with(dir.path(), r#"{"kind":"cpu"}"#);
        store.db.execute(update, &[]).unwrap();
        let value = update.split('\'').nth(1).unwrap();
        match cells(&store, run, false) {
            Err(e @ StoreError::Unknown { column: c, .. }) => {
                assert_eq!(c, *column, "case {i}");
                let shown = e.to_string();
                assert!(
                    shown.contains(column) && shown.contains(&format!("'{value}'")),
                    "{shown}"
                );
            }
            other => panic!("case {i}: {update} read as {other:?}"),
        }
    }
    // The problems list reads the same column the same way.
    store
        .db
        .execute("UPDATE trials SET status = 'timeout'", &[])
        .unwrap();
    assert_eq!(
        super::super::problems(&store, run, false).unwrap()[0].status,
        TrialStatus::Timeout
    );
    // And a run's status.
    store
        .db
        .execute("UPDATE runs SET status = 'paused'", &[])
        .unwrap();
    match super::super::run_info(&store, run) {
        Err(
            e @ StoreError::Unknown {
                column: "runs.status",
                ..
            },
        ) => {
            assert!(e.to_string().contains("'paused'"), "{e}")
        }
        other => panic!("a run stored as paused read as {other:?}"),
    }
}

#[test]
fn a_workload_reads_with_every_parameter_and_older_rows_take_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    // As stored today (m5/msg.db).
    let msg = r#"{"kind":"messaging","cpu_kernel":"pi","io_mode":"sync-copy","io_block_bytes":1024,"io_input_bytes":102400,"io_every":1000,"period_ns":1000000,"run_ns":100000,"commands":[],"start_gap_ns":0,"window_ns":0,"messaging":{"groups":1,"fds":7,"data_size":100,"ipc":"socket"}}"#;
    let (store, run) = store_with(dir.path(), msg);
    let w = &cells(&store, run, false).unwrap()[0].work;
    assert_eq!(w.kind, WorkloadKind::Messaging);
    let m = w.messaging.unwrap();
    assert_eq!((m.fds, m.ipc, m.latency), (7, Ipc::Socket, false));
    // Before commands, start_gap_ns and window_ns existed (schedlab of 22 Nov).
    let dir = tempfile::tempdir().unwrap();
    let old = r#"{"kind":"periodic","cpu_kernel":"pi","io_mode":"sync-copy","io_block_bytes":1024,"io_input_bytes":102400,"io_every":1000,"period_ns":2000000,"run_ns":300000}"#;
    let (store, run) = store_with(dir.path(), old);
    let w = &cells(&store, run, false).unwrap()[0].work;
    assert_eq!(
        (w.kind, w.period_ns, w.run_ns),
        (WorkloadKind::Periodic, 2_000_000, 300_000)
    );
    assert!(w.commands.is_empty() && w.window_ns == 0);
    // The family alone (tests/report_db's synthetic run).
    assert_eq!(
        stored_workload(r#"{"kind":"io"}"#).unwrap().kind,
        WorkloadKind::Io
    );
    assert_eq!(
        stored_workload(r#"{"kind":"io"}"#).unwrap().io_block_bytes,
        Workload::default().io_block_bytes
    );
    // Without its family, or with one this version does not know, it does not read.
    for bad in [
        r#"{"period_ns":1}"#,
        r#"{"kind":"quantum"}"#,
        "[]",
        r#"{"kind":"cpu","run_ns":"x"}"#,
    ] {
        assert!(
            matches!(stored_workload(bad), Err(StoreError::Json(_))),
            "{bad}"
        );
    }
}
