//! The computed report of one run as data: its input ([`ReportInput`], stored rows only),
//! per-cell summaries, per-group tests, the exploratory comparisons and the data behind every
//! figure in a serialisable [`Report`], computed by [`report::build`].
//!
//! Times are reported in milliseconds (stored rows are nanoseconds), counts as counts.
//! Statistics come from [`schedlab_analyze`]; nothing here touches the database or the disk.

pub mod baseline;
pub mod cgroups;
pub mod compare;
mod end_groups;
pub mod exploratory;
pub mod figures;
pub mod iosched;
pub mod kernel;
mod layout;
mod machines;
mod notes;
pub mod plot_data;
pub mod quality;
pub mod report;
pub mod run_table;
mod stats;
pub mod trials;
pub mod warning;
pub mod workload;
mod workload_plots;

use schedlab_analyze::{jain_index, Comparison, Summary};
use schedlab_core::policy::PriorityMode;
use schedlab_core::records::{StartMode, TaskKind};
use schedlab_core::workload::Workload;
use schedlab_store::query::{CellView, Tally, TaskRow};
use serde::Serialize;

pub use exploratory::ExploratoryComparison;
use layout::Varying;
pub use schedlab_core::metric::Metric;
pub use stats::par_map;
pub use trials::{trial_values, TestUnit};

pub use notes::{WarningKind, EXPLORATORY_HEADING, EXPLORATORY_NOTE};
pub use schedlab_store::query::{RunInfo, StoredWarning, TrialProblem};

/// Everything a report is computed from: stored rows only.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    /// The run.
    pub run: RunInfo,
    /// Its cells with the rows of their trials.
    pub cells: Vec<CellView>,
    /// Stored warnings with their codes, in order.
    pub warnings: Vec<StoredWarning>,
    /// Trials that timed out or failed.
    pub problems: Vec<TrialProblem>,
    /// Whether warm-up trials were included.
    pub include_warmup: bool,
    /// Wake-up latency histograms and scheduler trace slices.
    pub kernel: kernel::KernelView,
    /// System-wide samples per I/O scheduler (runs that varied it).
    pub iosched: Vec<iosched::SchedulerSamples>,
    /// The policy every other is compared with (`--baseline`); `None`: the first policy of
    /// the run's policy axis. Check it with [`baseline::check`] first.
    pub baseline: Option<String>,
    /// Every trial's conditions (reference speed, steal, noise flag, RT throttling).
    pub quality: Vec<schedlab_store::quality::TrialQuality>,
    /// Noisy trials were left out of `cells` ([`quality::exclude_noisy`]).
    pub exclude_noisy: bool,
    /// Task groups (CPU cgroups) of the cells that had them.
    pub cgroups: cgroups::CgroupView,
    /// Post-hoc claims and which trials verdicts use (`crate::claims`).
    pub claims: crate::claims::ClaimsRequest,
}

/// The axis values of a cell, which identify it within a run and across runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CellKey {
    /// What the cell's group compares: the policy's name, or a treatment made of it and the
    /// axes only some runs have ("other io=bfq", "fifo @ web1"); for people.
    pub policy: String,
    /// Priority mode.
    pub priorities: PriorityMode,
    /// Workload label (with antagonists, "+2 antagonists"), for people: the workload itself is
    /// [`CellReport::work`].
    pub workload: String,
    /// Task count.
    pub tasks: i64,
    /// Process or thread.
    pub kind: TaskKind,
    /// Barrier or staggered.
    pub start: StartMode,
    /// Pinned CPUs, `None` if not pinned.
    pub cpus: Option<String>,
}

