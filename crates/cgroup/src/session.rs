//! A process's cgroups: the `schedlab-PID-START` parent in each hierarchy it needs (`Session`),
//! and per trial a directory with one cgroup per group below it (`TrialPlan`, then `Trial`).
//! v1 and v2 are written through the same calls; `Trial` and `Session` remove what they
//! created when dropped.

use crate::apply::{apply_cpu, apply_cpuset, v1_blocker};
use crate::detect::{Capabilities, Controller};
use crate::error::{errno, Error, IoAction, Unavailable};
use crate::fs::CgroupFs;
use crate::invalid::Invalid;
use crate::mountinfo::Version;
use crate::owner::OwnerId;
use crate::remove::{remove_tree, Removal, REMOVE_WAIT};
use crate::rt::{free_runtime_us, share_us, RtBandwidth};
use crate::spec::{GroupSettings, Needs, TrialSpec};
use crate::trial::{GroupDirs, Trial};
use crate::value::CpuList;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One hierarchy the session uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hier {
    pub version: Version,
    pub mount: PathBuf,
    /// `mount/schedlab-PID-START`.
    pub dir: PathBuf,
    /// The layer's controllers on this hierarchy.
    pub controllers: Vec<Controller>,
}

impl Hier {
    pub fn has(&self, c: Controller) -> bool {
        self.controllers.contains(&c)
    }
}

/// A kernel setting outside the layer's own cgroups that a trial needs (v1 partitions: the
/// root cpuset's `cpuset.sched_load_balance` = 0). The layer does not write it: the caller's
/// owner of kernel settings journals and applies it after `create_trial` and restores it before
/// `Trial::remove`, so that the system is never without load balancing for longer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RootSetting {
    /// The file.
    pub path: PathBuf,
    /// The value the trial needs.
    pub value: String,
    /// Why.
    pub why: String,
}

/// The hierarchies for `needs`, one per distinct mount.
fn hierarchies(caps: &Capabilities, owner: &OwnerId, needs: &Needs) -> Vec<Hier> {
    let mut out: Vec<Hier> = Vec::new();
    let wanted = [
        (Controller::Cpu, needs.cpu),
        (Controller::Cpuacct, needs.cpu),
        (Controller::Cpuset, needs.cpuset),
    ];
    for (c, want) in wanted {
        let Ok(p) = caps.placement(c) else { continue };
        if !want {
            continue;
        }
        match out.iter_mut().find(|h| h.mount == p.mount) {
            Some(h) => h.controllers.push(c),
            None => out.push(Hier {
                version: p.version,
                mount: p.mount.clone(),
                dir: p.mount.join(owner.dir_name()),
                controllers: vec![c],
            }),
        }
    }
    out
}

/// A process's parent cgroups.
#[derive(Debug)]
pub struct Session {
    fs: Arc<dyn CgroupFs>,
    caps: Capabilities,
    owner: OwnerId,
    hiers: Vec<Hier>,
    needs: Needs,
    /// v1 RT budget given to the parents, µs per the root's period.
    rt_parent_us: Option<u64>,
    closed: bool,
}

impl Session {
    /// The directories `open` will create, for the restore journal (written before them).
    pub fn plan_open(caps: &Capabilities, owner: &OwnerId, needs: &Needs) -> Vec<PathBuf> {
        hierarchies(caps, owner, needs)
            .into_iter()
            .map(|h| h.dir)
            .collect()
    }

