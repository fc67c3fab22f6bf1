//! A trial's cgroup files as plain paths ([`TrialFiles`], serialisable), for the processes that
//! place tasks and read figures without the layer's objects: the launcher and the trial's host
//! are forked, single-threaded processes that get them in their request.
//!
//! Placement is by inheritance: the host moves itself (its one thread) into a group just
//! before it creates the group's next task, so the task is born in its group and nothing runs
//! in the task before its first timestamp; before it creates a task outside the groups (an
//! antagonist) and after the last task it moves back to its own cgroups ([`TrialFiles::home`],
//! those of the process that created the trial). A new process or thread starts in the cgroups
//! of the thread that created it, on v1 and in v2 threaded subtrees alike.

use crate::detect::Controller;
use crate::error::{Error, IoAction};
use crate::fs::{CgroupFs, RealFs};
use crate::invalid::Invalid;
use crate::mountinfo::Version;
use crate::stat::CpuStat;
use crate::trial::Trial;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a group's CPU figures are read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatFiles {
    /// The hierarchy version of `cpu_stat`.
    pub version: Version,
    /// `cpu.stat` (v2: usage and throttling; v1: throttling), if the group has one.
    pub cpu_stat: Option<PathBuf>,
    /// v1 `cpuacct.usage` (ns), if the cpuacct controller is mounted.
    pub cpuacct_usage: Option<PathBuf>,
}

impl StatFiles {
    /// The group's figures now (from the real file system).
    pub fn read(&self) -> Result<CpuStat, Error> {
        self.read_with(&RealFs)
    }

    /// The group's figures now, read through `fs`.
    pub fn read_with(&self, fs: &dyn CgroupFs) -> Result<CpuStat, Error> {
        let read = |p: &Path| fs.read(p).map_err(|e| Error::io(IoAction::Read, p, e));
        match self.version {
            Version::V2 => match &self.cpu_stat {
                Some(p) => CpuStat::parse_v2(&read(p)?),
                None => Ok(CpuStat::default()),
            },
            Version::V1 => {
                let stat = match &self.cpu_stat {
                    Some(p) => read(p)?,
                    None => String::new(),
                };
                let usage = match &self.cpuacct_usage {
                    Some(p) => Some(read(p)?),
                    None => None,
                };
                CpuStat::parse_v1(&stat, usage.as_deref())
            }
        }
    }
}

/// One group's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupFiles {
    /// The group's name.
    pub name: String,
    /// The files the host writes its id to, to join the group in every hierarchy (process
    /// trials: `cgroup.procs`; thread trials: v1 `tasks`, v2 `cgroup.threads`).
    pub join: Vec<PathBuf>,
    /// Where its figures are read.
    pub stat: StatFiles,
}

/// What the launcher and the host need of a trial's cgroups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialFiles {
    /// The tasks are threads of the host.
    pub threads: bool,
    /// Files the host writes its pid to before it creates any task (v2 thread trials: the
    /// trial's `cgroup.procs`, the threaded domain its groups belong to).
    pub enter: Vec<PathBuf>,
    /// Each group's files, in group order.
    pub groups: Vec<GroupFiles>,
    /// Where the host goes for tasks outside the groups and after the last task: its creator's
    /// cgroups (v2 thread trials: the trial's threaded domain).
    pub home: Vec<PathBuf>,
}

/// Write `id` to each of `files` through `fs` (one write each, as a cgroup file takes it).
fn write_id(fs: &dyn CgroupFs, files: &[PathBuf], id: u32) -> Result<(), Error> {
    files.iter().try_for_each(|f| {
        fs.write(f, &id.to_string())
            .map_err(|e| Error::io(IoAction::WriteNumber(id.into()), f, e))
    })
}

impl TrialFiles {
    /// The host, pid `pid`, enters the trial (v2 thread trials; nothing to do otherwise).
    pub fn enter(&self, pid: u32) -> Result<(), Error> {
        self.enter_with(&RealFs, pid)
    }

    /// [`TrialFiles::enter`] through `fs`.
    pub fn enter_with(&self, fs: &dyn CgroupFs, pid: u32) -> Result<(), Error> {
        write_id(fs, &self.enter, pid)
    }

    /// Move the calling host (its one thread, id `id`: its pid, which is its main thread's id)
    /// into group `group`, or back home with None.
    pub fn join(&self, group: Option<usize>, id: u32) -> Result<(), Error> {
        self.join_with(&RealFs, group, id)
    }

    /// [`TrialFiles::join`] through `fs`.
    pub fn join_with(&self, fs: &dyn CgroupFs, group: Option<usize>, id: u32) -> Result<(), Error> {
        let files = match group {
            Some(g) => match self.groups.get(g) {
                Some(f) => &f.join,
                None => {
                    return Err(Error::invalid(
                        "group index",
                        g.to_string(),
                        Invalid::NoSuchGroup {
                            groups: self.groups.len(),
                        },
                    ))
                }
            },
            None => &self.home,
        };
        write_id(fs, files, id)
    }

    /// Every group's figures now, in group order.
    pub fn stats(&self) -> Result<Vec<CpuStat>, Error> {
        self.groups.iter().map(|g| g.stat.read()).collect()
    }
}

