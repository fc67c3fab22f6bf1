//! The plan: a checked spec expanded into cells and an ordered list of trials (seeded rounds,
//! warm-ups first), with everything the run stage needs to run them. Built from a spec by
//! [`build`]; the run stage needs nothing else.

mod expand;
mod groups;

pub use crate::{Adaptive, SpecError};
pub use expand::order;
pub use groups::CellGroup;

/// Longest a trial may be planned to last, ns: the longest duration a spec may give (168 h).
/// It keeps every derived deadline (ten times this, plus 10 s) far inside the range of the
/// stored `timeout_ns` (i64), and is checked by the run stage once a cell's work is known.
pub const MAX_TRIAL_NS: u64 = crate::MAX_DURATION_NS;

use crate::{Checked, Spec};
use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode};
use schedlab_core::records::{KnobSetting, ScxCommand, StartMode, TaskKind, WorkSize};
use schedlab_core::workload::Workload;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One combination of axis values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Scheduling class.
    pub policy: PolicyKind,
    /// Priority mode.
    pub priorities: PriorityMode,
    /// What each task does.
    pub workload: Workload,
    /// How much of it.
    pub size: WorkSize,
    /// The size is the whole trial's work, divided evenly among its tasks (study 003).
    pub split: bool,
    /// Number of tasks.
    pub tasks: u32,
    /// Processes or threads.
    pub kind: TaskKind,
    /// Barrier or staggered start.
    pub start: StartMode,
    /// CPUs every task is pinned to (None: not pinned).
    pub cpus: Option<Vec<usize>>,
    /// Nice override for every task.
    pub nice: Option<i32>,
    /// RT priority override for every task.
    pub rt_priority: Option<u32>,
    /// DEADLINE parameters.
    pub deadline: DeadlineParams,
    /// Number of antagonists sharing the machine with the measured tasks.
    pub antagonists: u32,
    /// Policy of the antagonists.
    pub antagonist_policy: PolicyKind,
    /// What the antagonists run (cpu or io).
    pub antagonist_workload: schedlab_core::workload::WorkloadKind,
    /// Block-device I/O scheduler set for the cell (None: left as it is).
    pub io_scheduler: Option<String>,
    /// EEVDF custom slice of the measured tasks, ns (fair policies; None: the kernel's default).
    #[serde(default)]
    pub slice_ns: Option<u64>,
    /// Kernel settings set before each trial of the cell (and restored after the run).
    #[serde(default)]
    pub knobs: Vec<KnobSetting>,
    /// BPF scheduler (sched_ext) running during the cell's trials (None: the fair class).
    #[serde(default)]
    pub scx: Option<ScxCommand>,
    /// The measured tasks' CPU cgroups, in task order (empty: the tasks stay in schedlab's
    /// own cgroups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CellGroup>,
}

impl Cell {
    /// A one-line description, e.g. `fifo/same cpu:pi x10 process barrier cpus=0`.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{}/{} {} x{} {} {}",
            self.policy,
            self.priorities.name(),
            self.workload.label(),
            self.tasks,
            self.kind.name(),
            self.start.name()
        );
        if self.split {
            s.push_str(" split");
        }
        if self.antagonists > 0 {
            s.push_str(&format!(
                " +{} {} antagonists ({})",
                self.antagonists,
                self.antagonist_workload.name(),
                self.antagonist_policy
            ));
        }
        if let Some(io) = &self.io_scheduler {
            s.push_str(&format!(" io={io}"));
        }
        if let Some(settings) = self.settings_label() {
            s.push(' ');
            s.push_str(&settings);
        }
        if let Some(c) = &self.cpus {
            s.push_str(&format!(" cpus={}", schedlab_procfs::format_cpu_list(c)));
        }
        s
    }
}

