//! The layer against recorded cgroup trees (`MemFs`): the v2 code path, which no v2 cpu or
//! cpuset controller on this machine can run for real (`v2.rs`), the v1 path on a machine
//! without root (`v1.rs`), and the checks of a trial's values (`spec.rs`). Each test checks the
//! files written and that nothing is left.

mod files;
mod spec;
mod v1;
mod v2;

use schedlab_cgroup::memfs::MemFs;
use schedlab_cgroup::*;
use std::sync::Arc;

const STATUS_ROOT: &str = "Name:\tx\nUid:\t0\t0\t0\t0\n";
pub const OWNER: OwnerId = OwnerId {
    pid: 4242,
    start_ticks: 17,
};

pub fn base(fs: &MemFs, kernel: &str) {
    fs.put("/proc/sys/kernel/osrelease", kernel);
    fs.put("/proc/self/status", STATUS_ROOT);
    fs.put("/sys/devices/system/cpu/online", "0-1\n");
}

/// A v2-only machine with cpu and cpuset enabled at the root.
pub fn v2() -> (Arc<MemFs>, Capabilities) {
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
pub fn v1() -> (Arc<MemFs>, Capabilities) {
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

pub fn group(name: &str, settings: GroupSettings) -> GroupSpec {
    GroupSpec {
        name: Name::new(name).unwrap(),
        settings,
    }
}

pub fn trial(label: &str, groups: Vec<GroupSpec>) -> TrialSpec {
    TrialSpec {
        label: Name::new(label).unwrap(),
        groups,
        threads: false,
    }
}

pub fn weighted(w: u64) -> GroupSettings {
    GroupSettings {
        weight: Some(Weight::new(w).unwrap()),
        ..GroupSettings::default()
    }
}

pub fn get(fs: &MemFs, p: &str) -> String {
    fs.get(p)
        .unwrap_or_else(|| panic!("{p} missing"))
        .trim()
        .to_string()
}
