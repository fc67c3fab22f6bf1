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
    #[error("cannot {action} {}: {source}; {}", path.display(), hint_for(source))]
    Io {
        /// What was tried (e.g. `write 20000 to`).
        action: IoAction,
        /// The file or directory.
        path: PathBuf,
        /// The system's error (its errno chooses the hint shown).
        #[source]
        source: io::Error,
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
        why: NotOurs,
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
        left: Leftovers,
    },
    /// A kernel file did not have the expected format.
    #[error("unexpected content in {file}: {detail}")]
    Parse {
        /// The file (or its kind, e.g. `/proc/self/mountinfo`).
        file: String,
        /// What was wrong.
        detail: ParseProblem,
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

    /// A failed file operation (shown with a hint chosen from the error number).
    pub(crate) fn io(action: IoAction, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// What a failed file operation tried ([`Error::Io`]); shown before the path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IoAction {
    /// Reading a file.
    #[error("read")]
    Read,
    /// Listing a directory's child cgroups.
    #[error("list")]
    List,
    /// Creating a cgroup directory.
    #[error("create")]
    Create,
    /// Removing a cgroup directory.
    #[error("remove")]
    Remove,
    /// Clearing a setting back to its default.
    #[error("clear")]
    Clear,
    /// Writing a number (a task id, a budget in µs).
    #[error("write {0} to")]
    WriteNumber(u64),
    /// Writing a setting's value, shown quoted.
    #[error("write {0:?} to")]
    Write(String),
}

/// Why a path handed to removal is not schedlab's ([`Error::NotOurs`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOurs {
    /// It lies under no cgroup mount of this machine.
    #[error("not under a cgroup mount of this machine")]
    NotUnderMount,
    /// Its top directory is not named `schedlab-PID-START`.
    #[error("{name:?} is not a schedlab-PID-START directory")]
    NotOwnerDir {
        /// The top directory's name.
        name: String,
    },
    /// The process that made it still runs.
    #[error("its owner, process {pid}, still runs")]
    OwnerRuns {
        /// The owner's process id.
        pid: u32,
    },
}

/// What a cgroup that could not be removed still held ([`Error::Busy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftovers {
    /// The task ids in it.
    pub tasks: Vec<u32>,
    /// The names of its child cgroups.
    pub children: Vec<String>,
}

impl std::fmt::Display for Leftovers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.tasks.is_empty(), self.children.is_empty()) {
            (true, true) => f.write_str("nothing visible (a task may still be exiting)"),
            (false, true) => write!(f, "tasks {:?}", self.tasks),
            (true, false) => write!(f, "child cgroups {:?}", self.children),
            (false, false) => write!(
                f,
                "tasks {:?}, child cgroups {:?}",
                self.tasks, self.children
            ),
        }
    }
}

/// What was wrong with a kernel file's content ([`Error::Parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseProblem {
    /// A file holding one number held this text.
    #[error("{text:?} is not a number")]
    NotANumber {
        /// The text read.
        text: String,
    },
    /// A line of a `key value` file held something else.
    #[error("expected `key value`: {line:?}")]
    NotKeyValue {
        /// The line.
        line: String,
    },
    /// A process's stat file gave no start time.
    #[error("no start time")]
    NoStartTime,
    /// A line of a table (`/proc/self/mountinfo`, `/proc/cgroups`) that does not read.
    #[error("line {number}: {fault}: {line:?}")]
    Line {
        /// The line's number, from 1.
        number: usize,
        /// What is wrong with it.
        fault: LineFault,
        /// The line.
        line: String,
    },
}

