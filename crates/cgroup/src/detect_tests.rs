//! Detection on three recorded machines: this one (v1, separate cpu/cpuacct/cpuset), a v2-only
//! systemd machine, and a hybrid one (cpu,cpuacct co-mounted on v1, v2 for systemd only).

use super::*;
use crate::memfs::MemFs;

const STATUS_ROOT: &str = "Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t0\t0\t0\t0\n";

fn procs(fs: &MemFs, kernel: &str) {
    fs.put("/proc/sys/kernel/osrelease", &format!("{kernel}\n"));
    fs.put("/proc/self/status", STATUS_ROOT);
    fs.put("/sys/devices/system/cpu/online", "0-1\n");
}

/// This development machine.
pub(crate) fn this_machine() -> (MemFs, &'static str, &'static str) {
    let fs = MemFs::new();
    procs(&fs, "6.18.44-fc-v657");
    fs.mount_v1("/sys/fs/cgroup/cpu", &["cpu"], "0-1");
    fs.mount_v1("/sys/fs/cgroup/cpuacct", &["cpuacct"], "0-1");
    fs.mount_v1("/sys/fs/cgroup/cpuset", &["cpuset"], "0-1");
    fs.mount_v2("/sys/fs/cgroup/unified", &["hugetlb"], &[], "");
    let mi = "\
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\ncpu\t1\t1\t1\ncpuacct\t2\t1\t1\nhugetlb\t0\t1\t1\n";
    (fs, mi, pc)
}

/// A v2-only systemd machine; `enabled` is the root's subtree_control.
pub(crate) fn v2_machine(enabled: &[&str], kernel: &str) -> (MemFs, &'static str, &'static str) {
    let fs = MemFs::new();
    procs(&fs, kernel);
    fs.mount_v2(
        "/sys/fs/cgroup",
        &["cpuset", "cpu", "io", "memory", "pids"],
        enabled,
        "0-1",
    );
    let mi = "30 26 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t0\t90\t1\ncpu\t0\t90\t1\ncpuacct\t0\t90\t1\nmemory\t0\t90\t1\n";
    (fs, mi, pc)
}

