//! One trial's groups once they exist: placing processes and threads in them, reading their
//! CPU figures, and removing them (also when dropped).

use crate::detect::Controller;
use crate::error::{errno, Error, IoAction};
use crate::fs::CgroupFs;
use crate::invalid::Invalid;
use crate::mountinfo::Version;
use crate::remove::{remove_tree, Removal, REMOVE_WAIT};
use crate::session::{write, Hier, RootSetting};
use crate::spec::TrialSpec;
use crate::stat::CpuStat;
use crate::value::Name;
use std::path::PathBuf;
use std::sync::Arc;

/// A group's directory in each hierarchy.
#[derive(Debug, Clone)]
pub(crate) struct GroupDirs {
    /// (version, directory, controllers of that hierarchy).
    dirs: Vec<(Version, PathBuf, Vec<Controller>)>,
}

impl GroupDirs {
    pub fn new(hiers: &[Hier], label: &str, group: &str) -> GroupDirs {
        GroupDirs {
            dirs: hiers
                .iter()
                .map(|h| {
                    (
                        h.version,
                        h.dir.join(label).join(group),
                        h.controllers.clone(),
                    )
                })
                .collect(),
        }
    }

    /// (version, directory, controllers of that hierarchy) per hierarchy.
    pub(crate) fn dirs(&self) -> &[(Version, PathBuf, Vec<Controller>)] {
        &self.dirs
    }

    pub(crate) fn with(&self, c: Controller) -> Option<&(Version, PathBuf, Vec<Controller>)> {
        self.dirs.iter().find(|(_, _, cs)| cs.contains(&c))
    }
}

/// A trial's cgroups. Dropping it removes them (errors are lost then: call [`Trial::remove`]
/// to see them).
#[derive(Debug)]
pub struct Trial {
    fs: Arc<dyn CgroupFs>,
    spec: TrialSpec,
    hiers: Vec<Hier>,
    created: Vec<PathBuf>,
    groups: Vec<GroupDirs>,
    root_settings: Vec<RootSetting>,
    /// v2: the session parent whose `cpuset.cpus.exclusive` this trial set.
    exclusive_parent: Option<PathBuf>,
    removed: bool,
}

impl Trial {
    pub(crate) fn new(fs: Arc<dyn CgroupFs>, spec: TrialSpec, hiers: Vec<Hier>) -> Trial {
        Trial {
            fs,
            spec,
            hiers,
            created: Vec::new(),
            groups: Vec::new(),
            root_settings: Vec::new(),
            exclusive_parent: None,
            removed: false,
        }
    }

    pub(crate) fn push_dir(&mut self, d: PathBuf) {
        self.created.push(d);
    }

    pub(crate) fn set_groups(&mut self, g: Vec<GroupDirs>) {
        self.groups = g;
    }

    pub(crate) fn set_root_settings(&mut self, r: Vec<RootSetting>) {
        self.root_settings = r;
    }

    pub(crate) fn set_exclusive_parent(&mut self, d: PathBuf) {
        self.exclusive_parent = Some(d);
    }

    /// What the trial was created from.
    pub fn spec(&self) -> &TrialSpec {
        &self.spec
    }

    pub(crate) fn fs(&self) -> &dyn CgroupFs {
        &*self.fs
    }

    pub(crate) fn hiers(&self) -> &[Hier] {
        &self.hiers
    }

    pub(crate) fn group_dirs(&self) -> &[GroupDirs] {
        &self.groups
    }

    /// The trial's directory name.
    pub fn label(&self) -> &Name {
        &self.spec.label
    }

    /// The groups' names, in order; a group's index is its position here.
    pub fn group_names(&self) -> Vec<&Name> {
        self.spec.groups.iter().map(|g| &g.name).collect()
    }

