//! Scheduling policies: names, per-task parameters, application with sched_setattr, refusal reasons.

use crate::CoreError;
use schedlab_sys::SchedAttr;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A Linux scheduling class as schedlab names it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// SCHED_OTHER (EEVDF fair class): the default, as in a spec.
    #[default]
    Other,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
    /// SCHED_FIFO.
    Fifo,
    /// SCHED_RR.
    Rr,
    /// SCHED_DEADLINE.
    Deadline,
    /// SCHED_EXT: the class of a BPF scheduler loaded through sched_ext (Linux 6.12+ built
    /// with CONFIG_SCHED_CLASS_EXT); fair class while none is loaded.
    Ext,
}

impl PolicyKind {
    /// Every policy, in the order reports list them.
    pub const ALL: [PolicyKind; 7] = [
        PolicyKind::Other,
        PolicyKind::Batch,
        PolicyKind::Idle,
        PolicyKind::Fifo,
        PolicyKind::Rr,
        PolicyKind::Deadline,
        PolicyKind::Ext,
    ];

    /// The name used on the command line, in specs and in the database.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Other => "other",
            PolicyKind::Batch => "batch",
            PolicyKind::Idle => "idle",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Rr => "rr",
            PolicyKind::Deadline => "deadline",
            PolicyKind::Ext => "ext",
        }
    }

    /// The kernel's policy number.
    pub fn number(self) -> u32 {
        match self {
            PolicyKind::Other => 0,
            PolicyKind::Fifo => 1,
            PolicyKind::Rr => 2,
            PolicyKind::Batch => 3,
            PolicyKind::Idle => 5,
            PolicyKind::Deadline => 6,
            PolicyKind::Ext => 7,
        }
    }

    /// The policy for a kernel policy number, if schedlab knows it.
    pub fn from_number(n: u32) -> Option<PolicyKind> {
        PolicyKind::ALL.into_iter().find(|p| p.number() == n)
    }

    /// FIFO or RR.
    pub fn is_rt(self) -> bool {
        matches!(self, PolicyKind::Fifo | PolicyKind::Rr)
    }

    /// OTHER or BATCH: the classes whose tasks may ask EEVDF for a custom slice.
    pub fn takes_slice(self) -> bool {
        matches!(self, PolicyKind::Other | PolicyKind::Batch)
    }

    /// Whether the class is a fair one (EEVDF: other, batch, idle, ext), whose tasks have a slice.
    pub fn is_fair(self) -> bool {
        matches!(
            self,
            PolicyKind::Other | PolicyKind::Batch | PolicyKind::Idle | PolicyKind::Ext
        )
    }

    /// FIFO, RR or DEADLINE: classes that can starve the rest of the machine.
    pub fn needs_guard(self) -> bool {
        self.is_rt() || self == PolicyKind::Deadline
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        let lower = s.trim().to_ascii_lowercase();
        let alias = match lower.as_str() {
            "normal" | "sched_other" | "sched_normal" | "eevdf" | "cfs" => "other",
            "sched_batch" => "batch",
            "sched_idle" => "idle",
            "sched_fifo" => "fifo",
            "sched_rr" => "rr",
            "sched_deadline" | "dl" => "deadline",
            "sched_ext" | "scx" => "ext",
            other => other,
        };
        PolicyKind::ALL
            .into_iter()
            .find(|p| p.name() == alias)
            .ok_or_else(|| {
                CoreError::unknown("policy", s, "other, batch, idle, fifo, rr, deadline, ext")
            })
    }
}

/// How priorities are given to the tasks of a cell.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PriorityMode {
    /// Every task at one level (nice 0, or the top worker RT priority): the default.
    #[default]
    Same,
    /// Each task its own level, spread evenly over the class's range (study 002).
    Spread,
}

impl PriorityMode {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            PriorityMode::Same => "same",
            PriorityMode::Spread => "spread",
        }
    }
}

impl FromStr for PriorityMode {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "same" => Ok(PriorityMode::Same),
            "spread" | "different" => Ok(PriorityMode::Spread),
            _ => Err(CoreError::unknown("priority mode", s, "same, spread")),
        }
    }
}

