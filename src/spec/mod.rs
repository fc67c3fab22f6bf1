//! The experiment file: serde types for axes and settings, and their checked expansion into a plan.

use crate::plan::{self, Cell, Plan};
use crate::policy::{DeadlineParams, PolicyKind, PriorityMode};
use crate::records::{StartMode, TaskKind, WorkSize};
use crate::workload::{CpuKernel, IoMode, Workload, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub mod locate;
mod tree;

/// A user mistake in a spec or in the flags of `run`; the message names the key and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// An experiment: what to vary (axes) and how to run it (settings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Short name of the experiment.
    #[serde(default = "default_name")]
    pub name: String,
    /// What the experiment is for.
    #[serde(default)]
    pub description: String,
    /// The axes; every combination is a cell.
    #[serde(default)]
    pub axes: Axes,
    /// How every cell is run.
    #[serde(default)]
    pub settings: Settings,
}

fn default_name() -> String {
    "unnamed".into()
}

/// The axes of an experiment, each a list of values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Axes {
    /// Scheduling classes.
    pub policies: Vec<PolicyKind>,
    /// Priority modes.
    pub priorities: Vec<PriorityMode>,
    /// Workloads with their parameters.
    pub workloads: Vec<WorkloadSpec>,
    /// Task counts.
    pub tasks: Vec<u32>,
    /// Processes and/or threads.
    pub kind: Vec<TaskKind>,
    /// Start modes.
    pub start: Vec<StartMode>,
    /// CPU lists to pin to (e.g. "0", "0-1"); empty = not pinned.
    pub cpus: Vec<String>,
    /// Numbers of antagonists: load tasks (settings.antagonist_workload under
    /// settings.antagonist_policy) that share the machine until the measured tasks end.
    pub antagonists: Vec<u32>,
    /// Block-device I/O schedulers to compare (none, mq-deadline, bfq, kyber); empty = leave as is.
    pub io_schedulers: Vec<String>,
}

impl Default for Axes {
    fn default() -> Self {
        Axes {
            policies: vec![PolicyKind::Other],
            priorities: vec![PriorityMode::Same],
            workloads: vec![WorkloadSpec::default()],
            tasks: vec![4],
            kind: vec![TaskKind::Process],
            start: vec![StartMode::Barrier],
            cpus: vec![],
            antagonists: vec![0],
            io_schedulers: vec![],
        }
    }
}

/// One workload of the `workloads` axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// cpu, io or mixed.
    pub kind: WorkloadKind,
    /// CPU kernel for cpu and mixed (default pi).
    #[serde(default)]
    pub cpu_kernel: CpuKernel,
    /// I/O operation for io and mixed (default sync-copy).
    #[serde(default)]
    pub io_mode: IoMode,
    /// Bytes per I/O operation (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_block: Option<u64>,
    /// io: bytes copied per task (fixes the size exactly, as the studies did) and input file size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_bytes: Option<u64>,
    /// mixed: one I/O operation every this many CPU units (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_every: Option<u64>,
    /// Time one task needs alone (e.g. "50ms"), found by calibration; default `settings.work`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<String>,
    /// Exact number of units (iterations, or I/O operations for io); overrides `work`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// The size is the whole trial's work, divided evenly among its tasks (study 003).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split: bool,
    /// periodic: the period (default "1ms"); the size counts periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// periodic: busy work per period, as CPU time alone (default "100us").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// command: the programs of one trial, one task each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<crate::workload::Command>,
    /// command: start orders, "all" (every permutation, study 004's six) or a list of
    /// permutations of command indices, e.g. [[0, 1, 2], [2, 1, 0]]; default: as listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders: Option<Orders>,
    /// command: delay between starting one program and the next (staggered start), e.g. "1s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_gap: Option<String>,
    /// command: stop every program this long after release, e.g. "100s"; default: run to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
}

