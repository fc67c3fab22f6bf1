//! The files a trial gives its host and launcher (`Trial::files`), used through the recorded
//! trees' kernel rules: the host enters a v2 thread trial's threaded domain, moves into each
//! group before it creates the group's task, and goes back to its own cgroup; the groups'
//! figures are read where the hierarchy keeps them.

use crate::*;
use schedlab_cgroup::*;
use std::path::PathBuf;

const OWN_V2: &str = "0::/user.slice\n";

#[test]
fn v2_process_trials_join_each_group_and_go_home() {
    let (fs, caps) = v2();
    fs.put("/proc/self/cgroup", OWN_V2);
    fs.mkdir("/sys/fs/cgroup/user.slice".as_ref()).unwrap();
    let spec = trial(
        "c0-t0",
        vec![group("a", weighted(100)), group("b", weighted(300))],
    );
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let f = t.files().unwrap();
    let t0 = "/sys/fs/cgroup/schedlab-4242-17/c0-t0";
    assert!(f.enter.is_empty(), "a process trial has nothing to enter");
    assert_eq!(
        f.groups[1].join,
        [PathBuf::from(format!("{t0}/b/cgroup.procs"))]
    );
    assert_eq!(
        f.home,
        [PathBuf::from("/sys/fs/cgroup/user.slice/cgroup.procs")]
    );
    assert_eq!(
        f.groups[0].stat.cpu_stat,
        Some(PathBuf::from(format!("{t0}/a/cpu.stat")))
    );
    assert_eq!(
        f.groups[0].stat.cpuacct_usage, None,
        "v2 keeps the usage in cpu.stat"
    );
    // The host (777) creates a's task, then b's, then goes home: a task is born where its
    // creator is, so each group gets the host's next child.
    f.join_with(&*fs, Some(0), 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/a/cgroup.procs")), "777");
    f.join_with(&*fs, Some(1), 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/b/cgroup.procs")), "777");
    assert_eq!(get(&fs, &format!("{t0}/a/cgroup.procs")), "");
    f.join_with(&*fs, None, 777).unwrap();
    assert_eq!(get(&fs, "/sys/fs/cgroup/user.slice/cgroup.procs"), "777");
    fs.put(
        format!("{t0}/b/cpu.stat"),
        "usage_usec 2500\nnr_periods 3\nnr_throttled 1\nthrottled_usec 40\n",
    );
    let st = f.groups[1].stat.read_with(&*fs).unwrap();
    assert_eq!(
        (st.usage_ns, st.nr_throttled, st.throttled_ns),
        (Some(2_500_000), Some(1), Some(40_000))
    );
    // Serialised for the launcher's request and back.
    let json = serde_json::to_string(&f).unwrap();
    assert_eq!(serde_json::from_str::<TrialFiles>(&json).unwrap(), f);
    t.remove().unwrap();
    s.close().unwrap();
}

#[test]
fn v2_thread_trials_enter_the_threaded_domain_first() {
    let (fs, caps) = v2();
    fs.put("/proc/self/cgroup", "0::/\n");
    let mut spec = trial(
        "c1-t0",
        vec![group("a", weighted(100)), group("b", weighted(900))],
    );
    spec.threads = true;
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let f = t.files().unwrap();
    let t0 = "/sys/fs/cgroup/schedlab-4242-17/c1-t0";
    assert_eq!(f.enter, [PathBuf::from(format!("{t0}/cgroup.procs"))]);
    assert_eq!(
        f.groups[0].join,
        [PathBuf::from(format!("{t0}/a/cgroup.threads"))]
    );
    assert_eq!(
        f.home,
        [PathBuf::from(format!("{t0}/cgroup.threads"))],
        "home: the domain"
    );
    // The kernel moves a thread into a threaded group only when its process is in the
    // group's threaded domain (the recorded tree does not check this rule): enter first.
    f.enter_with(&*fs, 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/cgroup.procs")), "777");
    f.join_with(&*fs, Some(1), 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/b/cgroup.threads")), "777");
    f.join_with(&*fs, None, 777).unwrap();
    assert_eq!(get(&fs, &format!("{t0}/b/cgroup.threads")), "");
    t.remove().unwrap();
    s.close().unwrap();
}

#[test]
fn v1_files_span_the_three_hierarchies() {
    let (fs, caps) = v1();
    fs.put(
        "/proc/self/cgroup",
        "3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n",
    );
    let spec = trial("c0-t0", vec![group("a", weighted(100))]);
    let s = Session::open(fs.clone(), caps.clone(), OWNER, Needs::of([&spec])).unwrap();
    let t = s.create_trial(s.plan_trial(&spec).unwrap()).unwrap();
    let f = t.files().unwrap();
    assert_eq!(
        f.groups[0].join.len(),
        2,
        "cpu and cpuacct (no cpuset asked for)"
    );
    assert_eq!(
        f.home,
        [
            PathBuf::from("/sys/fs/cgroup/cpu/cgroup.procs"),
            PathBuf::from("/sys/fs/cgroup/cpuacct/cgroup.procs")
        ]
    );
    let st = &f.groups[0].stat;
    assert_eq!(
        (st.cpu_stat.as_deref(), st.cpuacct_usage.as_deref()),
        (
            Some("/sys/fs/cgroup/cpu/schedlab-4242-17/c0-t0/a/cpu.stat".as_ref()),
            Some("/sys/fs/cgroup/cpuacct/schedlab-4242-17/c0-t0/a/cpuacct.usage".as_ref())
        )
    );
    t.remove().unwrap();
    s.close().unwrap();
}