/// SCHED_DEADLINE parameters, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineParams {
    /// Runtime budget per period, in nanoseconds.
    pub runtime_ns: u64,
    /// Relative deadline, in nanoseconds.
    pub deadline_ns: u64,
    /// Period, in nanoseconds.
    pub period_ns: u64,
}

impl Default for DeadlineParams {
    /// 5 ms every 50 ms (10% of a CPU per task), deadline = period.
    fn default() -> Self {
        DeadlineParams {
            runtime_ns: 5_000_000,
            deadline_ns: 50_000_000,
            period_ns: 50_000_000,
        }
    }
}

impl DeadlineParams {
    /// Checks runtime <= deadline <= period, as the kernel requires.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.runtime_ns < 1024 {
            return Err(CoreError::DeadlineRuntimeTooShort);
        }
        if self.runtime_ns > self.deadline_ns || self.deadline_ns > self.period_ns {
            return Err(CoreError::DeadlineOrder {
                runtime_ns: self.runtime_ns,
                deadline_ns: self.deadline_ns,
                period_ns: self.period_ns,
            });
        }
        Ok(())
    }
}

/// Highest RT priority a worker gets by default: one below the launcher's guard priority.
pub const RT_WORKER_TOP: u32 = 98;
/// RT priority the launcher takes (where permitted) so that it can always stop RT workers.
pub const RT_LAUNCHER: u32 = 99;

/// The exact scheduling attributes one task applies to itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskPolicy {
    /// The class.
    pub kind: PolicyKind,
    /// Nice value (fair classes; 0 otherwise).
    pub nice: i32,
    /// RT priority (FIFO/RR; 0 otherwise).
    pub rt_priority: u32,
    /// Deadline parameters (DEADLINE only).
    pub deadline: DeadlineParams,
    /// EEVDF custom slice, ns (OTHER and BATCH only; None: the kernel's default).
    #[serde(default)]
    pub slice_ns: Option<u64>,
}

impl TaskPolicy {
    /// The attributes for the task at `index` of `count` in a cell.
    ///
    /// `nice`/`rt_priority` overrides put every task at that level.
    pub fn for_task(
        kind: PolicyKind,
        mode: PriorityMode,
        index: usize,
        count: usize,
        nice: Option<i32>,
        rt_priority: Option<u32>,
        deadline: DeadlineParams,
    ) -> TaskPolicy {
        let spread = |lo: i64, hi: i64| -> i64 {
            if count <= 1 {
                return lo;
            }
            lo + ((hi - lo) * index as i64 + (count as i64 - 1) / 2) / (count as i64 - 1)
        };
        let (n, p) = match kind {
            PolicyKind::Other | PolicyKind::Batch | PolicyKind::Idle | PolicyKind::Ext => {
                let n = match (nice, mode) {
                    (Some(n), _) => n,
                    (None, PriorityMode::Same) => 0,
                    // Task 0 gets the highest priority (nice -20).
                    (None, PriorityMode::Spread) => spread(-20, 19) as i32,
                };
                (n, 0)
            }
            PolicyKind::Fifo | PolicyKind::Rr => {
                let p = match (rt_priority, mode) {
                    (Some(p), _) => p,
                    (None, PriorityMode::Same) => RT_WORKER_TOP,
                    // Task 0 gets the highest priority.
                    (None, PriorityMode::Spread) => {
                        (RT_WORKER_TOP as i64 - spread(0, RT_WORKER_TOP as i64 - 1)) as u32
                    }
                };
                (0, p)
            }
            PolicyKind::Deadline => (0, 0),
        };
        TaskPolicy {
            kind,
            nice: n,
            rt_priority: p,
            deadline,
            slice_ns: None,
        }
    }

    /// The same attributes with EEVDF custom slice `slice_ns` (kept only by OTHER and BATCH,
    /// where `sched_attr.sched_runtime` asks for it).
    pub fn with_slice(mut self, slice_ns: Option<u64>) -> TaskPolicy {
        self.slice_ns = slice_ns.filter(|_| self.kind.takes_slice());
        self
    }

