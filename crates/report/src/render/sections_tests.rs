//! Tests of the sections' text tables, each from typed rows written out by hand.

use super::*;
use crate::model::kernel::LatencyCell;
use crate::model::workload::{metrics_of, WorkloadRow};
use schedlab_core::workload::{periodic, WorkloadKind};

fn request_table(other_axes: Option<&str>) -> WorkloadTable {
    let row = |policy: &str, medians: Vec<Option<f64>>| WorkloadRow {
        policy: policy.into(),
        tasks: 10,
        axis: ("workers", 4),
        other_axes: None,
        trials: 3,
        medians,
    };
    let mut fifo = row(
        "fifo",
        vec![
            Some(1895.4),
            Some(3.97),
            Some(5.5),
            Some(27.8),
            None,
            None,
            None,
            None,
            None,
        ],
    );
    fifo.other_axes = other_axes.map(String::from);
    WorkloadTable {
        workload: "request:m2/1000us/256KiB".into(),
        kind: WorkloadKind::Request,
        metrics: metrics_of(WorkloadKind::Request),
        rows: vec![row("other", vec![None; 9]), fifo],
    }
}

#[test]
fn a_workload_table_names_the_task_parameter_and_drops_p90_when_narrow() {
    let t = workload_table(&request_table(None), false);
    assert_eq!(
        t.title,
        "request:m2/1000us/256KiB: the workload's figures, medians over trials (latencies and slack in us)"
    );
    assert_eq!(
        t.header,
        [
            "policy",
            "workers",
            "n",
            "req/s",
            "wake p50",
            "wake p99",
            "wake p99.9",
            "req p50",
            "req p99",
            "req p99.9"
        ]
    );
    // The row's parameter (10 tasks with 2 message threads: 4 workers) as the model gives it.
    assert_eq!(
        t.rows[1],
        ["fifo", "4", "3", "1895", "3.97", "27.8", "-", "-", "-", "-"]
    );
    assert_eq!(t.rows[0][3..], ["-"; 7]);
    let wide = workload_table(&request_table(None), true);
    assert_eq!(wide.header.len(), 12);
    assert_eq!(
        (wide.header[5].as_str(), wide.rows[1][5].as_str()),
        ("wake p90", "5.50")
    );
}

#[test]
fn the_other_axes_column_shows_only_when_a_cell_has_other_axes() {
    let t = workload_table(&request_table(Some("threads")), false);
    assert_eq!(t.header[..4], ["policy", "workers", "other axes", "n"]);
    assert_eq!(t.rows[0][2], "-");
    assert_eq!(t.rows[1][2], "threads");
}

#[test]
fn latencies_show_in_microseconds_with_three_significant_figures() {
    assert_eq!(us(1_000), "1.00");
    assert_eq!(us(9_994), "9.99");
    assert_eq!(us(12_340), "12.3");
    assert_eq!(us(123_456), "123");
    let mut hist = periodic::new_histogram();
    for v in [1_000u64, 2_000, 250_000] {
        hist.record(v).unwrap();
    }
    let v = KernelView {
        latency: vec![LatencyCell {
            cell_index: 0,
            policy: "fifo".into(),
            workload: "periodic:1000us/100us".into(),
            label: "fifo x1".into(),
            hist,
        }],
        traces: Vec::new(),
    };
    let t = latency_table(&v).unwrap();
    assert_eq!(t.header[3], "min (us)");
    assert_eq!(
        t.rows[0][..4],
        ["periodic:1000us/100us", "fifo x1", "3", "1.00"]
    );
    // The median of 1, 2 and 250 us, as the histogram holds it (within its 1%: the top of
    // 2 us's bucket).
    assert_eq!(t.rows[0][4], "2.01");
    assert_eq!(t.rows[0][8], "251", "the largest, 250 us within 1%");
    assert!(latency_table(&KernelView::default()).is_none());
}

#[test]
fn io_tests_show_statistics_and_p_values_with_their_marks() {
    // Per-trial means 1, 2, 3 under none and 4, 5, 6 under bfq. scipy 1.17.1:
    // f_oneway -> F = 13.5, p = 0.021311641128756713;
    // kruskal -> H = 3.857142857142854, p = 0.049534613435626915.
    let column = |v: [f64; 3]| {
        let mut out = vec![Vec::new(); COLUMNS.len()];
        out[0] = v.to_vec();
        out
    };
    let w = SchedulerSamples {
        workload: "io:sync-copy".into(),
        schedulers: vec!["none".into(), "bfq".into()],
        values: vec![column([1.0, 2.0, 3.0]), column([4.0, 5.0, 6.0])],
        trial_means: vec![column([1.0, 2.0, 3.0]), column([4.0, 5.0, 6.0])],
    };
    let t = io_tests_table(std::slice::from_ref(&w)).unwrap();
    assert_eq!(t.rows.len(), COLUMNS.len());
    assert_eq!(
        t.rows[0],
        [
            "io:sync-copy",
            "r: runnable tasks",
            "3/3",
            "13.500",
            "0.0213 *",
            "3.857",
            "0.0495 *",
            "3/3"
        ]
    );
    assert_eq!(t.rows[1][2..], ["0/0", "-", "-", "-", "-", "0/0"]);
    assert!(t.title.contains("per-trial means"), "{}", t.title);
    assert_eq!(
        with_mark(&Tested {
            statistic: 1.0,
            p: 0.0031,
            significance: Significance::Alpha01
        }),
        "0.0031 **"
    );
    let one = SchedulerSamples {
        schedulers: vec!["none".into()],
        ..w
    };
    assert!(io_tests_table(&[one]).is_none());
}

#[test]
fn a_groups_row_writes_its_limit_cpus_and_medians() {
    let g = GroupSummary {
        cell_index: 0,
        cell: "other cpu:pi x2".into(),
        name: "a".into(),
        tasks: 1,
        weight: 300,
        weight_share: 0.75,
        limit_cpus: Some(0.2),
        cpu_max_us: Some((20_000, 100_000)),
        period_ms: Some(100.0),
        cpus: Some("1".into()),
        partition: true,
        trials: 3,
        share: Some(0.7512),
        usage_ms: Some(123.4),
        nr_periods: Some(10.0),
        nr_throttled: Some(2.0),
        throttled_ms: None,
        p99_us: None,
    };
    let unlimited = GroupSummary {
        cpu_max_us: Some((1_500, 10_000)),
        cpus: None,
        partition: false,
        share: None,
        ..g.clone()
    };
    let t = groups_table(&CgroupView {
        groups: vec![g, unlimited],
    })
    .unwrap();
    assert_eq!(
        t.rows[0],
        [
            "other cpu:pi x2",
            "a",
            "1",
            "300 (0.750)",
            "0.751",
            "20ms/100ms",
            "1 (partition)",
            "2.00 / 10.0",
            "-",
            "123",
            "-",
            "3"
        ]
    );
    assert_eq!(t.rows[1][4..7], ["-", "1500us/10ms", "-"]);
    assert!(groups_table(&CgroupView::default()).is_none());
}
