//! Warnings stored with a run: one enum, a stable code per kind ([`Warning::code`]), its
//! parameters, and the sentence people read (its `Display`: what happened, why it matters, what
//! to do). The store keeps the code and the parameters beside the sentence, so that programs
//! (tests, `push`) match codes, never text.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What to do about RT throttling, the remedy of every RT-budget warning.
pub const THROTTLE_REMEDY: &str = "give each CPU less RT work back to back (less work per task, fewer RT tasks per CPU, more CPUs), or, as root and restoring it afterwards, raise the budget (sysctl kernel.sched_rt_runtime_us=-1 lifts it; a runaway RT task can then hang the CPU)";

/// A measured share over the threshold that makes it worth a warning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Over {
    /// The measured share, %.
    pub pct: f64,
    /// The threshold, %.
    pub threshold_pct: f64,
}

/// What ending a trial's CPU cgroups left undone (a [`Warning::CgroupTrial`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupEnd {
    /// The root settings the groups needed were not put back after the trial.
    RootsNotReset,
    /// The groups could not be removed.
    NotRemoved,
    /// The groups were removed, but the restore journal still lists them.
    JournalNotUpdated,
    /// The groups outlived their run (a bug of schedlab's).
    Outlived,
}

/// An outside process named in a [`Warning::TrialDisturbed`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutsideProcess {
    /// Its command name.
    pub comm: String,
    /// Its process id.
    pub pid: i32,
    /// CPU time it (and the children it reaped) used during the trial, ms.
    pub cpu_ms: f64,
}

