//! Tests of the command line's conversion into a spec.

use super::*;
use schedlab_spec::Spec;

fn parse(args: &[&str]) -> RunArgs {
    match Cli::try_parse_from(std::iter::once("schedlab").chain(args.iter().copied()))
        .unwrap()
        .command
    {
        Command::Run(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_flags_mean_the_quick_experiment() {
    let spec = parse(&["run"]).to_spec().unwrap();
    assert_eq!(spec, Spec::default_quick());
}

#[test]
fn list_flags_become_axes() {
    let spec = parse(&[
        "run",
        "--policy",
        "other,fifo,rr",
        "--workload",
        "cpu,io,mixed",
        "--tasks",
        "10,50",
        "--trials",
        "5",
    ])
    .to_spec()
    .unwrap();
    assert_eq!(spec.axes.policies.len(), 3);
    assert_eq!(spec.axes.workloads.len(), 3);
    assert_eq!(spec.axes.tasks, vec![10, 50]);
    assert_eq!(spec.settings.trials, 5);
    assert_eq!(
        schedlab_spec::plan::build(&spec, 1).unwrap().cells.len(),
        18
    );
}

#[test]
fn a_bad_policy_names_the_flag_and_the_accepted_values() {
    let err = Cli::try_parse_from(["schedlab", "run", "--policy", "fast"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--policy") && err.contains("other, batch"),
        "{err}"
    );
}

#[test]
fn workload_flags_apply_to_every_workload() {
    let spec = parse(&[
        "run",
        "--workload",
        "mixed",
        "--io-every",
        "1",
        "--iterations",
        "1000",
        "--nice",
        "-5",
    ])
    .to_spec()
    .unwrap();
    assert_eq!(spec.axes.workloads[0].io_every, Some(1));
    assert_eq!(spec.axes.workloads[0].iterations, Some(1000));
    assert_eq!(spec.settings.nice, Some(-5));
}

#[test]
fn cgroup_flags_become_axes_with_one_value_per_cell() {
    let spec = parse(&[
        "run",
        "--groups",
        "a=1:b=1,a=1:b=4",
        "--cpu-weight",
        "100:300,100:900",
        "--cpu-max",
        "50ms/100ms,200ms/100ms,max",
        "--cpuset",
        "0+1:1",
        "--partition",
    ])
    .to_spec()
    .unwrap();
    let a = &spec.axes;
    assert_eq!(a.groups.as_ref().unwrap().layouts().len(), 2);
    assert_eq!(a.cpu_weight.len(), 2);
    assert_eq!(a.cpu_max.len(), 3, "the issue's example: three cells");
    assert_eq!(a.cpuset, [schedlab_spec::CgroupValue::Text("0+1:1".into())]);
    assert_eq!(a.partition, [true]);
    let plain = parse(&["run", "--cpu-max", "20ms/100ms"])
        .to_spec()
        .unwrap();
    assert_eq!(
        plain.name, "cli",
        "a cgroup flag describes an experiment from flags"
    );
    assert!(parse(&["run", "--groups", "a:b"]).to_spec().is_err());
}
