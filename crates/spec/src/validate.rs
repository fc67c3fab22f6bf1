//! Checks every value of a spec, in a fixed order, and returns them typed ([`Checked`]); the
//! first mistake is a [`Problem`] naming its key. Expanding the axes into cells is the plan's job.

use super::durations::duration_ns;
use super::workloads::{check_workloads, CheckedWorkload};
use super::{accepted_values, Axes, Problem, Settings, Spec};
use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind};
use schedlab_core::workload::WorkloadKind;
use std::path::PathBuf;

/// Most trials (cells x rounds) one experiment may plan.
pub const MAX_TRIALS: u64 = 10_000_000;

/// Most antagonists one cell may have.
const MAX_ANTAGONISTS: u32 = 10_000;

/// Shortest interval of the system-wide sampler, ns.
const MIN_SAMPLE_INTERVAL_NS: u64 = 10_000_000;

/// A spec whose every value was checked, typed: the axes still as lists, durations in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// Scheduling classes (not empty).
    pub policies: Vec<PolicyKind>,
    /// Priority modes (not empty).
    pub priorities: Vec<PriorityMode>,
    /// Workloads (not empty), with their sizes and start orders.
    pub workloads: Vec<CheckedWorkload>,
    /// Task counts, each 1..=100000 (not empty).
    pub tasks: Vec<u32>,
    /// Processes and/or threads (not empty).
    pub kind: Vec<TaskKind>,
    /// Start modes (not empty).
    pub start: Vec<StartMode>,
    /// CPU sets to pin to, each allowed to this process; empty = not pinned.
    pub cpus: Vec<Vec<usize>>,
    /// Antagonist counts, each 0..=10000; empty = none.
    pub antagonists: Vec<u32>,
    /// Block-device I/O scheduler names, trimmed; empty = left as they are.
    pub io_schedulers: Vec<String>,
    /// EEVDF custom slices, ns (None: the kernel's base slice); empty = not varied.
    pub slices: Vec<Option<u64>>,
    /// Kernel settings to vary, with their files.
    pub knobs: Vec<super::CheckedKnob>,
    /// Files on the deny list the knobs may change anyway (`settings.allow_knobs`), as paths.
    pub allow_knobs: Vec<String>,
    /// BPF schedulers (None: the fair class); empty = not varied.
    pub scx: Vec<Option<schedlab_core::records::ScxCommand>>,
    /// Nice override for every task of the fair classes.
    pub nice: Option<i32>,
    /// RT priority override for every FIFO/RR task, 1..=99.
    pub rt_priority: Option<u32>,
    /// SCHED_DEADLINE parameters (checked against each other when DEADLINE is a policy).
    pub deadline: DeadlineParams,
    /// Policy of the antagonists.
    pub antagonist_policy: PolicyKind,
    /// What the antagonists run: cpu or io.
    pub antagonist_workload: WorkloadKind,
    /// Measured trials per cell, 1 or more.
    pub trials: u32,
    /// Warm-up trials per cell.
    pub warmup: u32,
    /// Re-runs of a contaminated trial, 0..=[`super::MAX_RETRIES`].
    pub retries: u32,
    /// Per-trial timeout override, ns, above 0 (None: derived per cell).
    pub timeout_ns: Option<u64>,
    /// Directory for I/O files (default /var/tmp).
    pub io_dir: PathBuf,
    /// Interval of the system-wide sampler, ns, 10 ms or more (None: off).
    pub sample_interval_ns: Option<u64>,
    /// Block device whose I/O scheduler is varied (None: the one holding io_dir).
    pub device: Option<String>,
    /// Record the kernel's scheduler trace.
    pub trace: bool,
    /// Adaptive trial count (`settings.precision`); None: `trials` rounds.
    pub adaptive: Option<super::Adaptive>,
    /// The CPU cgroup axes (task groups and their settings).
    pub cgroups: super::CheckedCgroups,
    /// Declared claims, checked against the axes.
    pub claims: Vec<super::Claim>,
}

