//! Parameters of the communicating workloads (messaging, request, pipe), the role each task of
//! them plays, and their checks (each message names the parameter's key).
//!
//! - `messaging` (hackbench, `perf bench sched messaging`): `groups` groups of `fds` senders and
//!   `fds` receivers; every sender writes `loops` messages of `data_size` bytes to every
//!   receiver of its group over one pipe or one AF_UNIX stream socketpair per receiver. Tasks
//!   are numbered group by group, receivers first: task `g*2F + j` is receiver j of group g,
//!   task `g*2F + F + j` sender j. The size of a task is `loops`.
//! - `request` (schbench): `message_threads` message threads, each with `workers` workers;
//!   tasks 0..M are the message threads, then the workers of thread 0, of thread 1, ... A task's
//!   size is the run's length in ns (`duration`).
//! - `pipe` (`perf bench sched pipe`): task 0 writes a 4-byte token and waits for it to come
//!   back, task 1 echoes it; the size is the number of round trips (`loops`).

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// Most bytes one message may have (1 MiB).
pub const MAX_DATA_SIZE: u32 = 1 << 20;
/// Largest message whose latency can be recorded: its bytes must arrive whole (PIPE_BUF).
pub const MAX_STAMPED_SIZE: u32 = 4096;
/// Largest cache footprint of the matrix kernel, KiB (1 GiB).
pub const MAX_FOOTPRINT_KIB: u64 = 1 << 20;
/// Requests a worker may have waiting in RPS mode; a request beyond that is dropped (schbench's
/// 128).
pub const REQUEST_QUEUE: usize = 128;

/// The kernel object messages travel through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ipc {
    /// `socketpair(AF_UNIX, SOCK_STREAM)` (hackbench's default).
    #[default]
    Socket,
    /// `pipe()` (hackbench -p).
    Pipe,
}

impl Ipc {
    /// The name used in specs, flags and labels.
    pub fn name(self) -> &'static str {
        match self {
            Ipc::Socket => "socket",
            Ipc::Pipe => "pipe",
        }
    }
}

impl FromStr for Ipc {
    type Err = crate::CoreError;
    fn from_str(s: &str) -> Result<Self, crate::CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "socket" | "socketpair" => Ok(Ipc::Socket),
            "pipe" => Ok(Ipc::Pipe),
            _ => Err(crate::CoreError::unknown("ipc", s, "socket, pipe")),
        }
    }
}

/// The hackbench model's parameters (`loops` is the task size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MessagingParams {
    /// Groups of senders and receivers (hackbench -g).
    pub groups: u32,
    /// Senders and receivers per group (hackbench -f).
    pub fds: u32,
    /// Bytes per message (hackbench -s).
    pub data_size: u32,
    /// Pipes or sockets.
    pub ipc: Ipc,
    /// Record every message's latency (write to read; the message carries the send time in its
    /// first 8 bytes): schedlab's extra, not hackbench's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency: bool,
}

impl Default for MessagingParams {
    fn default() -> Self {
        MessagingParams {
            groups: 10,
            fds: 20,
            data_size: 100,
            ipc: Ipc::Socket,
            latency: false,
        }
    }
}

/// The schbench model's parameters (CPU work per request is the workload's `run_ns`; the
/// task size is the duration in ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RequestParams {
    /// Message threads (schbench -m).
    pub message_threads: u32,
    /// Workers per message thread (schbench -t).
    pub workers: u32,
    /// Requests per second over all message threads, 0: a closed loop (schbench -R).
    #[serde(default)]
    pub rps: u32,
    /// Workers take their CPU's spin lock for the whole of a request's CPU work, as schbench
    /// does unless given -L: a preempted holder makes every other worker on that CPU spin.
    pub lock: bool,
}

impl Default for RequestParams {
    fn default() -> Self {
        RequestParams {
            message_threads: 1,
            workers: 2,
            rps: 0,
            lock: true,
        }
    }
}

