//! Tests of parsing and checking specs.

use super::*;
use schedlab_core::policy::PolicyKind;
use schedlab_core::records::WorkSize;
use schedlab_core::workload::WorkloadKind;

#[test]
fn unknown_keys_are_rejected_with_their_name_and_position() {
    let e = Spec::from_toml("[settings]\ntrails = 3\n").unwrap_err();
    assert!(
        matches!(e, crate::SpecError::Located { origin: None, .. }),
        "{e}"
    );
    let e = e.to_string();
    assert!(e.contains("trails") && e.contains("line 2"), "{e}");
}

/// The message of the first problem `spec` has.
fn problem(spec: &Spec) -> String {
    spec.validate().unwrap_err().to_string()
}

#[test]
fn impossible_values_name_the_key() {
    let mut s = Spec::default_quick();
    s.axes.tasks = vec![0];
    assert!(problem(&s).contains("axes.tasks"));
    let mut s = Spec::default_quick();
    s.axes.policies = vec![PolicyKind::Deadline];
    s.settings.deadline.runtime = "60ms".into();
    assert!(problem(&s).contains("settings.deadline"));
    let mut s = Spec::default_quick();
    s.axes.workloads = vec![WorkloadSpec {
        iterations: Some(5),
        work: Some("1ms".into()),
        ..WorkloadSpec::default()
    }];
    assert!(problem(&s).contains("either work or iterations"));
}

#[test]
fn io_bytes_fix_the_number_of_operations() {
    let mut s = Spec::default_quick();
    s.axes.workloads = vec![WorkloadSpec {
        kind: WorkloadKind::Io,
        io_bytes: Some(100 * 1024),
        io_block: Some(1024),
        ..WorkloadSpec::default()
    }];
    let checked = s.validate().unwrap();
    assert_eq!(checked.workloads[0].size, WorkSize::Iterations(100));
    assert_eq!(checked.workloads[0].workload.io_input_bytes, 100 * 1024);
}

#[test]
fn durations_and_defaults_are_typed_once() {
    let spec = Spec::from_toml(
        "[settings]\ntimeout = \"1.5s\"\nsample_interval = \"off\"\nwork = \"20ms\"\n",
    )
    .unwrap();
    let c = spec.validate().unwrap();
    assert_eq!(c.timeout_ns, Some(1_500_000_000));
    assert_eq!(c.sample_interval_ns, None);
    assert_eq!(c.io_dir, std::path::PathBuf::from("/var/tmp"));
    assert_eq!(c.workloads[0].size, WorkSize::WorkNs(20_000_000));
    // The defaults: 100 ms sampling, deadline 5 ms in 50 ms.
    let c = Spec::default_quick().validate().unwrap();
    assert_eq!(c.sample_interval_ns, Some(100_000_000));
    assert_eq!(c.timeout_ns, None);
    assert_eq!(
        (c.deadline.runtime_ns, c.deadline.period_ns),
        (5_000_000, 50_000_000)
    );
}

#[test]
fn a_too_short_sample_interval_or_a_zero_timeout_is_refused() {
    let mut s = Spec::default_quick();
    s.settings.sample_interval = "5ms".into();
    assert!(problem(&s).starts_with("settings.sample_interval: 5ms is too short"));
    let mut s = Spec::default_quick();
    s.settings.timeout = Some("0s".into());
    assert!(problem(&s).starts_with("settings.timeout: must be above 0"));
}

#[test]
fn command_orders_are_checked_permutations() {
    assert_eq!(permutations(3).len(), 6);
    assert_eq!(permutations(2), vec![vec![0, 1], vec![1, 0]]);
    let spec = Spec::from_toml(
        "[[axes.workloads]]\nkind = \"command\"\norders = \"all\"\n\
         commands = [{ argv = [\"true\"] }, { argv = [\"false\"] }]\n",
    )
    .unwrap();
    let c = spec.validate().unwrap();
    assert_eq!(c.workloads[0].orders, Some(vec![vec![0, 1], vec![1, 0]]));
    assert_eq!(c.workloads[0].variants(), 2);
    let mut bad = spec.clone();
    bad.axes.workloads[0].orders = Some(Orders::List(vec![vec![0, 0]]));
    assert!(problem(&bad).starts_with("axes.workloads[0].orders: [0, 0] is not a permutation"));
}