/// Start orders of a command workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Orders {
    /// "all": every permutation.
    All(String),
    /// Explicit permutations of command indices.
    List(Vec<Vec<usize>>),
}

/// The start orders of command workload `i`, checked.
fn command_orders(i: usize, w: &WorkloadSpec) -> Result<Vec<Vec<usize>>, Problem> {
    let n = w.commands.len();
    let key = format!("axes.workloads[{i}].orders");
    match &w.orders {
        None => Ok(vec![(0..n).collect()]),
        Some(Orders::All(s)) if s == "all" => {
            if n > 6 {
                return Err(Problem::new(
                    key,
                    format!("{n} commands have too many orders to run them all"),
                )
                .accepting("\"all\" for up to 6 commands, or a list of orders"));
            }
            Ok(permutations(n))
        }
        Some(Orders::All(s)) => Err(Problem::new(key, format!("'{s}' is not an order list"))
            .accepting(
                "\"all\" or a list of permutations of the command indices, e.g. [[0, 1], [1, 0]]",
            )),
        Some(Orders::List(list)) => {
            for o in list {
                let mut sorted = o.clone();
                sorted.sort_unstable();
                if sorted != (0..n).collect::<Vec<_>>() {
                    return Err(Problem::new(
                        key,
                        format!("{o:?} is not a permutation of the {n} command indices"),
                    )
                    .accepting(format!(
                        "every index 0..={} exactly once",
                        n.saturating_sub(1)
                    )));
                }
            }
            Ok(list.clone())
        }
    }
}

/// Every permutation of `0..n`, in lexicographic order.
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for pos in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(pos, n - 1);
            out.push(p);
        }
    }
    out.sort();
    out
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            kind: WorkloadKind::Cpu,
            cpu_kernel: CpuKernel::Pi,
            io_mode: IoMode::SyncCopy,
            io_block: None,
            io_bytes: None,
            io_every: None,
            work: None,
            iterations: None,
            split: false,
            period: None,
            run: None,
            commands: Vec::new(),
            orders: None,
            start_gap: None,
            duration: None,
        }
    }
}

/// Deadline parameters as durations ("5ms").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeadlineSpec {
    /// Runtime per period (default 5ms).
    pub runtime: String,
    /// Relative deadline (default 50ms).
    pub deadline: String,
    /// Period (default 50ms).
    pub period: String,
}

impl Default for DeadlineSpec {
    fn default() -> Self {
        DeadlineSpec {
            runtime: "5ms".into(),
            deadline: "50ms".into(),
            period: "50ms".into(),
        }
    }
}

/// How every cell is run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Measured trials per cell.
    pub trials: u32,
    /// Warm-up trials per cell, run first, stored and flagged.
    pub warmup: u32,
    /// Default work per task (time alone), e.g. "50ms".
    pub work: String,
    /// Per-trial timeout (e.g. "60s"); default derived from work x tasks / CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Seed of the trial order (default: chosen at random and stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Nice for every task of the fair classes (overrides the priority mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// RT priority for every FIFO/RR task (overrides the priority mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rt_priority: Option<u32>,
    /// SCHED_DEADLINE parameters.
    pub deadline: DeadlineSpec,
    /// Directory for I/O files (default /var/tmp; a disk-backed filesystem).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_dir: Option<PathBuf>,
    /// Policy of the antagonists (default other, nice 0 / RT top).
    pub antagonist_policy: PolicyKind,
    /// What antagonists run: cpu (hogs) or io (default cpu).
    pub antagonist_workload: WorkloadKind,
    /// Interval of the system-wide sampler (e.g. "100ms"), or "off".
    pub sample_interval: String,
    /// Block device whose I/O scheduler is varied (default: the one holding io_dir), e.g. "vda".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Record the kernel's scheduler events (tracefs) during every trial; root only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            trials: 3,
            warmup: 0,
            work: "50ms".into(),
            timeout: None,
            seed: None,
            nice: None,
            rt_priority: None,
            deadline: DeadlineSpec::default(),
            io_dir: None,
            antagonist_policy: PolicyKind::Other,
            antagonist_workload: WorkloadKind::Cpu,
            sample_interval: "100ms".into(),
            device: None,
            trace: false,
        }
    }
}

