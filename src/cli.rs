//! Command line: clap subcommands and flags, converted once into a checked spec and options.

use clap::{Args, Parser, Subcommand};
use schedlab_core::policy::{PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind};
use schedlab_core::workload::{CpuKernel, IoMode, WorkloadKind};
use schedlab_report::cmd::{CompareOptions, ReportFormat, ReportOptions, Selection, StatsOptions};
use schedlab_spec::SpecError;
use schedlab_store::export::{Format, Table};
use schedlab_store::Location;
use std::path::PathBuf;

mod cgroups;
mod claims;
mod comm;
mod db;
mod fleet;
mod to_spec;
pub use cgroups::CgroupArgs;
pub use claims::{ReportClaimArgs, RunClaimArgs};
pub use comm::CommArgs;
pub use db::{DbArg, LocationParser, SharedDbArg};
pub use fleet::{PushArgs, RunsArgs, SubmitArgs, WorkerArgs};

/// schedlab: controlled, exactly measured Linux CPU-scheduling experiments.
#[derive(Debug, Parser)]
#[command(name = "schedlab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// The PostgreSQL password, on the first line of this file (yours, mode 0600), for a
    /// --db URL that holds none; else PGPASSWORD or ~/.pgpass. A password in a URL on the
    /// command line is refused: every user sees the command line (ps).
    #[arg(long, global = true, value_name = "FILE")]
    pub db_password_file: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per process; boxing the flags would only add noise.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Run an experiment (a spec file, flags, or the built-in quick experiment) and store every number.
    Run(RunArgs),
    /// Write stored rows as CSV or JSON.
    Export(ExportArgs),
    /// Show which scheduling policies this machine and user may use, and why.
    Policies,
    /// Show the cells, trial count and estimated duration of an experiment; runs nothing.
    Plan(RunArgs),
    /// List the stored runs.
    Runs(RunsArgs),
    /// Show a run's spec as run (defaults filled in), its environment record and warnings.
    Show(ShowArgs),
    /// Write a run's report: HTML page with plots, LaTeX and Markdown tables, CSV (default: latest run).
    Report(ReportArgs),
    /// Print a run's claims, summaries, tests and exploratory comparisons as terminal tables.
    Stats(StatsArgs),
    /// Compare the same cells in two runs (A/B), e.g. two kernels or two machines.
    Compare(CompareArgs),
    /// Copy runs to another store, e.g. a file written offline to the shared PostgreSQL
    /// server; runs it has already (same UUID) are completed, never copied twice.
    Push(PushArgs),
    /// Put an experiment's trials in the work queue of a shared store, for `schedlab worker`s
    /// on other machines: one run per host label (and per repeat).
    Submit(SubmitArgs),
    /// Run queued trials on this machine (claimed one at a time, under a lease) until none is
    /// left for this worker's labels.
    Worker(WorkerArgs),
    /// Show the work queue: pending, claimed, done and failed trials per run and host.
    Queue(DbArgs),
    /// Restore kernel settings a killed schedlab left changed (from its restore journal).
    Restore,
}