impl Spec {
    /// Checks every value, in a fixed order, and returns them typed; the first mistake found is
    /// tied to its key, so that it can be positioned in a file.
    pub fn validate(&self) -> Result<Checked, Problem> {
        let (a, s) = (&self.axes, &self.settings);
        check_text_fields(self)?;
        check_nonempty_axes(a)?;
        check_task_counts(&a.tasks)?;
        check_priorities(s)?;
        let deadline = deadline_params(s, &a.policies)?;
        let default_work_ns = duration_ns("settings.work", &s.work)?;
        let timeout_ns = timeout_ns(s)?;
        let cpus = cpu_sets(&a.cpus)?;
        let workloads = check_workloads(a, default_work_ns)?;
        let cgroups = super::cgroups::check_cgroups(&super::cgroups::CgroupAxes {
            groups: a.groups.as_ref(),
            cpu_weight: &a.cpu_weight,
            cpu_max: &a.cpu_max,
            cpu_idle: &a.cpu_idle,
            cpuset: &a.cpuset,
            partition: &a.partition,
            tasks: &a.tasks,
            pinned: !a.cpus.is_empty(),
        })?;
        let adaptive = super::adaptive::check_adaptive(s)?;
        check_primary_metric(s)?;
        check_trial_count(a, &workloads, s, adaptive.as_ref(), &cgroups)?;
        check_antagonists(a, s)?;
        let sample_interval_ns = sample_interval_ns(s)?;
        let io_schedulers = io_schedulers(&a.io_schedulers)?;
        let slices = super::knobs::check_slices(&a.slices, &a.policies)?;
        let allow_knobs = super::knobs::check_allow_knobs(&s.allow_knobs)?;
        let knobs = super::knobs::check_knobs(&a.knobs, &allow_knobs)?;
        let scx = super::knobs::check_scx(&a.scx)?;
        let claims = super::claims::check_claims(self)?;
        if s.until_decided && claims.is_empty() {
            return Err(Problem::new(
                "settings.until_decided",
                "adds rounds until every claim is decided, but the experiment declares no claim",
            )
            .accepting("[[claims]] entries, or --claim 'METRIC: A < B'"));
        }
        Ok(Checked {
            policies: a.policies.clone(),
            priorities: a.priorities.clone(),
            workloads,
            tasks: a.tasks.clone(),
            kind: a.kind.clone(),
            start: a.start.clone(),
            cpus,
            antagonists: a.antagonists.clone(),
            io_schedulers,
            slices,
            knobs,
            allow_knobs,
            scx,
            nice: s.nice,
            rt_priority: s.rt_priority,
            deadline,
            antagonist_policy: s.antagonist_policy,
            antagonist_workload: s.antagonist_workload,
            trials: s.trials,
            warmup: s.warmup,
            retries: retries(s)?,
            timeout_ns,
            io_dir: s.io_dir.clone().unwrap_or_else(|| "/var/tmp".into()),
            sample_interval_ns,
            device: s.device.clone(),
            trace: s.trace,
            adaptive,
            cgroups,
            claims,
        })
    }
}

/// `settings.retries`, within its bounds.
fn retries(s: &Settings) -> Result<u32, Problem> {
    let n = s.retries.unwrap_or(super::DEFAULT_RETRIES);
    if n > super::MAX_RETRIES {
        return Err(Problem::new(
            "settings.retries",
            format!("{n} re-runs of a contaminated trial are too many"),
        )
        .accepting(format!("0 (never) to {}", super::MAX_RETRIES)));
    }
    Ok(n)
}

/// Every axis that needs a value has one.
fn check_nonempty_axes(a: &Axes) -> Result<(), Problem> {
    let axes = [
        (
            "policies",
            a.policies.len(),
            accepted_values::<PolicyKind>(),
        ),
        (
            "priorities",
            a.priorities.len(),
            accepted_values::<PriorityMode>(),
        ),
        (
            "workloads",
            a.workloads.len(),
            format!("tables with kind = {}", accepted_values::<WorkloadKind>()),
        ),
        ("tasks", a.tasks.len(), "task counts such as 10".into()),
        ("kind", a.kind.len(), accepted_values::<TaskKind>()),
        ("start", a.start.len(), accepted_values::<StartMode>()),
    ];
    match axes.into_iter().find(|(_, len, _)| *len == 0) {
        Some((key, _, values)) => Err(Problem::new(
            format!("axes.{key}"),
            "is empty; give at least one value",
        )
        .accepting(values)),
        None => Ok(()),
    }
}

/// Every task count is 1..=100000.
fn check_task_counts(tasks: &[u32]) -> Result<(), Problem> {
    match tasks
        .iter()
        .enumerate()
        .find(|(_, &t)| t == 0 || t > 100_000)
    {
        Some((i, t)) => Err(Problem::new(
            format!("axes.tasks[{i}]"),
            format!("{t} is not a usable task count"),
        )
        .accepting("1..=100000")),
        None => Ok(()),
    }
}

