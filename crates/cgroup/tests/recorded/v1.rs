//! cgroup v1 as on this machine: conversions, RT budgets, cpusets, partitions, recovery.

use crate::*;
use schedlab_cgroup::*;
use std::path::{Path, PathBuf};

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