    /// The index of the group called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.spec
            .groups
            .iter()
            .position(|g| g.name.as_str() == name)
    }

    /// The directories created, parents first.
    pub fn paths(&self) -> &[PathBuf] {
        &self.created
    }

    fn group(&self, i: usize) -> Result<&GroupDirs, Error> {
        self.groups.get(i).ok_or_else(|| {
            Error::invalid(
                "group index",
                i.to_string(),
                Invalid::NoSuchGroup {
                    groups: self.groups.len(),
                },
            )
        })
    }

    /// Move process `pid` (all its threads) into group `i` in every hierarchy. For a thread
    /// trial on v2 use [`Trial::add_host`] and [`Trial::add_thread`].
    pub fn add_process(&self, i: usize, pid: u32) -> Result<(), Error> {
        if self.spec.threads && self.hiers.iter().any(|h| h.version == Version::V2) {
            return Err(Error::invalid(
                "task",
                pid.to_string(),
                Invalid::ThreadedTrial,
            ));
        }
        for (_, dir, _) in &self.group(i)?.dirs {
            write(&*self.fs, &dir.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// Thread trials: move the host process into the trial (on v2 the threaded domain, where a
    /// process must be before its threads can go to the groups; on v1 nothing is needed, since
    /// v1 places threads one by one).
    pub fn add_host(&self, pid: u32) -> Result<(), Error> {
        for h in self.hiers.iter().filter(|h| h.version == Version::V2) {
            let f = h.dir.join(self.spec.label.as_str()).join("cgroup.procs");
            write(&*self.fs, &f, &pid.to_string())?;
        }
        Ok(())
    }

    /// Move thread `tid` into group `i` (v1 `tasks`; v2 `cgroup.threads` of a threaded group).
    pub fn add_thread(&self, i: usize, tid: u32) -> Result<(), Error> {
        for (v, dir, _) in &self.group(i)?.dirs {
            let file = match v {
                Version::V1 => "tasks",
                Version::V2 if self.spec.threads => "cgroup.threads",
                Version::V2 => {
                    return Err(Error::invalid(
                        "task",
                        tid.to_string(),
                        Invalid::ThreadOutsideThreadTrial,
                    ))
                }
            };
            write(&*self.fs, &dir.join(file), &tid.to_string())?;
        }
        Ok(())
    }

    /// Group `i`'s CPU usage and throttling now.
    pub fn stat(&self, i: usize) -> Result<CpuStat, Error> {
        let g = self.group(i)?;
        let read = |p: PathBuf| {
            self.fs
                .read(&p)
                .map_err(|e| Error::io(IoAction::Read, p, e))
        };
        match g
            .with(Controller::Cpu)
            .or_else(|| g.with(Controller::Cpuacct))
        {
            Some((Version::V2, dir, _)) => CpuStat::parse_v2(&read(dir.join("cpu.stat"))?),
            Some((Version::V1, dir, cs)) => {
                let stat = if cs.contains(&Controller::Cpu) {
                    read(dir.join("cpu.stat"))?
                } else {
                    String::new()
                };
                let usage = match g.with(Controller::Cpuacct) {
                    Some((_, d, _)) => Some(read(d.join("cpuacct.usage"))?),
                    None => None,
                };
                CpuStat::parse_v1(&stat, usage.as_deref())
            }
            None => Ok(CpuStat::default()),
        }
    }

    /// The settings outside the layer's cgroups this trial needs in force while it runs.
    pub fn root_settings(&self) -> &[RootSetting] {
        &self.root_settings
    }

    /// Whether the partitions are in effect: v1, the root settings hold; v2, every partition
    /// group reads `root`. Call it after applying the root settings, before the tasks start.
    pub fn partition_ready(&self) -> Result<(), Error> {
        for r in &self.root_settings {
            let now = self
                .fs
                .read(&r.path)
                .map_err(|e| Error::io(IoAction::Read, &r.path, e))?;
            if now.trim() != r.value {
                return Err(Error::invalid(
                    "partition",
                    now.trim(),
                    Invalid::RootSettingLost {
                        path: r.path.clone(),
                        value: r.value.clone(),
                        why: r.why.clone(),
                    },
                ));
            }
        }
        for (g, spec) in self.groups.iter().zip(&self.spec.groups) {
            if !spec.settings.partition {
                continue;
            }
            if let Some((Version::V2, dir, _)) = g.with(Controller::Cpuset) {
                let f = dir.join("cpuset.cpus.partition");
                let state = self
                    .fs
                    .read(&f)
                    .map_err(|e| Error::io(IoAction::Read, &f, e))?;
                if state.trim() != "root" {
                    return Err(Error::PartitionInvalid {
                        path: dir.clone(),
                        state: state.trim().to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Move every task out to its hierarchy's root and remove the trial's cgroups.
    pub fn remove(mut self) -> Result<Vec<Removal>, Error> {
        self.remove_inner()
    }

    fn remove_inner(&mut self) -> Result<Vec<Removal>, Error> {
        self.removed = true;
        let mut out = Vec::new();
        let mut first_err = None;
        for h in &self.hiers {
            let tdir = h.dir.join(self.spec.label.as_str());
            if !self.created.contains(&tdir) {
                continue;
            }
            match remove_tree(&*self.fs, h.version, &h.mount, &tdir, REMOVE_WAIT) {
                Ok(r) => out.push(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(p) = self.exclusive_parent.take() {
            let f = p.join("cpuset.cpus.exclusive");
            match self.fs.write(&f, "\n") {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(errno::ENOENT) => {}
                Err(e) => {
                    first_err.get_or_insert(Error::io(IoAction::Clear, f, e));
                }
            }
        }
        self.created.clear();
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

impl Drop for Trial {
    fn drop(&mut self) {
        if !self.removed {
            let _ = self.remove_inner();
        }
    }
}
