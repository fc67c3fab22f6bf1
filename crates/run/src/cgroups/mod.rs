//! CPU cgroups in the run loop, for the cells that put their tasks in groups: the run's
//! `schedlab-PID-START` parents (opened when the run is entered, removed when it is left), and
//! per trial its groups, created before the settle window and removed when the trial ends.
//! Every directory is named in the restore journal before it exists and forgotten once it is
//! removed; the v1 root cpuset's `cpuset.sched_load_balance` that a partition trial needs is a
//! kernel setting held by the knobs (journaled, set for the trial, restored after it).
//!
//! A setting this machine cannot apply skips its cell with the layer's reason (cause and
//! remedy); any other error fails the trial. Tasks are placed by their trial's host
//! (`trial::groups`), which gets the trial's files in its request.

mod recover;

pub use recover::{remove_recorded, remove_stale, Removed};

use super::knobs::Knobs;
use super::trial::groups::TrialGroups;
use crate::error::{KernelError, NotRestored, SettingError};
use schedlab_cgroup::{
    Capabilities, Controller, Error, Needs, OwnerId, RealFs, Session, Trial, TrialSpec,
    Unavailable, Version,
};
use schedlab_core::records::{GroupRecord, TrialOutcome, TrialStatus};
use schedlab_core::warning::CgroupEnd;
use schedlab_spec::plan::{Cell, Plan};
use std::path::PathBuf;
use std::sync::Arc;

/// Environment variable that makes schedlab act as if the named controllers (`cpu`,
/// `cpuacct`, `cpuset`, comma-separated) were not mounted: for tests, and to see what a
/// machine without them would skip. It can only take capabilities away.
pub const HIDE_ENV: &str = "SCHEDLAB_CGROUP_HIDE";

/// The name of the v1 root cpuset's setting a partition trial switches off.
const LOAD_BALANCE: &str = "cpuset.sched_load_balance";

/// What this machine offers (with the controllers of [`HIDE_ENV`] taken away).
pub fn detect() -> Result<Capabilities, schedlab_cgroup::Error> {
    let mut caps = Capabilities::detect(&RealFs)?;
    let hidden = std::env::var(HIDE_ENV).unwrap_or_default();
    for name in hidden.split(',').map(str::trim) {
        let (slot, controller) = match name {
            "cpu" => (&mut caps.cpu, Controller::Cpu),
            "cpuacct" => (&mut caps.cpuacct, Controller::Cpuacct),
            "cpuset" => (&mut caps.cpuset, Controller::Cpuset),
            _ => continue,
        };
        *slot = Err(Unavailable::NoController { controller });
    }
    Ok(caps)
}

/// The trial specs of `plan`'s cells with groups (labelled by cell).
fn specs(plan: &Plan) -> Vec<TrialSpec> {
    plan.cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.trial_spec(&format!("c{i}")))
        .collect()
}

/// The kernel settings files `plan`'s groups hold, which no knob may name: the v1 root
/// cpuset's `cpuset.sched_load_balance`, which a partition switches off for each trial.
pub fn held_files(plan: &Plan) -> Vec<super::knobpaths::Held> {
    let partitions = specs(plan).iter().any(|s| !s.partition_cpus().is_empty());
    let placement = detect()
        .ok()
        .filter(|_| partitions)
        .and_then(|caps| caps.placement(Controller::Cpuset).ok().cloned());
    match placement {
        Some(p) if p.version == Version::V1 => vec![super::knobpaths::Held {
            by: "the partition axis (switched off in the root cpuset for each partition trial)"
                .into(),
            file: p.mount.join(LOAD_BALANCE),
        }],
        _ => Vec::new(),
    }
}

/// Why a trial's groups could not be had.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// This machine cannot apply a setting: the cell is skipped (cause and remedy).
    Skip(String),
    /// Something failed: the trial fails.
    Fail(String),
}

impl Refusal {
    fn of(e: Error) -> Refusal {
        match e {
            Error::Unavailable(u) => Refusal::Skip(format!("{u} [{}]", u.code())),
            e => Refusal::Fail(format!("the trial's cgroups: {e}")),
        }
    }

    /// The outcome of a trial refused so.
    pub fn outcome(&self) -> TrialOutcome {
        match self {
            Refusal::Skip(r) => TrialOutcome::not_run(TrialStatus::Skipped, r.clone()),
            Refusal::Fail(r) => TrialOutcome::not_run(TrialStatus::Failed, r.clone()),
        }
    }
}

