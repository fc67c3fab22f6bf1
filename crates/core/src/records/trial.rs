//! What a trial produces: its status, the per-task records, system samples and trace slices.

use crate::policy::PolicyKind;
use crate::workload::periodic::LatencySummary;
use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// How a trial ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TrialStatus {
    /// Every task finished its work (the default of a record built field by field).
    #[default]
    Ok,
    /// The deadline passed; every task was killed.
    Timeout,
    /// The kernel refused the cell's policy; nothing was measured.
    Skipped,
    /// Something else went wrong (a task died, its work could not be prepared).
    Failed,
    /// Ctrl-C or SIGTERM arrived; the trial was killed and is not stored.
    Interrupted,
}

impl TrialStatus {
    /// Every status, in the order of the accepted names of [`TrialStatus::from_str`].
    pub const ALL: [TrialStatus; 5] = [
        TrialStatus::Ok,
        TrialStatus::Timeout,
        TrialStatus::Skipped,
        TrialStatus::Failed,
        TrialStatus::Interrupted,
    ];

    /// The name stored in the database.
    pub fn name(self) -> &'static str {
        match self {
            TrialStatus::Ok => "ok",
            TrialStatus::Timeout => "timeout",
            TrialStatus::Skipped => "skipped",
            TrialStatus::Failed => "failed",
            TrialStatus::Interrupted => "interrupted",
        }
    }
}

impl FromStr for TrialStatus {
    type Err = CoreError;
    /// The status stored as `s` (its exact [`TrialStatus::name`]).
    fn from_str(s: &str) -> Result<TrialStatus, CoreError> {
        TrialStatus::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                CoreError::unknown(
                    "trial status",
                    s,
                    "ok, timeout, skipped, failed, interrupted",
                )
            })
    }
}

/// The per-task record of a trial (times in ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Index of the task in its trial.
    pub task_index: u32,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Release time (CLOCK_MONOTONIC ns).
    pub t_release_ns: u64,
    /// The task's timestamp as its work begins, after its setup (0 if it never got there).
    pub t_start_ns: u64,
    /// Timestamp after its last unit (0 if it did not finish).
    pub t_end_ns: u64,
    /// The task's first timestamp - t_release, ns. With a barrier the first timestamp is
    /// `t_start`; staggered, it is taken as the new task first runs, before its setup, so
    /// turnaround - response - run span is the task's setup (wall time).
    pub response_ns: Option<i64>,
    /// t_end - t_release, ns.
    pub turnaround_ns: Option<i64>,
    /// t_end - t_start, ns.
    pub run_span_ns: Option<i64>,
    /// User CPU time, ns.
    pub utime_ns: u64,
    /// System CPU time, ns.
    pub stime_ns: u64,
    /// Exact CPU time of the task's work, ns: its thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)
    /// from the end of its setup to the end of its work; for a program (command workload),
    /// its rusage at exit less that clock at the end of setup. None if it never finished.
    /// `utime_ns` + `stime_ns` come from rusage, which misses up to one scheduler tick of a
    /// thread that reads it while running (see `run::task`).
    #[serde(default)]
    pub cpu_ns: Option<u64>,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Involuntary context switches.
    pub nivcsw: u64,
    /// Run-queue wait, ns.
    pub run_delay_ns: u64,
    /// Timeslices.
    pub timeslices: u64,
    /// CPU migrations.
    pub migrations: u64,
    /// Units of work done.
    pub work_units: u64,
    /// Raw wait status (processes), 0 for threads.
    pub exit_status: i32,
    /// Policy in force, read back from the kernel (None if the task never applied it).
    pub policy: Option<PolicyKind>,
    /// Nice in force.
    pub nice: i32,
    /// RT priority in force.
    pub rt_priority: u32,
    /// An antagonist (load sharing the machine), not a measured task.
    pub antagonist: bool,
    /// Wake-up latency summary and serialised histogram (periodic and request work).
    pub latency: Option<(LatencySummary, Vec<u8>)>,
    /// What a task of a communicating or periodic workload recorded besides its counters: its
    /// role, bytes, misses, operation latency, slack (None for other workloads).
    #[serde(default)]
    pub figures: Option<crate::workload::TaskFigures>,
    /// What the kernel's scheduler trace says about this task (--trace).
    pub trace: Option<TaskTrace>,
    /// EEVDF slice in force, ns, as `sched_getattr` reads it back (`sched_runtime` of a fair
    /// task, Linux 6.12+); None for other classes or when unread.
    #[serde(default)]
    pub slice_getattr_ns: Option<u64>,
    /// EEVDF slice in force, ns, as `/proc/thread-self/sched` shows it (`se.slice`).
    #[serde(default)]
    pub slice_proc_ns: Option<u64>,
    /// The task group (CPU cgroup) the task ran in; None outside groups.
    #[serde(default)]
    pub group: Option<String>,
}