/// Longest duration a spec may give (one week); longer values are surely typos.
pub const MAX_DURATION_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;
/// Most trials (cells x rounds) one experiment may plan.
pub const MAX_TRIALS: u64 = 10_000_000;

/// What `parse_duration_ns` accepts, for messages.
const DURATION_ACCEPTED: &str =
    "a number with a unit ns, us, ms, s, m or h, e.g. \"50ms\" or \"1.5s\", up to 168h";

/// Parses a duration such as `50ms`, `1.5s`, `200us`, `2m` into nanoseconds; `key` names the setting.
pub fn parse_duration_ns(key: &str, text: &str) -> Result<u64, SpecError> {
    duration_ns(key, text).map_err(SpecError::from)
}

/// [`parse_duration_ns`] with the mistake tied to `key`.
fn duration_ns(key: &str, text: &str) -> Result<u64, Problem> {
    let bad = || {
        Problem::new(key, format!("'{text}' is not a duration"))
            .accepting(DURATION_ACCEPTED.to_string())
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(bad()),
    };
    let value: f64 = num.parse().map_err(|_| bad())?;
    let ns = value * scale;
    if !ns.is_finite() || ns > MAX_DURATION_NS as f64 {
        return Err(Problem::new(key, format!("'{text}' is too long"))
            .accepting(DURATION_ACCEPTED.to_string()));
    }
    Ok(ns.round() as u64)
}

/// A mistake in a spec, tied to the key it is about; `plan` reports it as a [`SpecError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Dotted key path with list indices, e.g. `axes.workloads[1].iterations`.
    pub key: String,
    /// What is wrong with the value.
    pub message: String,
    /// What would be accepted instead, when that fits in a short list or range.
    pub accepted: Option<String>,
}

impl Problem {
    /// A problem with `key` and no list of accepted values.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            key: key.into(),
            message: message.into(),
            accepted: None,
        }
    }

    /// The same problem with the accepted values named.
    pub fn accepting(mut self, accepted: impl Into<String>) -> Problem {
        self.accepted = Some(accepted.into());
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)?;
        if let Some(a) = &self.accepted {
            write!(f, " (accepted: {a})")?;
        }
        Ok(())
    }
}

impl From<Problem> for SpecError {
    fn from(p: Problem) -> SpecError {
        SpecError(p.to_string())
    }
}

/// The values a string-named enum accepts, as `a, b, c` (taken from its serde names).
pub fn accepted_values<T: serde::de::DeserializeOwned>() -> String {
    let probe = serde::de::value::StrDeserializer::<serde::de::value::Error>::new("\u{0}");
    T::deserialize(probe)
        .err()
        .and_then(|e| locate::expected_list(&e.to_string()))
        .map(|list| list.join(", "))
        .unwrap_or_else(|| "see the README".into())
}