    /// Create the parent `schedlab-PID-START` in every hierarchy `needs` asks for and this
    /// machine has: v2 enables cpu/cpuset for its children; v1 gives the cpuset parent all
    /// CPUs and memory nodes (and load balancing off, which matters only while a partition
    /// trial switches it off in the root), and the cpu parent, if `needs.rt` and the kernel has
    /// RT group scheduling, all RT time the root leaves free.
    pub fn open(
        fs: Arc<dyn CgroupFs>,
        caps: Capabilities,
        owner: OwnerId,
        needs: Needs,
    ) -> Result<Session, Error> {
        if !caps.root_user {
            return Err(Unavailable::NotRoot.into());
        }
        let hiers = hierarchies(&caps, &owner, &needs);
        let mut s = Session {
            fs,
            caps,
            owner,
            hiers: Vec::new(),
            needs,
            rt_parent_us: None,
            closed: false,
        };
        for h in hierarchies_in_order(hiers) {
            mkdir(&*s.fs, &h.dir)?;
            s.hiers.push(h.clone());
            s.configure_parent(&h)?; // on error, drop removes what exists
        }
        Ok(s)
    }

    fn configure_parent(&mut self, h: &Hier) -> Result<(), Error> {
        let fs = &*self.fs;
        match h.version {
            Version::V2 => {
                let enable = v2_enable(h, self.needs.cpuset);
                if !enable.is_empty() {
                    write(fs, &h.dir.join("cgroup.subtree_control"), &enable)?;
                }
            }
            Version::V1 => {
                if h.has(Controller::Cpuset) {
                    write(
                        fs,
                        &h.dir.join("cpuset.cpus"),
                        &self.caps.online_cpus.to_string(),
                    )?;
                    write(fs, &h.dir.join("cpuset.mems"), &self.caps.mems.to_string())?;
                    write(fs, &h.dir.join("cpuset.sched_load_balance"), "0")?;
                }
                if h.has(Controller::Cpu) && self.needs.rt && self.caps.rt_group_sched.present {
                    let root = RtBandwidth::read(fs, &h.mount)?;
                    let siblings: Vec<RtBandwidth> = fs
                        .subdirs(&h.mount)
                        .map_err(|e| Error::io(IoAction::List, &h.mount, e))?
                        .into_iter()
                        .map(|d| h.mount.join(d))
                        .filter(|d| *d != h.dir)
                        .filter_map(|d| RtBandwidth::read(fs, &d).ok())
                        .collect();
                    let free = free_runtime_us(root, &siblings, root.period_us).ok_or(
                        Unavailable::NoRtBudget {
                            mount: h.mount.clone(),
                            root_runtime_us: root.runtime_us,
                            root_period_us: root.period_us,
                        },
                    )?;
                    write(
                        fs,
                        &h.dir.join("cpu.rt_period_us"),
                        &root.period_us.to_string(),
                    )?;
                    write(fs, &h.dir.join("cpu.rt_runtime_us"), &free.to_string())?;
                    self.rt_parent_us = Some(free);
                }
            }
        }
        Ok(())
    }

    /// The machine's capabilities the session was opened with.
    pub fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    /// The owner (this process).
    pub fn owner(&self) -> OwnerId {
        self.owner
    }

