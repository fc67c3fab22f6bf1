//! Tests of the command line's conversion into a spec.

use super::*;

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