impl Spec {
    /// Reads and checks a TOML spec; errors read `line L, column C: KEY: message (accepted: ...)`.
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        locate::parse_text(text).map_err(|e| SpecError(e.render(None)))
    }

    /// Expands the spec into cells and ordered trials, checking every value.
    pub fn plan(&self, seed: u64) -> Result<Plan, SpecError> {
        self.check(seed).map_err(SpecError::from)
    }

    /// [`Spec::plan`] with the first mistake tied to its key, so that it can be positioned in a file.
    pub fn check(&self, seed: u64) -> Result<Plan, Problem> {
        let a = &self.axes;
        let s = &self.settings;
        let nonempty = |n: usize, key: &str, values: String| {
            if n == 0 {
                Err(
                    Problem::new(format!("axes.{key}"), "is empty; give at least one value")
                        .accepting(values),
                )
            } else {
                Ok(())
            }
        };
        nonempty(
            a.policies.len(),
            "policies",
            accepted_values::<PolicyKind>(),
        )?;
        nonempty(
            a.priorities.len(),
            "priorities",
            accepted_values::<PriorityMode>(),
        )?;
        nonempty(
            a.workloads.len(),
            "workloads",
            format!("tables with kind = {}", accepted_values::<WorkloadKind>()),
        )?;
        nonempty(a.tasks.len(), "tasks", "task counts such as 10".into())?;
        nonempty(a.kind.len(), "kind", accepted_values::<TaskKind>())?;
        nonempty(a.start.len(), "start", accepted_values::<StartMode>())?;
        if let Some((i, t)) = a
            .tasks
            .iter()
            .enumerate()
            .find(|(_, &t)| t == 0 || t > 100_000)
        {
            return Err(Problem::new(
                format!("axes.tasks[{i}]"),
                format!("{t} is not a usable task count"),
            )
            .accepting("1..=100000"));
        }
        if s.trials == 0 {
            return Err(Problem::new("settings.trials", "must be at least 1")
                .accepting("a whole number of 1 or more"));
        }
        if let Some(n) = s.nice {
            if !(-20..=19).contains(&n) {
                return Err(
                    Problem::new("settings.nice", format!("{n} is out of range"))
                        .accepting("-20..=19"),
                );
            }
        }
        if let Some(p) = s.rt_priority {
            if !(1..=99).contains(&p) {
                return Err(
                    Problem::new("settings.rt_priority", format!("{p} is out of range"))
                        .accepting("1..=99; 98 is the default top, 99 is kept for the launcher"),
                );
            }
        }
        let deadline = DeadlineParams {
            runtime_ns: duration_ns("settings.deadline.runtime", &s.deadline.runtime)?,
            deadline_ns: duration_ns("settings.deadline.deadline", &s.deadline.deadline)?,
            period_ns: duration_ns("settings.deadline.period", &s.deadline.period)?,
        };
        if a.policies.contains(&PolicyKind::Deadline) {
            if let Err(e) = deadline.validate() {
                let key =
                    if deadline.runtime_ns < 1024 || deadline.runtime_ns > deadline.deadline_ns {
                        "settings.deadline.runtime"
                    } else {
                        "settings.deadline.deadline"
                    };
                return Err(Problem::new(key, e)
                    .accepting("runtime of at least 1024ns and runtime <= deadline <= period"));
            }
        }
        let default_work = duration_ns("settings.work", &s.work)?;
        if let Some(t) = &s.timeout {
            if duration_ns("settings.timeout", t)? == 0 {
                return Err(Problem::new("settings.timeout", "must be above 0")
                    .accepting("a duration above 0 such as \"60s\""));
            }
        }
        let online = crate::sys::allowed_cpus();
        let mut cpu_sets: Vec<Option<Vec<usize>>> = Vec::new();
        for (i, c) in a.cpus.iter().enumerate() {
            let key = format!("axes.cpus[{i}]");
            let list = crate::procfs::parse_cpu_list(c).map_err(|e| {
                // The list's own message ends with the format; keep that for `accepted`.
                let message = e.split(": expected").next().unwrap_or(&e).to_string();
                Problem::new(key.as_str(), message).accepting(
                    "CPU numbers and ranges separated by commas, like \"0\", \"0-3\", \"0-3,5\"",
                )
            })?;
            if let Some(bad) = list.iter().find(|c| !online.contains(c)) {
                return Err(Problem::new(
                    key,
                    format!("CPU {bad} is not available to this process"),
                )
                .accepting(format!(
                    "CPUs allowed to this process: {}",
                    crate::procfs::format_cpu_list(&online)
                )));
            }
            cpu_sets.push(Some(list));
        }
        if cpu_sets.is_empty() {
            cpu_sets.push(None);
        }
        let mut workloads = Vec::new();
        for (i, w) in a.workloads.iter().enumerate() {
            let (base, size, split) = self.workload(i, w, default_work)?;
            if base.kind != WorkloadKind::Command {
                workloads.push((base, size, split));
                continue;
            }
            if a.kind.contains(&TaskKind::Thread) {
                return Err(Problem::new(
                    "axes.kind",
                    "command workloads run as processes (each execs a program)",
                )
                .accepting("[\"process\"]"));
            }
            for order in command_orders(i, w)? {
                let mut wl = base.clone();
                wl.commands = order.iter().map(|&k| w.commands[k].clone()).collect();
                workloads.push((wl, WorkSize::Iterations(1), false));
            }
        }
        let cells_total = [
            a.policies.len(),
            a.priorities.len(),
            workloads.len(),
            a.tasks.len(),
            a.kind.len(),
            a.start.len(),
            cpu_sets.len(),
            a.antagonists.len().max(1),
            a.io_schedulers.len().max(1),
        ]
        .iter()
        .fold(1u64, |n, &len| n.saturating_mul(len as u64));
        let rounds = u64::from(s.trials) + u64::from(s.warmup);
        let trials_total = cells_total.saturating_mul(rounds);
        if trials_total > MAX_TRIALS {
            let key = if cells_total > MAX_TRIALS {
                "axes"
            } else {
                "settings.trials"
            };
            return Err(Problem::new(
                key,
                format!(
                    "{cells_total} cells x {rounds} trials (with warm-up) = {trials_total} trials is too many"
                ),
            )
            .accepting(format!("at most {MAX_TRIALS} trials in all")));
        }
        let antagonist_counts: Vec<u32> = if a.antagonists.is_empty() {
            vec![0]
        } else {
            a.antagonists.clone()
        };
        if let Some((i, &n)) = antagonist_counts
            .iter()
            .enumerate()
            .find(|(_, &n)| n > 10_000)
        {
            return Err(Problem::new(
                format!("axes.antagonists[{i}]"),
                format!("{n} antagonists is too many"),
            )
            .accepting("0..=10000"));
        }
        if !matches!(s.antagonist_workload, WorkloadKind::Cpu | WorkloadKind::Io) {
            return Err(Problem::new(
                "settings.antagonist_workload",
                "antagonists run cpu or io work",
            )
            .accepting("cpu, io"));
        }
        if s.sample_interval.trim() != "off" {
            let ns = duration_ns("settings.sample_interval", &s.sample_interval)?;
            if ns < 10_000_000 {
                return Err(Problem::new(
                    "settings.sample_interval",
                    format!("{} is too short to sample /proc cheaply", s.sample_interval),
                )
                .accepting("\"off\" or a duration of 10ms or more, e.g. \"100ms\""));
            }
        }
        let mut io_schedulers: Vec<Option<String>> = Vec::new();
        for (i, name) in a.io_schedulers.iter().enumerate() {
            if name.trim().is_empty() || name.contains(char::is_whitespace) {
                return Err(Problem::new(
                    format!("axes.io_schedulers[{i}]"),
                    format!("'{name}' is not a scheduler name"),
                )
                .accepting(
                    "names from /sys/block/DEV/queue/scheduler, e.g. none, mq-deadline, bfq, kyber",
                ));
            }
            io_schedulers.push(Some(name.trim().to_string()));
        }
        if io_schedulers.is_empty() {
            io_schedulers.push(None);
        }
        let mut cells = Vec::new();
        for &policy in &a.policies {
            for &priorities in &a.priorities {
                for (workload, size, split) in &workloads {
                    // A command workload has one task per program, whatever the tasks axis says.
                    let task_counts: Vec<u32> = if workload.kind == WorkloadKind::Command {
                        vec![workload.commands.len() as u32]
                    } else {
                        a.tasks.clone()
                    };
                    for &tasks in &task_counts {
                        for &kind in &a.kind {
                            for &start in &a.start {
                                for cpus in &cpu_sets {
                                    for &antagonists in &antagonist_counts {
                                        for io_scheduler in &io_schedulers {
                                            cells.push(Cell {
                                                policy,
                                                priorities,
                                                workload: workload.clone(),
                                                size: *size,
                                                split: *split,
                                                tasks,
                                                kind,
                                                start,
                                                cpus: cpus.clone(),
                                                nice: s.nice,
                                                rt_priority: s.rt_priority,
                                                deadline,
                                                antagonists,
                                                antagonist_policy: s.antagonist_policy,
                                                antagonist_workload: s.antagonist_workload,
                                                io_scheduler: io_scheduler.clone(),
                                            });
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let trials = plan::order(cells.len(), s.trials, s.warmup, seed);
        Ok(Plan {
            cells,
            trials,
            seed,
        })
    }

    fn workload(
        &self,
        i: usize,
        w: &WorkloadSpec,
        default_work: u64,
    ) -> Result<(Workload, WorkSize, bool), Problem> {
        let key = format!("axes.workloads[{i}]");
        let mut out = Workload {
            kind: w.kind,
            cpu_kernel: w.cpu_kernel,
            io_mode: w.io_mode,
            ..Workload::default()
        };
        if let Some(b) = w.io_block {
            if b == 0 || b > 64 * 1024 * 1024 {
                return Err(Problem::new(
                    format!("{key}.io_block"),
                    format!("{b} bytes is not a usable I/O block"),
                )
                .accepting("1..=67108864 (64 MiB)"));
            }
            out.io_block_bytes = b;
        }
        if w.kind == WorkloadKind::Command {
            if w.commands.is_empty() || w.commands.iter().any(|c| c.argv.is_empty()) {
                return Err(Problem::new(
                    format!("{key}.commands"),
                    "needs at least one command, each with a non-empty argv",
                )
                .accepting("commands = [{ argv = [\"program\", \"arg\"] }]"));
            }
            out.commands = w.commands.clone();
            if let Some(g) = &w.start_gap {
                out.start_gap_ns = duration_ns(&format!("{key}.start_gap"), g)?;
            }
            if let Some(d) = &w.duration {
                out.window_ns = duration_ns(&format!("{key}.duration"), d)?;
            }
        }
        if let Some(p) = &w.period {
            out.period_ns = duration_ns(&format!("{key}.period"), p)?;
        }
        if let Some(r) = &w.run {
            out.run_ns = duration_ns(&format!("{key}.run"), r)?;
        }
        if let Some(e) = w.io_every {
            if e == 0 {
                return Err(
                    Problem::new(format!("{key}.io_every"), "must be at least 1")
                        .accepting("a whole number of 1 or more"),
                );
            }
            out.io_every = e;
        }
        if let Some(b) = w.io_bytes {
            if b == 0 {
                return Err(Problem::new(format!("{key}.io_bytes"), "must be above 0")
                    .accepting("a whole number of bytes, 1 or more"));
            }
            out.io_input_bytes = b;
        }
        out.validate().map_err(|e| Problem::new(key.as_str(), e))?;
        let size = match (w.iterations, &w.work, w.io_bytes) {
            (Some(0), _, _) => {
                return Err(Problem::new(format!("{key}.iterations"), "must be above 0")
                    .accepting("a whole number of 1 or more"))
            }
            (Some(n), Some(d), _) => {
                return Err(Problem::new(
                    format!("{key}.iterations"),
                    format!(
                    "give either work or iterations, not both (work = \"{d}\", iterations = {n})"
                ),
                ))
            }
            (Some(n), None, _) => WorkSize::Iterations(n),
            (None, Some(d), _) => WorkSize::WorkNs(duration_ns(&format!("{key}.work"), d)?),
            (None, None, Some(b)) if w.kind == WorkloadKind::Io => {
                WorkSize::Iterations(b.div_ceil(out.io_block_bytes))
            }
            (None, None, _) => WorkSize::WorkNs(default_work),
        };
        // A periodic workload counts periods: its work (a duration) becomes periods of `period`.
        let size = match size {
            WorkSize::WorkNs(ns) if w.kind == WorkloadKind::Periodic => {
                WorkSize::Iterations((ns / out.period_ns.max(1)).max(1))
            }
            other => other,
        };
        if size == WorkSize::WorkNs(0) {
            let key = if w.work.is_some() {
                format!("{key}.work")
            } else {
                "settings.work".into()
            };
            return Err(Problem::new(key, "must be above 0")
                .accepting("a duration above 0 such as \"50ms\""));
        }
        Ok((out, size, w.split))
    }
}

impl Spec {
    /// The built-in quick experiment: OTHER vs FIFO vs RR, CPU-bound, 4 tasks pinned to CPU 0.
    pub fn default_quick() -> Spec {
        Spec {
            name: "quick".into(),
            description: "Built-in quick experiment: other, fifo and rr on CPU-bound work, 4 tasks sharing CPU 0".into(),
            axes: Axes {
                policies: vec![PolicyKind::Other, PolicyKind::Fifo, PolicyKind::Rr],
                tasks: vec![4],
                cpus: vec!["0".into()],
                ..Axes::default()
            },
            settings: Settings {
                trials: 3,
                work: "50ms".into(),
                ..Settings::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration_ns("k", "50ms").unwrap(), 50_000_000);
        assert_eq!(parse_duration_ns("k", "1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("k", "200us").unwrap(), 200_000);
        assert_eq!(parse_duration_ns("k", "2m").unwrap(), 120_000_000_000);
        let e = parse_duration_ns("settings.work", "50").unwrap_err().0;
        assert!(e.contains("settings.work") && e.contains("ms"), "{e}");
        assert!(parse_duration_ns("k", "fast").is_err());
    }

    #[test]
    fn axes_multiply_into_cells() {
        let spec = Spec::from_toml(
            r#"
            name = "t"
            [axes]
            policies = ["other", "fifo", "rr"]
            priorities = ["same", "spread"]
            tasks = [10, 50, 150]
            workloads = [{ kind = "cpu" }, { kind = "io" }, { kind = "mixed" }]
            [settings]
            trials = 4
            "#,
        )
        .unwrap();
        let plan = spec.plan(1).unwrap();
        assert_eq!(plan.cells.len(), 54);
        assert_eq!(plan.trials.len(), 54 * 4);
    }

    #[test]
    fn unknown_keys_are_rejected_with_their_name_and_position() {
        let e = Spec::from_toml("[settings]\ntrails = 3\n").unwrap_err().0;
        assert!(e.contains("trails") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn impossible_values_name_the_key() {
        let mut s = Spec::default_quick();
        s.axes.tasks = vec![0];
        assert!(s.plan(1).unwrap_err().0.contains("axes.tasks"));
        let mut s = Spec::default_quick();
        s.axes.policies = vec![PolicyKind::Deadline];
        s.settings.deadline.runtime = "60ms".into();
        assert!(s.plan(1).unwrap_err().0.contains("settings.deadline"));
        let mut s = Spec::default_quick();
        s.axes.workloads = vec![WorkloadSpec {
            iterations: Some(5),
            work: Some("1ms".into()),
            ..WorkloadSpec::default()
        }];
        assert!(s
            .plan(1)
            .unwrap_err()
            .0
            .contains("either work or iterations"));
    }

    #[test]
    fn io_bytes_fix_the_number_of_operations() {
        let mut s = Spec::default_quick();
        s.axes.workloads = vec![WorkloadSpec {
            kind: WorkloadKind::Io,
            io_bytes: Some(100 * 1024),
            io_block: Some(1024),
            ..WorkloadSpec::default()
        }];
        let plan = s.plan(1).unwrap();
        assert_eq!(plan.cells[0].size, WorkSize::Iterations(100));
        assert_eq!(plan.cells[0].workload.io_input_bytes, 100 * 1024);
    }
}