/// Trials, nice and RT priority are in range.
fn check_priorities(s: &Settings) -> Result<(), Problem> {
    if s.trials == 0 {
        return Err(Problem::new("settings.trials", "must be at least 1")
            .accepting("a whole number of 1 or more"));
    }
    if let Some(n) = s.nice.filter(|n| !(-20..=19).contains(n)) {
        return Err(
            Problem::new("settings.nice", format!("{n} is out of range")).accepting("-20..=19"),
        );
    }
    if let Some(p) = s.rt_priority.filter(|p| !(1..=99).contains(p)) {
        return Err(
            Problem::new("settings.rt_priority", format!("{p} is out of range"))
                .accepting("1..=99; 98 is the default top, 99 is kept for the launcher"),
        );
    }
    Ok(())
}

/// The DEADLINE parameters, in ns; checked against each other when DEADLINE is one of `policies`.
fn deadline_params(s: &Settings, policies: &[PolicyKind]) -> Result<DeadlineParams, Problem> {
    let d = &s.deadline;
    let deadline = DeadlineParams {
        runtime_ns: duration_ns("settings.deadline.runtime", &d.runtime)?,
        deadline_ns: duration_ns("settings.deadline.deadline", &d.deadline)?,
        period_ns: duration_ns("settings.deadline.period", &d.period)?,
    };
    if !policies.contains(&PolicyKind::Deadline) {
        return Ok(deadline);
    }
    deadline.validate().map_err(|e| {
        let runtime_wrong =
            deadline.runtime_ns < 1024 || deadline.runtime_ns > deadline.deadline_ns;
        let key = if runtime_wrong {
            "settings.deadline.runtime"
        } else {
            "settings.deadline.deadline"
        };
        Problem::new(key, e.to_string())
            .accepting("runtime of at least 1024ns and runtime <= deadline <= period")
    })?;
    Ok(deadline)
}

/// The per-trial timeout override, ns, above 0.
fn timeout_ns(s: &Settings) -> Result<Option<u64>, Problem> {
    let Some(t) = &s.timeout else {
        return Ok(None);
    };
    match duration_ns("settings.timeout", t)? {
        0 => Err(Problem::new("settings.timeout", "must be above 0")
            .accepting("a duration above 0 such as \"60s\"")),
        ns => Ok(Some(ns)),
    }
}

/// The spec's names, descriptions and labels (the experiment's, its claims', its programs')
/// are printable text: a control character would reach a terminal, LaTeX or Markdown as a
/// command (a CR ends a LaTeX comment line, ESC sequences retitle or clear a terminal).
fn check_text_fields(spec: &Spec) -> Result<(), Problem> {
    let mut fields: Vec<(String, &str)> = vec![
        ("name".into(), &spec.name),
        ("description".into(), &spec.description),
    ];
    for (i, c) in spec.claims.iter().enumerate() {
        fields.push((format!("claims[{i}].name"), &c.name));
        fields.push((format!("claims[{i}].text"), &c.text));
    }
    for (i, w) in spec.axes.workloads.iter().enumerate() {
        for (j, c) in w.commands.iter().enumerate() {
            if let Some(name) = &c.name {
                fields.push((format!("axes.workloads[{i}].commands[{j}].name"), name));
            }
        }
    }
    for (key, text) in fields {
        if let Some(why) = schedlab_core::text::refusal("it", text) {
            return Err(Problem::new(key, why).accepting("printable text on one line"));
        }
    }
    Ok(())
}

/// Longest CPU list the `cpus` axis (`--cpus`) takes, bytes: every CPU up to 65535 written
/// one by one is under 400 KiB, and no real list needs a tenth of this.
pub const MAX_CPU_LIST_BYTES: usize = 16 * 1024;

/// The CPU lists of the `cpus` axis, parsed; every CPU must be allowed to this process.
fn cpu_sets(lists: &[String]) -> Result<Vec<Vec<usize>>, Problem> {
    let online = schedlab_sys::allowed_cpus();
    let mut sets = Vec::with_capacity(lists.len());
    for (i, c) in lists.iter().enumerate() {
        let key = format!("axes.cpus[{i}]");
        if c.len() > MAX_CPU_LIST_BYTES {
            return Err(
                Problem::new(key, format!("the CPU list is {} bytes long", c.len())).accepting(
                    format!("at most {MAX_CPU_LIST_BYTES} bytes, with ranges such as \"0-3,5\""),
                ),
            );
        }
        let list = schedlab_procfs::parse_cpu_list(c).map_err(|e| {
            // The format goes into `accepted`.
            Problem::new(key.as_str(), e.what()).accepting(
                "CPU numbers and ranges separated by commas, like \"0\", \"0-3\", \"0-3,5\"",
            )
        })?;
        if let Some(bad) = list.iter().find(|c| !online.contains(c)) {
            return Err(
                Problem::new(key, format!("CPU {bad} is not available to this process")).accepting(
                    format!(
                        "CPUs allowed to this process: {}",
                        schedlab_procfs::format_cpu_list(&online)
                    ),
                ),
            );
        }
        sets.push(list);
    }
    Ok(sets)
}

