//! cgroup v2: weights, limits, partitions, threaded groups, refusal of existing names.

use crate::*;
use schedlab_cgroup::*;
use std::path::PathBuf;

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
fn a_feature_guessed_from_the_release_but_missing_is_a_skip() {
    let (fs, caps) = v2();
    assert!(caps.idle.present, "6.18 has cpu.idle by its release");
    fs.omit("cpu.idle");
    let spec = trial(
        "c0-t0",
        vec![group(
            "a",
            GroupSettings {
                idle: Some(true),
                ..GroupSettings::default()
            },
        )],
    );
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let e = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap_err();
    assert_eq!(e.code(), "cgroup.no-feature", "{e}");
    assert!(matches!(e, Error::Unavailable(_)));
    drop(s);
    assert!(
        fs.dirs_below("/sys/fs/cgroup").is_empty(),
        "the half-made trial is gone"
    );
}