/// A warning about a run or one of its trials. The serde tag `code` is [`Warning::code`]; the
/// other fields are its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Warning {
    /// The I/O directory lies on a tmpfs: io results are not disk I/O.
    IoDirTmpfs {
        /// The directory.
        dir: String,
    },
    /// Other users may rename or delete entries of the I/O directory.
    IoDirShared {
        /// The directory.
        dir: String,
        /// Its owner, when that is another user than root and this process.
        owner_uid: Option<u32>,
        /// Its permission bits.
        mode: u32,
    },
    /// A cell's CPU-bound RT tasks need more CPU back to back than the RT budget allows.
    RtBudgetDemand {
        /// The cell's label.
        cell: String,
        /// How many RT tasks (or antagonists) keep the CPUs busy.
        tasks: u32,
        /// Their policy (`fifo`, `rr`), or None when they are the cell's RT antagonists.
        policy: Option<String>,
        /// The CPUs they run on.
        cpus: u64,
        /// How long each CPU is busy back to back, ms.
        busy_ms: f64,
        /// The budget, as `sched_rt_runtime_us` per `sched_rt_period_us`.
        budget: String,
        /// How long the kernel stops RT tasks once they used the runtime, ms.
        throttle_ms: f64,
        /// The RT runtime per period, ms.
        runtime_ms: f64,
    },
    /// A cell's periodic RT tasks want more of each CPU than the RT budget allows.
    RtBudgetPeriodic {
        /// The cell's label.
        cell: String,
        /// Their policy.
        policy: String,
        /// Their share of each CPU, %.
        want_pct: f64,
        /// The budget, as `sched_rt_runtime_us` per `sched_rt_period_us`.
        budget: String,
        /// The share the budget allows, %.
        allowed_pct: f64,
    },
    /// A trial's CPU-bound RT tasks were throttled.
    RtThrottled {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// CPU time the RT tasks had, ms.
        rt_cpu_ms: f64,
        /// CPU time their CPUs had for them, ms.
        capacity_ms: f64,
        /// What is missing beyond steal, ms.
        missing_ms: f64,
        /// RT demand before it, ms.
        demand_ms: f64,
        /// The budget, as `sched_rt_runtime_us` per `sched_rt_period_us`.
        budget: String,
    },
    /// The machine was not idle in the settle window before a trial.
    MachineBusy {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The settle window, ms.
        window_ms: u64,
        /// Busy CPUs, when over the threshold.
        busy: Option<Over>,
        /// Steal, when over the threshold.
        steal: Option<Over>,
        /// PSI `cpu some`, when over the threshold.
        psi_cpu_some: Option<Over>,
    },
    /// The reference loop ran off the run's steady speed around a trial (flagged noisy).
    TrialNoisy {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// Speed before the trial, % of the run's steady speed (of the calibrated speed in
        /// warnings stored before schema 8, which have no `steady_pct`).
        before_pct: Option<f64>,
        /// Speed after the trial, % of the run's steady speed.
        after_pct: Option<f64>,
        /// How far off is noisy, %.
        limit_pct: f64,
        /// The run's steady speed (the median of its reference speeds so far), % of the
        /// stored calibration; None in warnings stored before schema 8.
        #[serde(default)]
        steady_pct: Option<f64>,
    },
    /// Other processes used more than the threshold of a trial's CPUs while it ran.
    TrialDisturbed {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// Other processes' share of the trial's CPUs' time, %.
        share_pct: f64,
        /// The threshold, %.
        threshold_pct: f64,
        /// The outside processes that used the most CPU time, most first.
        top: Vec<OutsideProcess>,
        /// The trial is run again at the end of its round.
        rerun: bool,
    },
    /// The kernel worked far more on a trial's CPUs than the cell's own I/O explains.
    TrialKernelWork {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// Kernel threads' and interrupts' time during the trial beyond the settle window's
        /// rate, ms.
        kernel_ms: f64,
        /// What the cell's own I/O explains: the median of its earlier trials, ms (0 for work
        /// without files).
        expected_ms: f64,
    },
    /// A trial's calibrated CPU work ran slower than the run's steady in-trial speed.
    TrialSlowed {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// Its tasks' speed (calibrated units per CPU second), % of the steady in-trial speed.
        speed_pct: f64,
        /// How much slower is slowed, %.
        limit_pct: f64,
        /// The trial is run again at the end of its round.
        rerun: bool,
    },
    /// An adaptive run reached `--max-trials` short of its targets (precision, decided
    /// claims).
    AdaptiveMaxTrials {
        /// The precision asked for, a fraction of the median; None: none asked for.
        precision: Option<f64>,
        /// The metric the precision is judged on.
        metric: String,
        /// Whether every claim was to be decided (`--until-decided`).
        until_decided: bool,
        /// Rounds run.
        rounds: u32,
        /// `--max-trials`.
        max_trials: u32,
    },
    /// An adaptive run reached `--max-time` short of its targets (precision, decided claims).
    AdaptiveMaxTime {
        /// The precision asked for, a fraction of the median; None: none asked for.
        precision: Option<f64>,
        /// The metric the precision is judged on.
        metric: String,
        /// Whether every claim was to be decided (`--until-decided`).
        until_decided: bool,
        /// Rounds run.
        rounds: u32,
    },
    /// A kernel setting is varied by the run and restored after it.
    KnobVaried {
        /// The setting's name.
        name: String,
        /// Its file.
        file: String,
        /// Its value before the run.
        original: String,
        /// The restore journal, if any.
        journal: Option<String>,
    },
    /// Ending a trial's CPU cgroups left something undone.
    CgroupTrial {
        /// The trial's number in the run, from 1.
        trial: usize,
        /// The cell's label.
        cell: String,
        /// What was left undone.
        problem: CgroupEnd,
        /// The trial's cgroups (directories).
        groups: Vec<String>,
        /// What the system said.
        error: String,
    },
    /// A device's I/O scheduler is varied by the run and restored after it.
    IoSchedulerVaried {
        /// The block device.
        device: String,
        /// Its scheduler before the run.
        original: String,
    },
}

/// Each kind's stable code, written once, in the order of the README's table: [`CODES`] and
/// [`Warning::code`] come from this list, and serde's tag is the variant's name in
/// snake_case, the same text (`warning_tests` checks both).
macro_rules! codes {
    ($($kind:ident => $code:literal,)*) => {
        /// Every code, in the order of the README's table.
        pub const CODES: [&str; [$($code),*].len()] = [$($code),*];

        impl Warning {
            /// The stable code of this kind of warning (one of [`CODES`]; serde's tag too).
            pub fn code(&self) -> &'static str {
                match self {
                    $(Warning::$kind { .. } => $code,)*
                }
            }
        }
    };
}

