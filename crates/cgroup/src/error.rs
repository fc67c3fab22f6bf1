//! The layer's errors (`Error`) and the typed reasons a setting cannot be had on this machine
//! (`Unavailable`), each with a stable code, its cause and a remedy.

use crate::detect::Controller;
use serde::Serialize;
use std::io;
use std::path::PathBuf;

/// Why a cgroup setting cannot be applied on this machine. The plan stage turns one into a
/// skipped cell (exit 0, or 1 with `--strict`); `Display` says the cause and the remedy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Unavailable {
    /// No mounted hierarchy (v1 or v2) offers the controller.
    #[error(
        "no mounted cgroup hierarchy has the {controller} controller; mount it (v2: it must be \
         listed in cgroup.controllers of the unified mount; v1: `mount -t cgroup -o {controller} \
         cgroup /sys/fs/cgroup/{controller}`)"
    )]
    NoController {
        /// The controller asked for.
        controller: Controller,
    },
    /// The controller is compiled in but disabled (`/proc/cgroups` enabled = 0).
    #[error(
        "the {controller} controller is disabled on this kernel (/proc/cgroups says enabled 0); \
         remove `cgroup_disable={controller}` from the kernel command line"
    )]
    Disabled {
        /// The controller asked for.
        controller: Controller,
    },
    /// cgroup v2: the controller is not enabled for the children of the mount's root, and
    /// schedlab does not change a cgroup it did not create.
    #[error(
        "the {controller} controller is not enabled for child cgroups of {} (its \
         cgroup.subtree_control lacks it); enable it: `echo +{controller} > {}/cgroup.subtree_control`",
        root.display(), root.display()
    )]
    NotEnabled {
        /// The controller asked for.
        controller: Controller,
        /// The v2 cgroup whose `cgroup.subtree_control` lacks it.
        root: PathBuf,
    },
    /// The hierarchy is mounted read-only (typical inside containers).
    #[error(
        "{} is mounted read-only, so no cgroup can be created there; run on the host, or give \
         the container a writable cgroup mount",
        mount.display()
    )]
    ReadOnly {
        /// The mount point.
        mount: PathBuf,
    },
    /// A v1 hierarchy mounted with `noprefix` (file names without `cpu.`/`cpuset.`).
    #[error(
        "{} is mounted with `noprefix`; schedlab writes only prefixed file names; remount it \
         without noprefix",
        mount.display()
    )]
    NoPrefix {
        /// The mount point.
        mount: PathBuf,
    },
    /// The kernel lacks a file a setting needs (e.g. `cpu.idle` before Linux 5.15).
    #[error("this kernel has no {file} ({why}); {remedy}")]
    NoFeature {
        /// The missing file, e.g. `cpu.idle`.
        file: &'static str,
        /// What provides it.
        why: &'static str,
        /// What to do.
        remedy: &'static str,
    },
    /// Creating cgroups needs root (CAP_SYS_ADMIN over the hierarchy).
    #[error("creating cgroups needs root; run schedlab as root (or with sudo)")]
    NotRoot,
    /// cgroup v1 with RT group scheduling: no real-time budget is left for a new group, so
    /// FIFO/RR tasks could not run in it.
    #[error(
        "the cpu hierarchy's real-time budget is used up: the root allows {root_runtime_us} µs \
         per {root_period_us} µs and other groups hold all of it, so a new group's FIFO/RR tasks \
         could not run; lower cpu.rt_runtime_us of the other groups under {}",
        mount.display()
    )]
    NoRtBudget {
        /// The cpu hierarchy's mount point.
        mount: PathBuf,
        /// The root's `cpu.rt_runtime_us`.
        root_runtime_us: i64,
        /// The root's `cpu.rt_period_us`.
        root_period_us: u64,
    },
    /// cgroup v1: another load-balanced cpuset outside schedlab's overlaps the partition's
    /// CPUs, so the kernel would merge them into one root domain.
    #[error(
        "cpuset {} balances load over CPUs {cpus}, which the partition needs; a v1 partition \
         needs those CPUs outside every other load-balanced cpuset (set its \
         cpuset.sched_load_balance to 0 or move its CPUs)",
        other.display()
    )]
    PartitionBlocked {
        /// The other cpuset.
        other: PathBuf,
        /// The CPUs they share.
        cpus: String,
    },
    /// cgroup v2: thread tasks in groups of their own need a threaded subtree, where a
    /// partition cannot be made.
    #[error(
        "a cpuset partition cannot hold thread tasks on cgroup v2 (threads of one process in \
         several groups need a threaded subtree, and a threaded cgroup cannot be a partition); \
         use process tasks"
    )]
    ThreadedPartition,
}

impl Unavailable {
    /// A stable code for the reason (stored with skipped cells, matched by tests).
    pub fn code(&self) -> &'static str {
        match self {
            Unavailable::NoController { .. } => "cgroup.no-controller",
            Unavailable::Disabled { .. } => "cgroup.disabled",
            Unavailable::NotEnabled { .. } => "cgroup.not-enabled",
            Unavailable::ReadOnly { .. } => "cgroup.read-only",
            Unavailable::NoPrefix { .. } => "cgroup.noprefix",
            Unavailable::NoFeature { .. } => "cgroup.no-feature",
            Unavailable::NotRoot => "cgroup.not-root",
            Unavailable::NoRtBudget { .. } => "cgroup.no-rt-budget",
            Unavailable::PartitionBlocked { .. } => "cgroup.partition-blocked",
            Unavailable::ThreadedPartition => "cgroup.threaded-partition",
        }
    }
}