impl CellKey {
    /// The keys of a run's cells, with the axes only some runs have folded in: the I/O
    /// scheduler and kernel settings are what is compared (the treatment: "bfq" or
    /// "slice=0.1ms" when the run has one policy, else "other io=bfq"), and antagonists are part of the workload ("cpu:pi +2 antagonists"),
    /// so cells with and without load fall into different groups.
    /// Runs pooled from several hosts or kernels add those as treatments (`super::pool`).
    pub fn all_of(cells: &[CellView]) -> Vec<CellKey> {
        let one_policy = cells.iter().all(|c| c.policy == cells[0].policy);
        let machines = machines::Machines::of(cells);
        cells
            .iter()
            .map(|c| {
                let mut k = CellKey::of(c);
                if let Some(treatment) = baseline::treatment(c, one_policy) {
                    k.policy = treatment;
                }
                k.policy = machines.treatment(c, k.policy, one_policy);
                if c.antagonists > 0 {
                    k.workload = format!("{} +{} antagonists", k.workload, c.antagonists);
                }
                k
            })
            .collect()
    }

    /// The key of a stored cell, from its own axes only.
    pub fn of(c: &CellView) -> CellKey {
        CellKey {
            policy: c.policy.name().to_string(),
            priorities: c.priorities,
            workload: c.workload.clone(),
            tasks: c.tasks,
            kind: c.kind,
            start: c.start,
            cpus: c.cpus.clone(),
        }
    }
}

/// One metric of one cell.
#[derive(Debug, Clone, Serialize)]
pub struct MetricSummary {
    /// Which metric.
    pub metric: Metric,
    /// Its statistics, in the metric's unit, with the order-statistic interval of the
    /// median and the Student t interval of the mean.
    pub summary: Summary,
}

/// One cell of the run with its summaries.
#[derive(Debug, Clone, Serialize)]
pub struct CellReport {
    /// Axis values.
    pub key: CellKey,
    /// The cell's workload with every parameter, as stored.
    pub work: Workload,
    /// Index of its group in [`Report::groups`].
    pub group: usize,
    /// Trials that ended ok (and are summarised).
    pub trials_ok: i64,
    /// Trials stored, whatever their status.
    pub trials_total: i64,
    /// Trials per status: (status, count), in the order of the statuses' names, then the ok
    /// trials left out of the summaries, by reason.
    pub statuses: Vec<(Tally, i64)>,
    /// First reason stored for a trial that was not ok.
    pub reason: Option<String>,
    /// One entry per metric with data, in [`Metric::ALL`] order, over the trial values (the
    /// unit of the tests): per-trial metrics as they are, per-task metrics as each trial's
    /// median over its tasks. The one median of a cell and metric every headline shows.
    pub summaries: Vec<MetricSummary>,
    /// Per-task metrics only: every task of every trial pooled (descriptive; for the plots
    /// and the tables titled as pooled), in [`Metric::ALL`] order.
    pub pooled: Vec<MetricSummary>,
}

impl CellReport {
    /// The summary of `metric` over the trial values, if the cell has data for it.
    pub fn summary(&self, metric: Metric) -> Option<&MetricSummary> {
        self.summaries.iter().find(|s| s.metric == metric)
    }

    /// The summary of `metric` over every task of every trial, for per-task metrics with data.
    pub fn pooled(&self, metric: Metric) -> Option<&MetricSummary> {
        self.pooled.iter().find(|s| s.metric == metric)
    }
}

/// All cells sharing every axis but the policy; the unit the policies are compared in.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// E.g. "cpu:pi with 10 tasks" (plus the axes that vary in the run).
    pub label: String,
    /// Task count.
    pub tasks: i64,
    /// Index of its panel in [`Report::panels`].
    pub panel: usize,
    /// Indices of its cells in [`Report::cells`], in cell order.
    pub cells: Vec<usize>,
    /// Index in [`Report::cells`] of the cell the others are compared with.
    pub baseline: Option<usize>,
    /// Comparison of the policies on the trial values (all pairs), per tested metric with
    /// data for two or more policies.
    pub tests: Vec<(Metric, Comparison)>,
}

/// All groups sharing every axis but the task count: one set of figures.
#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    /// E.g. "cpu:pi" (plus the axes that vary in the run).
    pub label: String,
    /// Indices of its groups in [`Report::groups`], by task count.
    pub groups: Vec<usize>,
    /// Policies of its cells, in cell order, without repeats.
    pub policies: Vec<String>,
}