/// One trial's groups while it runs.
pub struct GroupTrial {
    trial: Trial,
    /// What the launcher and the host need.
    pub groups: TrialGroups,
    /// Directories journaled for it.
    paths: Vec<PathBuf>,
    /// Each group's v1 RT budget, µs per second.
    rt_share_us: Option<u64>,
}

/// What ending a trial's cgroups left undone, for a [`schedlab_core::Warning::CgroupTrial`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unended {
    /// What was left undone.
    pub problem: CgroupEnd,
    /// The trial's cgroups (directories).
    pub groups: Vec<String>,
    /// What the system said.
    pub error: String,
}

/// The cgroups of the run entered last.
#[derive(Debug, Default)]
pub struct CgroupRun {
    session: Option<Session>,
    /// Why its cells with groups cannot run here.
    refusal: Option<String>,
    /// The parents journaled.
    parents: Vec<PathBuf>,
}

impl CgroupRun {
    /// Opens `plan`'s parents (journaled first through `knobs`' journal), and holds the v1
    /// root cpuset setting a partition needs. Nothing when no cell has groups. A machine
    /// without what the cells need is no error: their trials are skipped with the reason.
    pub fn enter(plan: &Plan, knobs: &mut Knobs) -> Result<CgroupRun, KernelError> {
        let specs = specs(plan);
        let mut run = CgroupRun::default();
        if specs.is_empty() {
            return Ok(run);
        }
        let caps = match detect() {
            Ok(c) if c.root_user => c,
            Ok(_) => {
                run.refusal = Some(format!(
                    "{} [{}]",
                    Unavailable::NotRoot,
                    Unavailable::NotRoot.code()
                ));
                return Ok(run);
            }
            Err(e) => {
                run.refusal = Some(format!("cannot detect the cgroup hierarchies: {e}"));
                return Ok(run);
            }
        };
        let needs = Needs::of(&specs);
        let owner = OwnerId::this_process()
            .map_err(|e| KernelError::from(SettingError::Owner(e.into())))?;
        if let Ok(p) = caps.placement(Controller::Cpuset) {
            let partitions = specs.iter().any(|s| !s.partition_cpus().is_empty());
            if partitions && p.version == Version::V1 {
                knobs.hold(LOAD_BALANCE, &p.mount.join(LOAD_BALANCE))?;
            }
        }
        run.parents = Session::plan_open(&caps, &owner, &needs);
        knobs.journal()?.add_cgroups(&run.parents)?;
        match Session::open(Arc::new(RealFs), caps, owner, needs) {
            Ok(s) => run.session = Some(s),
            Err(e) => {
                run.refusal = Some(match Refusal::of(e) {
                    Refusal::Skip(r) | Refusal::Fail(r) => r,
                });
                knobs.journal()?.remove_cgroups(&run.parents)?;
            }
        }
        Ok(run)
    }

    /// Creates the groups of a trial of `cell` labelled `label` (journaled first), with the
    /// root settings it needs in force; None for a cell without groups.
    pub fn start_trial(
        &mut self,
        cell: &Cell,
        label: &str,
        knobs: &mut Knobs,
    ) -> Result<Option<GroupTrial>, Refusal> {
        let Some(spec) = cell.trial_spec(label) else {
            return Ok(None);
        };
        if let Some(r) = &self.refusal {
            return Err(Refusal::Skip(r.clone()));
        }
        let session = self.session.as_ref().ok_or_else(|| {
            Refusal::Fail("internal error: the run's cgroups were not opened".into())
        })?;
        let plan = session.plan_trial(&spec).map_err(Refusal::of)?;
        let paths = plan.paths().to_vec();
        let rt_share_us = plan.rt_share_us();
        knobs
            .journal()
            .and_then(|j| j.add_cgroups(&paths))
            .map_err(|e| Refusal::Fail(e.to_string()))?;
        let trial = session.create_trial(plan).map_err(Refusal::of)?;
        for r in trial.root_settings() {
            if let Err(e) = knobs.set_held(&r.path, Some(&r.value)) {
                let _ = reset_roots(&trial, knobs);
                return Err(Refusal::Fail(format!("{e} ({})", r.why)));
            }
        }
        let ready = trial.partition_ready().and_then(|()| trial.files());
        let files = match ready {
            Ok(f) => f,
            Err(e) => {
                let _ = reset_roots(&trial, knobs);
                return Err(Refusal::of(e));
            }
        };
        let tasks = (cell.tasks + cell.antagonists) as usize;
        let groups = TrialGroups {
            files,
            of_task: (0..tasks).map(|i| cell.group_of(i)).collect(),
        };
        Ok(Some(GroupTrial {
            trial,
            groups,
            paths,
            rt_share_us,
        }))
    }