    /// The kernel attributes for this task.
    pub fn attr(&self) -> SchedAttr {
        let mut a = SchedAttr {
            policy: self.kind.number(),
            ..Default::default()
        };
        match self.kind {
            PolicyKind::Other | PolicyKind::Batch | PolicyKind::Idle | PolicyKind::Ext => {
                a.nice = self.nice;
                // Under OTHER/BATCH, sched_runtime asks EEVDF for a custom slice (Linux 6.12+).
                a.runtime_ns = self.slice_ns.unwrap_or(0);
            }
            PolicyKind::Fifo | PolicyKind::Rr => a.priority = self.rt_priority,
            PolicyKind::Deadline => {
                a.runtime_ns = self.deadline.runtime_ns;
                a.deadline_ns = self.deadline.deadline_ns;
                a.period_ns = self.deadline.period_ns;
                // A deadline task may not fork unless its children reset.
                a.flags = schedlab_sys::FLAG_RESET_ON_FORK;
            }
        }
        a
    }

    /// Applies the attributes to the calling thread; returns the errno on refusal.
    pub fn apply(&self) -> Result<(), i32> {
        schedlab_sys::sched_setattr(&self.attr())
    }
}

/// A sentence naming why the kernel refused `kind` with `errno`, and what to do about it.
/// `pinned`: the CPUs the task was pinned to, if it was (a cause of its own for DEADLINE).
pub fn refusal_reason(kind: PolicyKind, nice: i32, errno: i32, pinned: Option<&[usize]>) -> String {
    let name = schedlab_sys::errno_name(errno);
    let privileged = schedlab_sys::is_root()
        || caps::has_cap(
            None,
            caps::CapSet::Effective,
            caps::Capability::CAP_SYS_NICE,
        )
        .unwrap_or(false);
    match (kind, errno) {
        (PolicyKind::Deadline, libc::EBUSY) => format!(
            "SCHED_DEADLINE refused ({name}): admission control found the tasks' total bandwidth (runtime/period summed over tasks) above what the root domain allows (sched_rt_runtime_us/sched_rt_period_us per CPU, minus the fair server); lower --dl-runtime, raise --dl-period, or use fewer tasks"
        ),
        (PolicyKind::Deadline, libc::EPERM) if privileged => deadline_eperm(pinned),
        (PolicyKind::Fifo | PolicyKind::Rr, libc::EPERM) if privileged => format!(
            "SCHED_{} refused ({name}) although this process has CAP_SYS_NICE: with CONFIG_RT_GROUP_SCHED the kernel refuses RT tasks in a control group whose cpu.rt_runtime_us is 0 (the default for new cgroup-v1 groups); give schedlab's group an RT budget (echo 950000 > cpu.rt_runtime_us of its group and its parents) or run it in the root group",
            kind.name().to_uppercase()
        ),
        (PolicyKind::Fifo | PolicyKind::Rr | PolicyKind::Deadline, libc::EPERM) => format!(
            "SCHED_{} refused ({name}): this process lacks CAP_SYS_NICE{}; run as root, grant the capability (setcap cap_sys_nice+ep on the schedlab binary) or raise RLIMIT_RTPRIO (ulimit -r 99, or rtprio in /etc/security/limits.conf)",
            kind.name().to_uppercase(),
            if kind == PolicyKind::Deadline { "" } else { " and RLIMIT_RTPRIO is too low" }
        ),
        (_, libc::EPERM) => format!(
            "SCHED_{} with nice {nice} refused ({name}): lowering nice below the current value needs CAP_SYS_NICE or a higher RLIMIT_NICE; run as root, grant CAP_SYS_NICE, raise RLIMIT_NICE (nice in /etc/security/limits.conf) or use --priorities same",
            kind.name().to_uppercase()
        ),
        (PolicyKind::Ext, libc::EINVAL) => format!(
            "SCHED_EXT refused ({name}): this kernel has no sched_ext class (built without CONFIG_SCHED_CLASS_EXT, or older than Linux 6.12); boot a kernel with CONFIG_SCHED_CLASS_EXT=y to use the ext policy, and see `schedlab policies`"
        ),
        (_, libc::EINVAL) => format!(
            "SCHED_{} refused ({name}): this kernel does not offer the class or rejects its parameters; check `schedlab policies` and the kernel configuration",
            kind.name().to_uppercase()
        ),
        _ => format!(
            "SCHED_{} refused ({name}, errno {errno}); check `schedlab policies`",
            kind.name().to_uppercase()
        ),
    }
}

