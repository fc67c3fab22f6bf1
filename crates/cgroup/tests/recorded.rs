//! The layer against recorded cgroup trees (`MemFs`): the v2 code path, which no v2 cpu or
//! cpuset controller on this machine can run for real, and the v1 path on a machine without
//! root. Each test checks the files written and that nothing is left.

use schedlab_cgroup::memfs::MemFs;
use schedlab_cgroup::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const STATUS_ROOT: &str = "Name:\tx\nUid:\t0\t0\t0\t0\n";
const OWNER: OwnerId = OwnerId {
    pid: 4242,
    start_ticks: 17,
};

fn base(fs: &MemFs, kernel: &str) {
    fs.put("/proc/sys/kernel/osrelease", kernel);
    fs.put("/proc/self/status", STATUS_ROOT);
    fs.put("/sys/devices/system/cpu/online", "0-1\n");
}

/// A v2-only machine with cpu and cpuset enabled at the root.
fn v2() -> (Arc<MemFs>, Capabilities) {
    let fs = MemFs::new();
    base(&fs, "6.18.44");
    fs.mount_v2(
        "/sys/fs/cgroup",
        &["cpuset", "cpu", "io", "memory"],
        &["cpuset", "cpu", "memory"],
        "0-1",
    );
    fs.add_task(1);
    fs.add_task(777);
    let mi = "30 26 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t0\t9\t1\ncpu\t0\t9\t1\ncpuacct\t0\t9\t1\n";
    let caps = Capabilities::detect_from(&fs, mi, pc).unwrap();
    (Arc::new(fs), caps)
}

/// This machine's layout: v1 cpu, cpuacct and cpuset apart.
fn v1() -> (Arc<MemFs>, Capabilities) {
    let fs = MemFs::new();
    base(&fs, "6.18.44");
    fs.mount_v1("/sys/fs/cgroup/cpu", &["cpu"], "0-1");
    fs.mount_v1("/sys/fs/cgroup/cpuacct", &["cpuacct"], "0-1");
    fs.mount_v1("/sys/fs/cgroup/cpuset", &["cpuset"], "0-1");
    fs.add_task(777);
    let mi = "\
32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
";
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\ncpu\t1\t1\t1\ncpuacct\t2\t1\t1\n";
    let caps = Capabilities::detect_from(&fs, mi, pc).unwrap();
    (Arc::new(fs), caps)
}

fn group(name: &str, settings: GroupSettings) -> GroupSpec {
    GroupSpec {
        name: Name::new(name).unwrap(),
        settings,
    }
}

fn trial(label: &str, groups: Vec<GroupSpec>) -> TrialSpec {
    TrialSpec {
        label: Name::new(label).unwrap(),
        groups,
        threads: false,
    }
}

fn weighted(w: u64) -> GroupSettings {
    GroupSettings {
        weight: Some(Weight::new(w).unwrap()),
        ..GroupSettings::default()
    }
}

fn get(fs: &MemFs, p: &str) -> String {
    fs.get(p)
        .unwrap_or_else(|| panic!("{p} missing"))
        .trim()
        .to_string()
}