impl Cell {
    /// The cell's kernel settings in one line (slice, knobs, BPF scheduler, cgroups), e.g.
    /// `slice=0.1ms kernel.sched_rr_timeslice_ms=10 scx=lavd cg[a:1 w=100 | b:1 w=300]`;
    /// None when it has none.
    pub fn settings_label(&self) -> Option<String> {
        let parts: Vec<String> = self
            .slice_ns
            .map(|ns| format!("slice={}", schedlab_core::records::slice_label(ns)))
            .into_iter()
            .chain(self.knobs.iter().map(KnobSetting::label))
            .chain(self.scx.as_ref().map(|c| format!("scx={}", c.ops)))
            .chain(self.groups_label())
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// One trial to run: which cell, its index within the cell, its round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTrial {
    /// Index into `Plan::cells`.
    pub cell: usize,
    /// Index of the trial within its cell (warm-ups first).
    pub trial_index: u32,
    /// Round number; every round runs each cell once.
    pub round: u32,
    /// A warm-up trial: stored, flagged, excluded from analysis by default.
    pub warmup: bool,
}

/// How every trial of a plan is run: the spec's settings, checked and typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// Measured trials per cell.
    pub trials: u32,
    /// Warm-up trials per cell.
    pub warmup: u32,
    /// How often a contaminated trial (disturbed, or slowed in-trial) is run again at the end
    /// of its round.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// Per-trial timeout override, ns (None: derived per cell).
    pub timeout_ns: Option<u64>,
    /// Directory for I/O files (default /var/tmp).
    pub io_dir: PathBuf,
    /// Interval of the system-wide sampler, ns (None: off).
    pub sample_interval_ns: Option<u64>,
    /// Block device whose I/O scheduler is varied (None: the one holding io_dir).
    pub device: Option<String>,
    /// Record the kernel's scheduler trace.
    pub trace: bool,
    /// Files on the deny list the knobs may change anyway (`--allow-knob`), as paths.
    #[serde(default)]
    pub allow_knobs: Vec<String>,
    /// Adaptive trial count: the plan holds its minimum rounds, [`round`] gives the next ones.
    pub adaptive: Option<Adaptive>,
}

/// Cells, the order their trials run in, and how to run them: all the run stage needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Short name of the experiment.
    pub name: String,
    /// What the experiment is for.
    pub description: String,
    /// The spec as run (defaults filled in, the seed set), as TOML; stored with the run.
    pub spec_toml: String,
    /// How every trial is run.
    pub settings: RunSettings,
    /// The cells, in axis order.
    pub cells: Vec<Cell>,
    /// The trials, in run order.
    pub trials: Vec<PlannedTrial>,
    /// Seed of the shuffle.
    pub seed: u64,
}

/// Checks `spec` and expands it into a plan whose trial order is shuffled with `seed`.
pub fn build(spec: &Spec, seed: u64) -> Result<Plan, SpecError> {
    let checked = spec.validate()?;
    assemble(spec, &checked, seed)
}

/// [`build`] for `spec` read from file `path` and possibly changed by flags since: a mistake
/// the file alone has reads `PATH:LINE:COL: KEY: message`, one the flags brought in
/// `KEY: message`.
pub fn build_for_file(path: &Path, spec: &Spec, seed: u64) -> Result<Plan, SpecError> {
    let checked = crate::locate::validate_file(path, spec)?;
    assemble(spec, &checked, seed)
}

/// Parses, checks and plans spec `text` read from `origin`; every error names
/// `origin:line:column`.
pub fn build_from_text(origin: &str, text: &str, seed: u64) -> Result<(Spec, Plan), SpecError> {
    let (spec, checked) = crate::locate::check_text(origin, text)?;
    let plan = assemble(&spec, &checked, seed)?;
    Ok((spec, plan))
}

/// The plan of `spec`, already checked as `checked`.
fn assemble(spec: &Spec, checked: &Checked, seed: u64) -> Result<Plan, SpecError> {
    let cells = groups::vary_groups(expand::cells(checked), &checked.cgroups)?;
    let rounds = checked
        .adaptive
        .as_ref()
        .map_or(checked.trials, |a| a.min_trials);
    let trials = order(cells.len(), rounds, checked.warmup, seed);
    Ok(Plan {
        name: spec.name.clone(),
        description: spec.description.clone(),
        spec_toml: spec.to_as_run(seed, checked.adaptive.as_ref())?,
        settings: run_settings(checked),
        cells,
        trials,
        seed,
    })
}

/// Retries of plans serialized before `retries` existed.
fn default_retries() -> u32 {
    crate::DEFAULT_RETRIES
}

/// The settings of `c` the run stage reads.
fn run_settings(c: &Checked) -> RunSettings {
    RunSettings {
        trials: c.trials,
        warmup: c.warmup,
        retries: c.retries,
        timeout_ns: c.timeout_ns,
        io_dir: c.io_dir.clone(),
        sample_interval_ns: c.sample_interval_ns,
        device: c.device.clone(),
        trace: c.trace,
        allow_knobs: c.allow_knobs.clone(),
        adaptive: c.adaptive.clone(),
    }
}

/// The trials of round `round` (warm-up rounds counted) of `plan`, in their shuffled order:
/// the same as [`order`] gives for that round with more rounds, so a resumed run finds the
/// same order. For adaptive runs, whose plan holds only the first rounds.
pub fn round(plan: &Plan, round: u32) -> Vec<PlannedTrial> {
    let warmup = plan.settings.warmup;
    let measured = (round + 1).saturating_sub(warmup);
    order(plan.cells.len(), measured, warmup.min(round + 1), plan.seed)
        .into_iter()
        .filter(|t| t.round == round)
        .collect()
}

#[cfg(test)]
mod tests;