/// What went wrong in the cgroup layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value given by the user is out of range or malformed.
    #[error("{value:?} is not a valid {what}: {why}")]
    InvalidValue {
        /// What the value is for (e.g. `cpu weight`).
        what: &'static str,
        /// The value as given.
        value: String,
        /// Why it is refused, and what would be accepted.
        why: crate::Invalid,
    },
    /// The machine cannot apply the setting.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// A file or directory operation failed.
    #[error("cannot {action} {}: {source}; {hint}", path.display())]
    Io {
        /// What was tried (e.g. `write 20000 to`).
        action: String,
        /// The file or directory.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: io::Error,
        /// What it means here and what to do.
        hint: String,
    },
    /// The cgroup to be created exists already: schedlab never adopts a cgroup.
    #[error(
        "{} exists already; schedlab creates only new cgroups and never changes one it did not \
         create (a leftover of a killed run is removed by the next schedlab command)",
        path.display()
    )]
    Exists {
        /// The path.
        path: PathBuf,
    },
    /// A path was handed to removal that schedlab does not own.
    #[error(
        "{} is not a cgroup of a schedlab process ({why}); it is left as it is",
        path.display()
    )]
    NotOurs {
        /// The path.
        path: PathBuf,
        /// Why not.
        why: String,
    },
    /// A cgroup still held tasks (or children) after the bounded wait.
    #[error(
        "{} could not be removed after {waited_ms} ms: {left}; kill those tasks and run any \
         schedlab command, which removes it",
        path.display()
    )]
    Busy {
        /// The cgroup.
        path: PathBuf,
        /// How long removal was retried, ms.
        waited_ms: u64,
        /// What was still in it.
        left: String,
    },
    /// A kernel file did not have the expected format.
    #[error("unexpected content in {file}: {detail}")]
    Parse {
        /// The file (or its kind, e.g. `/proc/self/mountinfo`).
        file: String,
        /// What was wrong.
        detail: String,
    },
    /// A v2 partition was refused by the kernel (`cpuset.cpus.partition` reads `root invalid`).
    #[error(
        "the kernel refused the cpuset partition at {}: {state}; the partition's CPUs must be \
         free of every other cgroup's exclusive CPUs and leave at least one CPU to the rest",
        path.display()
    )]
    PartitionInvalid {
        /// The group.
        path: PathBuf,
        /// What `cpuset.cpus.partition` reads.
        state: String,
    },
}

impl Error {
    /// A stable code for the error kind.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidValue { .. } => "cgroup.invalid-value",
            Error::Unavailable(u) => u.code(),
            Error::Io { .. } => "cgroup.io",
            Error::Exists { .. } => "cgroup.exists",
            Error::NotOurs { .. } => "cgroup.not-ours",
            Error::Busy { .. } => "cgroup.busy",
            Error::Parse { .. } => "cgroup.parse",
            Error::PartitionInvalid { .. } => "cgroup.partition-invalid",
        }
    }

    /// An invalid value.
    pub(crate) fn invalid(
        what: &'static str,
        value: impl Into<String>,
        why: crate::Invalid,
    ) -> Error {
        Error::InvalidValue {
            what,
            value: value.into(),
            why,
        }
    }

    /// A failed file operation, with a hint chosen from the error number.
    pub(crate) fn io(
        action: impl Into<String>,
        path: impl Into<PathBuf>,
        source: io::Error,
    ) -> Error {
        let hint = hint_for(&source).to_string();
        Error::Io {
            action: action.into(),
            path: path.into(),
            source,
            hint,
        }
    }
}

/// Linux error numbers the cgroup files answer with (the same on every Linux architecture
/// schedlab builds for; std names only some of them).
pub(crate) mod errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const ESRCH: i32 = 3;
    pub const EACCES: i32 = 13;
    pub const EBUSY: i32 = 16;
    pub const EEXIST: i32 = 17;
    pub const EINVAL: i32 = 22;
    pub const ENOSPC: i32 = 28;
    pub const ERANGE: i32 = 34;
    pub const ENOTEMPTY: i32 = 39;
    pub const EOPNOTSUPP: i32 = 95;
}

fn hint_for(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(errno::EPERM) | Some(errno::EACCES) => {
            "the kernel refused it: cgroups need root, and a real-time task can join a v1 cpu \
             group only if the group has cpu.rt_runtime_us > 0"
        }
        Some(errno::EINVAL) | Some(errno::ERANGE) => {
            "the kernel rejected the value (out of its range, or a child asking for more than its \
             parent allows)"
        }
        Some(errno::EBUSY) => "the cgroup is in use (it still has tasks or child cgroups)",
        Some(errno::ENOSPC) => "the cpuset has no CPUs or memory nodes yet",
        Some(errno::ESRCH) => "the task has exited",
        Some(errno::ENOENT) => "the file does not exist: this kernel lacks the setting",
        Some(errno::EOPNOTSUPP) => "the kernel does not support this here",
        _ => "see the system error",
    }
}
