//! Who owns a `schedlab-PID-START` cgroup: the process id and its start time (clock ticks after
//! boot, `/proc/PID/stat` field 22), so that a reused pid is not taken for the owner. cgroups
//! vanish at reboot, so no boot id is needed.

use crate::error::{Error, ParseProblem};
use serde::Serialize;
use std::path::Path;

/// The prefix of every directory the layer creates directly under a hierarchy's mount.
pub const PREFIX: &str = "schedlab-";

/// A process that owns cgroups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct OwnerId {
    /// Process id.
    pub pid: u32,
    /// Start time, clock ticks after boot.
    pub start_ticks: u64,
}

impl OwnerId {
    /// This process.
    pub fn this_process() -> Result<OwnerId, Error> {
        let pid = std::process::id();
        let start_ticks = start_ticks(pid).ok_or_else(|| Error::Parse {
            file: format!("/proc/{pid}/stat"),
            detail: ParseProblem::NoStartTime,
        })?;
        Ok(OwnerId { pid, start_ticks })
    }

    /// The directory name `schedlab-PID-START`.
    pub fn dir_name(&self) -> String {
        format!("{PREFIX}{}-{}", self.pid, self.start_ticks)
    }

    /// The owner named by a directory name, if it is one of the layer's.
    pub fn from_dir_name(name: &str) -> Option<OwnerId> {
        let rest = name.strip_prefix(PREFIX)?;
        let (pid, start) = rest.split_once('-')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(pid) || !digits(start) {
            return None;
        }
        Some(OwnerId {
            pid: pid.parse().ok()?,
            start_ticks: start.parse().ok()?,
        })
    }

    /// Whether this very process still runs (same pid, same start time).
    pub fn alive(&self) -> bool {
        start_ticks(self.pid) == Some(self.start_ticks)
    }
}

/// A process's start time from `/proc/PID/stat`.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let text =
        std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    parse_start_ticks(&text)
}

/// Field 22 of a `/proc/PID/stat` line (the command may hold spaces and parentheses, so
/// fields are counted after the last `)`).
pub fn parse_start_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    // After ")" come field 3 (state) onwards; field 22 is the 20th of them.
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_field_22() {
        let line = "14858 (a b) c)) S 14857 14858 14858 0 -1 4194560 1049 0 0 0 1 2 0 0 20 0 1 0 \
                    7436541 8675328 973 18446744073709551615 1 1 0 0 0 0 65536 3686404 1266761467 \
                    0 0 0 17 1 0 0 0 0 0\n";
        assert_eq!(parse_start_ticks(line), Some(7_436_541));
        assert_eq!(parse_start_ticks("1 (x) S 0"), None);
    }

    #[test]
    fn names_round_trip_and_others_are_refused() {
        let o = OwnerId {
            pid: 42,
            start_ticks: 7,
        };
        assert_eq!(o.dir_name(), "schedlab-42-7");
        assert_eq!(OwnerId::from_dir_name("schedlab-42-7"), Some(o));
        for other in [
            "schedlab-42",
            "schedlab-x-7",
            "schedlab--7",
            "schedlab-1-2-3",
            "docker-1-2",
            "schedlab-1-2 ",
        ] {
            assert_eq!(OwnerId::from_dir_name(other), None, "{other}");
        }
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = OwnerId::this_process().unwrap();
        assert!(me.alive());
        let reused = OwnerId {
            start_ticks: me.start_ticks + 1,
            ..me
        };
        assert!(!reused.alive());
    }
}