#[test]
fn v2_weights_limits_stats_and_removal() {
    let (fs, caps) = v2();
    let limited = GroupSettings {
        max: Some(CpuMax::limit(20_000, 100_000).unwrap()),
        ..weighted(100)
    };
    let spec = trial(
        "c0-t0",
        vec![group("a", limited), group("b", weighted(300))],
    );
    let needs = Needs::of([&spec]);
    assert_eq!(
        Session::plan_open(&caps, &OWNER, &needs),
        [PathBuf::from("/sys/fs/cgroup/schedlab-4242-17")]
    );
    let s = Session::open(fs.clone(), caps.clone(), OWNER, needs).unwrap();
    let root = "/sys/fs/cgroup/schedlab-4242-17";
    assert_eq!(get(&fs, &format!("{root}/cgroup.subtree_control")), "cpu");
    let plan = s.plan_trial(&spec).unwrap();
    let t0 = format!("{root}/c0-t0");
    assert_eq!(
        plan.paths(),
        [
            PathBuf::from(&t0),
            PathBuf::from(format!("{t0}/a")),
            PathBuf::from(format!("{t0}/b"))
        ]
    );
    assert!(plan.root_settings().is_empty());
    let d = plan.describe(&caps);
    assert_eq!(
        d[0],
        "group a: cpu.weight 100; cpu.max \"20000 100000\" (20ms/100ms)"
    );
    let t = s.create_trial(plan).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/a/cpu.weight")), "100");
    assert_eq!(get(&fs, &format!("{t0}/a/cpu.max")), "20000 100000");
    assert_eq!(get(&fs, &format!("{t0}/b/cpu.weight")), "300");
    assert_eq!(
        get(&fs, &format!("{t0}/b/cpu.max")),
        "max 100000",
        "b keeps the default"
    );
    t.add_process(1, 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/b/cgroup.procs")), "777");
    fs.put(
        format!("{t0}/b/cpu.stat"),
        "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnice_usec 0\nnr_periods 4\nnr_throttled 3\nthrottled_usec 250\nnr_bursts 0\nburst_usec 0\n",
    );
    let st = t.stat(1).unwrap();
    assert_eq!(
        (st.usage_ns, st.nr_throttled, st.throttled_ns),
        (Some(1_500_000), Some(3), Some(250_000))
    );
    let removed = t.remove().unwrap();
    assert_eq!(removed[0].dirs_removed, 3);
    assert_eq!(removed[0].tasks_moved, [777]);
    assert!(
        get(&fs, "/sys/fs/cgroup/cgroup.procs").contains("777"),
        "back in the root"
    );
    s.close().unwrap();
    assert!(
        fs.dirs_below("/sys/fs/cgroup").is_empty(),
        "{:?}",
        fs.dirs_below("/sys/fs/cgroup")
    );
}

#[test]
fn v2_partition_with_remote_exclusive_cpus() {
    let (fs, caps) = v2();
    let part = GroupSettings {
        cpus: Some(CpuList::parse("1").unwrap()),
        partition: true,
        ..GroupSettings::default()
    };
    let spec = trial(
        "c1-t0",
        vec![group("dl", part), group("other", GroupSettings::default())],
    );
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let root = "/sys/fs/cgroup/schedlab-4242-17";
    assert_eq!(
        get(&fs, &format!("{root}/cgroup.subtree_control")),
        "cpu cpuset"
    );
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let t0 = format!("{root}/c1-t0");
    assert_eq!(get(&fs, &format!("{root}/cpuset.cpus.exclusive")), "1");
    assert_eq!(get(&fs, &format!("{t0}/cpuset.cpus.exclusive")), "1");
    assert_eq!(get(&fs, &format!("{t0}/dl/cpuset.cpus")), "1");
    assert_eq!(get(&fs, &format!("{t0}/dl/cpuset.cpus.partition")), "root");
    assert_eq!(
        get(&fs, &format!("{t0}/other/cpuset.cpus")),
        "0",
        "the CPUs the partition leaves"
    );
    t.partition_ready().unwrap();
    // The kernel can invalidate a partition later (e.g. a CPU goes offline): caught before the
    // tasks start.
    fs.put(
        format!("{t0}/dl/cpuset.cpus.partition"),
        "root invalid (Cpu list in cpuset.cpus not exclusive)\n",
    );
    assert_eq!(
        t.partition_ready().unwrap_err().code(),
        "cgroup.partition-invalid"
    );
    t.remove().unwrap();
    assert_eq!(
        get(&fs, &format!("{root}/cpuset.cpus.exclusive")),
        "",
        "released for the next trial"
    );
    drop(s);
    assert!(fs.dirs_below("/sys/fs/cgroup").is_empty());
}

#[test]
fn v2_thread_trials_use_a_threaded_subtree() {
    let (fs, caps) = v2();
    let mut spec = trial(
        "c2-t0",
        vec![group("a", weighted(100)), group("b", weighted(900))],
    );
    spec.threads = true;
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let t0 = "/sys/fs/cgroup/schedlab-4242-17/c2-t0";
    assert_eq!(get(&fs, &format!("{t0}/a/cgroup.type")), "threaded");
    assert_eq!(get(&fs, &format!("{t0}/cgroup.type")), "domain threaded");
    assert_eq!(
        t.add_process(0, 777).unwrap_err().code(),
        "cgroup.invalid-value"
    );
    t.add_host(777).unwrap();
    t.add_thread(1, 778).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/b/cgroup.threads")), "778");
    let r = t.remove().unwrap();
    assert_eq!(
        r[0].tasks_moved,
        [778, 777],
        "the threaded group's thread, then the host"
    );
    // A partition of thread tasks cannot be made on v2.
    let mut p = trial(
        "c2-t1",
        vec![group(
            "a",
            GroupSettings {
                cpus: Some(CpuList::parse("1").unwrap()),
                partition: true,
                ..GroupSettings::default()
            },
        )],
    );
    p.threads = true;
    assert_eq!(
        p.check(&caps).unwrap_err().code(),
        "cgroup.threaded-partition"
    );
}

#[test]
fn an_existing_name_is_refused_never_adopted() {
    let (fs, caps) = v2();
    let spec = trial("c0-t0", vec![group("a", weighted(200))]);
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let again = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec]));
    assert_eq!(again.unwrap_err().code(), "cgroup.exists");
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let second = s.create_trial(s.plan_trial(&spec).unwrap());
    assert_eq!(second.unwrap_err().code(), "cgroup.exists");
    assert_eq!(
        get(&fs, "/sys/fs/cgroup/schedlab-4242-17/c0-t0/a/cpu.weight"),
        "200",
        "the first trial is intact"
    );
    drop(t);
    drop(s);
    assert!(fs.dirs_below("/sys/fs/cgroup").is_empty());
}