/// This process's cgroup path in each hierarchy, from `/proc/self/cgroup`: v1 lines
/// `ID:CONTROLLERS:PATH` (by controller name) and the v2 line `0::PATH` (key `""`).
pub fn parse_self_cgroup(text: &str) -> Vec<(Vec<String>, String)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_id, ctl, path) = (it.next()?, it.next()?, it.next()?);
            let ctl = if ctl.is_empty() {
                vec![String::new()]
            } else {
                ctl.split(',').map(str::to_string).collect()
            };
            Some((ctl, path.to_string()))
        })
        .collect()
}

/// The directory of this process's cgroup in the hierarchy mounted at `mount` (`version`, with
/// controller `c` for v1), given `/proc/self/cgroup` parsed; the mount itself when unknown.
fn own_dir(
    cgroups: &[(Vec<String>, String)],
    version: Version,
    mount: &Path,
    c: Controller,
) -> PathBuf {
    let key = match version {
        Version::V1 => c.name(),
        Version::V2 => "",
    };
    cgroups
        .iter()
        .find(|(ctl, _)| ctl.iter().any(|k| k == key))
        .map(|(_, p)| mount.join(p.trim_start_matches('/')))
        .unwrap_or_else(|| mount.to_path_buf())
}

impl Trial {
    /// The trial's files for the launcher and the host. Reads `/proc/self/cgroup` (through the
    /// trial's file system) for this process's own cgroups, which the host returns to; a
    /// directory that does not exist there (a cgroup namespace mounted below the hierarchy's
    /// root) is replaced by the mount, the hierarchy's root.
    pub fn files(&self) -> Result<TrialFiles, Error> {
        let fs = self.fs();
        let own = fs
            .read(Path::new("/proc/self/cgroup"))
            .map_err(|e| Error::io(IoAction::Read, "/proc/self/cgroup", e))?;
        let own = parse_self_cgroup(&own);
        let threads = self.spec().threads;
        let label = self.label().as_str();
        let mut enter = Vec::new();
        let mut home = Vec::new();
        for h in self.hiers() {
            let (file, dir) = match (h.version, threads) {
                (Version::V2, true) => {
                    let tdir = h.dir.join(label);
                    enter.push(tdir.join("cgroup.procs"));
                    ("cgroup.threads", tdir)
                }
                (v, t) => {
                    let d = own_dir(&own, v, &h.mount, h.controllers[0]);
                    let d = if fs.exists(&d) { d } else { h.mount.clone() };
                    (if t { "tasks" } else { "cgroup.procs" }, d)
                }
            };
            home.push(dir.join(file));
        }
        let groups = self
            .group_dirs()
            .iter()
            .zip(self.group_names())
            .map(|(g, name)| group_files(name.as_str(), g.dirs(), threads))
            .collect();
        Ok(TrialFiles {
            threads,
            enter,
            groups,
            home,
        })
    }
}

/// A group's files from its directory in each hierarchy.
fn group_files(
    name: &str,
    dirs: &[(Version, PathBuf, Vec<Controller>)],
    threads: bool,
) -> GroupFiles {
    let join = dirs
        .iter()
        .map(|(v, d, _)| {
            d.join(match (v, threads) {
                (_, false) => "cgroup.procs",
                (Version::V1, true) => "tasks",
                (Version::V2, true) => "cgroup.threads",
            })
        })
        .collect();
    let with = |c| dirs.iter().find(|(_, _, cs)| cs.contains(&c));
    let stat = match with(Controller::Cpu).or_else(|| with(Controller::Cpuacct)) {
        Some((Version::V2, d, _)) => StatFiles {
            version: Version::V2,
            cpu_stat: Some(d.join("cpu.stat")),
            cpuacct_usage: None,
        },
        Some((Version::V1, d, cs)) => StatFiles {
            version: Version::V1,
            cpu_stat: cs.contains(&Controller::Cpu).then(|| d.join("cpu.stat")),
            cpuacct_usage: with(Controller::Cpuacct).map(|(_, d, _)| d.join("cpuacct.usage")),
        },
        None => StatFiles {
            version: Version::V1,
            cpu_stat: None,
            cpuacct_usage: None,
        },
    };
    GroupFiles {
        name: name.to_string(),
        join,
        stat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_cgroups_from_proc_self_cgroup() {
        // This machine's /proc/self/cgroup (Linux 6.18, v1 with an empty v2 mount).
        let text = "9:name=systemd:/\n4:memory:/process_api/d3\n3:cpuset:/\n2:cpuacct:/\n\
                    1:cpu:/\n0::/\n";
        let p = parse_self_cgroup(text);
        let m = Path::new("/sys/fs/cgroup/cpu");
        assert_eq!(own_dir(&p, Version::V1, m, Controller::Cpu), m);
        // A combined hierarchy and a v2 path below the root.
        let text = "2:cpu,cpuacct:/user.slice\n0::/system.slice/x.service\n";
        let p = parse_self_cgroup(text);
        assert_eq!(
            own_dir(&p, Version::V1, Path::new("/c"), Controller::Cpuacct),
            Path::new("/c/user.slice")
        );
        assert_eq!(
            own_dir(
                &p,
                Version::V2,
                Path::new("/sys/fs/cgroup"),
                Controller::Cpu
            ),
            Path::new("/sys/fs/cgroup/system.slice/x.service")
        );
        assert_eq!(
            own_dir(&p, Version::V1, Path::new("/cs"), Controller::Cpuset),
            Path::new("/cs"),
            "no line for the controller: the hierarchy's root"
        );
    }
}