/// The result of one trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialOutcome {
    /// How it ended.
    pub status: TrialStatus,
    /// Why, when not ok.
    pub reason: Option<String>,
    /// Last t_end - first t_release, ns (ok trials).
    pub makespan_ns: Option<u64>,
    /// CPU time of the launcher's thread and the host's own thread during the trial, ns
    /// (the tasks' setup is not included).
    pub harness_cpu_ns: u64,
    /// The tasks.
    pub tasks: Vec<TaskRecord>,
    /// Process group of the trial (the host's pid); 0 if none was created.
    pub pgid: i32,
    /// System-wide samples taken during the trial.
    pub samples: Vec<Sample>,
    /// Per-CPU intervals during which each task ran, from the scheduler trace (--trace), with
    /// the task index: (task_index, slice).
    pub trace_slices: Vec<(u32, Slice)>,
    /// Events the trace lost or overwrote (None without --trace).
    pub trace_lost_events: Option<u64>,
    /// Threads of the process that forked the trial's host, counted just before the fork
    /// (1: forks happen only in single-threaded processes; 0 when no host was forked).
    #[serde(default)]
    pub launcher_threads: u32,
    /// Threads the host had when it started (1 after a fork; 0 when no host was forked).
    #[serde(default)]
    pub host_threads: u32,
    /// When the launcher told the finished tasks to exit, CLOCK_MONOTONIC ns: the end of the
    /// measured period (0 when the trial did not get that far).
    #[serde(default)]
    pub t_stop_ns: u64,
    /// The workload's own figures (messaging, request, pipe, periodic; ok trials).
    #[serde(default)]
    pub figures: Option<super::TrialFigures>,
    /// The task groups (CPU cgroups) of the trial with their figures; empty without groups.
    #[serde(default)]
    pub groups: Vec<super::GroupRecord>,
    /// CPU time (user + system) of the trial's other processes, ns: what the tasks started
    /// and had not reaped when the trial ended (a program's children still running when its
    /// window closed), reaped by the launcher. The tasks' own rusage already holds the
    /// children they reaped. Part of the trial's own CPU time when interference is measured.
    #[serde(default)]
    pub descendants_cpu_ns: u64,
}

impl TrialOutcome {
    /// The outcome of a trial that did not run (skipped, or failed before its host existed).
    pub fn not_run(status: TrialStatus, reason: impl Into<String>) -> TrialOutcome {
        TrialOutcome {
            status,
            reason: Some(reason.into()),
            makespan_ns: None,
            harness_cpu_ns: 0,
            tasks: Vec::new(),
            pgid: 0,
            samples: Vec::new(),
            trace_slices: Vec::new(),
            trace_lost_events: None,
            launcher_threads: 0,
            host_threads: 0,
            t_stop_ns: 0,
            figures: None,
            groups: Vec::new(),
            descendants_cpu_ns: 0,
        }
    }
}

/// One system-wide sample over the interval that ends at `t_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Sample {
    /// End of the interval, ns after the sampler started.
    pub t_ns: u64,
    /// Length of the interval, ns.
    pub interval_ns: u64,
    /// Runnable tasks (procs_running).
    pub r: u64,
    /// Tasks blocked on I/O (procs_blocked).
    pub b: u64,
    /// Interrupts per second.
    pub in_per_s: f64,
    /// Context switches per second.
    pub cs_per_s: f64,
    /// User CPU (user + nice), percent of all CPU time.
    pub us_pct: f64,
    /// System CPU (system + irq + softirq), percent.
    pub sy_pct: f64,
    /// Idle, percent.
    pub id_pct: f64,
    /// Waiting for I/O, percent.
    pub wa_pct: f64,
    /// Stolen by the hypervisor, percent.
    pub st_pct: f64,
    /// Blocks read from disk, KiB per second.
    pub bi_kib_s: f64,
    /// Blocks written to disk, KiB per second.
    pub bo_kib_s: f64,
    /// PSI cpu/io/memory "some" and "full" stall, percent of the interval: [cpu some, cpu full, io some, io full, mem some, mem full].
    pub psi_pct: [Option<f64>; 6],
    /// 1-minute load average at the end of the interval.
    pub load1: Option<f64>,
}

/// What the trace says about one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTrace {
    /// Thread id.
    pub tid: i32,
    /// Each wake-up delay in nanoseconds (sched_wakeup/sched_wakeup_new to sched_switch in),
    /// in trace order; resolution 1 us (the text trace prints microseconds).
    pub wakeup_delays_ns: Vec<u64>,
    /// Times the thread was switched out while still runnable (`prev_state` R or R+).
    pub preemptions: u64,
    /// Moves to another CPU (`sched_migrate_task` with `orig_cpu` != `dest_cpu`), as the
    /// kernel's `se.nr_migrations` counts them, but only within the trace.
    pub migrations: u64,
    /// Time on a CPU in nanoseconds: the sum of its [`Slice`]s.
    pub run_ns: u64,
    /// Times the thread left a CPU whose switch to it was not in the trace (lost, or never
    /// emitted by the kernel); the wake-up delay and on-CPU time of those slices are missing.
    pub unseen_switch_ins: u64,
}