/// What one task of a communicating workload does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// messaging: reads from its own channel (group, index in the group).
    Receiver { group: u32, index: u32 },
    /// messaging: writes to every receiver of its group.
    Sender { group: u32, index: u32 },
    /// request: hands requests to its workers (index of the message thread).
    Messenger { index: u32 },
    /// request: serves its message thread's requests.
    Worker { messenger: u32, index: u32 },
    /// pipe: sends the token and times the round trips.
    Ping,
    /// pipe: echoes the token.
    Pong,
}

impl Role {
    /// The role's name as stored (`tasks.workload_role`).
    pub fn name(self) -> &'static str {
        match self {
            Role::Receiver { .. } => "receiver",
            Role::Sender { .. } => "sender",
            Role::Messenger { .. } => "messenger",
            Role::Worker { .. } => "worker",
            Role::Ping => "ping",
            Role::Pong => "pong",
        }
    }
}

/// A parameter of a communicating workload (messaging, request) out of range
/// ([`crate::CoreError::Workload`]); shown after its spec key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CommFault {
    /// messaging: no groups.
    #[error("the number of groups must be at least 1, got 0")]
    NoGroups,
    /// messaging: no senders and receivers per group.
    #[error("the number of senders and receivers per group must be at least 1, got 0")]
    NoFds,
    /// messaging: a message size outside 1..=[`MAX_DATA_SIZE`].
    #[error("{bytes} bytes is not a usable message size (1..={MAX_DATA_SIZE})")]
    DataSize {
        /// The size given, bytes.
        bytes: u32,
    },
    /// messaging with latency: a message size that cannot carry a send time whole.
    #[error("recording message latency needs messages of 8..={MAX_STAMPED_SIZE} bytes (a send time fits, the message arrives whole), got {bytes}")]
    StampedSize {
        /// The size given, bytes.
        bytes: u32,
    },
    /// request: no message threads.
    #[error("must be at least 1, got 0")]
    NoMessageThreads,
    /// request: no workers per message thread.
    #[error("must be at least 1, got 0")]
    NoWorkers,
    /// request: a cache footprint outside 1..=[`MAX_FOOTPRINT_KIB`] KiB.
    #[error("{kib} KiB is not a usable cache footprint (1..={MAX_FOOTPRINT_KIB} KiB)")]
    Footprint {
        /// The footprint given, KiB.
        kib: u64,
    },
    /// request: no CPU work per request.
    #[error("the CPU work per request must be above 0")]
    NoRun,
}

impl CommFault {
    /// The parameter's spec key.
    pub fn key(self) -> &'static str {
        match self {
            CommFault::NoGroups => "groups",
            CommFault::NoFds => "fds",
            CommFault::DataSize { .. } | CommFault::StampedSize { .. } => "data_size",
            CommFault::NoMessageThreads => "message_threads",
            CommFault::NoWorkers => "workers",
            CommFault::Footprint { .. } => "footprint",
            CommFault::NoRun => "run",
        }
    }
}

/// Task counts and roles of the communicating workloads, and the checks of their parameters.
impl super::Workload {
    /// The number of tasks the workload itself fixes (messaging 2·groups·fds, request
    /// message_threads·(1 + workers), pipe 2), whatever the tasks axis says; None for the others.
    pub fn fixed_tasks(&self) -> Option<u64> {
        use super::WorkloadKind as K;
        match self.kind {
            K::Messaging => {
                let m = self.messaging.unwrap_or_default();
                Some(2 * m.groups as u64 * m.fds as u64)
            }
            K::Request => {
                let r = self.request.unwrap_or_default();
                Some(r.message_threads as u64 * (1 + r.workers as u64))
            }
            K::Pipe => Some(2),
            _ => None,
        }
    }

    /// The role of task `i` (None for workloads without roles, or past the last task).
    pub fn role(&self, i: usize) -> Option<Role> {
        use super::WorkloadKind as K;
        let i = i as u64;
        if i >= self.fixed_tasks()? {
            return None;
        }
        Some(match self.kind {
            K::Messaging => {
                let f = self.messaging.unwrap_or_default().fds as u64;
                let (group, k) = ((i / (2 * f)) as u32, i % (2 * f));
                match k < f {
                    true => Role::Receiver {
                        group,
                        index: k as u32,
                    },
                    false => Role::Sender {
                        group,
                        index: (k - f) as u32,
                    },
                }
            }
            K::Request => {
                let r = self.request.unwrap_or_default();
                let m = r.message_threads as u64;
                match i < m {
                    true => Role::Messenger { index: i as u32 },
                    false => Role::Worker {
                        messenger: ((i - m) / r.workers as u64) as u32,
                        index: ((i - m) % r.workers as u64) as u32,
                    },
                }
            }
            K::Pipe if i == 0 => Role::Ping,
            _ => Role::Pong,
        })
    }