/// Flags of `schedlab run`. Lists are comma-separated; every flag overrides the spec file.
#[derive(Debug, Args, Default)]
pub struct RunArgs {
    /// Experiment file (TOML). Without it and without axis flags: the built-in quick experiment.
    pub spec: Option<PathBuf>,
    /// Policies: other, batch, idle, fifo, rr, deadline, ext.
    #[arg(long = "policy", value_delimiter = ',')]
    pub policies: Vec<PolicyKind>,
    /// Priority modes: same (one level) or spread (each task its own level).
    #[arg(long, value_delimiter = ',')]
    pub priorities: Vec<PriorityMode>,
    /// Workloads: cpu, io, mixed, periodic, messaging, request, pipe.
    #[arg(long = "workload", value_delimiter = ',')]
    pub workloads: Vec<WorkloadKind>,
    /// Task counts, e.g. 10,50.
    #[arg(long, value_delimiter = ',')]
    pub tasks: Vec<u32>,
    /// Task kinds: process, thread.
    #[arg(long, value_delimiter = ',')]
    pub kind: Vec<TaskKind>,
    /// Start modes: barrier (default), staggered.
    #[arg(long, value_delimiter = ',')]
    pub start: Vec<StartMode>,
    /// Pin every task to these CPUs, e.g. 0 or 0-1 (a list of at most 16 KiB).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Measured trials per cell.
    #[arg(long)]
    pub trials: Option<u32>,
    /// Warm-up trials per cell (stored, flagged, excluded from analysis).
    #[arg(long)]
    pub warmup: Option<u32>,
    /// Run a contaminated trial (other processes above 10% of its CPUs, or its calibrated work
    /// over 10% slower than the run's steady speed) again at the end of its round, up to N
    /// times (default 2; spec key settings.retries); the contaminated one is kept, flagged.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Adaptive trial count: add shuffled rounds until every cell's 95% CI of its key metric
    /// is within this share of its median, e.g. 2% (or a limit is reached).
    #[arg(long, value_name = "PERCENT")]
    pub precision: Option<String>,
    /// Declared claims and --until-decided.
    #[command(flatten)]
    pub claim: RunClaimArgs,
    /// With --precision or --until-decided: rounds always run (default: --trials, at least 2).
    #[arg(long, value_name = "N")]
    pub min_trials: Option<u32>,
    /// With --precision or --until-decided: most rounds (default 30).
    #[arg(long, value_name = "N")]
    pub max_trials: Option<u32>,
    /// With --precision or --until-decided: start no round that would end after this long, e.g. 20m.
    #[arg(long, value_name = "DURATION")]
    pub max_time: Option<String>,
    /// With --precision: the key metric (default makespan), e.g. turnaround or rq_wait.
    #[arg(long, value_name = "METRIC")]
    pub precision_metric: Option<String>,
    /// Work per task: the time one task needs alone, e.g. 50ms (calibrated).
    #[arg(long)]
    pub work: Option<String>,
    /// Exact units per task (iterations, or I/O operations), instead of --work.
    #[arg(long)]
    pub iterations: Option<u64>,
    /// The work is the whole trial's, divided evenly among its tasks (study 003).
    #[arg(long)]
    pub split: bool,
    /// CPU kernel of cpu and mixed workloads: pi, primes, grandi, spin.
    #[arg(long)]
    pub cpu_kernel: Option<CpuKernel>,
    /// I/O operation of io and mixed workloads: sync-copy, urandom.
    #[arg(long)]
    pub io_mode: Option<IoMode>,
    /// Bytes per I/O operation (default 1024).
    #[arg(long)]
    pub io_block: Option<u64>,
    /// io: bytes copied per task (fixes the size exactly) and input file size.
    #[arg(long)]
    pub io_bytes: Option<u64>,
    /// mixed: one I/O operation every N CPU units (default 1000).
    #[arg(long)]
    pub io_every: Option<u64>,
    /// periodic: the period, e.g. 1ms (the size counts periods: --work 1s = 1000 periods of 1ms).
    #[arg(long)]
    pub period: Option<String>,
    /// periodic: busy work per period as CPU time alone, e.g. 100us.
    #[arg(long)]
    pub run: Option<String>,
    /// Antagonist counts: load tasks sharing the machine until the measured tasks end, e.g. 0,2.
    #[arg(long, value_delimiter = ',')]
    pub antagonists: Vec<u32>,
    /// Policy of the antagonists (default other).
    #[arg(long)]
    pub antagonist_policy: Option<PolicyKind>,
    /// What the antagonists run: cpu or io (default cpu).
    #[arg(long)]
    pub antagonist_workload: Option<WorkloadKind>,
    /// Block-device I/O schedulers to compare, e.g. none,mq-deadline,bfq,kyber (restored afterwards).
    #[arg(long, value_delimiter = ',')]
    pub io_schedulers: Vec<String>,
    /// EEVDF custom slices of the measured tasks of other/batch cells, e.g. 0.1ms,1ms,3ms
    /// (or default); needs Linux 6.12+.
    #[arg(long = "slice", value_delimiter = ',')]
    pub slices: Vec<String>,
    /// A kernel setting to vary, NAME=V1,V2 (a sysctl name such as kernel.sched_rr_timeslice_ms,
    /// a path under /proc/sys or /sys, or cpufreq.governor); repeatable. Root only; restored
    /// after the run.
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knobs: Vec<String>,
    /// Lets a knob on schedlab's deny list (settings that run programs as root, load code or
    /// stop the machine, e.g. kernel.core_pattern) be changed anyway; repeatable.
    #[arg(long = "allow-knob", value_name = "PATH")]
    pub allow_knobs: Vec<String>,
    /// A BPF scheduler (sched_ext) to run cells under, e.g. "scx_lavd", or none; repeatable.
    #[arg(long = "scx", value_name = "COMMAND")]
    pub scx: Vec<String>,
    /// Task groups in CPU cgroups and their settings.
    #[command(flatten)]
    pub cgroups: CgroupArgs,
    /// Block device whose I/O scheduler is varied (default: the one holding --io-dir), e.g. vda.
    #[arg(long)]
    pub device: Option<String>,
    /// Record the kernel's scheduler events (tracefs) during every trial: wake-up delays,
    /// preemptions, migrations and a per-CPU timeline per task. Root only.
    #[arg(long)]
    pub trace: bool,
    /// Interval of the system-wide sampler, e.g. 100ms, or off.
    #[arg(long)]
    pub sample_interval: Option<String>,
    /// Directory for I/O files, on a disk-backed filesystem (default /var/tmp).
    #[arg(long)]
    pub io_dir: Option<PathBuf>,
    /// Per-trial timeout, e.g. 60s (default: 10x the ideal time + 10 s).
    #[arg(long)]
    pub timeout: Option<String>,
    /// Nice of every fair-class task (overrides --priorities).
    #[arg(long, allow_hyphen_values = true)]
    pub nice: Option<i32>,
    /// RT priority of every FIFO/RR task, 1..99 (overrides --priorities).
    #[arg(long)]
    pub rt_priority: Option<u32>,
    /// SCHED_DEADLINE runtime (default 5ms).
    #[arg(long)]
    pub dl_runtime: Option<String>,
    /// SCHED_DEADLINE relative deadline (default 50ms).
    #[arg(long)]
    pub dl_deadline: Option<String>,
    /// SCHED_DEADLINE period (default 50ms).
    #[arg(long)]
    pub dl_period: Option<String>,
    /// Seed of the trial order (default: random, stored).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit 1 if any cell was skipped (e.g. a policy refused).
    #[arg(long)]
    pub strict: bool,
    /// Continue an interrupted run (default: the latest unfinished one) with its stored spec and seed.
    #[arg(long, num_args = 0..=1, value_name = "RUN")]
    pub resume: Option<Option<i64>>,
    /// Where trials wait while a PostgreSQL --db cannot be reached
    /// (default: ~/.local/state/schedlab/spool.db, or SCHEDLAB_SPOOL).
    #[arg(long, value_name = "PATH")]
    pub spool_file: Option<PathBuf>,
    /// Show every column of the table printed after the run (default: the key columns).
    #[arg(long)]
    pub wide: bool,
    /// messaging, request and pipe parameters.
    #[command(flatten)]
    pub comm: CommArgs,
}

