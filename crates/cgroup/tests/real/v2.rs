//! The v2 code path against the machine's real v2 hierarchy, as far as it goes here: the v2
//! mount at /sys/fs/cgroup/unified has no cpu or cpuset controller (they are bound to v1), but
//! every v2 cgroup has `cgroup.procs`, `cgroup.threads`, `cgroup.type` and a `cpu.stat` with the
//! usage. So creation, placement of processes, threaded groups for thread tasks, the usage
//! figure and removal run against the kernel's own v2 rules; settings of the cpu and cpuset
//! controllers are tested on the recorded tree (tests/recorded.rs).

use crate::child::task_cpu_ns;
use crate::common::*;
use schedlab_cgroup::*;
use std::sync::Arc;
use std::time::Duration;

/// This machine seen through its v2 mount only (`cpuacct` stands for the usage in cpu.stat).
fn v2_only() -> Result<Capabilities, Skip> {
    caps()?;
    let mi = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let v2: String = mi
        .lines()
        .filter(|l| l.contains(" - cgroup2 "))
        .map(|l| format!("{l}\n"))
        .collect();
    if v2.is_empty() {
        return Err(Skip::Machine("no cgroup v2 mount".into()));
    }
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuacct\t0\t1\t1\n";
    let caps = Capabilities::detect_from(&RealFs, &v2, pc).expect("detect");
    match caps.placement(Controller::Cpuacct) {
        Ok(p) if p.version == Version::V2 => Ok(caps),
        _ => Err(Skip::Machine("the v2 mount is not usable".into())),
    }
}

/// Processes in v2 groups, their usage, and removal.
pub fn processes() -> Result<(), Skip> {
    let caps = v2_only()?;
    let spec = trial(
        "v2procs",
        vec![
            ("a", GroupSettings::default()),
            ("b", GroupSettings::default()),
        ],
    );
    let owner = OwnerId::this_process().expect("owner");
    let s = Session::open(Arc::new(RealFs), caps.clone(), owner, Needs::of([&spec])).expect("open");
    let t = s
        .create_trial(s.plan_trial(&spec).expect("plan"))
        .expect("create");
    let mut k = Kid::spawn("burn:60");
    t.add_process(1, k.pid()).expect("place");
    let cg = std::fs::read_to_string(format!("/proc/{}/cgroup", k.pid())).expect("cgroup");
    let line = cg
        .lines()
        .find(|l| l.starts_with("0::"))
        .expect("v2 line")
        .to_string();
    assert!(
        line.ends_with(&format!("/{}/v2procs/b", owner.dir_name())),
        "{line}"
    );
    let before = t.stat(1).expect("stat");
    k.start();
    let (_, cpu) = k.done();
    let after_self = task_cpu_ns(k.pid()).map(|n| n as f64 / 1e6);
    assert!(k.finish(Duration::from_secs(10)).0);
    let used = t
        .stat(1)
        .expect("stat")
        .since(&before)
        .usage_ns
        .expect("usage") as f64
        / 1e6;
    println!("    v2 group usage {used:.1} ms (µs resolution) for a burn of {cpu:.1} ms (task's schedstat {after_self:?})");
    assert!(used >= cpu * 0.95 && used <= cpu + 30.0, "{used} vs {cpu}");
    assert_eq!(
        t.stat(0).expect("stat").usage_ns,
        Some(0),
        "nothing ran in a"
    );
    t.remove().expect("remove");
    s.close().expect("close");
    Ok(())
}

/// Thread tasks in threaded v2 groups: the host process in the trial (threaded domain), a
/// thread in a group of its own; removal moves them out from `cgroup.threads`.
pub fn threads() -> Result<(), Skip> {
    let caps = v2_only()?;
    let mut spec = trial(
        "v2threads",
        vec![
            ("a", GroupSettings::default()),
            ("b", GroupSettings::default()),
        ],
    );
    spec.threads = true;
    let owner = OwnerId::this_process().expect("owner");
    let s = Session::open(Arc::new(RealFs), caps.clone(), owner, Needs::of([&spec])).expect("open");
    let t = s
        .create_trial(s.plan_trial(&spec).expect("plan"))
        .expect("create");
    let mut k = Kid::spawn("threads:40");
    let l = k.line();
    let tids: Vec<u32> = l
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().expect("tid"))
        .collect();
    assert_eq!(tids.len(), 2, "{l}");
    t.add_host(k.pid()).expect("host");
    t.add_thread(1, tids[1]).expect("thread");
    let dir = format!("{}/v2threads", s.paths()[0].display());
    let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).expect(f);
    assert_eq!(read("cgroup.type").trim(), "domain threaded");
    assert_eq!(read("b/cgroup.type").trim(), "threaded");
    assert_eq!(read("b/cgroup.threads").trim(), tids[1].to_string());
    assert!(
        read("cgroup.threads").contains(&tids[0].to_string()),
        "the main thread stays in the domain"
    );
    let before = t.stat(1).expect("stat");
    k.start();
    let (_, cpu) = k.done();
    let used = t
        .stat(1)
        .expect("stat")
        .since(&before)
        .usage_ns
        .expect("usage") as f64
        / 1e6;
    println!("    threaded group b: usage {used:.1} ms for the thread's {cpu:.1} ms");
    assert!(used >= cpu * 0.95 && used <= cpu + 30.0, "{used} vs {cpu}");
    let r = t.remove().expect("remove while the process still runs");
    println!("    removal moved {:?} out", r[0].tasks_moved);
    assert!(
        r[0].tasks_moved.contains(&tids[1]),
        "the thread, from b's cgroup.threads"
    );
    let cg = std::fs::read_to_string(format!("/proc/{}/cgroup", k.pid())).expect("cgroup");
    assert!(
        cg.lines().any(|l| l == "0::/"),
        "the whole process is back in the root: {cg}"
    );
    k.close_stdin();
    assert!(k.finish(Duration::from_secs(10)).0);
    s.close().expect("close");
    Ok(())
}