/// Cells an experiment may have, counted from the axes: the product of their lengths (the
/// tasks axis counted in full, though a command workload ignores it).
fn cell_count(a: &Axes, workloads: &[CheckedWorkload], cgroups: &super::CheckedCgroups) -> u64 {
    let variants: usize = workloads.iter().map(CheckedWorkload::variants).sum();
    [
        a.policies.len(),
        a.priorities.len(),
        variants,
        a.tasks.len(),
        a.kind.len(),
        a.start.len(),
        a.cpus.len().max(1),
        a.antagonists.len().max(1),
        a.io_schedulers.len().max(1),
    ]
    .iter()
    .fold(1u64, |n, &len| n.saturating_mul(len as u64))
    .saturating_mul(super::knobs::cell_factor(
        a.slices.len(),
        &a.knobs,
        a.scx.len(),
    ))
    .saturating_mul(cgroups.cell_factor())
}

/// The experiment has at most [`MAX_TRIALS`] trials (an adaptive one at its maximum).
fn check_trial_count(
    a: &Axes,
    workloads: &[CheckedWorkload],
    s: &Settings,
    adaptive: Option<&super::Adaptive>,
    cgroups: &super::CheckedCgroups,
) -> Result<(), Problem> {
    let cells = cell_count(a, workloads, cgroups);
    let measured = adaptive.map_or(s.trials, |a| a.max_trials);
    let rounds = u64::from(measured) + u64::from(s.warmup);
    let trials = cells.saturating_mul(rounds);
    if trials <= MAX_TRIALS {
        return Ok(());
    }
    let key = match (cells > MAX_TRIALS, adaptive) {
        (true, _) => "axes",
        (false, Some(_)) => "settings.max_trials",
        (false, None) => "settings.trials",
    };
    Err(Problem::new(
        key,
        format!("{cells} cells x {rounds} trials (with warm-up) = {trials} trials is too many"),
    )
    .accepting(format!("at most {MAX_TRIALS} trials in all")))
}

/// The metric the report leads with (`settings.primary_metric`, default makespan): any
/// metric key.
pub(crate) fn check_primary_metric(s: &Settings) -> Result<schedlab_core::metric::Metric, Problem> {
    use schedlab_core::metric::Metric;
    let key = s.primary_metric.as_deref().unwrap_or("makespan").trim();
    Metric::from_key(key).ok_or_else(|| {
        Problem::new(
            "settings.primary_metric",
            format!("'{key}' is not a metric"),
        )
        .accepting(Metric::KEYS.join(", "))
    })
}

/// Antagonist counts are in range and antagonists run cpu or io work.
fn check_antagonists(a: &Axes, s: &Settings) -> Result<(), Problem> {
    if let Some((i, n)) = a
        .antagonists
        .iter()
        .enumerate()
        .find(|(_, &n)| n > MAX_ANTAGONISTS)
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
    Ok(())
}

/// The sampler interval, ns (None for "off"); at least 10 ms.
fn sample_interval_ns(s: &Settings) -> Result<Option<u64>, Problem> {
    if s.sample_interval.trim() == "off" {
        return Ok(None);
    }
    let ns = duration_ns("settings.sample_interval", &s.sample_interval)?;
    if ns < MIN_SAMPLE_INTERVAL_NS {
        return Err(Problem::new(
            "settings.sample_interval",
            format!("{} is too short to sample /proc cheaply", s.sample_interval),
        )
        .accepting("\"off\" or a duration of 10ms or more, e.g. \"100ms\""));
    }
    Ok(Some(ns))
}

/// The I/O scheduler names, trimmed; each must be one word.
fn io_schedulers(names: &[String]) -> Result<Vec<String>, Problem> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            if name.trim().is_empty() || name.contains(char::is_whitespace) {
                return Err(Problem::new(
                    format!("axes.io_schedulers[{i}]"),
                    format!("'{name}' is not a scheduler name"),
                )
                .accepting(
                    "names from /sys/block/DEV/queue/scheduler, e.g. none, mq-deadline, bfq, kyber",
                ));
            }
            Ok(name.trim().to_string())
        })
        .collect()
}
