//! Parsers for `/proc/self/mountinfo` (the cgroup mounts) and `/proc/cgroups` (the
//! controllers and their v1 hierarchy ids), from text; hand-written (a few lines each, and the
//! `procfs` crate parses mountinfo but not `/proc/cgroups`), tested on literal text.

use crate::error::{Error, LineFault, ParseProblem};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// cgroup v1 (one hierarchy per mount, controllers in its mount options) or v2 (the one
/// unified hierarchy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// cgroup v1 (`cgroup` file system).
    V1,
    /// cgroup v2 (`cgroup2` file system).
    V2,
}

impl Version {
    /// `v1` or `v2`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }
}

/// One mount of a cgroup file system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupMount {
    /// The mount id (field 1).
    pub mount_id: u32,
    /// The directory of the hierarchy that is mounted (field 4; `/` unless a bind mount or a
    /// cgroup namespace shows a sub-tree).
    pub root: String,
    /// Where it is mounted (field 5).
    pub mount_point: PathBuf,
    /// `cgroup` or `cgroup2`.
    pub version: Version,
    /// Mounted read-only (per-mount option `ro`).
    pub read_only: bool,
    /// The super-block options (last field), e.g. `rw,cpu,cpuacct` or `rw,nsdelegate`.
    pub super_options: Vec<String>,
}

impl CgroupMount {
    /// Whether this v1 mount carries `controller` (a v2 mount answers false: its controllers
    /// are in `cgroup.controllers`).
    pub fn has_option(&self, controller: &str) -> bool {
        self.super_options.iter().any(|o| o == controller)
    }
}

/// The cgroup mounts in `text` (the content of `/proc/self/mountinfo`), in file order.
pub fn parse_mountinfo(text: &str) -> Result<Vec<CgroupMount>, Error> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |fault: LineFault| Error::Parse {
            file: "/proc/self/mountinfo".into(),
            detail: ParseProblem::Line {
                number: n + 1,
                fault,
                line: line.to_string(),
            },
        };
        let fields: Vec<&str> = line.split(' ').collect();
        let sep = fields
            .iter()
            .position(|f| *f == "-")
            .ok_or_else(|| bad(LineFault::NoSeparator))?;
        if sep < 6 || fields.len() < sep + 4 {
            return Err(bad(LineFault::TooFewFields));
        }
        let version = match fields[sep + 1] {
            "cgroup" => Version::V1,
            "cgroup2" => Version::V2,
            _ => continue,
        };
        let mount_id = fields[0]
            .parse()
            .map_err(|_| bad(LineFault::MountIdNotNumber))?;
        out.push(CgroupMount {
            mount_id,
            root: unescape(fields[3]),
            mount_point: PathBuf::from(unescape(fields[4])),
            version,
            read_only: fields[5].split(',').any(|o| o == "ro"),
            super_options: fields[sep + 3].split(',').map(str::to_string).collect(),
        });
    }
    Ok(out)
}

/// Undo mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of `/proc/cgroups`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubsysLine {
    /// The controller's name (`cpu`, `cpuacct`, `cpuset`, ...).
    pub name: String,
    /// Its v1 hierarchy id, 0 when it is on the v2 hierarchy (or bound nowhere).
    pub hierarchy: u32,
    /// How many cgroups its hierarchy has.
    pub num_cgroups: u64,
    /// Whether it is enabled (a boot option can disable it).
    pub enabled: bool,
}