/// How the report's statistics were computed, for the methods section.
#[derive(Debug, Clone, Serialize)]
pub struct Methods {
    /// The run's seed (its trial order).
    pub seed: u64,
    /// Coverage asked of every CI (what each achieves is stated where it falls short).
    pub ci_level: f64,
    /// The baseline named with `--baseline`; `None`: the first policy of the policy axis.
    pub baseline: Option<String>,
    /// How the exploratory comparisons' p-values were computed, with how many used each.
    pub p_methods: Vec<(schedlab_analyze::PValueMethod, usize)>,
    /// The notes of the methods section, in order.
    pub notes: Vec<warning::MethodNote>,
}

/// The computed report of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The run.
    pub run: RunInfo,
    /// Whether warm-up trials were included.
    pub include_warmup: bool,
    /// The metric the report leads with: `stats`' compact view and the HTML report's first
    /// screen (`settings.primary_metric` of the spec as run; default makespan).
    pub primary_metric: Metric,
    /// How the statistics were computed.
    pub methods: Methods,
    /// Run status, skipped cells, timeouts and failures, thin cells, then stored warnings.
    #[serde(skip)]
    pub warnings: Vec<warning::Warning>,
    /// The same warnings by kind: one per stored code (with its count), one per warning the
    /// report makes itself; in order of first appearance.
    #[serde(skip)]
    pub warning_kinds: Vec<WarningKind>,
    /// Cells in cell order.
    pub cells: Vec<CellReport>,
    /// Groups in order of first appearance.
    pub groups: Vec<Group>,
    /// Panels in order of first appearance.
    pub panels: Vec<Panel>,
    /// Every policy against its group's baseline, per group and tested metric.
    pub exploratory: Vec<ExploratoryComparison>,
    /// Precision reached, the machine's drift, noisy and throttled trials.
    pub quality: quality::Quality,
    /// The declared claims, decided (None: the run declares none).
    pub claims: Option<crate::claims::ClaimsOutcome>,
    /// Samples per cell and metric (cells x [`Metric::ALL`]), in the metric's unit: every
    /// task of every trial for per-task metrics (descriptive summaries and figures).
    #[serde(skip)]
    pub samples: Vec<Vec<Vec<f64>>>,
    /// `(round, value)` per ok trial, per cell and metric (the unit of every test).
    #[serde(skip)]
    pub trial_values: Vec<Vec<Vec<(i64, f64)>>>,
    /// Wake-up latency and scheduler trace, when the run recorded them.
    #[serde(skip)]
    pub kernel: kernel::KernelView,
    /// System-wide samples per I/O scheduler, when the run varied it.
    #[serde(skip)]
    pub iosched: Vec<iosched::SchedulerSamples>,
    /// Task groups (CPU cgroups), when the run had them.
    #[serde(skip)]
    pub cgroups: cgroups::CgroupView,
}

impl Report {
    /// More warnings than kinds: some kinds hold several, listed in full only elsewhere.
    pub fn warnings_grouped(&self) -> bool {
        self.warnings.len() > self.warning_kinds.len()
    }

    /// The cell of `policy` in group `g`, if the group has one.
    pub fn cell_of(&self, g: usize, policy: &str) -> Option<&CellReport> {
        self.groups[g]
            .cells
            .iter()
            .map(|&c| &self.cells[c])
            .find(|c| c.key.policy == policy)
    }
}

/// Nanoseconds to milliseconds.
fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Where the samples of a metric come from, and how each is computed.
enum Source {
    /// One value per ok trial, from its makespan (ms) and the cell's task count.
    Makespan(fn(f64, f64) -> f64),
    /// One value per task of the ok trials (None: not stored for that task).
    Task(fn(&TaskRow) -> Option<f64>),
    /// One value per ok trial, from its tasks' rows and the cell's task count.
    Trial(fn(&[TaskRow], f64) -> Option<f64>),
    /// One value per ok trial with the workload's own figures ([`workload::per_trial`]).
    Figures,
}