#[test]
fn v1_conversions_rt_budget_and_cpusets() {
    let (fs, caps) = v1();
    let rt = |w| GroupSettings {
        rt_tasks: true,
        ..weighted(w)
    };
    let limited = GroupSettings {
        max: Some(CpuMax::limit(20_000, 100_000).unwrap()),
        cpus: Some(CpuList::parse("0").unwrap()),
        ..rt(300)
    };
    let spec = trial("c0-t0", vec![group("a", limited), group("b", rt(1))]);
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let (cpu, acct, set) = (
        "/sys/fs/cgroup/cpu/schedlab-4242-17",
        "/sys/fs/cgroup/cpuacct/schedlab-4242-17",
        "/sys/fs/cgroup/cpuset/schedlab-4242-17",
    );
    assert_eq!(
        s.paths(),
        [PathBuf::from(cpu), PathBuf::from(acct), PathBuf::from(set)]
    );
    assert_eq!(
        get(&fs, &format!("{cpu}/cpu.rt_runtime_us")),
        "950000",
        "all the root leaves free"
    );
    assert_eq!(
        (
            get(&fs, &format!("{set}/cpuset.cpus")),
            get(&fs, &format!("{set}/cpuset.mems"))
        ),
        ("0-1".into(), "0".into())
    );
    let plan = s.plan_trial(&spec).unwrap();
    assert_eq!(plan.paths().len(), 9, "{:?}", plan.paths());
    assert_eq!(plan.rt_share_us(), Some(475_000));
    let d = plan.describe(&caps);
    assert!(
        d[0].contains("cpu.shares 3072 (weight 300: round(300 × 1024 / 100)"),
        "{}",
        d[0]
    );
    assert!(
        d[0].contains("cpu.cfs_period_us 100000, cpu.cfs_quota_us 20000 (20ms/100ms: 0.20 CPUs)"),
        "{}",
        d[0]
    );
    assert!(d[1].contains("cpu.shares 10 (weight 1"), "{}", d[1]);
    assert!(d[1].contains("cpu.rt_runtime_us 475000"), "{}", d[1]);
    let t = s.create_trial(plan).unwrap();
    let g = |h: &str, grp: &str, f: &str| get(&fs, &format!("{h}/c0-t0/{grp}/{f}"));
    assert_eq!(g(cpu, "a", "cpu.shares"), "3072");
    assert_eq!(g(cpu, "a", "cpu.cfs_quota_us"), "20000");
    assert_eq!(g(cpu, "a", "cpu.cfs_period_us"), "100000");
    assert_eq!(g(cpu, "b", "cpu.shares"), "10");
    assert_eq!(g(cpu, "a", "cpu.rt_runtime_us"), "475000");
    assert_eq!(
        get(&fs, &format!("{cpu}/c0-t0/cpu.rt_runtime_us")),
        "950000"
    );
    assert_eq!(
        (g(set, "a", "cpuset.cpus"), g(set, "b", "cpuset.cpus")),
        ("0".into(), "0-1".into())
    );
    assert_eq!(
        g(set, "b", "cpuset.mems"),
        "0",
        "a v1 cpuset needs its nodes"
    );
    t.add_process(0, 777).unwrap();
    t.add_thread(1, 778).unwrap();
    assert_eq!(g(acct, "a", "cgroup.procs"), "777");
    assert_eq!(g(set, "b", "tasks"), "778");
    fs.put(
        format!("{cpu}/c0-t0/a/cpu.stat"),
        "nr_periods 9\nnr_throttled 8\nthrottled_time 600000000\n",
    );
    fs.put(format!("{acct}/c0-t0/a/cpuacct.usage"), "100000000\n");
    let st = t.stat(0).unwrap();
    assert_eq!(
        (st.usage_ns, st.nr_throttled, st.throttled_ns),
        (Some(100_000_000), Some(8), Some(600_000_000))
    );
    drop(t);
    s.close().unwrap();
    for m in [
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuacct",
        "/sys/fs/cgroup/cpuset",
    ] {
        assert!(fs.dirs_below(m).is_empty(), "{m}");
        assert!(
            get(&fs, &format!("{m}/tasks")).contains("777"),
            "{m}: moved back to the root"
        );
    }
}