codes! {
    IoDirTmpfs => "io_dir_tmpfs",
    IoDirShared => "io_dir_shared",
    RtBudgetDemand => "rt_budget_demand",
    RtBudgetPeriodic => "rt_budget_periodic",
    RtThrottled => "rt_throttled",
    MachineBusy => "machine_busy",
    TrialNoisy => "trial_noisy",
    TrialDisturbed => "trial_disturbed",
    TrialKernelWork => "trial_kernel_work",
    TrialSlowed => "trial_slowed",
    AdaptiveMaxTrials => "adaptive_max_trials",
    AdaptiveMaxTime => "adaptive_max_time",
    KnobVaried => "knob_varied",
    IoSchedulerVaried => "io_scheduler_varied",
    CgroupTrial => "cgroup_trial",
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::IoDirTmpfs { dir } => write!(
                f,
                "{dir} is a tmpfs: O_SYNC writes do not reach a disk there, so io results are not disk I/O; use --io-dir on a disk-backed filesystem"
            ),
            Warning::IoDirShared { dir, owner_uid, mode } => write!(
                f,
                "the I/O directory {dir} {}: others can rename or delete schedlab's trial directories there and make trials fail (the files in them stay private and are never reached through a link); prefer a directory only you can write to, or a sticky one such as /var/tmp",
                shared_why(*owner_uid, *mode)
            ),
            Warning::RtBudgetDemand { cell, tasks, policy, cpus, busy_ms, budget, throttle_ms, runtime_ms } => {
                let who = match policy {
                    Some(p) => format!("its {tasks} {p} tasks"),
                    None => format!("its {tasks} RT antagonists"),
                };
                write!(
                    f,
                    "{cell}: {who} keep each of its {cpus} CPU(s) busy for about {busy_ms:.0} ms back to back, more than the RT budget of {budget} allows (kernel.sched_rt_runtime_us / sched_rt_period_us): the kernel stops RT tasks for {throttle_ms:.0} ms once they used {runtime_ms:.0} ms since the last period boundary (certain beyond {:.0} ms back to back, depending on where the period falls below that), which delays their ends and shifts turnarounds; the trials in which it happens are flagged. Remedy: {THROTTLE_REMEDY}",
                    2.0 * runtime_ms
                )
            }
            Warning::RtBudgetPeriodic { cell, policy, want_pct, budget, allowed_pct } => write!(
                f,
                "{cell}: its periodic {policy} tasks want {want_pct:.0} % of each CPU, more than the RT budget of {budget} ({allowed_pct:.0} %) allows; the kernel will throttle them every period and their wake-up latencies will show it. Remedy: {THROTTLE_REMEDY}"
            ),
            Warning::RtThrottled { trial, cell, rt_cpu_ms, capacity_ms, missing_ms, demand_ms, budget } => write!(
                f,
                "trial {trial} ({cell}): RT throttling: the CPU-bound RT tasks got {rt_cpu_ms:.0} ms of CPU where their CPUs had {capacity_ms:.0} ms for them ({missing_ms:.0} ms missing beyond steal), after {demand_ms:.0} ms of RT demand: the kernel's RT budget of {budget} stopped them, so their turnarounds include throttled time. Remedy: {THROTTLE_REMEDY}"
            ),
            Warning::MachineBusy { trial, window_ms, busy, steal, psi_cpu_some } => {
                let steal_hint = if steal.is_some() {
                    "; steal comes from other virtual machines on the host, so prefer a dedicated host or bare metal"
                } else {
                    ""
                };
                write!(
                    f,
                    "before trial {trial}: the machine was not idle in the {window_ms} ms before this trial: {}. Close other programs, pin the trial to idle CPUs (--cpus), and re-run it{steal_hint}.",
                    busy_problems(*busy, *steal, *psi_cpu_some)
                )
            }
            Warning::TrialNoisy { trial, cell, before_pct, after_pct, limit_pct, steady_pct } => {
                noisy(f, (*trial, cell), [*before_pct, *after_pct], *limit_pct, *steady_pct)
            }
            Warning::TrialDisturbed { trial, cell, share_pct, threshold_pct, top, rerun } => {
                disturbed(f, (*trial, cell), (*share_pct, *threshold_pct), top, *rerun)
            }
            Warning::TrialKernelWork { trial, cell, kernel_ms, expected_ms } => write!(
                f,
                "trial {trial} ({cell}): the kernel worked {kernel_ms:.1} ms on its CPUs (kernel threads and interrupts beyond the rate before it), far more than its own I/O explains ({expected_ms:.1} ms in the cell's other trials): another program's I/O probably ran meanwhile; the trial is not flagged, but check what else ran"
            ),
            Warning::TrialSlowed { trial, cell, speed_pct, limit_pct, rerun } => {
                slowed(f, (*trial, cell), *speed_pct, *limit_pct, *rerun)
            }
            Warning::AdaptiveMaxTrials { precision, metric, until_decided, rounds, max_trials } => write!(
                f,
                "adaptive run: not yet {} after {rounds} rounds (--max-trials {max_trials}); the report shows which cells and claims fall short. Raise --max-trials, ask for less, or reduce the noise (see the reference speed, steal and interference of the trials)",
                adaptive_target(*precision, metric, *until_decided)
            ),
            Warning::AdaptiveMaxTime { precision, metric, until_decided, rounds } => write!(
                f,
                "adaptive run: stopped after {rounds} rounds because another round would have ended after --max-time, not yet {} (the report shows which). Raise --max-time or ask for less",
                adaptive_target(*precision, metric, *until_decided)
            ),
            Warning::KnobVaried { name, file, original, journal } => write!(
                f,
                "kernel setting {name} ({file}) varied; it was {original} and is restored after the run (restore journal {})",
                journal.as_deref().unwrap_or("-")
            ),
            Warning::CgroupTrial { trial, cell, problem, groups, error } => {
                write!(f, "trial {trial} ({cell}): ")?;
                cgroup_end(f, *problem, &groups.join(", "), error)
            }
            Warning::IoSchedulerVaried { device, original } => write!(
                f,
                "I/O scheduler of {device} varied; it was {original} and is restored after the run"
            ),
        }
    }
}

