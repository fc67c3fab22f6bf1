//! The serde types of an experiment file: what to vary (axes) and how to run it (settings),
//! with their defaults. Values are checked in [`super::validate`].

use super::cgroups::{CgroupValue, Groups};
use super::knobs::{KnobAxis, ScxSpec};
use schedlab_core::policy::{PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind};
use schedlab_core::workload::{CpuKernel, IoMode, Ipc, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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
    /// Declared claims, decided by the report (`claims.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<super::ClaimSpec>,
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
    /// EEVDF custom slices of the measured tasks of fair-policy cells (other, batch), e.g.
    /// ["0.1ms", "3ms"], or "default"; empty = the kernel's base slice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<String>,
    /// BPF schedulers (sched_ext) the cells run under: commands such as "scx_lavd", or "none".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scx: Vec<ScxSpec>,
    /// Kernel settings under /proc/sys and /sys to vary, each set before its cell's trials and
    /// restored afterwards (root only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub knobs: Vec<KnobAxis>,
    /// Task groups, each a CPU cgroup of its own: one layout or a list of them (see
    /// [`super::cgroups`]); without them a cell with a cgroup axis has one group of all tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Groups>,
    /// CPU weights per group (v2 `cpu.weight`, v1 `cpu.shares`), e.g. [100, "100:300"].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_weight: Vec<CgroupValue>,
    /// Bandwidth limits per group, `QUOTA/PERIOD` or `max`, e.g. ["50ms/100ms", "max"].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_max: Vec<CgroupValue>,
    /// Idle groups (`cpu.idle`), e.g. [false, true].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_idle: Vec<CgroupValue>,
    /// CPUs per group (`cpuset.cpus`), e.g. ["1", "0:1"].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpuset: Vec<CgroupValue>,
    /// Give each group with CPUs a root domain of its own (a cpuset partition), e.g. [true].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partition: Vec<bool>,
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
            slices: vec![],
            scx: vec![],
            knobs: vec![],
            groups: None,
            cpu_weight: vec![],
            cpu_max: vec![],
            cpu_idle: vec![],
            cpuset: vec![],
            partition: vec![],
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
    pub commands: Vec<schedlab_core::workload::Command>,
    /// command: start orders, "all" (every permutation, study 004's six) or a list of
    /// permutations of command indices, e.g. [[0, 1, 2], [2, 1, 0]]; default: as listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders: Option<Orders>,
    /// command: delay between starting one program and the next (staggered start), e.g. "1s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_gap: Option<String>,
    /// command: stop every program this long after release, e.g. "100s"; default: run to
    /// completion. request: how long the message threads hand out requests (default "1s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// messaging: groups of senders and receivers (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<u32>,
    /// messaging: senders and receivers per group (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fds: Option<u32>,
    /// messaging: messages each sender sends each receiver of its group (default 100); pipe:
    /// round trips (default 100000). The exact size of the work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    /// messaging: bytes per message (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_size: Option<u32>,
    /// messaging: "socket" (socketpair, the default) or "pipe".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipc: Option<Ipc>,
    /// messaging: record each message's latency (messages of 8..=4096 bytes; schedlab's extra).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_latency: Option<bool>,
    /// request: message threads (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_threads: Option<u32>,
    /// request: workers per message thread (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    /// request (and the matrix CPU kernel): cache footprint of the work, KiB (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<u64>,
    /// request: requests per second over all message threads (default 0: a closed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<u32>,
    /// request: workers hold their CPU's spin lock during a request's work, as schbench does
    /// without -L (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<bool>,
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
            groups: None,
            fds: None,
            loops: None,
            data_size: None,
            ipc: None,
            message_latency: None,
            message_threads: None,
            workers: None,
            footprint: None,
            rps: None,
            lock: None,
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

/// How often a contaminated trial is run again unless `settings.retries` says otherwise.
pub const DEFAULT_RETRIES: u32 = 2;
/// Most retries a trial may have.
pub const MAX_RETRIES: u32 = 10;

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
    /// Knobs on schedlab's deny list this experiment may change anyway (paths or sysctl
    /// names, e.g. "kernel.core_pattern"); `--allow-knob` adds to it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_knobs: Vec<String>,
    /// Adaptive trial count: add shuffled rounds until every cell's 95% CI of its key metric
    /// is within this share of its median, e.g. "2%" (then `trials` is the default minimum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// Adaptive trial count: add shuffled rounds until every declared claim has a verdict
    /// other than inconclusive (alpha spent over the looks), or a limit is reached.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub until_decided: bool,
    /// With `precision`: rounds always run (default: `trials`, at least 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_trials: Option<u32>,
    /// With `precision`: most rounds (default 30).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_trials: Option<u32>,
    /// With `precision`: start no round that would end after this long, e.g. "20m".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_time: Option<String>,
    /// With `precision`: the key metric (default "makespan"; per-task metrics count through
    /// each trial's median).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision_metric: Option<String>,
    /// The metric the report leads with: `stats`' compact view and the first screen of the
    /// HTML report (default "makespan"; any metric key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_metric: Option<String>,
    /// How often a contaminated trial (disturbed, or slowed in-trial) is run again at the end
    /// of its round (default [`DEFAULT_RETRIES`]; 0: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
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
            allow_knobs: Vec::new(),
            precision: None,
            until_decided: false,
            min_trials: None,
            max_trials: None,
            max_time: None,
            precision_metric: None,
            primary_metric: None,
            retries: None,
        }
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
                trials: 8,
                work: "50ms".into(),
                ..Settings::default()
            },
            claims: quick_claims(),
        }
    }
}

/// The quick experiment's two claims, which scheduling theory settles: FIFO runs the four
/// tasks one after another, so their turnaround is about 125 ms against about 200 ms for
/// OTHER's fair sharing, while the same work on one CPU ends at the same time (makespan).
fn quick_claims() -> Vec<super::ClaimSpec> {
    let s = |v: &str| Some(toml::Value::String(v.into()));
    let blank = super::ClaimSpec {
        name: String::new(),
        text: String::new(),
        metric: String::new(),
        lower: None,
        higher: None,
        than: None,
        equal: None,
        margin: None,
        ratio: None,
        ratio_at_least: None,
        ratio_at_most: None,
        trend: None,
        scope: None,
        smallest_effect: None,
        reading: None,
    };
    vec![
        super::ClaimSpec {
            name: "fifo-turnaround-lower".into(),
            text: "FIFO finishes tasks sooner than OTHER on a shared CPU (turnaround)".into(),
            metric: "turnaround".into(),
            lower: s("fifo"),
            than: s("other"),
            ..blank.clone()
        },
        super::ClaimSpec {
            name: "same-makespan".into(),
            text: "FIFO and OTHER finish the same work at the same time (makespan within 10 %)"
                .into(),
            metric: "makespan".into(),
            equal: Some(toml::Value::Array(vec![
                toml::Value::String("fifo".into()),
                toml::Value::String("other".into()),
            ])),
            margin: s("10%"),
            ..blank
        },
    ]
}
