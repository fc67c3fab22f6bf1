//! The experiment file: serde types for axes and settings, and their checked expansion into a plan.

use crate::plan::{self, Cell, Plan, StartMode, TaskKind, WorkSize};
use crate::policy::{DeadlineParams, PolicyKind, PriorityMode};
use crate::workload::{CpuKernel, IoMode, Workload, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
        }
    }
}

/// Parses a duration such as `50ms`, `1.5s`, `200us`, `2m` into nanoseconds; `key` names the setting.
pub fn parse_duration_ns(key: &str, text: &str) -> Result<u64, SpecError> {
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
        _ => {
            return Err(SpecError(format!(
                "{key}: '{text}' is not a duration; write a number with a unit: ns, us, ms, s, m, h (e.g. \"50ms\", \"1.5s\")"
            )))
        }
    };
    let value: f64 = num.parse().map_err(|_| {
        SpecError(format!(
            "{key}: '{text}' is not a duration; write a number with a unit, e.g. \"50ms\""
        ))
    })?;
    Ok((value * scale).round() as u64)
}

impl Spec {
    /// Reads and checks a TOML spec; errors carry line and column.
    pub fn from_toml(text: &str) -> Result<Spec, SpecError> {
        toml::from_str(text).map_err(|e| SpecError(e.to_string()))
    }

    /// Expands the spec into cells and ordered trials, checking every value.
    pub fn plan(&self, seed: u64) -> Result<Plan, SpecError> {
        let a = &self.axes;
        let s = &self.settings;
        let nonempty = |n: usize, key: &str, values: &str| {
            if n == 0 {
                Err(SpecError(format!(
                    "axes.{key} is empty; give at least one of: {values}"
                )))
            } else {
                Ok(())
            }
        };
        nonempty(
            a.policies.len(),
            "policies",
            "other, batch, idle, fifo, rr, deadline",
        )?;
        nonempty(a.priorities.len(), "priorities", "same, spread")?;
        nonempty(a.workloads.len(), "workloads", "cpu, io, mixed")?;
        nonempty(a.tasks.len(), "tasks", "a task count such as 10")?;
        nonempty(a.kind.len(), "kind", "process, thread")?;
        nonempty(a.start.len(), "start", "barrier, staggered")?;
        if let Some(&t) = a.tasks.iter().find(|&&t| t == 0 || t > 100_000) {
            return Err(SpecError(format!(
                "axes.tasks: {t} is not a usable task count; use 1..=100000"
            )));
        }
        if s.trials == 0 {
            return Err(SpecError("settings.trials must be at least 1".into()));
        }
        if let Some(n) = s.nice {
            if !(-20..=19).contains(&n) {
                return Err(SpecError(format!(
                    "settings.nice: {n} is out of range; use -20..=19"
                )));
            }
        }
        if let Some(p) = s.rt_priority {
            if !(1..=99).contains(&p) {
                return Err(SpecError(format!(
                    "settings.rt_priority: {p} is out of range; use 1..=99 (98 is the default top, 99 is kept for the launcher)"
                )));
            }
        }
        let deadline = DeadlineParams {
            runtime_ns: parse_duration_ns("settings.deadline.runtime", &s.deadline.runtime)?,
            deadline_ns: parse_duration_ns("settings.deadline.deadline", &s.deadline.deadline)?,
            period_ns: parse_duration_ns("settings.deadline.period", &s.deadline.period)?,
        };
        if a.policies.contains(&PolicyKind::Deadline) {
            deadline
                .validate()
                .map_err(|e| SpecError(format!("settings.deadline: {e}")))?;
        }
        let default_work = parse_duration_ns("settings.work", &s.work)?;
        if let Some(t) = &s.timeout {
            if parse_duration_ns("settings.timeout", t)? == 0 {
                return Err(SpecError("settings.timeout must be above 0".into()));
            }
        }
        let online = crate::sys::allowed_cpus();
        let mut cpu_sets: Vec<Option<Vec<usize>>> = Vec::new();
        for c in &a.cpus {
            let list = crate::procfs::parse_cpu_list(c)
                .map_err(|e| SpecError(format!("axes.cpus: {e}")))?;
            if let Some(bad) = list.iter().find(|c| !online.contains(c)) {
                return Err(SpecError(format!(
                    "axes.cpus: CPU {bad} is not available to this process (allowed: {})",
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
            workloads.push(self.workload(i, w, default_work)?);
        }
        let mut cells = Vec::new();
        for &policy in &a.policies {
            for &priorities in &a.priorities {
                for (workload, size, split) in &workloads {
                    for &tasks in &a.tasks {
                        for &kind in &a.kind {
                            for &start in &a.start {
                                for cpus in &cpu_sets {
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
                                    });
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
    ) -> Result<(Workload, WorkSize, bool), SpecError> {
        let key = format!("axes.workloads[{i}]");
        let mut out = Workload {
            kind: w.kind,
            cpu_kernel: w.cpu_kernel,
            io_mode: w.io_mode,
            ..Workload::default()
        };
        if let Some(b) = w.io_block {
            out.io_block_bytes = b;
        }
        if let Some(e) = w.io_every {
            out.io_every = e;
        }
        if let Some(b) = w.io_bytes {
            if b == 0 {
                return Err(SpecError(format!("{key}.io_bytes must be above 0")));
            }
            out.io_input_bytes = b;
        }
        out.validate()
            .map_err(|e| SpecError(format!("{key}: {e}")))?;
        let size = match (w.iterations, &w.work, w.io_bytes) {
            (Some(0), _, _) => return Err(SpecError(format!("{key}.iterations must be above 0"))),
            (Some(n), Some(_), _) => {
                return Err(SpecError(format!(
                    "{key}: give either work or iterations, not both (iterations = {n})"
                )))
            }
            (Some(n), None, _) => WorkSize::Iterations(n),
            (None, Some(d), _) => WorkSize::WorkNs(parse_duration_ns(&format!("{key}.work"), d)?),
            (None, None, Some(b)) if w.kind == WorkloadKind::Io => {
                WorkSize::Iterations(b.div_ceil(out.io_block_bytes))
            }
            (None, None, _) => WorkSize::WorkNs(default_work),
        };
        if size == WorkSize::WorkNs(0) {
            return Err(SpecError(format!("{key}: work must be above 0")));
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