/// Why a privileged process gets EPERM for SCHED_DEADLINE. The kernel (`__sched_setscheduler`)
/// refuses a deadline task whose CPU affinity does not cover its whole root domain, because
/// deadline bandwidth is admitted per root domain and a task confined to part of it could
/// overload that part; it also refuses one when the root domain has no deadline bandwidth
/// (kernel.sched_rt_runtime_us = 0). Both answer EPERM, even to root.
fn deadline_eperm(pinned: Option<&[usize]>) -> String {
    let fmt = |cpus: &[usize]| {
        let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
        list.join(",")
    };
    let allowed = schedlab_sys::allowed_cpus();
    let narrower = |cpus: &[usize]| allowed.iter().any(|c| !cpus.contains(c));
    if let Some(cpus) = pinned.filter(|c| narrower(c)) {
        return format!(
            "SCHED_DEADLINE refused (EPERM) on pinned CPUs {}: the kernel admits a deadline task only if its CPU affinity spans its whole root domain (here CPUs {}), since deadline bandwidth is accounted per root domain; pinning narrows the affinity, so even root gets EPERM (not a missing CAP_SYS_NICE). Run DEADLINE unpinned (no --cpus, or cpus covering {}; unpinned it works), or give the pinned CPUs a root domain of their own: add --partition (spec: partition = [true]), which puts the trial's tasks in a cpuset partition of those CPUs (cgroup v2 cpuset.cpus.partition = root; v1 a cpuset balanced alone)",
            fmt(cpus),
            fmt(&allowed),
            fmt(&allowed)
        );
    }
    let runtime = std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").ok();
    if runtime.as_deref().map(str::trim) == Some("0") {
        return "SCHED_DEADLINE refused (EPERM): kernel.sched_rt_runtime_us is 0, so the root domain has no bandwidth for deadline tasks; set it back (sysctl kernel.sched_rt_runtime_us=950000)".into();
    }
    "SCHED_DEADLINE refused (EPERM) although this process has CAP_SYS_NICE: the kernel refuses a deadline task whose CPU affinity is narrower than its root domain; this process itself may be confined (taskset, a cpuset) to part of it; run schedlab on all CPUs of its root domain".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases_are_accepted() {
        for p in PolicyKind::ALL {
            assert_eq!(p.name().parse::<PolicyKind>().unwrap(), p);
            assert_eq!(PolicyKind::from_number(p.number()), Some(p));
        }
        assert_eq!(
            "SCHED_NORMAL".parse::<PolicyKind>().unwrap(),
            PolicyKind::Other
        );
        let err = "fast".parse::<PolicyKind>().unwrap_err();
        assert!(
            matches!(&err, CoreError::UnknownName { what: "policy", given, .. } if given == "fast"),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("other, batch, idle, fifo, rr, deadline, ext"),
            "{err}"
        );
    }

    #[test]
    fn same_priorities_put_rt_workers_one_below_the_launcher() {
        let p = TaskPolicy::for_task(
            PolicyKind::Fifo,
            PriorityMode::Same,
            3,
            10,
            None,
            None,
            DeadlineParams::default(),
        );
        assert_eq!(p.rt_priority, RT_WORKER_TOP);
        assert!(p.rt_priority < RT_LAUNCHER);
        let o = TaskPolicy::for_task(
            PolicyKind::Other,
            PriorityMode::Same,
            3,
            10,
            None,
            None,
            DeadlineParams::default(),
        );
        assert_eq!(o.nice, 0);
    }

    #[test]
    fn spread_priorities_cover_the_whole_range_evenly() {
        let nices: Vec<i32> = (0..40)
            .map(|i| {
                TaskPolicy::for_task(
                    PolicyKind::Other,
                    PriorityMode::Spread,
                    i,
                    40,
                    None,
                    None,
                    DeadlineParams::default(),
                )
                .nice
            })
            .collect();
        assert_eq!(nices[0], -20);
        assert_eq!(nices[39], 19);
        assert!(nices.windows(2).all(|w| w[1] == w[0] + 1));
        let prios: Vec<u32> = (0..10)
            .map(|i| {
                TaskPolicy::for_task(
                    PolicyKind::Rr,
                    PriorityMode::Spread,
                    i,
                    10,
                    None,
                    None,
                    DeadlineParams::default(),
                )
                .rt_priority
            })
            .collect();
        assert_eq!(prios[0], RT_WORKER_TOP);
        assert_eq!(prios[9], 1);
        assert!(prios.windows(2).all(|w| w[1] < w[0]));
    }

    #[test]
    fn overrides_win_over_the_mode() {
        let p = TaskPolicy::for_task(
            PolicyKind::Batch,
            PriorityMode::Spread,
            0,
            5,
            Some(7),
            None,
            DeadlineParams::default(),
        );
        assert_eq!(p.nice, 7);
        let r = TaskPolicy::for_task(
            PolicyKind::Fifo,
            PriorityMode::Spread,
            4,
            5,
            None,
            Some(10),
            DeadlineParams::default(),
        );
        assert_eq!(r.rt_priority, 10);
    }

    #[test]
    fn deadline_parameters_must_be_ordered() {
        assert!(DeadlineParams::default().validate().is_ok());
        let bad = DeadlineParams {
            runtime_ns: 20_000_000,
            deadline_ns: 10_000_000,
            period_ns: 10_000_000,
        };
        assert!(matches!(
            bad.validate(),
            Err(CoreError::DeadlineOrder {
                runtime_ns: 20_000_000,
                ..
            })
        ));
    }

    #[test]
    fn a_slice_goes_into_sched_runtime_of_other_and_batch_only() {
        let task = |kind| {
            TaskPolicy::for_task(
                kind,
                PriorityMode::Same,
                0,
                1,
                None,
                None,
                DeadlineParams::default(),
            )
            .with_slice(Some(300_000))
        };
        assert_eq!(task(PolicyKind::Other).attr().runtime_ns, 300_000);
        assert_eq!(task(PolicyKind::Batch).attr().runtime_ns, 300_000);
        assert_eq!(task(PolicyKind::Idle).attr().runtime_ns, 0);
        assert_eq!(task(PolicyKind::Fifo).slice_ns, None);
        // DEADLINE keeps its own runtime.
        assert_eq!(task(PolicyKind::Deadline).attr().runtime_ns, 5_000_000);
        assert_eq!(task(PolicyKind::Ext).attr().policy, 7);
        let r = refusal_reason(PolicyKind::Ext, 0, libc::EINVAL, None);
        assert!(r.contains("CONFIG_SCHED_CLASS_EXT"), "{r}");
    }

    #[test]
    fn refusal_reasons_name_cause_and_remedy() {
        let r = refusal_reason(PolicyKind::Fifo, 0, libc::EPERM, None);
        assert!(r.contains("CAP_SYS_NICE"), "{r}");
        if !schedlab_sys::is_root() {
            assert!(r.contains("RLIMIT_RTPRIO"), "{r}");
        }
        let d = refusal_reason(PolicyKind::Deadline, 0, libc::EBUSY, None);
        assert!(d.contains("EBUSY") && d.contains("--dl-runtime"), "{d}");
        let n = refusal_reason(PolicyKind::Other, -20, libc::EPERM, None);
        assert!(n.contains("RLIMIT_NICE"), "{n}");
    }

    #[test]
    fn a_privileged_pinned_deadline_refusal_names_the_root_domain_not_the_capability() {
        if !schedlab_testkit::root("the reason given to a privileged process") {
            return;
        }
        let allowed = schedlab_sys::allowed_cpus();
        if allowed.len() < 2 {
            return schedlab_testkit::skip(
                schedlab_testkit::Need::Kernel,
                "one CPU cannot be pinned narrower than the root domain (needs 2 CPUs)",
            );
        }
        let d = refusal_reason(PolicyKind::Deadline, 0, libc::EPERM, Some(&allowed[..1]));
        assert!(d.contains("root domain") && d.contains("unpinned"), "{d}");
        assert!(!d.contains("lacks CAP_SYS_NICE"), "{d}");
        // Pinned to every CPU is not narrower: not the affinity cause.
        let all = refusal_reason(PolicyKind::Deadline, 0, libc::EPERM, Some(&allowed));
        assert!(!all.contains("on pinned CPUs"), "{all}");
    }
}