    /// Ends a trial's groups: root settings back, tasks moved out, directories removed and
    /// forgotten; the settings of each group go into `outcome` with the figures the launcher
    /// read, and each task's group. Returns what could not be undone (warnings).
    pub fn end_trial(
        &mut self,
        t: GroupTrial,
        cell: &Cell,
        outcome: &mut TrialOutcome,
        knobs: &mut Knobs,
    ) -> Vec<Unended> {
        let groups: Vec<String> = t.paths.iter().map(|p| p.display().to_string()).collect();
        let unended = |problem, error: &dyn std::fmt::Display| Unended {
            problem,
            groups: groups.clone(),
            error: error.to_string(),
        };
        let mut undone = Vec::new();
        if let Err(e) = reset_roots(&t.trial, knobs) {
            undone.push(unended(CgroupEnd::RootsNotReset, &e));
        }
        match t.trial.remove() {
            Ok(_) => {
                if let Err(e) = knobs.journal().and_then(|j| j.remove_cgroups(&t.paths)) {
                    undone.push(unended(CgroupEnd::JournalNotUpdated, &e));
                }
            }
            Err(e) => undone.push(unended(CgroupEnd::NotRemoved, &e)),
        }
        settle_records(cell, t.rt_share_us, outcome);
        undone
    }

    /// Removes the parents and forgets them; an error names what is left (the journal keeps
    /// it for the next command).
    pub fn close(&mut self, knobs: &mut Knobs) -> Result<(), KernelError> {
        let Some(s) = self.session.take() else {
            return Ok(());
        };
        s.close()
            .map_err(|e| KernelError::from(NotRestored::Cgroups(e.into())))?;
        knobs.journal()?.remove_cgroups(&self.parents)
    }
}

/// Puts the root settings `trial` needed back to their originals.
fn reset_roots(trial: &Trial, knobs: &Knobs) -> Result<(), KernelError> {
    for r in trial.root_settings() {
        knobs.set_held(&r.path, None)?;
    }
    Ok(())
}

/// The groups' settings next to the figures the launcher recorded, and each task's group.
fn settle_records(cell: &Cell, rt_share_us: Option<u64>, o: &mut TrialOutcome) {
    let figures = std::mem::take(&mut o.groups);
    o.groups = cell
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let (quota_us, period_us) = match g.settings.max {
                Some(schedlab_cgroup::CpuMax::Limit {
                    quota_us,
                    period_us,
                }) => (Some(quota_us), Some(period_us)),
                _ => (None, None),
            };
            let f = figures.get(i).cloned().unwrap_or_default();
            GroupRecord {
                index: i as u32,
                name: g.name.to_string(),
                tasks: g.tasks,
                weight: g.settings.weight.map(|w| w.get()),
                quota_us,
                period_us,
                idle: g.settings.idle,
                cpus: g.settings.cpus.as_ref().map(|c| c.to_string()),
                partition: g.settings.partition,
                rt_runtime_us: rt_share_us.filter(|_| g.settings.rt_tasks),
                ..f
            }
        })
        .collect();
    for t in &mut o.tasks {
        t.group = cell
            .group_of(t.task_index as usize)
            .map(|g| cell.groups[g].name.to_string());
    }
}

/// What `plan`'s groups will do on this machine, for `schedlab plan`: where each controller
/// is, each cell's groups as the layer will write them, and the cells this machine skips.
pub fn describe(plan: &Plan) -> Vec<String> {
    let specs = specs(plan);
    if specs.is_empty() {
        return Vec::new();
    }
    let caps = match detect() {
        Ok(c) => c,
        Err(e) => return vec![format!("cannot detect the cgroup hierarchies: {e}")],
    };
    let mut out: Vec<String> = caps.lines();
    for (i, c) in plan.cells.iter().enumerate() {
        let Some(spec) = c.trial_spec(&format!("c{i}")) else {
            continue;
        };
        match spec.check(&caps) {
            Ok(()) => {
                out.push(format!("cell {i}:"));
                out.extend(
                    spec.describe(&caps, None)
                        .into_iter()
                        .map(|l| format!("  {l}")),
                );
            }
            Err(u) => out.push(format!("cell {i}: skipped here: {u} [{}]", u.code())),
        }
    }
    out.push(format!(
        "the groups are created under schedlab-PID-START in each hierarchy, named in the restore journal ({}) before they exist, and removed after each trial (or by the next schedlab command after a crash)",
        super::journal::state_dir().display()
    ));
    out
}
