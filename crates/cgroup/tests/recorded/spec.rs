//! A trial's values: what is invalid everywhere, what this machine lacks.

use crate::*;
use schedlab_cgroup::*;

#[test]
fn checks_and_validation() {
    let (_, caps) = v1();
    let online = &caps.online_cpus;
    let idle_weighted = GroupSettings {
        idle: Some(true),
        ..weighted(300)
    };
    let cases: Vec<(TrialSpec, &str)> = vec![
        (trial("t", vec![]), "at least one group"),
        (
            trial("t", vec![group("a", weighted(1)), group("a", weighted(2))]),
            "two groups have this name",
        ),
        (
            trial("t", vec![group("a", idle_weighted)]),
            "refuses a weight",
        ),
        (
            trial(
                "t",
                vec![group(
                    "a",
                    GroupSettings {
                        partition: true,
                        ..GroupSettings::default()
                    },
                )],
            ),
            "needs the group's CPUs",
        ),
        (
            trial(
                "t",
                vec![group(
                    "a",
                    GroupSettings {
                        cpus: Some(CpuList::parse("2").unwrap()),
                        ..GroupSettings::default()
                    },
                )],
            ),
            "among the usable CPUs 0-1",
        ),
        (
            trial(
                "t",
                vec![group(
                    "a",
                    GroupSettings {
                        cpus: Some(CpuList::parse("0-1").unwrap()),
                        partition: true,
                        ..GroupSettings::default()
                    },
                )],
            ),
            "leave at least one",
        ),
        (
            trial(
                "t",
                vec![
                    group(
                        "a",
                        GroupSettings {
                            cpus: Some(CpuList::parse("1").unwrap()),
                            partition: true,
                            ..GroupSettings::default()
                        },
                    ),
                    group(
                        "b",
                        GroupSettings {
                            cpus: Some(CpuList::parse("0-1").unwrap()),
                            ..GroupSettings::default()
                        },
                    ),
                ],
            ),
            "share CPUs 1",
        ),
    ];
    for (spec, want) in cases {
        let e = spec.validate(online).unwrap_err();
        assert!(e.to_string().contains(want), "{want}: {e}");
        assert_eq!(e.code(), "cgroup.invalid-value");
    }
    // What the machine lacks is a typed reason, not an error of the user's.
    let mut old = caps.clone();
    old.idle.present = false;
    let idle = trial(
        "t",
        vec![group(
            "a",
            GroupSettings {
                idle: Some(true),
                ..GroupSettings::default()
            },
        )],
    );
    assert_eq!(idle.check(&old).unwrap_err().code(), "cgroup.no-feature");
    idle.check(&caps).unwrap();
    let mut no_cpu = caps.clone();
    no_cpu.cpu = Err(Unavailable::NoController {
        controller: Controller::Cpu,
    });
    assert_eq!(
        trial("t", vec![group("a", weighted(5))])
            .check(&no_cpu)
            .unwrap_err()
            .code(),
        "cgroup.no-controller"
    );
    trial("t", vec![group("a", GroupSettings::default())])
        .check(&no_cpu)
        .unwrap();
    let mut user = caps.clone();
    user.root_user = false;
    assert_eq!(
        trial("t", vec![group("a", weighted(5))])
            .check(&user)
            .unwrap_err()
            .code(),
        "cgroup.not-root"
    );
}
