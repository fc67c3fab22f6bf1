//! The vocabulary of a cell: how tasks are created, how they start, how much work they do.

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// How a task is created.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    /// A forked process: the default.
    #[default]
    Process,
    /// A thread of one host process.
    Thread,
}

impl TaskKind {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            TaskKind::Process => "process",
            TaskKind::Thread => "thread",
        }
    }
}

impl FromStr for TaskKind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "process" | "processes" | "fork" => Ok(TaskKind::Process),
            "thread" | "threads" | "pthread" => Ok(TaskKind::Thread),
            _ => Err(CoreError::unknown("task kind", s, "process, thread")),
        }
    }
}

/// How the tasks of a trial start.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum StartMode {
    /// All tasks created and configured, then released together: the default.
    #[default]
    Barrier,
    /// Created one after another, each starting at once (as the studies did).
    Staggered,
}

impl StartMode {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            StartMode::Barrier => "barrier",
            StartMode::Staggered => "staggered",
        }
    }
}

impl FromStr for StartMode {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "barrier" => Ok(StartMode::Barrier),
            "staggered" | "stagger" => Ok(StartMode::Staggered),
            _ => Err(CoreError::unknown("start mode", s, "barrier, staggered")),
        }
    }
}

/// How much work each task does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkSize {
    /// Time one task needs alone, in nanoseconds; turned into units by calibration.
    WorkNs(u64),
    /// An exact number of units (iterations or I/O operations).
    Iterations(u64),
}
