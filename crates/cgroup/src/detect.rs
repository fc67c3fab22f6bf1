//! Detection: which hierarchy (a v1 mount or the v2 unified mount) holds each controller the
//! layer needs (cpu, cpuacct, cpuset), which optional files the kernel has (`cpu.idle`,
//! burst, partitions, v1 RT group scheduling), the online CPUs; and a one-line explanation per
//! controller for `schedlab policies` and the environment record.

use crate::error::{Error, IoAction, Unavailable};
use crate::fs::CgroupFs;
use crate::mountinfo::{parse_mountinfo, parse_proc_cgroups, CgroupMount, SubsysLine, Version};
use crate::rt::RtBandwidth;
use crate::value::CpuList;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A controller the layer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Controller {
    /// Weights, bandwidth limits, idle groups, v1 RT budgets.
    Cpu,
    /// v1 CPU usage (`cpuacct.usage`); on v2 the usage is in every group's `cpu.stat`.
    Cpuacct,
    /// CPU sets and partitions.
    Cpuset,
}

impl Controller {
    /// The kernel's name of the controller.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Cpuacct => "cpuacct",
            Controller::Cpuset => "cpuset",
        }
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a controller is: its hierarchy's version and the mount point the layer creates its
/// `schedlab-PID-START` directory in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// v1 or v2.
    pub version: Version,
    /// The mount point.
    pub mount: PathBuf,
}

/// How the presence of an optional kernel file was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The file was looked at (this path).
    File(PathBuf),
    /// cgroup v2 shows the file only in child cgroups and none had the controller: decided by
    /// the kernel release (the release that added it); checked again when the groups exist.
    KernelRelease(String),
    /// The controller is not available.
    NoController,
}

/// Whether an optional kernel file exists, and how that was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Feature {
    /// Present.
    pub present: bool,
    /// How it was decided.
    pub source: Source,
}

impl Feature {
    fn absent() -> Feature {
        Feature {
            present: false,
            source: Source::NoController,
        }
    }

    fn yes_no(&self) -> String {
        let by = match &self.source {
            Source::File(_) => "",
            Source::KernelRelease(_) => " (by kernel release)",
            Source::NoController => "",
        };
        format!("{}{by}", if self.present { "yes" } else { "no" })
    }
}

/// What the machine offers the layer.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    /// The cpu controller.
    pub cpu: Result<Placement, Unavailable>,
    /// Where CPU usage is read: the v1 cpuacct hierarchy, or the v2 hierarchy (`cpu.stat`).
    pub cpuacct: Result<Placement, Unavailable>,
    /// The cpuset controller.
    pub cpuset: Result<Placement, Unavailable>,
    /// `cpu.idle` (v1 and v2, Linux 5.15+).
    pub idle: Feature,
    /// CFS burst: v2 `cpu.max.burst`, v1 `cpu.cfs_burst_us` (Linux 5.14+).
    pub burst: Feature,
    /// A pinned task can get a root domain of its own: v2 `cpuset.cpus.exclusive` (remote
    /// partitions, Linux 6.7+); v1 `cpuset.sched_load_balance`.
    pub partition: Feature,
    /// v1 RT group scheduling (`cpu.rt_runtime_us`): new groups get no RT time unless given.
    pub rt_group_sched: Feature,
    /// The cpu root's RT bandwidth (v1 with RT group scheduling).
    pub rt_root: Option<RtBandwidth>,
    /// The CPUs a cpuset can use (the cpuset root's effective CPUs, else the online CPUs).
    pub online_cpus: CpuList,
    /// The memory nodes (the cpuset root's effective mems), for v1 cpusets.
    pub mems: CpuList,
    /// Whether this process runs as root (effective uid 0).
    pub root_user: bool,
    /// The kernel release.
    pub kernel: String,
    /// The v2 mount and the controllers it offers (`cgroup.controllers`), if mounted.
    pub v2: Option<(PathBuf, Vec<String>)>,
}

/// Kernel release that added `cpu.idle` for groups.
const IDLE_SINCE: (u32, u32) = (5, 15);
/// Kernel release that added CFS burst.
const BURST_SINCE: (u32, u32) = (5, 14);
/// Kernel release that added v2 remote partitions (`cpuset.cpus.exclusive`).
const REMOTE_PARTITION_SINCE: (u32, u32) = (6, 7);

