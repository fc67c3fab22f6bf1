//! schedlab's CPU cgroup layer: detects where the cpu, cpuacct and cpuset controllers are
//! (cgroup v1 or v2), creates a process's groups and writes their settings through one
//! interface for both, reads their CPU figures, and leaves nothing behind.
//!
//! # For the consumer (spec → plan → run → store → report)
//!
//! **Detect** once per command: [`Capabilities::detect`]`(&`[`RealFs`]`)`.
//! [`Capabilities::lines`] gives one line per controller for `schedlab policies` and the
//! environment record (the value is also `Serialize`).
//!
//! **Spec / CLI.** [`flags`] parses `--cpu-weight 100:300,100:900`, `--cpu-max
//! 50ms/100ms,200ms/100ms,max`, `--cpu-idle 0,1`, `--cpuset 1,0:1` (`,` separates cells, `:`
//! groups, `+` CPUs within a list) into per-cell, per-group values;
//! [`flags::group_settings`] turns one cell's values into each group's [`GroupSettings`]
//! (a single value applies to every group). Values are checked types:
//! [`Weight`] (1..=10000), [`CpuMax`] (quota ≥ 1 ms, period 1 ms..=1 s), [`CpuList`],
//! [`Name`]. `--partition` marks every group with a cpuset as a partition.
//!
//! **Plan.** A cell's groups become a [`TrialSpec`] (label, [`GroupSpec`]s with
//! [`GroupSettings`], `threads` for thread tasks). [`TrialSpec::validate`] refuses values that
//! never work ([`Error::InvalidValue`], exit 2); [`TrialSpec::check`] says what this machine
//! cannot do as an [`Unavailable`] (stable [`Unavailable::code`], cause and remedy in its
//! text): the cell is skipped like a refused policy. [`TrialSpec::describe`] says in words what
//! will be written, with the v1 conversions.
//!
//! **Run.** Per process:
//! 1. `let needs = Needs::of(&trials)`; journal [`Session::plan_open`]`(&caps, &owner, &needs)`
//!    (the `MOUNT/schedlab-PID-START` parents) before [`Session::open`] creates them.
//! 2. Per trial: `let plan = session.plan_trial(&spec)?`; journal [`TrialPlan::paths`]; then
//!    `let trial = session.create_trial(plan)?`. If [`TrialPlan::root_settings`] is not empty
//!    (v1 partition: the root cpuset's `cpuset.sched_load_balance` = 0), the kernel-settings
//!    owner journals and applies it now, and [`Trial::partition_ready`] confirms it.
//! 3. Place tasks before their first timestamp: processes with [`Trial::add_process`]; thread
//!    tasks with [`Trial::add_host`] (the host process) and [`Trial::add_thread`] (each thread;
//!    v1 `tasks`, v2 threaded groups).
//! 4. Read [`Trial::stat`] per group before and after the measured region; [`CpuStat::since`]
//!    gives the trial's figures (`usage_ns`, `nr_periods`, `nr_throttled`, `throttled_ns`).
//! 5. Restore the root settings, then [`Trial::remove`] (tasks moved out to the hierarchy's
//!    root, directories removed bottom-up, EBUSY retried for [`remove::REMOVE_WAIT`]).
//!    At the end [`Session::close`]. Both also run when dropped (unwinding, early return).
//!
//! **Recovery** (the next command of any kind, after a SIGKILL): [`remove_recorded`] for the
//! journal's paths and [`remove_stale`] for every `schedlab-PID-START` tree of a dead owner;
//! both report each tree ([`StaleTree`]) so the command can say what it removed. The root
//! settings come back through the knob journal like every kernel setting.
//!
//! # Rules kept
//! - Only directories this process created are written to; an existing name is refused
//!   ([`Error::Exists`]), never adopted. Removal touches only `schedlab-PID-START` trees whose
//!   owner (pid and start time) is dead or is this process. Moving a task out writes the
//!   hierarchy root's `tasks`/`cgroup.procs`, which changes no setting.
//! - v1 RT group scheduling: groups that will hold FIFO/RR tasks get an RT budget (the RT
//!   time the root leaves free, shared equally), stated by `describe` ([`rt`]).
//! - No unsafe code, no system call beyond file operations; the file system is a trait
//!   ([`CgroupFs`]) so the v2 code also runs against a recorded tree ([`memfs::MemFs`]).
#![forbid(unsafe_code)]

mod apply;
pub mod detect;
pub mod error;
pub mod files;
pub mod flags;
pub mod fs;
pub mod invalid;
pub mod memfs;
pub mod mountinfo;
pub mod owner;
pub mod remove;
pub mod rt;
pub mod session;
pub mod spec;
pub mod stat;
pub mod trial;
pub mod value;

pub use detect::{Capabilities, Controller, Feature, Placement};
pub use error::{Error, Unavailable};
pub use files::{GroupFiles, StatFiles, TrialFiles};
pub use fs::{CgroupFs, RealFs};
pub use invalid::{CpuListFault, Invalid};
pub use mountinfo::Version;
pub use owner::OwnerId;
pub use remove::{remove_recorded, remove_stale, Removal, StaleTree};
pub use session::{RootSetting, Session, TrialPlan};
pub use spec::{GroupSettings, GroupSpec, Needs, TrialSpec};
pub use stat::CpuStat;
pub use trial::Trial;
pub use value::{CpuList, CpuMax, Name, Weight};
