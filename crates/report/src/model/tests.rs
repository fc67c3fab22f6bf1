//! Tests of the report model's assembly: samples from task rows, keys, groups.

use super::report::build;
use super::*;
use schedlab_store::query::TaskRow;

fn task(trial_id: i64, response: i64, turnaround: i64, cpu: i64) -> TaskRow {
    TaskRow {
        trial_id,
        round: trial_id,
        response_ns: Some(response),
        turnaround_ns: Some(turnaround),
        cpu_ns: cpu,
        nvcsw: 2,
        nivcsw: 3,
        run_delay_ns: 1_000_000,
        t_end_ns: None,
    }
}

#[test]
fn cell_samples_derive_run_span_trial_totals_and_jain_from_task_rows() {
    let c = CellView {
        tasks: 2,
        makespans_ns: vec![20_000_000, 30_000_000],
        task_rows: vec![
            task(1, 1_000_000, 10_000_000, 8_000_000),
            task(1, 2_000_000, 20_000_000, 8_000_000),
            task(2, 1_000_000, 30_000_000, 4_000_000),
            task(2, 1_000_000, 30_000_000, 12_000_000),
        ],
        ..CellView::default()
    };
    let s = cell_samples(&c);
    assert_eq!(s[Metric::Makespan.index()], vec![20.0, 30.0]);
    assert_eq!(s[Metric::MakespanPerTask.index()], vec![10.0, 15.0]);
    assert_eq!(s[Metric::RunSpan.index()], vec![9.0, 18.0, 29.0, 29.0]);
    assert_eq!(s[Metric::TrialCpu.index()], vec![16.0, 16.0]);
    assert_eq!(s[Metric::CpuPerTask.index()], vec![8.0, 8.0]);
    assert_eq!(s[Metric::TrialIvcsw.index()], vec![6.0, 6.0]);
    assert_eq!(s[Metric::CswPerTask.index()], vec![5.0, 5.0]);
    assert_eq!(s[Metric::JainCpu.index()], vec![1.0, 0.8]);
}

fn view(policy: &str, io: Option<&str>, antagonists: i64) -> CellView {
    CellView {
        policy: policy.parse().unwrap(),
        workload: "io:sync-copy".into(),
        tasks: 4,
        io_scheduler: io.map(String::from),
        antagonists,
        ..CellView::default()
    }
}

#[test]
fn io_schedulers_are_the_compared_treatment_and_antagonists_split_groups() {
    let one_policy = CellKey::all_of(&[
        view("other", Some("bfq"), 0),
        view("other", Some("kyber"), 0),
    ]);
    assert_eq!(one_policy[0].policy, "bfq");
    assert_eq!(one_policy[1].policy, "kyber");
    assert_eq!(one_policy[0].workload, one_policy[1].workload);
    let two = CellKey::all_of(&[view("other", Some("bfq"), 0), view("fifo", Some("bfq"), 2)]);
    assert_eq!(two[0].policy, "other io=bfq");
    assert_eq!(two[1].policy, "fifo io=bfq");
    assert_eq!(two[1].workload, "io:sync-copy +2 antagonists");
    let plain = CellKey::all_of(&[view("rr", None, 0)]);
    assert_eq!(plain[0], CellKey::of(&view("rr", None, 0)));
    let report = build(&ReportInput {
        cells: vec![view("fifo", None, 0), view("fifo", None, 2)],
        ..ReportInput::default()
    });
    assert_eq!(
        report.groups.len(),
        2,
        "with and without load are two groups"
    );
}