    /// Checks the parameters of a communicating workload; `Err((key, message))` names the
    /// parameter's spec key and says what is wrong ([`CommFault`] as text, for the spec stage's
    /// positioned problems).
    pub fn check_comm(&self) -> Result<(), (&'static str, String)> {
        match self.comm_fault() {
            Some(f) => Err((f.key(), f.to_string())),
            None => Ok(()),
        }
    }

    /// What is wrong with the parameters of a communicating workload, if anything.
    pub fn comm_fault(&self) -> Option<CommFault> {
        use super::WorkloadKind as K;
        match self.kind {
            K::Messaging => {
                let m = self.messaging.unwrap_or_default();
                if m.groups == 0 {
                    return Some(CommFault::NoGroups);
                }
                if m.fds == 0 {
                    return Some(CommFault::NoFds);
                }
                if m.data_size == 0 || m.data_size > MAX_DATA_SIZE {
                    return Some(CommFault::DataSize { bytes: m.data_size });
                }
                if m.latency && !(8..=MAX_STAMPED_SIZE).contains(&m.data_size) {
                    return Some(CommFault::StampedSize { bytes: m.data_size });
                }
                None
            }
            K::Request => {
                let r = self.request.unwrap_or_default();
                if r.message_threads == 0 {
                    return Some(CommFault::NoMessageThreads);
                }
                if r.workers == 0 {
                    return Some(CommFault::NoWorkers);
                }
                if self.footprint_kib == 0 || self.footprint_kib > MAX_FOOTPRINT_KIB {
                    return Some(CommFault::Footprint {
                        kib: self.footprint_kib,
                    });
                }
                if self.run_ns == 0 {
                    return Some(CommFault::NoRun);
                }
                None
            }
            _ => None,
        }
    }