#[test]
fn v1_partition_needs_the_root_setting_and_keeps_the_rest_balanced() {
    let (fs, caps) = v1();
    let part = GroupSettings {
        cpus: Some(CpuList::parse("1").unwrap()),
        partition: true,
        ..GroupSettings::default()
    };
    let spec = trial("c0-t0", vec![group("dl", part)]);
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let set = "/sys/fs/cgroup/cpuset";
    assert_eq!(
        get(
            &fs,
            &format!("{set}/schedlab-4242-17/cpuset.sched_load_balance")
        ),
        "0"
    );
    let plan = s.plan_trial(&spec).unwrap();
    assert_eq!(
        plan.root_settings(),
        [RootSetting {
            path: PathBuf::from(format!("{set}/cpuset.sched_load_balance")),
            value: "0".into(),
            why: plan.root_settings()[0].why.clone(),
        }]
    );
    assert!(plan
        .describe(&caps)
        .last()
        .unwrap()
        .contains("the other CPUs (0) stay load-balanced"));
    let t = s.create_trial(plan).unwrap();
    let t0 = format!("{set}/schedlab-4242-17/c0-t0");
    assert_eq!(get(&fs, &format!("{t0}/dl/cpuset.cpus")), "1");
    assert_eq!(get(&fs, &format!("{t0}/dl/cpuset.sched_load_balance")), "1");
    assert_eq!(get(&fs, &format!("{t0}/cpuset.sched_load_balance")), "0");
    assert_eq!(get(&fs, &format!("{t0}/_rest/cpuset.cpus")), "0");
    let e = t.partition_ready().unwrap_err();
    assert!(
        e.to_string()
            .contains("cpuset.sched_load_balance must be 0"),
        "{e}"
    );
    fs.put(format!("{set}/cpuset.sched_load_balance"), "0\n"); // what the kernel owner does
    t.partition_ready().unwrap();
    fs.put(format!("{set}/cpuset.sched_load_balance"), "1\n");
    drop(t);
    drop(s);
    assert!(fs.dirs_below(set).is_empty());
}