impl Capabilities {
    /// Detect on this machine (reads `/proc/self/mountinfo`, `/proc/cgroups`, the mounts).
    pub fn detect(fs: &dyn CgroupFs) -> Result<Capabilities, Error> {
        let read = |p: &str| {
            fs.read(Path::new(p))
                .map_err(|e| Error::io(IoAction::Read, p, e))
        };
        let mountinfo = read("/proc/self/mountinfo")?;
        let cgroups = read("/proc/cgroups")?;
        Capabilities::detect_from(fs, &mountinfo, &cgroups)
    }

    /// Detect from the texts of `/proc/self/mountinfo` and `/proc/cgroups`; the files under
    /// the mounts, `/proc/self/status`, `/proc/sys/kernel/osrelease` and
    /// `/sys/devices/system/cpu/online` are read through `fs`.
    pub fn detect_from(
        fs: &dyn CgroupFs,
        mountinfo: &str,
        proc_cgroups: &str,
    ) -> Result<Capabilities, Error> {
        let mounts = parse_mountinfo(mountinfo)?;
        let subsys = parse_proc_cgroups(proc_cgroups)?;
        let kernel = fs
            .read(Path::new("/proc/sys/kernel/osrelease"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let v2_mount = mounts.iter().find(|m| m.version == Version::V2);
        let v2 = v2_mount.map(|m| {
            let list = fs
                .read(&m.mount_point.join("cgroup.controllers"))
                .unwrap_or_default();
            (
                m.mount_point.clone(),
                list.split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>(),
            )
        });
        let place = |c: Controller| placement(fs, &mounts, &subsys, v2_mount, c);
        let cpu = place(Controller::Cpu);
        let cpuset = place(Controller::Cpuset);
        let cpuacct = match &cpu {
            Ok(p) if p.version == Version::V2 => Ok(p.clone()),
            _ => place(Controller::Cpuacct),
        };
        let release = parse_release(&kernel);
        let cpu_features = CpuFeatures::detect(fs, &cpu, &kernel, release);
        let (partition, online_cpus, mems) = cpuset_features(fs, &cpuset, &kernel, release);
        let online_cpus = match online_cpus {
            Some(c) if !c.is_empty() => c,
            _ => {
                let text = fs
                    .read(Path::new("/sys/devices/system/cpu/online"))
                    .map_err(|e| Error::io(IoAction::Read, "/sys/devices/system/cpu/online", e))?;
                CpuList::parse(&text)?
            }
        };
        let root_user = fs
            .read(Path::new("/proc/self/status"))
            .ok()
            .and_then(|s| effective_uid(&s))
            .is_some_and(|uid| uid == 0);
        let CpuFeatures {
            idle,
            burst,
            rt_group_sched,
            rt_root,
        } = cpu_features;
        Ok(Capabilities {
            cpu,
            cpuacct,
            cpuset,
            idle,
            burst,
            partition,
            rt_group_sched,
            rt_root,
            online_cpus,
            mems,
            root_user,
            kernel,
            v2,
        })
    }

    /// The placement of `c`, or why it is unavailable.
    pub fn placement(&self, c: Controller) -> Result<&Placement, Unavailable> {
        match c {
            Controller::Cpu => self.cpu.as_ref(),
            Controller::Cpuacct => self.cpuacct.as_ref(),
            Controller::Cpuset => self.cpuset.as_ref(),
        }
        .map_err(Clone::clone)
    }

    /// One line per controller (and one for the v2 mount), for `schedlab policies` and the
    /// environment record.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let at = |p: &Placement| format!("cgroup {} at {}", p.version.name(), p.mount.display());
        out.push(match &self.cpu {
            Ok(p) => {
                let how = match p.version {
                    Version::V1 => "weight as cpu.shares = round(weight × 1024 / 100); limits as cpu.cfs_quota_us/cpu.cfs_period_us",
                    Version::V2 => "cpu.weight, cpu.max",
                };
                let rt = if self.rt_group_sched.present {
                    match self.rt_root {
                        Some(r) => format!(
                            "; RT group scheduling: yes (root {} µs per {} µs; groups with FIFO/RR tasks get a share of it)",
                            r.runtime_us, r.period_us
                        ),
                        None => "; RT group scheduling: yes".to_string(),
                    }
                } else if p.version == Version::V2 {
                    "; FIFO/RR tasks in v2 groups are refused if the kernel has RT group scheduling".to_string()
                } else {
                    String::new()
                };
                format!(
                    "cpu: {} ({how}; cpu.idle: {}; burst: {}{rt})",
                    at(p),
                    self.idle.yes_no(),
                    self.burst.yes_no()
                )
            }
            Err(u) => format!("cpu: unavailable: {u}"),
        });
        out.push(match &self.cpuacct {
            Ok(p) if p.version == Version::V1 => {
                format!("cpuacct: {} (CPU usage from cpuacct.usage, ns)", at(p))
            }
            Ok(p) => format!(
                "cpuacct: {} (CPU usage from cpu.stat usage_usec, µs)",
                at(p)
            ),
            Err(u) => format!("cpuacct: unavailable: {u}"),
        });
        out.push(match &self.cpuset {
            Ok(p) => {
                let how = match p.version {
                    Version::V1 => "partition: the group's CPUs balanced alone, with sched_load_balance = 0 in the root cpuset while the trial runs",
                    Version::V2 => "partition: cpuset.cpus.exclusive + cpuset.cpus.partition = root",
                };
                format!(
                    "cpuset: {} (CPUs {}; {how}: {})",
                    at(p),
                    self.online_cpus,
                    self.partition.yes_no()
                )
            }
            Err(u) => format!("cpuset: unavailable: {u}"),
        });
        if let Some((mount, ctl)) = &self.v2 {
            out.push(format!(
                "cgroup v2 at {} offers: {}",
                mount.display(),
                if ctl.is_empty() {
                    "no controller".to_string()
                } else {
                    ctl.join(" ")
                }
            ));
        }
        if !self.root_user {
            out.push(format!("not root: {}", Unavailable::NotRoot));
        }
        out
    }
}

/// The cpu controller's optional files.
struct CpuFeatures {
    idle: Feature,
    burst: Feature,
    rt_group_sched: Feature,
    rt_root: Option<RtBandwidth>,
}

impl CpuFeatures {
    /// What the cpu controller at `cpu` offers: v1 files looked at in the mount; v2 files in a
    /// child with the controller, else decided by the kernel release.
    fn detect(
        fs: &dyn CgroupFs,
        cpu: &Result<Placement, Unavailable>,
        kernel: &str,
        release: Option<(u32, u32)>,
    ) -> CpuFeatures {
        let mut f = CpuFeatures {
            idle: Feature::absent(),
            burst: Feature::absent(),
            rt_group_sched: Feature::absent(),
            rt_root: None,
        };
        let Ok(p) = cpu else { return f };
        match p.version {
            Version::V1 => {
                f.idle = file_feature(fs, p, "cpu.idle");
                f.burst = file_feature(fs, p, "cpu.cfs_burst_us");
                f.rt_group_sched = file_feature(fs, p, "cpu.rt_runtime_us");
                if f.rt_group_sched.present {
                    f.rt_root = RtBandwidth::read(fs, &p.mount).ok();
                }
            }
            Version::V2 => {
                let child = child_with(fs, &p.mount, "cpu.weight");
                let feature =
                    |file, since| v2_feature(fs, child.as_deref(), file, kernel, release, since);
                f.idle = feature("cpu.idle", IDLE_SINCE);
                f.burst = feature("cpu.max.burst", BURST_SINCE);
                f.rt_group_sched = Feature {
                    present: false,
                    source: Source::KernelRelease(kernel.to_string()),
                };
            }
        }
        f
    }
}

/// Whether `name` exists in the mount of `p`.
fn file_feature(fs: &dyn CgroupFs, p: &Placement, name: &str) -> Feature {
    let path = p.mount.join(name);
    Feature {
        present: fs.exists(&path),
        source: Source::File(path),
    }
}

/// The cpuset controller's partition support, its root's effective CPUs (None when unread)
/// and memory nodes.
fn cpuset_features(
    fs: &dyn CgroupFs,
    cpuset: &Result<Placement, Unavailable>,
    kernel: &str,
    release: Option<(u32, u32)>,
) -> (Feature, Option<CpuList>, CpuList) {
    let Ok(p) = cpuset else {
        return (Feature::absent(), None, CpuList::default());
    };
    let (cpus_file, mems_file) = match p.version {
        Version::V1 => ("cpuset.effective_cpus", "cpuset.effective_mems"),
        Version::V2 => ("cpuset.cpus.effective", "cpuset.mems.effective"),
    };
    let list = |f: &str| {
        fs.read(&p.mount.join(f))
            .ok()
            .and_then(|s| CpuList::parse(&s).ok())
    };
    let partition = match p.version {
        Version::V1 => file_feature(fs, p, "cpuset.sched_load_balance"),
        Version::V2 => {
            let child = child_with(fs, &p.mount, "cpuset.cpus");
            v2_feature(
                fs,
                child.as_deref(),
                "cpuset.cpus.exclusive",
                kernel,
                release,
                REMOTE_PARTITION_SINCE,
            )
        }
    };
    (
        partition,
        list(cpus_file),
        list(mems_file).unwrap_or_default(),
    )
}

/// Where controller `c` is, or why not.
fn placement(
    fs: &dyn CgroupFs,
    mounts: &[CgroupMount],
    subsys: &[SubsysLine],
    v2: Option<&CgroupMount>,
    c: Controller,
) -> Result<Placement, Unavailable> {
    let controller = c;
    let line = subsys
        .iter()
        .find(|l| l.name == c.name())
        .ok_or(Unavailable::NoController { controller })?;
    if !line.enabled {
        return Err(Unavailable::Disabled { controller });
    }
    let check = |m: &CgroupMount| {
        if m.read_only {
            Err(Unavailable::ReadOnly {
                mount: m.mount_point.clone(),
            })
        } else if m.version == Version::V1 && m.has_option("noprefix") {
            Err(Unavailable::NoPrefix {
                mount: m.mount_point.clone(),
            })
        } else {
            Ok(Placement {
                version: m.version,
                mount: m.mount_point.clone(),
            })
        }
    };
    if let Some(m) = mounts
        .iter()
        .filter(|m| m.version == Version::V1 && m.has_option(c.name()))
        .min_by_key(|m| m.root != "/")
    {
        return check(m);
    }
    if line.hierarchy != 0 {
        // Bound to a v1 hierarchy that is not mounted where this process can see it.
        return Err(Unavailable::NoController { controller });
    }
    let Some(m) = v2 else {
        return Err(Unavailable::NoController { controller });
    };
    let listed = |file: &str| {
        fs.read(&m.mount_point.join(file))
            .map(|s| s.split_whitespace().any(|w| w == c.name()))
            .unwrap_or(false)
    };
    if c == Controller::Cpuacct {
        // v2 has no cpuacct: every group's cpu.stat carries the usage.
        return check(m);
    }
    if !listed("cgroup.controllers") {
        return Err(Unavailable::NoController { controller });
    }
    if !listed("cgroup.subtree_control") {
        return Err(Unavailable::NotEnabled {
            controller,
            root: m.mount_point.clone(),
        });
    }
    check(m)
}

/// A child cgroup of `mount` (one level down) that has `file`.
fn child_with(fs: &dyn CgroupFs, mount: &Path, file: &str) -> Option<PathBuf> {
    fs.subdirs(mount)
        .ok()?
        .into_iter()
        .map(|d| mount.join(d))
        .find(|d| fs.exists(&d.join(file)))
}

fn v2_feature(
    fs: &dyn CgroupFs,
    child: Option<&Path>,
    file: &str,
    kernel: &str,
    release: Option<(u32, u32)>,
    since: (u32, u32),
) -> Feature {
    match child {
        Some(dir) => {
            let path = dir.join(file);
            Feature {
                present: fs.exists(&path),
                source: Source::File(path),
            }
        }
        None => Feature {
            present: release.is_some_and(|r| r >= since),
            source: Source::KernelRelease(kernel.to_string()),
        },
    }
}

/// (major, minor) of a kernel release such as `6.18.44-fc-v657`.
pub fn parse_release(text: &str) -> Option<(u32, u32)> {
    let mut it = text.trim().split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The effective uid from `/proc/self/status` text (`Uid:` real, effective, saved, fs).
fn effective_uid(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;