/// The sentence of a [`Warning::TrialNoisy`]: speeds `[before, after]` of trial `trial` of
/// `cell`, `limit_pct` and the run's steady speed.
fn noisy(
    f: &mut fmt::Formatter,
    (trial, cell): (usize, &str),
    speeds: [Option<f64>; 2],
    limit_pct: f64,
    steady_pct: Option<f64>,
) -> fmt::Result {
    let pct = |s: Option<f64>| s.map_or("-".into(), |s| format!("{s:.0} %"));
    let of = match steady_pct {
        Some(s) => format!("the run's steady speed ({s:.0} % of its stored calibration)"),
        None => "the calibrated speed".into(),
    };
    write!(
        f,
        "trial {trial} ({cell}): the reference loop ran at {} of {of} before the trial and {} after it (more than {limit_pct:.0} % slower): the machine was slower around this trial than in the rest of the run (other load, steal, CPU frequency), so this trial's times are off too; it is flagged noisy, and `schedlab stats --exclude-noisy` leaves such trials out",
        pct(speeds[0]),
        pct(speeds[1])
    )
}

/// The sentence of a [`Warning::TrialDisturbed`].
fn disturbed(
    f: &mut fmt::Formatter,
    (trial, cell): (usize, &str),
    (share_pct, threshold_pct): (f64, f64),
    top: &[OutsideProcess],
    rerun: bool,
) -> fmt::Result {
    write!(
        f,
        "trial {trial} ({cell}): other processes used {share_pct:.1} % of its CPUs' time while it ran (threshold {threshold_pct:.0} %)"
    )?;
    if !top.is_empty() {
        let named: Vec<String> = top
            .iter()
            .map(|p| format!("{} (pid {}, {:.1} ms)", p.comm, p.pid, p.cpu_ms))
            .collect();
        write!(f, ", most of all {}", named.join(", "))?;
    }
    write!(f, "; it is flagged disturbed and left out of verdicts and summaries (--include-disturbed keeps it)")?;
    rerun_note(f, rerun)
}