#[test]
fn v1_partition_blocked_by_another_balanced_cpuset() {
    let (fs, caps) = v1();
    fs.mkdir(Path::new("/sys/fs/cgroup/cpuset/docker")).unwrap();
    fs.write(Path::new("/sys/fs/cgroup/cpuset/docker/cpuset.cpus"), "0-1")
        .unwrap();
    let part = GroupSettings {
        cpus: Some(CpuList::parse("1").unwrap()),
        partition: true,
        ..GroupSettings::default()
    };
    let spec = trial("c0-t0", vec![group("dl", part)]);
    let s = Session::open(fs.clone(), caps, OWNER, Needs::of([&spec])).unwrap();
    let e = s.plan_trial(&spec).unwrap_err();
    assert_eq!(e.code(), "cgroup.partition-blocked");
    assert!(
        e.to_string()
            .contains("/sys/fs/cgroup/cpuset/docker balances load over CPUs 1"),
        "{e}"
    );
    // Not balanced: the kernel walks into it, and its (empty) children block nothing.
    fs.write(
        Path::new("/sys/fs/cgroup/cpuset/docker/cpuset.sched_load_balance"),
        "0",
    )
    .unwrap();
    s.plan_trial(&spec).unwrap();
    assert_eq!(
        get(&fs, "/sys/fs/cgroup/cpuset/docker/cpuset.cpus"),
        "0-1",
        "never written by the layer"
    );
}

#[test]
fn stale_trees_of_dead_owners_are_removed_and_nothing_else() {
    let (fs, caps) = v1();
    let dead = OwnerId {
        pid: 99,
        start_ticks: 5,
    };
    let spec = trial("c0-t0", vec![group("a", weighted(300))]);
    let s = Session::open(fs.clone(), caps.clone(), dead, Needs::of([&spec])).unwrap();
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    t.add_process(0, 777).unwrap();
    std::mem::forget(t); // as after a SIGKILL: nothing ran
    std::mem::forget(s);
    let live = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    fs.mkdir(Path::new("/sys/fs/cgroup/cpu/docker")).unwrap();
    fs.mkdir(Path::new("/sys/fs/cgroup/cpu/schedlab-x"))
        .unwrap();
    let alive = |o: &OwnerId| *o == OWNER;
    // The journal names the dead owner's trial; paths of others are refused.
    let journal = [
        PathBuf::from("/sys/fs/cgroup/cpu/schedlab-99-5/c0-t0/a"),
        PathBuf::from("/sys/fs/cgroup/cpu/docker"),
        PathBuf::from("/sys/fs/cgroup/cpu/schedlab-4242-17"),
        PathBuf::from("/etc/schedlab-99-5"),
    ];
    let r = remove_recorded(&*fs, &caps, &journal, &alive);
    assert_eq!(r.len(), 4);
    let tree = r[0].as_ref().unwrap();
    assert_eq!(tree.path, Path::new("/sys/fs/cgroup/cpu/schedlab-99-5"));
    assert_eq!(tree.result.as_ref().unwrap().tasks_moved, [777]);
    for e in &r[1..] {
        assert_eq!(e.as_ref().unwrap_err().code(), "cgroup.not-ours");
    }
    // The sweep finds the dead owner's tree in the other hierarchy it used (no cpuset: the
    // trial had no cpuset setting).
    let swept = schedlab_cgroup::remove::remove_stale_with(&*fs, &caps, &alive);
    let paths: Vec<_> = swept.iter().map(|t| t.path.clone()).collect();
    assert_eq!(
        paths,
        [PathBuf::from("/sys/fs/cgroup/cpuacct/schedlab-99-5")]
    );
    assert!(swept.iter().all(|t| t.result.is_ok() && t.owner == dead));
    assert!(fs.exists(Path::new("/sys/fs/cgroup/cpu/docker")));
    assert!(fs.exists(Path::new("/sys/fs/cgroup/cpu/schedlab-x")));
    assert!(
        fs.exists(Path::new("/sys/fs/cgroup/cpu/schedlab-4242-17")),
        "a live owner's tree stays"
    );
    drop(live);
    assert!(!fs.exists(Path::new("/sys/fs/cgroup/cpu/schedlab-4242-17")));
}

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