/// What is wrong with one line of a kernel table ([`ParseProblem::Line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LineFault {
    /// mountinfo: no ` - ` between the mount's and the file system's fields.
    #[error("no ` - ` separator")]
    NoSeparator,
    /// mountinfo: fewer fields than a mount has.
    #[error("too few fields")]
    TooFewFields,
    /// mountinfo: the first field is no number.
    #[error("mount id is not a number")]
    MountIdNotNumber,
    /// /proc/cgroups: not 4 fields.
    #[error("expected 4 fields")]
    NotFourFields,
    /// /proc/cgroups: a field that must be a number is not.
    #[error("not a number")]
    NotANumber,
    /// /proc/cgroups: a hierarchy id beyond 32 bits.
    #[error("hierarchy id too large")]
    HierarchyTooLarge,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_shows_its_action_and_the_hint_of_its_errno() {
        let e = Error::io(
            IoAction::Write("max 100000".into()),
            "/sys/fs/cgroup/g/cpu.max",
            io::Error::from_raw_os_error(errno::EBUSY),
        );
        assert!(matches!(&e, Error::Io { action: IoAction::Write(v), .. } if v == "max 100000"));
        assert_eq!(
            e.to_string(),
            format!(
                "cannot write \"max 100000\" to /sys/fs/cgroup/g/cpu.max: {}; the cgroup is in use (it still has tasks or child cgroups)",
                io::Error::from_raw_os_error(errno::EBUSY)
            )
        );
        let e = Error::io(
            IoAction::WriteNumber(42),
            "/g/cgroup.procs",
            io::Error::from_raw_os_error(errno::ESRCH),
        );
        assert!(e
            .to_string()
            .starts_with("cannot write 42 to /g/cgroup.procs: "));
        assert!(e.to_string().ends_with("; the task has exited"));
        assert_eq!(IoAction::Read.to_string(), "read");
        assert_eq!(IoAction::Clear.to_string(), "clear");
    }

    #[test]
    fn not_ours_and_busy_hold_their_reasons() {
        let e = Error::NotOurs {
            path: "/sys/fs/cgroup/x".into(),
            why: NotOurs::NotOwnerDir { name: "x".into() },
        };
        assert_eq!(
            e.to_string(),
            "/sys/fs/cgroup/x is not a cgroup of a schedlab process (\"x\" is not a schedlab-PID-START directory); it is left as it is"
        );
        assert_eq!(
            NotOurs::OwnerRuns { pid: 7 }.to_string(),
            "its owner, process 7, still runs"
        );
        assert_eq!(
            NotOurs::NotUnderMount.to_string(),
            "not under a cgroup mount of this machine"
        );
        let left = |tasks: Vec<u32>, children: Vec<&str>| Leftovers {
            tasks,
            children: children.into_iter().map(String::from).collect(),
        };
        let e = Error::Busy {
            path: "/g".into(),
            waited_ms: 500,
            left: left(vec![3, 4], vec!["t0"]),
        };
        assert_eq!(
            e.to_string(),
            "/g could not be removed after 500 ms: tasks [3, 4], child cgroups [\"t0\"]; kill those tasks and run any schedlab command, which removes it"
        );
        assert_eq!(left(vec![3], vec![]).to_string(), "tasks [3]");
        assert_eq!(left(vec![], vec!["a"]).to_string(), "child cgroups [\"a\"]");
        assert_eq!(
            left(vec![], vec![]).to_string(),
            "nothing visible (a task may still be exiting)"
        );
    }

    #[test]
    fn parse_errors_hold_the_problem_and_its_line() {
        let e = crate::mountinfo::parse_proc_cgroups("#subsys_name\ncpu 1 x 1\n").unwrap_err();
        let Error::Parse { file, detail } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(file, "/proc/cgroups");
        assert_eq!(
            detail,
            &ParseProblem::Line {
                number: 2,
                fault: LineFault::NotANumber,
                line: "cpu 1 x 1".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "unexpected content in /proc/cgroups: line 2: not a number: \"cpu 1 x 1\""
        );
        let e = crate::stat::CpuStat::parse_v1("usage_usec 5\n", Some("x\n")).unwrap_err();
        assert!(
            matches!(&e, Error::Parse { detail: ParseProblem::NotANumber { text }, .. } if text == "x\n"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "unexpected content in cpuacct.usage: \"x\\n\" is not a number"
        );
        let e = crate::stat::CpuStat::parse_v2("usage_usec\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected content in cpu.stat: expected `key value`: \"usage_usec\""
        );
    }
}
