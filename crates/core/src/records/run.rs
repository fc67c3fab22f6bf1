//! How a stored run stands: its status, as the store keeps it and every command reads it.

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The status of a stored run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Submitted to the work queue; no worker has stored a trial of it yet.
    Queued,
    /// Its runner is storing trials (or died without saying so: see the store's `Runner`).
    #[default]
    Running,
    /// Every planned trial ran.
    Done,
    /// Stopped before its end (a signal, or its runner is gone).
    Interrupted,
    /// Stopped by an error.
    Failed,
}

impl RunStatus {
    /// Every status, in the order of [`RunStatus::name`]s' list.
    pub const ALL: [RunStatus; 5] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Done,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ];

    /// The name stored in the database and shown.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunStatus {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<RunStatus, CoreError> {
        RunStatus::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                CoreError::unknown(
                    "run status",
                    s,
                    "queued, running, done, interrupted, failed",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_name_and_nothing_else_does() {
        for s in RunStatus::ALL {
            assert_eq!(s.name().parse::<RunStatus>().unwrap(), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert!("Done".parse::<RunStatus>().is_err());
        assert!("ok".parse::<RunStatus>().is_err());
    }
}