/// The sentence of a [`Warning::TrialSlowed`].
fn slowed(
    f: &mut fmt::Formatter,
    (trial, cell): (usize, &str),
    speed_pct: f64,
    limit_pct: f64,
    rerun: bool,
) -> fmt::Result {
    write!(
        f,
        "trial {trial} ({cell}): its tasks did their calibrated work at {speed_pct:.0} % of the run's steady in-trial speed (more than {limit_pct:.0} % slower): the machine slowed down during it in a way no busy-time counter shows (hypervisor, CPU frequency); it is flagged slowed and left out of verdicts and summaries (--include-slowed keeps it)"
    )?;
    rerun_note(f, rerun)
}

/// What happens next to a contaminated trial, as the end of its warning.
fn rerun_note(f: &mut fmt::Formatter, rerun: bool) -> fmt::Result {
    if rerun {
        write!(f, "; it is run again at the end of its round")
    } else {
        write!(
            f,
            "; no retry is left for it (--retries), so its round lacks a clean trial of this cell"
        )
    }
}

/// What ending a trial's cgroups `groups` left undone, and what the system said (`error`).
fn cgroup_end(
    f: &mut fmt::Formatter,
    problem: CgroupEnd,
    groups: &str,
    error: &str,
) -> fmt::Result {
    match problem {
        CgroupEnd::RootsNotReset => write!(
            f,
            "the root cgroup settings its groups ({groups}) needed could not be put back after it ({error}); they are restored at the end of the run"
        ),
        CgroupEnd::NotRemoved => write!(
            f,
            "its cgroups ({groups}) could not be removed ({error}); they are removed at the end of the run or by the next schedlab command"
        ),
        CgroupEnd::JournalNotUpdated => write!(
            f,
            "its cgroups ({groups}) were removed, but the restore journal could not be updated and still lists them ({error})"
        ),
        CgroupEnd::Outlived => write!(
            f,
            "internal error: its cgroups outlived their run ({error})"
        ),
    }
}

/// Why others may move entries of a shared I/O directory, in words.
fn shared_why(owner_uid: Option<u32>, mode: u32) -> String {
    match owner_uid {
        Some(uid) => format!("belongs to uid {uid}"),
        None => format!(
            "is writable by other users without the sticky bit (mode {:04o})",
            mode & 0o7777
        ),
    }
}

/// What was high in a settle window, in words.
fn busy_problems(busy: Option<Over>, steal: Option<Over>, psi_cpu_some: Option<Over>) -> String {
    let mut problems = Vec::new();
    if let Some(o) = busy {
        problems.push(format!(
            "the CPUs were {:.1}% busy (threshold {}%)",
            o.pct, o.threshold_pct
        ));
    }
    if let Some(o) = steal {
        problems.push(format!(
            "the hypervisor took {:.1}% of CPU time for other guests (steal, threshold {}%)",
            o.pct, o.threshold_pct
        ));
    }
    if let Some(o) = psi_cpu_some {
        problems.push(format!(
            "tasks waited for a CPU {:.1}% of the time (PSI cpu some, threshold {}%)",
            o.pct, o.threshold_pct
        ));
    }
    problems.join("; ")
}

/// What an adaptive run aimed at, in words.
fn adaptive_target(precision: Option<f64>, metric: &str, until_decided: bool) -> String {
    let mut target: Vec<String> = Vec::new();
    if let Some(p) = precision {
        target.push(format!(
            "every cell's 95% confidence sequence within ±{}% of the median {metric}",
            p * 100.0
        ));
    }
    if until_decided {
        target.push("every claim decided".into());
    }
    target.join(" and ")
}

#[cfg(test)]
#[path = "warning_tests.rs"]
mod tests;