    /// The parent directories that exist now.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.hiers.iter().map(|h| h.dir.clone()).collect()
    }

    /// Check a trial and compute its directories (for the journal, before they exist), the
    /// root settings it needs and each RT group's budget.
    pub fn plan_trial(&self, spec: &TrialSpec) -> Result<TrialPlan, Error> {
        spec.validate(&self.caps.online_cpus)?;
        spec.check(&self.caps)?;
        let needs = spec.needs();
        let hiers: Vec<Hier> = self
            .hiers
            .iter()
            .filter(|h| h.has(Controller::Cpu) || h.has(Controller::Cpuacct) || needs.cpuset)
            .cloned()
            .collect();
        let lacking = |what: &'static str| {
            Error::invalid(
                "trial",
                spec.label.as_str(),
                Invalid::SessionLacks { lacking: what },
            )
        };
        if needs.cpuset && !self.hiers.iter().any(|h| h.has(Controller::Cpuset)) {
            return Err(lacking("the cpuset hierarchy"));
        }
        let rt_groups = spec.groups.iter().filter(|g| g.settings.rt_tasks).count();
        let rt_share_us = match (rt_groups, self.caps.rt_group_sched.present) {
            (0, _) | (_, false) => None,
            (n, true) => Some(share_us(
                self.rt_parent_us
                    .ok_or_else(|| lacking("an RT budget (Needs::rt)"))?,
                n,
            )),
        };
        let parts = spec.partition_cpus();
        let mut root_settings = Vec::new();
        let mut rest = None;
        let mut dirs = Vec::new();
        for h in &hiers {
            let tdir = h.dir.join(spec.label.as_str());
            dirs.push(tdir.clone());
            dirs.extend(spec.groups.iter().map(|g| tdir.join(g.name.as_str())));
            if h.version == Version::V1 && h.has(Controller::Cpuset) && !parts.is_empty() {
                if let Some((other, cpus)) = v1_blocker(&*self.fs, &h.mount, &h.dir, &parts) {
                    return Err(Unavailable::PartitionBlocked {
                        other,
                        cpus: cpus.to_string(),
                    }
                    .into());
                }
                dirs.push(tdir.join(REST));
                rest = Some(self.caps.online_cpus.difference(&parts));
                root_settings.push(RootSetting {
                    path: h.mount.join("cpuset.sched_load_balance"),
                    value: "0".into(),
                    why: format!(
                        "cgroup v1 builds separate root domains only when the root cpuset does not balance load; CPUs {parts} of trial {} get a root domain of their own",
                        spec.label
                    ),
                });
            }
        }
        Ok(TrialPlan {
            spec: spec.clone(),
            hiers,
            dirs,
            root_settings,
            rt_share_us,
            rest,
        })
    }

    /// Create a planned trial's cgroups and apply every setting.
    pub fn create_trial(&self, plan: TrialPlan) -> Result<Trial, Error> {
        let mut t = Trial::new(self.fs.clone(), plan.spec.clone(), plan.hiers.clone());
        let spec = &plan.spec;
        for h in &plan.hiers {
            let tdir = self.create_trial_dir(h, &plan, &mut t)?;
            let cpuset_here = h.has(Controller::Cpuset) && spec.needs().cpuset;
            for g in &spec.groups {
                let gdir = tdir.join(g.name.as_str());
                mkdir(&*self.fs, &gdir)?;
                t.push_dir(gdir.clone());
                self.configure_group(h, &plan, &g.settings, &gdir, cpuset_here)?;
            }
            if let (Version::V1, true, Some(rest)) = (h.version, cpuset_here, &plan.rest) {
                let rdir = tdir.join(REST);
                mkdir(&*self.fs, &rdir)?;
                t.push_dir(rdir.clone());
                write(&*self.fs, &rdir.join("cpuset.cpus"), &rest.to_string())?;
                write(
                    &*self.fs,
                    &rdir.join("cpuset.mems"),
                    &self.caps.mems.to_string(),
                )?;
            }
        }
        t.set_groups(
            spec.groups
                .iter()
                .map(|g| GroupDirs::new(&plan.hiers, spec.label.as_str(), g.name.as_str()))
                .collect(),
        );
        t.set_root_settings(plan.root_settings.clone());
        Ok(t)
    }

    /// Create the trial's directory in hierarchy `h` and configure it (v2: controllers for
    /// its children and exclusive CPUs for partitions; v1: all CPUs without load balancing,
    /// and the RT budget); returns it.
    fn create_trial_dir(
        &self,
        h: &Hier,
        plan: &TrialPlan,
        t: &mut Trial,
    ) -> Result<PathBuf, Error> {
        let fs = &*self.fs;
        let spec = &plan.spec;
        let parts = spec.partition_cpus();
        let tdir = h.dir.join(spec.label.as_str());
        mkdir(fs, &tdir)?;
        t.push_dir(tdir.clone());
        let cpuset_here = h.has(Controller::Cpuset) && spec.needs().cpuset;
        match h.version {
            Version::V2 => {
                let enable = v2_enable(h, cpuset_here);
                if !enable.is_empty() {
                    write(fs, &tdir.join("cgroup.subtree_control"), &enable)?;
                }
                if cpuset_here && !parts.is_empty() {
                    for dir in [&h.dir, &tdir] {
                        write_feature(
                            fs,
                            &dir.join("cpuset.cpus.exclusive"),
                            &parts.to_string(),
                            no_remote_partition(),
                        )?;
                        if *dir == h.dir {
                            t.set_exclusive_parent(h.dir.clone());
                        }
                    }
                }
            }
            Version::V1 => {
                if cpuset_here {
                    write(
                        fs,
                        &tdir.join("cpuset.cpus"),
                        &self.caps.online_cpus.to_string(),
                    )?;
                    write(fs, &tdir.join("cpuset.mems"), &self.caps.mems.to_string())?;
                    write(fs, &tdir.join("cpuset.sched_load_balance"), "0")?;
                }
                if h.has(Controller::Cpu) && plan.rt_share_us.is_some() {
                    if let Some(us) = self.rt_parent_us {
                        write_rt_budget(fs, &tdir.join("cpu.rt_runtime_us"), us)?;
                    }
                }
            }
        }
        Ok(tdir)
    }

    /// Apply one group's settings in hierarchy `h` (v2 thread trials: a threaded group).
    fn configure_group(
        &self,
        h: &Hier,
        plan: &TrialPlan,
        s: &GroupSettings,
        gdir: &Path,
        cpuset_here: bool,
    ) -> Result<(), Error> {
        let fs = &*self.fs;
        if h.version == Version::V2 && plan.spec.threads {
            write(fs, &gdir.join("cgroup.type"), "threaded")?;
        }
        if h.has(Controller::Cpu) {
            apply_cpu(fs, h.version, gdir, s, plan.rt_share_us)?;
        }
        if cpuset_here {
            let parts = plan.spec.partition_cpus();
            let online = &self.caps.online_cpus;
            let cpus = s
                .cpus
                .clone()
                .or_else(|| (!parts.is_empty()).then(|| online.difference(&parts)));
            apply_cpuset(
                fs,
                h.version,
                gdir,
                cpus.as_ref(),
                s.mems.as_ref(),
                &self.caps.mems,
                s.partition,
            )?;
        }
        Ok(())
    }

    /// Remove the parents and everything still below them.
    pub fn close(mut self) -> Result<Vec<Removal>, Error> {
        self.remove_all()
    }

    fn remove_all(&mut self) -> Result<Vec<Removal>, Error> {
        self.closed = true;
        let mut out = Vec::new();
        let mut first_err = None;
        for h in self.hiers.drain(..).rev() {
            match remove_tree(&*self.fs, h.version, &h.mount, &h.dir, REMOVE_WAIT) {
                Ok(r) => out.push(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.remove_all();
        }
    }
}

/// The v1 cpuset sibling that keeps the CPUs a partition leaves load-balanced.
pub(crate) const REST: &str = "_rest";

/// Hierarchies in creation order (cpu first, so a failure in cpuset leaves less to undo).
fn hierarchies_in_order(mut h: Vec<Hier>) -> Vec<Hier> {
    h.sort_by_key(|h| !h.has(Controller::Cpu));
    h
}

/// The `cgroup.subtree_control` line enabling the layer's controllers of a v2 hierarchy.
fn v2_enable(h: &Hier, cpuset: bool) -> String {
    let mut v = Vec::new();
    if h.has(Controller::Cpu) {
        v.push("+cpu");
    }
    if cpuset && h.has(Controller::Cpuset) {
        v.push("+cpuset");
    }
    v.join(" ")
}

/// Create a directory; an existing one is refused (never adopted).
pub(crate) fn mkdir(fs: &dyn CgroupFs, dir: &Path) -> Result<(), Error> {
    fs.mkdir(dir).map_err(|e| {
        if e.raw_os_error() == Some(errno::EEXIST) || e.kind() == std::io::ErrorKind::AlreadyExists
        {
            Error::Exists {
                path: dir.to_path_buf(),
            }
        } else {
            Error::io(IoAction::Create, dir, e)
        }
    })
}

/// Write a value, with the value in the error.
pub(crate) fn write(fs: &dyn CgroupFs, path: &Path, value: &str) -> Result<(), Error> {
    fs.write(path, value)
        .map_err(|e| Error::io(IoAction::Write(value.to_string()), path, e))
}

/// Give a trial directory the parents' whole RT budget. The kernel counts a removed sibling
/// (the previous trial) against the parent until the group is released, a moment after its
/// `rmdir` (`cpu_cgroup_css_released`, from a workqueue), and refuses the budget (EINVAL)
/// meanwhile: measured here, the next trial's write failed once in twelve. So EINVAL is
/// retried for [`REMOVE_WAIT`].
fn write_rt_budget(fs: &dyn CgroupFs, path: &Path, us: u64) -> Result<(), Error> {
    let deadline = std::time::Instant::now() + REMOVE_WAIT;
    loop {
        match fs.write(path, &us.to_string()) {
            Err(e)
                if e.raw_os_error() == Some(errno::EINVAL)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return r.map_err(|e| Error::io(IoAction::WriteNumber(us), path, e)),
        }
    }
}

/// Write an optional kernel file; its absence (a feature guessed from the kernel release that
/// this kernel lacks) is the typed reason `missing`, so the cell is skipped, not failed.
pub(crate) fn write_feature(
    fs: &dyn CgroupFs,
    path: &Path,
    value: &str,
    missing: Unavailable,
) -> Result<(), Error> {
    match fs.write(path, value) {
        Err(e)
            if e.raw_os_error() == Some(errno::ENOENT)
                && fs.exists(path.parent().unwrap_or(path)) =>
        {
            Err(missing.into())
        }
        r => r.map_err(|e| Error::io(IoAction::Write(value.to_string()), path, e)),
    }
}

/// The reason for a missing `cpuset.cpus.exclusive`.
pub(crate) fn no_remote_partition() -> Unavailable {
    Unavailable::NoFeature {
        file: "cpuset.cpus.exclusive",
        why: "partitions below a non-partition parent (remote partitions) came with Linux 6.7",
        remedy: "run on Linux 6.7 or later, or drop --partition",
    }
}

/// The reason for a missing `cpu.idle`.
pub(crate) fn no_idle() -> Unavailable {
    Unavailable::NoFeature {
        file: "cpu.idle",
        why: "idle cgroups came with Linux 5.15",
        remedy: "run on Linux 5.15 or later, or drop --cpu-idle",
    }
}

/// A planned trial: what will be created and written.
#[derive(Debug, Clone)]
pub struct TrialPlan {
    spec: TrialSpec,
    hiers: Vec<Hier>,
    dirs: Vec<PathBuf>,
    root_settings: Vec<RootSetting>,
    rt_share_us: Option<u64>,
    rest: Option<CpuList>,
}

impl TrialPlan {
    /// Every directory `create_trial` will make, parents first (journal them before).
    pub fn paths(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Settings outside the layer's cgroups the trial needs (see [`RootSetting`]).
    pub fn root_settings(&self) -> &[RootSetting] {
        &self.root_settings
    }

    /// The RT budget each group with FIFO/RR tasks gets (v1 RT group scheduling), µs per the
    /// root's RT period.
    pub fn rt_share_us(&self) -> Option<u64> {
        self.rt_share_us
    }

    /// One line per group: the files and values written, with the conversions.
    pub fn describe(&self, caps: &Capabilities) -> Vec<String> {
        let mut lines = self.spec.describe(caps, self.rt_share_us);
        if let Some(rest) = &self.rest {
            lines.push(format!(
                "the other CPUs ({rest}) stay load-balanced together through a cpuset of their own ({REST})"
            ));
        }
        lines
    }

    /// The trial asked for.
    pub fn spec(&self) -> &TrialSpec {
        &self.spec
    }
}