/// The source of `m`'s samples: one arm per metric, so that a metric added without its
/// computation does not compile.
fn source(m: Metric) -> Source {
    use Metric as M;
    fn total_cpu(t: &[TaskRow]) -> f64 {
        t.iter().map(|r| ms(r.cpu_ns)).sum::<f64>()
    }
    fn vcsw(t: &[TaskRow]) -> i64 {
        t.iter().map(|r| r.nvcsw).sum::<i64>()
    }
    fn ivcsw(t: &[TaskRow]) -> i64 {
        t.iter().map(|r| r.nivcsw).sum::<i64>()
    }
    match m {
        M::Makespan => Source::Makespan(|ms, _| ms),
        M::MakespanPerTask => Source::Makespan(|ms, n| ms / n),
        M::Response => Source::Task(|r| r.response_ns.map(ms)),
        M::Turnaround => Source::Task(|r| r.turnaround_ns.map(ms)),
        M::RunSpan => Source::Task(|r| Some(ms(r.turnaround_ns? - r.response_ns?))),
        M::Cpu => Source::Task(|r| Some(ms(r.cpu_ns))),
        M::Vcsw => Source::Task(|r| Some(r.nvcsw as f64)),
        M::Ivcsw => Source::Task(|r| Some(r.nivcsw as f64)),
        M::RqWait => Source::Task(|r| Some(ms(r.run_delay_ns))),
        M::TrialCpu => Source::Trial(|t, _| Some(total_cpu(t))),
        M::TrialVcsw => Source::Trial(|t, _| Some(vcsw(t) as f64)),
        M::TrialIvcsw => Source::Trial(|t, _| Some(ivcsw(t) as f64)),
        M::CpuPerTask => Source::Trial(|t, n| Some(total_cpu(t) / n)),
        M::CswPerTask => Source::Trial(|t, n| Some((vcsw(t) + ivcsw(t)) as f64 / n)),
        M::JainCpu => {
            Source::Trial(|t, _| jain_index(&t.iter().map(|r| ms(r.cpu_ns)).collect::<Vec<f64>>()))
        }
        M::EndGroups => Source::Trial(|t, _| end_groups::end_groups(t)),
        M::MessagesPerS
        | M::Rps
        | M::RoundTrip
        | M::SwitchTime
        | M::WakeupP50
        | M::WakeupP90
        | M::WakeupP99
        | M::WakeupP999
        | M::RequestP50
        | M::RequestP90
        | M::RequestP99
        | M::RequestP999
        | M::MessageP50
        | M::MessageP99
        | M::Misses
        | M::MissPct
        | M::SlackP1
        | M::SlackP50
        | M::SlackP99
        | M::LatenessMax => Source::Figures,
    }
}

/// The samples of every metric of one cell, indexed by [`Metric::index`], in the metric's unit,
/// each in trial order (tasks in their stored order), as [`source`] says.
pub fn cell_samples(c: &CellView) -> Vec<Vec<f64>> {
    let n = c.tasks.max(1) as f64;
    let trials: Vec<&[TaskRow]> = c
        .task_rows
        .chunk_by(|a, b| a.trial_id == b.trial_id)
        .collect();
    let figures = workload::per_trial(c);
    Metric::ALL
        .iter()
        .map(|&m| match source(m) {
            Source::Makespan(f) => c.makespans_ns.iter().map(|&v| f(ms(v), n)).collect(),
            Source::Task(f) => c.task_rows.iter().filter_map(f).collect(),
            Source::Trial(f) => trials.iter().filter_map(|t| f(t, n)).collect(),
            Source::Figures => figures
                .iter()
                .flat_map(|(_, values)| values.iter().filter(|(k, _)| *k == m))
                .map(|&(_, v)| v)
                .collect(),
        })
        .collect()
}

/// "1 task" or "10 tasks".
pub fn tasks_phrase(n: i64) -> String {
    if n == 1 {
        "1 task".into()
    } else {
        format!("{n} tasks")
    }
}

/// Labels of cells, "fifo, cpu:pi with 10 tasks", naming the other axes (priorities, kind,
/// start, CPUs) only where they differ among `keys`.
pub fn describe(keys: &[CellKey]) -> Vec<String> {
    let varying = Varying::of(keys);
    keys.iter()
        .map(|k| {
            format!(
                "{}, {} with {}{}",
                k.policy,
                k.workload,
                tasks_phrase(k.tasks),
                varying.extras(k)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests;