/// Only the database.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
}

/// Flags of `schedlab show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id (default: the latest run).
    pub run: Option<i64>,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
}

/// Flags of `schedlab export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Run id (default: the latest run).
    #[arg(long)]
    pub run: Option<i64>,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
    /// csv or json.
    #[arg(long, default_value = "csv")]
    pub format: Format,
    /// tasks, trials, samples or groups (task groups: their cgroup settings and figures).
    #[arg(long, default_value = "tasks")]
    pub table: Table,
    /// Output file (default: standard output), in a directory only you (or root) can write;
    /// written anew and renamed over the name.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[cfg(test)]
mod tests;

/// Which runs `report` and `stats` read.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Run id (default: the latest run).
    #[arg(long)]
    pub run: Option<i64>,
    /// Several runs of one spec in one report, e.g. 3,4,5 (the same experiment on several
    /// hosts or kernels): host and kernel are compared like policies.
    #[arg(long, value_delimiter = ',', conflicts_with = "run")]
    pub runs: Vec<i64>,
    /// Every run whose spec hash (`schedlab runs`) starts with this, in one report.
    #[arg(long, conflicts_with_all = ["run", "runs"])]
    pub spec_hash: Option<String>,
    /// The results database.
    #[command(flatten)]
    pub db: DbArg,
    /// Include warm-up trials (excluded by default).
    #[arg(long)]
    pub include_warmup: bool,
    /// Policy every other is compared with (default: the first of the run's policy axis).
    #[arg(long, value_name = "POLICY")]
    pub baseline: Option<String>,
    /// Leave out the trials flagged noisy (reference speed more than 10% below the run's steady speed); the output says so.
    #[arg(long)]
    pub exclude_noisy: bool,
    /// Claims tested after the data, and which trials verdicts use.
    #[command(flatten)]
    pub claim: ReportClaimArgs,
}

impl SelectionArgs {
    /// The selection as the report stage takes it; Err: a malformed `--claim`.
    pub fn selection(&self) -> Result<Selection, SpecError> {
        Ok(Selection {
            db: self.db.location.clone(),
            run: self.run,
            runs: self.runs.clone(),
            spec_hash: self.spec_hash.clone(),
            include_warmup: self.include_warmup,
            baseline: self.baseline.clone(),
            exclude_noisy: self.exclude_noisy,
            post_hoc: self.claim.post_hoc()?,
            include_disturbed: self.claim.include_disturbed,
            include_slowed: self.claim.include_slowed,
        })
    }
}