#[test]
fn this_machine_is_v1_with_rt_group_scheduling() {
    let (fs, mi, pc) = this_machine();
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    let p = c.cpu.as_ref().unwrap();
    assert_eq!(
        (p.version, p.mount.as_path()),
        (Version::V1, Path::new("/sys/fs/cgroup/cpu"))
    );
    assert_eq!(
        c.cpuacct.as_ref().unwrap().mount,
        Path::new("/sys/fs/cgroup/cpuacct")
    );
    assert_eq!(
        c.cpuset.as_ref().unwrap().mount,
        Path::new("/sys/fs/cgroup/cpuset")
    );
    assert!(c.idle.present && c.burst.present && c.partition.present && c.rt_group_sched.present);
    assert_eq!(c.rt_root.unwrap().runtime_us, 950_000);
    assert_eq!(c.online_cpus.to_string(), "0-1");
    assert_eq!(c.mems.to_string(), "0");
    assert!(c.root_user, "effective uid 0 counts, not the real uid");
    let lines = c.lines();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(
        lines[0].starts_with("cpu: cgroup v1 at /sys/fs/cgroup/cpu ("),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("RT group scheduling: yes (root 950000 µs per 1000000 µs"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("cpuacct.usage"), "{}", lines[1]);
    assert!(lines[3].contains("offers: hugetlb"), "{}", lines[3]);
}

#[test]
fn v2_systemd_machine() {
    let (fs, mi, pc) = v2_machine(
        &["cpuset", "cpu", "io", "memory", "pids"],
        "6.8.0-45-generic",
    );
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    for ctl in [Controller::Cpu, Controller::Cpuacct, Controller::Cpuset] {
        let p = c.placement(ctl).unwrap();
        assert_eq!(
            (p.version, p.mount.as_path()),
            (Version::V2, Path::new("/sys/fs/cgroup")),
            "{ctl}"
        );
    }
    // No child shows the cpu files yet: decided by the release (6.8 has idle, burst, remote
    // partitions).
    assert!(matches!(c.idle.source, Source::KernelRelease(_)));
    assert!(c.idle.present && c.burst.present && c.partition.present);
    assert!(!c.rt_group_sched.present);
    assert!(
        c.lines()[0].contains("cpu.idle: yes (by kernel release)"),
        "{}",
        c.lines()[0]
    );
    // An old kernel: no idle groups (5.15), no burst (5.14), no remote partitions (6.7).
    let (fs, mi, pc) = v2_machine(&["cpuset", "cpu"], "5.10.0-28-amd64");
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    assert!(!c.idle.present && !c.burst.present && !c.partition.present);
}

#[test]
fn v2_child_files_decide_over_the_release() {
    let (fs, mi, pc) = v2_machine(&["cpuset", "cpu"], "5.10.0");
    fs.mkdir(Path::new("/sys/fs/cgroup/system.slice")).unwrap();
    assert!(fs.exists(Path::new("/sys/fs/cgroup/system.slice/cpu.idle")));
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    assert!(
        c.idle.present,
        "the child has cpu.idle although the release says no"
    );
    assert_eq!(
        c.idle.source,
        Source::File(PathBuf::from("/sys/fs/cgroup/system.slice/cpu.idle"))
    );
}

#[test]
fn v2_controller_not_enabled_at_the_root() {
    let (fs, mi, pc) = v2_machine(&["memory", "pids"], "6.8.0");
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    let u = c.cpu.as_ref().unwrap_err();
    assert_eq!(u.code(), "cgroup.not-enabled");
    assert!(
        u.to_string()
            .contains("echo +cpu > /sys/fs/cgroup/cgroup.subtree_control"),
        "{u}"
    );
    // Usage still comes from cpu.stat, which every v2 cgroup has.
    assert!(c.cpuacct.is_ok());
    assert_eq!(c.cpuset.as_ref().unwrap_err().code(), "cgroup.not-enabled");
}

#[test]
fn hybrid_machine_with_cpu_and_cpuacct_together() {
    let fs = MemFs::new();
    procs(&fs, "5.4.0-150-generic");
    fs.mount_v1("/sys/fs/cgroup/cpu,cpuacct", &["cpu", "cpuacct"], "0-1");
    fs.mount_v1("/sys/fs/cgroup/cpuset", &["cpuset"], "0-1");
    fs.mount_v2("/sys/fs/cgroup/unified", &[], &[], "");
    let mi = "\
35 34 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
36 34 0:31 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd
39 34 0:34 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,cpu,cpuacct
40 34 0:35 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,cpuset
";
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t6\t1\t1\ncpu\t3\t90\t1\ncpuacct\t3\t90\t1\n";
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    assert_eq!(
        c.cpu.as_ref().unwrap(),
        c.cpuacct.as_ref().unwrap(),
        "one hierarchy"
    );
    assert_eq!(
        c.cpu.as_ref().unwrap().mount,
        Path::new("/sys/fs/cgroup/cpu,cpuacct")
    );
    assert!(c.lines()[3].contains("offers: no controller"));
}

#[test]
fn missing_disabled_read_only_and_hidden() {
    let (fs, _, _) = this_machine();
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t0\ncpuset\t3\t1\t1\n";
    let mi = "34 31 0:31 / /sys/fs/cgroup/cpuset ro,relatime - cgroup cgroup rw,cpuset\n";
    let c = Capabilities::detect_from(&fs, mi, pc).unwrap();
    assert_eq!(c.cpu.as_ref().unwrap_err().code(), "cgroup.disabled");
    assert_eq!(
        c.cpuacct.as_ref().unwrap_err().code(),
        "cgroup.no-controller"
    );
    assert_eq!(c.cpuset.as_ref().unwrap_err().code(), "cgroup.read-only");
    assert!(c.lines()[0].starts_with("cpu: unavailable: the cpu controller is disabled"));
    // Bound to a v1 hierarchy mounted elsewhere (another mount namespace): not reachable.
    let pc = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\n";
    let c = Capabilities::detect_from(&fs, "", pc).unwrap();
    assert_eq!(c.cpu.as_ref().unwrap_err().code(), "cgroup.no-controller");
}

#[test]
fn releases_and_uids() {
    assert_eq!(parse_release("6.18.44-fc-v657"), Some((6, 18)));
    assert_eq!(parse_release("5.4.0-150-generic\n"), Some((5, 4)));
    assert_eq!(parse_release("x"), None);
    assert_eq!(effective_uid(STATUS_ROOT), Some(0));
    assert_eq!(effective_uid("Uid:\t0\t1000\t0\t0\n"), Some(1000));
}