    /// File descriptors one process of a trial holds for its channels at most: messaging
    /// threads share one process, which holds every group's channels (2 per receiver); a
    /// process of the process kind holds only its own group's (its host creates a group's
    /// channels just before forking that group, as hackbench does, and closes them after).
    pub fn channel_fds(&self, threads: bool) -> u64 {
        match self.kind {
            super::WorkloadKind::Messaging => {
                let m = self.messaging.unwrap_or_default();
                let group = 2 * m.fds as u64;
                match threads {
                    true => group * m.groups as u64,
                    false => group,
                }
            }
            super::WorkloadKind::Pipe => 4,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Workload, WorkloadKind};
    use super::*;

    fn messaging(groups: u32, fds: u32) -> Workload {
        Workload {
            kind: WorkloadKind::Messaging,
            messaging: Some(MessagingParams {
                groups,
                fds,
                ..MessagingParams::default()
            }),
            ..Workload::default()
        }
    }

    #[test]
    fn messaging_tasks_are_numbered_group_by_group_receivers_first() {
        let w = messaging(2, 3);
        assert_eq!(w.fixed_tasks(), Some(12));
        let roles: Vec<Role> = (0..12).map(|i| w.role(i).unwrap()).collect();
        assert_eq!(roles[0], Role::Receiver { group: 0, index: 0 });
        assert_eq!(roles[3], Role::Sender { group: 0, index: 0 });
        assert_eq!(roles[6], Role::Receiver { group: 1, index: 0 });
        assert_eq!(roles[11], Role::Sender { group: 1, index: 2 });
        assert_eq!(w.role(12), None);
        assert_eq!(w.channel_fds(true), 12);
        assert_eq!(w.channel_fds(false), 6);
    }

    #[test]
    fn request_tasks_are_message_threads_then_their_workers() {
        let w = Workload {
            kind: WorkloadKind::Request,
            request: Some(RequestParams {
                message_threads: 2,
                workers: 3,
                ..RequestParams::default()
            }),
            ..Workload::default()
        };
        assert_eq!(w.fixed_tasks(), Some(8));
        assert_eq!(w.role(1), Some(Role::Messenger { index: 1 }));
        assert_eq!(
            w.role(2),
            Some(Role::Worker {
                messenger: 0,
                index: 0
            })
        );
        assert_eq!(
            w.role(7),
            Some(Role::Worker {
                messenger: 1,
                index: 2
            })
        );
        let pipe = Workload {
            kind: WorkloadKind::Pipe,
            ..Workload::default()
        };
        assert_eq!(
            (pipe.role(0), pipe.role(1)),
            (Some(Role::Ping), Some(Role::Pong))
        );
        assert_eq!(Workload::default().role(0), None);
    }

    #[test]
    fn impossible_parameters_name_their_key() {
        assert_eq!(messaging(0, 20).check_comm().unwrap_err().0, "groups");
        assert_eq!(messaging(1, 0).check_comm().unwrap_err().0, "fds");
        let mut w = messaging(1, 1);
        w.messaging.as_mut().unwrap().latency = true;
        w.messaging.as_mut().unwrap().data_size = 4;
        assert_eq!(w.check_comm().unwrap_err().0, "data_size");
        let r = Workload {
            kind: WorkloadKind::Request,
            request: Some(RequestParams {
                workers: 0,
                ..RequestParams::default()
            }),
            ..Workload::default()
        };
        assert_eq!(r.check_comm().unwrap_err().0, "workers");
        assert!(messaging(1, 1).check_comm().is_ok());
        assert_eq!(w.comm_fault(), Some(CommFault::StampedSize { bytes: 4 }));
        assert_eq!(
            crate::CoreError::Workload(CommFault::StampedSize { bytes: 4 }).to_string(),
            "data_size: recording message latency needs messages of 8..=4096 bytes (a send time fits, the message arrives whole), got 4"
        );
        assert_eq!(
            w.check_comm(),
            Err(("data_size", CommFault::StampedSize { bytes: 4 }.to_string()))
        );
        assert_eq!(
            messaging(0, 20).validate(),
            Err(crate::CoreError::Workload(CommFault::NoGroups))
        );
        assert_eq!(
            crate::CoreError::Workload(CommFault::NoFds).to_string(),
            "fds: the number of senders and receivers per group must be at least 1, got 0"
        );
        let big = messaging(1, 1).messaging.map(|m| MessagingParams {
            data_size: MAX_DATA_SIZE + 1,
            ..m
        });
        let big = Workload {
            messaging: big,
            ..messaging(1, 1)
        };
        assert_eq!(
            big.comm_fault(),
            Some(CommFault::DataSize {
                bytes: MAX_DATA_SIZE + 1
            })
        );
        assert_eq!(
            crate::CoreError::Workload(big.comm_fault().unwrap()).to_string(),
            "data_size: 1048577 bytes is not a usable message size (1..=1048576)"
        );
        assert_eq!(r.comm_fault(), Some(CommFault::NoWorkers));
        assert_eq!(
            crate::CoreError::Workload(CommFault::NoWorkers).to_string(),
            "workers: must be at least 1, got 0"
        );
        let no_run = Workload {
            run_ns: 0,
            ..Workload {
                request: Some(RequestParams::default()),
                ..r.clone()
            }
        };
        assert_eq!(
            crate::CoreError::Workload(no_run.comm_fault().unwrap()).to_string(),
            "run: the CPU work per request must be above 0"
        );
        assert_eq!(
            crate::CoreError::Workload(CommFault::Footprint { kib: 0 }).to_string(),
            "footprint: 0 KiB is not a usable cache footprint (1..=1048576 KiB)"
        );
        assert_eq!("socketpair".parse::<Ipc>(), Ok(Ipc::Socket));
        let e = "tcp".parse::<Ipc>().unwrap_err();
        assert_eq!(e, crate::CoreError::unknown("ipc", "tcp", "socket, pipe"));
        assert_eq!(e.to_string(), "unknown ipc 'tcp'; accepted: socket, pipe");
    }
}