/// Flags of `schedlab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Which runs.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Output formats, comma-separated: html, latex, markdown, csv.
    #[arg(long, value_delimiter = ',', default_value = "html,latex,markdown,csv")]
    pub format: Vec<ReportFormatArg>,
    /// Output directory; the report goes into DIR/RUN/. It and its parent must be writable by
    /// you (or root) alone: a shared directory such as /tmp is refused.
    #[arg(long, default_value = "schedlab-report")]
    pub out: PathBuf,
}

/// Flags of `schedlab stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Which runs.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Show everything the compact view leaves out: every column of every table, the
    /// exploratory comparisons of every tested metric, and the per-task metrics pooled over every task
    /// (default: the key columns within 120 columns, one line per group for the primary metric).
    #[arg(long, visible_alias = "wide")]
    pub all: bool,
    /// Output: text (the tables) or json (the claims with their verdicts, effects, intervals,
    /// rounds and exclusions, in the stable shape `schedlab.claims/1`).
    #[arg(long, value_enum, default_value = "text")]
    pub format: StatsFormatArg,
    /// Exit 1 when any declared claim's verdict is one of these (comma-separated), so a
    /// kernel or configuration CI can gate on its claims: supported, contradicted,
    /// equivalent, not-equivalent, negligible, inconclusive.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "VERDICTS")]
    pub fail_on: Vec<VerdictArg>,
}

/// What `schedlab stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatsFormatArg {
    /// The tables.
    Text,
    /// The claims as JSON.
    Json,
}

/// A verdict word, as `--fail-on` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerdictArg {
    /// supported
    Supported,
    /// contradicted
    Contradicted,
    /// equivalent
    Equivalent,
    /// not equivalent
    NotEquivalent,
    /// negligible
    Negligible,
    /// inconclusive
    Inconclusive,
}

impl From<VerdictArg> for schedlab_analyze::Verdict {
    fn from(v: VerdictArg) -> schedlab_analyze::Verdict {
        use schedlab_analyze::Verdict as V;
        match v {
            VerdictArg::Supported => V::Supported,
            VerdictArg::Contradicted => V::Contradicted,
            VerdictArg::Equivalent => V::Equivalent,
            VerdictArg::NotEquivalent => V::NotEquivalent,
            VerdictArg::Negligible => V::Negligible,
            VerdictArg::Inconclusive => V::Inconclusive,
        }
    }
}

/// Flags of `schedlab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run A, the baseline.
    pub a: i64,
    /// Run B, compared with A (ratios are B/A).
    pub b: i64,
    /// The results database (of both runs, or of run A with --db-b).
    #[command(flatten)]
    pub db: DbArg,
    /// Results database of run B, when it is another one (e.g. another machine's).
    #[arg(long, value_parser = LocationParser)]
    pub db_b: Option<Location>,
    /// Include warm-up trials (excluded by default).
    #[arg(long)]
    pub include_warmup: bool,
    /// Compare cells whose units of work per task differ between the runs (refused by default).
    #[arg(long)]
    pub allow_different_work: bool,
}

impl ReportArgs {
    /// The report's options; Err: a malformed `--claim`.
    pub fn options(&self) -> Result<ReportOptions, SpecError> {
        Ok(ReportOptions {
            selection: self.selection.selection()?,
            formats: self.format.iter().map(|&f| f.into()).collect(),
            out: self.out.clone(),
        })
    }
}

impl StatsArgs {
    /// The options of `stats`; Err: a malformed `--claim`.
    pub fn options(&self) -> Result<StatsOptions, SpecError> {
        Ok(StatsOptions {
            selection: self.selection.selection()?,
            all: self.all,
            json: self.format == StatsFormatArg::Json,
            fail_on: self.fail_on.iter().map(|&v| v.into()).collect(),
        })
    }
}

impl CompareArgs {
    /// The options of `compare`.
    pub fn options(&self) -> CompareOptions {
        CompareOptions {
            a: self.a,
            b: self.b,
            db: self.db.location.clone(),
            db_b: self.db_b.clone(),
            include_warmup: self.include_warmup,
            allow_different_work: self.allow_different_work,
        }
    }
}

/// An output format of `schedlab report`, as the command line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormatArg {
    /// index.html: self-contained page, plots inline as SVG (PNG copies in plots/).
    Html,
    /// report.tex: booktabs tables, ready to paste.
    Latex,
    /// report.md: summary with claims, exploratory comparisons, key tables and figure links.
    Markdown,
    /// csv/*.csv: every table, full precision.
    Csv,
}

impl From<ReportFormatArg> for ReportFormat {
    fn from(f: ReportFormatArg) -> ReportFormat {
        match f {
            ReportFormatArg::Html => ReportFormat::Html,
            ReportFormatArg::Latex => ReportFormat::Latex,
            ReportFormatArg::Markdown => ReportFormat::Markdown,
            ReportFormatArg::Csv => ReportFormat::Csv,
        }
    }
}