/// The lines of `/proc/cgroups` (header skipped).
pub fn parse_proc_cgroups(text: &str) -> Result<Vec<SubsysLine>, Error> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = |fault: LineFault| Error::Parse {
            file: "/proc/cgroups".into(),
            detail: ParseProblem::Line {
                number: n + 1,
                fault,
                line: line.to_string(),
            },
        };
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 4 {
            return Err(bad(LineFault::NotFourFields));
        }
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad(LineFault::NotANumber));
        out.push(SubsysLine {
            name: f[0].to_string(),
            hierarchy: u32::try_from(num(f[1])?).map_err(|_| bad(LineFault::HierarchyTooLarge))?,
            num_cgroups: num(f[2])?,
            enabled: num(f[3])? != 0,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This development machine (kernel 6.18, no systemd): v1 cpu, cpuacct and cpuset on
    /// hierarchies of their own, an empty v2 mount at /sys/fs/cgroup/unified.
    pub const THIS_MACHINE: &str = "\
25 1 253:0 / / rw,relatime - ext4 /dev/vda rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    pub const THIS_MACHINE_CGROUPS: &str = "\
#subsys_name\thierarchy\tnum_cgroups\tenabled
cpuset\t3\t1\t1
cpu\t1\t1\t1
cpuacct\t2\t1\t1
blkio\t7\t1\t1
memory\t4\t12\t1
net_cls\t0\t1\t1
pids\t8\t1\t1
";

    /// A typical v2-only systemd machine (e.g. Debian 12, Fedora): one cgroup2 mount.
    pub const V2_SYSTEMD: &str = "\
22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro
26 22 0:24 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
30 26 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    /// A hybrid systemd machine (e.g. Ubuntu 20.04): v2 at unified (systemd only), the
    /// controllers on v1, cpu and cpuacct co-mounted.
    pub const HYBRID: &str = "\
34 26 0:29 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
35 34 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
36 34 0:31 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd
39 34 0:34 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,cpu,cpuacct
40 34 0:35 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:17 - cgroup cgroup rw,cpuset
";

    #[test]
    fn this_machine_has_three_v1_controller_mounts_and_an_empty_v2() {
        let m = parse_mountinfo(THIS_MACHINE).unwrap();
        assert_eq!(m.len(), 6, "{m:#?}");
        let cpu = m.iter().find(|m| m.has_option("cpu")).unwrap();
        assert_eq!(cpu.mount_point, PathBuf::from("/sys/fs/cgroup/cpu"));
        assert_eq!(cpu.version, Version::V1);
        assert!(!cpu.has_option("cpuacct"));
        assert!(!cpu.read_only);
        let v2: Vec<_> = m.iter().filter(|m| m.version == Version::V2).collect();
        assert_eq!(v2.len(), 1);
        assert_eq!(v2[0].mount_point, PathBuf::from("/sys/fs/cgroup/unified"));
        assert_eq!(v2[0].mount_id, 41);
    }

    #[test]
    fn v2_systemd_and_hybrid_mounts() {
        let m = parse_mountinfo(V2_SYSTEMD).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].version, Version::V2);
        assert_eq!(
            m[0].super_options,
            ["rw", "nsdelegate", "memory_recursiveprot"]
        );
        let h = parse_mountinfo(HYBRID).unwrap();
        assert_eq!(h.len(), 4, "the tmpfs is not a cgroup mount");
        let cpu = h.iter().find(|m| m.has_option("cpu")).unwrap();
        assert!(cpu.has_option("cpuacct"));
        assert_eq!(cpu.mount_point, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"));
        assert!(h.iter().find(|m| m.has_option("name=systemd")).is_some());
    }

    #[test]
    fn escapes_read_only_and_bind_roots() {
        let text = "50 31 0:40 /docker/abc /mnt/my\\040cg ro,relatime - cgroup cgroup rw,cpuset\n";
        let m = parse_mountinfo(text).unwrap();
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt/my cg"));
        assert_eq!(m[0].root, "/docker/abc");
        assert!(m[0].read_only);
        assert!(parse_mountinfo("1 2 3\n").is_err());
        assert!(parse_mountinfo("x 1 0:1 / /a rw - cgroup cgroup rw,cpu\n").is_err());
    }

    #[test]
    fn proc_cgroups_lines() {
        let c = parse_proc_cgroups(THIS_MACHINE_CGROUPS).unwrap();
        assert_eq!(c.len(), 7);
        let cpu = c.iter().find(|l| l.name == "cpu").unwrap();
        assert_eq!((cpu.hierarchy, cpu.num_cgroups, cpu.enabled), (1, 1, true));
        let net = c.iter().find(|l| l.name == "net_cls").unwrap();
        assert_eq!(net.hierarchy, 0);
        let v2 = "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t0\t87\t1\ncpuset\t0\t87\t0\n";
        let c = parse_proc_cgroups(v2).unwrap();
        assert!(!c[1].enabled);
        assert!(parse_proc_cgroups("cpu 1 x 1\n").is_err());
        assert!(parse_proc_cgroups("cpu 1 1\n").is_err());
    }
}