/// An interval during which one traced thread ran on one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// The CPU.
    pub cpu: u32,
    /// Thread id.
    pub tid: i32,
    /// Switch-in time, trace-clock nanoseconds.
    pub start_ns: u64,
    /// Switch-out time, trace-clock nanoseconds; the last event of the trace for a thread
    /// still running when the trace ends.
    pub end_ns: u64,
}

/// What is stored with a trial besides its outcome.
#[derive(Debug, Clone, Default)]
pub struct TrialMeta {
    /// The trial's deadline, ns.
    pub timeout_ns: u64,
    /// Start, UTC RFC 3339.
    pub started_at: String,
    /// 1-minute load average before the trial.
    pub load1: Option<f64>,
    /// Non-idle CPU share in the settle window before the trial, percent.
    pub busy_pct: Option<f64>,
    /// Steal share in that window, percent.
    pub steal_pct: Option<f64>,
    /// PSI cpu "some" share of that window, percent.
    pub psi_cpu_some_pct: Option<f64>,
    /// I/O scheduler read back before the trial.
    pub io_scheduler: Option<String>,
    /// Speed of the reference loop just before the trial, relative to its calibration (1 = as
    /// calibrated), on the trial's slowest CPU.
    pub speed_before: Option<f64>,
    /// The same just after the trial.
    pub speed_after: Option<f64>,
    /// Share of the trial's CPUs' time taken by the hypervisor during the trial, percent.
    pub trial_steal_pct: Option<f64>,
    /// The reference speed before or after was off by more than 10 %.
    pub noisy: bool,
    /// RT throttling cut the trial's CPU-bound RT tasks short (None: it has none, or no
    /// RT budget applies).
    pub rt_throttled: Option<bool>,
    /// Every kernel setting of the cell (knobs, I/O scheduler, sched_ext), read back before the trial.
    pub knobs: Vec<super::KnobReading>,
    /// CPU time spent on the trial's CPUs during the trial by anything outside it (their busy
    /// time minus the trial's tasks and harness), ns, at least 0; None: not measured.
    pub outside_cpu_ns: Option<i64>,
    /// `outside_cpu_ns` as a share of the trial's CPUs' time over the trial (CPUs x wall), 0..1.
    pub outside_share: Option<f64>,
    /// Where the busy time was read: schedstat, cpuacct, cgroup2 or proc-stat.
    pub interference_source: Option<String>,
    /// Other processes' CPU time on the trial's CPUs during it, ns (crates/run/src/whose.rs):
    /// what disturbs a trial. None: not measured.
    pub outside_process_ns: Option<i64>,
    /// `outside_process_ns` as a share of the trial's CPUs' time, 0..1.
    pub outside_process_share: Option<f64>,
    /// Kernel threads' CPU time on the trial's CPUs during it, ns.
    pub outside_kthread_ns: Option<i64>,
    /// Hard and soft interrupts on the trial's CPUs during it, ns (10 ms ticks).
    pub outside_irq_ns: Option<i64>,
    /// The kernel work the trial caused: kernel threads and interrupts on its CPUs beyond the
    /// settle window's rate, ns. The trial's own cost, not disturbance.
    pub kernel_cpu_ns: Option<i64>,
    /// `outside_process_share` is above the disturbance threshold ([`DISTURBED_PCT`]).
    pub disturbed: bool,
    /// The run's steady reference speed when the trial ended: the median of its reference
    /// speeds so far, relative to the loop's stored calibration (1 = as calibrated).
    pub speed_steady: Option<f64>,
    /// Speed of the trial's calibrated CPU work: its measured tasks' units per CPU second,
    /// relative to the workload's calibration (1 = as calibrated); None for other work.
    pub speed_in_trial: Option<f64>,
    /// The run's steady in-trial speed this trial was judged against (`crates/run/src/intrial.rs`),
    /// relative to the calibration.
    pub speed_in_trial_steady: Option<f64>,
    /// The in-trial speed was more than [`SLOWED_PCT`] below the run's steady in-trial speed;
    /// None: not judged (no calibrated CPU work).
    pub slowed: Option<bool>,
    /// Which attempt at its (cell, trial index) this is: 0 the planned trial, k its k-th
    /// re-run (same round).
    pub retry: u32,
    /// The trial was contaminated (disturbed or slowed) and is run again at the end of its
    /// round; it is kept, flagged.
    pub retried: bool,
}

/// A trial whose calibrated work ran more than this much slower than the run's steady
/// in-trial speed is flagged slowed (`TrialMeta::slowed`), in percent.
pub const SLOWED_PCT: f64 = 10.0;

/// A trial whose CPUs spent more than this share of their time on other processes' work is
/// flagged disturbed (`TrialMeta::disturbed`), in percent.
pub const DISTURBED_PCT: f64 = 10.0;

/// The current UTC time as RFC 3339 (seconds), as times of day are recorded.
pub fn now_utc() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_stored_name_and_nothing_else_does() {
        for s in TrialStatus::ALL {
            assert_eq!(s.name().parse::<TrialStatus>().unwrap(), s);
        }
        for bad in ["Ok", "done", "", " ok"] {
            let e = bad.parse::<TrialStatus>().unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }
}
