//! Workloads: what a task does (cpu, io, mixed, periodic, programs, and the communicating
//! messaging, request and pipe), its size in units, and the loop a task runs.

pub mod calibrate;
pub mod comm;
pub mod cpu;
pub mod io;
pub mod matrix;
pub mod params;
pub mod periodic;
pub mod record;
pub mod request;

pub use comm::Links;
pub use cpu::{CpuKernel, CpuState, DEFAULT_FOOTPRINT_KIB};
pub use io::{IoFiles, IoMode, TrialDir, TrialDirRef};
pub use params::{Ipc, MessagingParams, RequestParams, Role};
pub use record::{HistKind, Recorder, TaskFigures};

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::os::fd::BorrowedFd;
use std::str::FromStr;

/// The family of a workload.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// CPU-bound: units of a CPU kernel.
    #[default]
    Cpu,
    /// I/O-bound: units are I/O operations.
    Io,
    /// Units of a CPU kernel with one I/O operation every `io_every` units.
    Mixed,
    /// Sleep to the next absolute period, record the wake-up latency, run busy work; units are periods.
    Periodic,
    /// Real programs, one task each, exec'd under the cell's policy.
    Command,
    /// Groups of senders and receivers over pipes or sockets (hackbench); units are loops.
    Messaging,
    /// Message threads waking workers with requests of CPU work (schbench); units are ns of
    /// its duration.
    Request,
    /// Two tasks passing a token over two pipes (perf bench sched pipe); units are round trips.
    Pipe,
}

impl WorkloadKind {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Cpu => "cpu",
            WorkloadKind::Io => "io",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Periodic => "periodic",
            WorkloadKind::Command => "command",
            WorkloadKind::Messaging => "messaging",
            WorkloadKind::Request => "request",
            WorkloadKind::Pipe => "pipe",
        }
    }

    /// Whether its tasks talk to each other (messaging, request, pipe): their number and roles
    /// come from the workload's parameters.
    pub fn communicates(self) -> bool {
        matches!(
            self,
            WorkloadKind::Messaging | WorkloadKind::Request | WorkloadKind::Pipe
        )
    }
}

impl FromStr for WorkloadKind {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(WorkloadKind::Cpu),
            "io" => Ok(WorkloadKind::Io),
            "mixed" | "mix" => Ok(WorkloadKind::Mixed),
            "periodic" => Ok(WorkloadKind::Periodic),
            "command" => Ok(WorkloadKind::Command),
            "messaging" => Ok(WorkloadKind::Messaging),
            "request" => Ok(WorkloadKind::Request),
            "pipe" => Ok(WorkloadKind::Pipe),
            _ => Err(CoreError::unknown(
                "workload",
                s,
                "cpu, io, mixed, periodic, command, messaging, request, pipe",
            )),
        }
    }
}

/// A workload with all its parameters, as stored with a cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Workload {
    /// The family.
    pub kind: WorkloadKind,
    /// CPU kernel (cpu and mixed).
    pub cpu_kernel: CpuKernel,
    /// I/O operation (io and mixed).
    pub io_mode: IoMode,
    /// Bytes per I/O operation.
    pub io_block_bytes: u64,
    /// Size of the input file for sync-copy, in bytes (rewound at its end).
    pub io_input_bytes: u64,
    /// Mixed: one I/O operation every this many CPU units.
    pub io_every: u64,
    /// Periodic: the period, ns.
    pub period_ns: u64,
    /// Periodic: busy work per period; request: CPU work per request (CPU time alone), ns.
    pub run_ns: u64,
    /// Command: the programs, in start order (task i runs `commands[i]`).
    pub commands: Vec<Command>,
    /// Command: delay between starting one program and the next, ns.
    pub start_gap_ns: u64,
    /// Command: stop every program this long after release (0: run them to completion), ns.
    pub window_ns: u64,
    /// Messaging: groups, senders and receivers, message size, transport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messaging: Option<MessagingParams>,
    /// Request: message threads, workers, rate, per-CPU lock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestParams>,
    /// Matrix kernel (request work, or cpu/mixed with `cpu_kernel = "matrix"`): the cache
    /// footprint, KiB.
    #[serde(
        default = "default_footprint",
        skip_serializing_if = "is_default_footprint"
    )]
    pub footprint_kib: u64,
    /// Who a command workload's programs run as, with only the spec's environment: set by a
    /// worker for the queued runs it admits (`--command-user`), never by a spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
}

/// The unprivileged user a worker runs queued programs as (`--command-user`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sandbox {
    /// The user's name, for messages.
    pub user: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary gid (the only group the program keeps).
    pub gid: u32,
}

fn default_footprint() -> u64 {
    DEFAULT_FOOTPRINT_KIB
}

fn is_default_footprint(kib: &u64) -> bool {
    *kib == DEFAULT_FOOTPRINT_KIB
}

/// One real program run as a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Command {
    /// Short name for labels and reports (default: the program's file name), e.g. "browser".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Program and arguments (the program is looked up in PATH).
    pub argv: Vec<String>,
    /// Working directory (default: the trial directory, removed after the trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables, e.g. `env = { LC_ALL = "C" }`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
}

impl Command {
    /// The command's name, or else its program's file name, for labels.
    pub fn name(&self) -> &str {
        if let Some(n) = &self.name {
            return n;
        }
        self.argv
            .first()
            .map_or("?", |a| a.rsplit('/').next().unwrap_or(a))
    }
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Cpu,
            cpu_kernel: CpuKernel::Pi,
            io_mode: IoMode::SyncCopy,
            io_block_bytes: 1024,
            io_input_bytes: 100 * 1024,
            io_every: 1000,
            period_ns: 1_000_000,
            run_ns: 100_000,
            commands: Vec::new(),
            start_gap_ns: 0,
            window_ns: 0,
            messaging: None,
            request: None,
            footprint_kib: DEFAULT_FOOTPRINT_KIB,
            sandbox: None,
        }
    }
}

impl Workload {
    /// The CPU kernel's name, with its footprint for the matrix kernel (`matrix/256KiB`).
    fn kernel_label(&self) -> String {
        match self.cpu_kernel {
            CpuKernel::Matrix => format!("matrix/{}KiB", self.footprint_kib),
            k => k.name().to_string(),
        }
    }

    /// A short label, e.g. `cpu:pi`, `io:sync-copy`, `mixed:pi/1000`, `messaging:pipe/f20/100B`,
    /// `request:m1/1000us/256KiB`, `pipe`. The parameters that set the task count (groups,
    /// workers) are not in it: the cell's task count tells them.
    pub fn label(&self) -> String {
        match self.kind {
            WorkloadKind::Cpu => format!("cpu:{}", self.kernel_label()),
            WorkloadKind::Io => format!("io:{}", self.io_mode.name()),
            WorkloadKind::Mixed => format!(
                "mixed:{}+{}/{}",
                self.kernel_label(),
                self.io_mode.name(),
                self.io_every
            ),
            WorkloadKind::Messaging => {
                let m = self.messaging.unwrap_or_default();
                format!(
                    "messaging:{}/f{}/{}B{}",
                    m.ipc.name(),
                    m.fds,
                    m.data_size,
                    if m.latency { "+latency" } else { "" }
                )
            }
            WorkloadKind::Request => {
                let r = self.request.unwrap_or_default();
                let mut s = format!(
                    "request:m{}/{}us/{}KiB",
                    r.message_threads,
                    self.run_ns / 1000,
                    self.footprint_kib
                );
                if r.rps > 0 {
                    s += &format!("/rps{}", r.rps);
                }
                if !r.lock {
                    s += "/nolock";
                }
                s
            }
            WorkloadKind::Pipe => "pipe".into(),
            WorkloadKind::Periodic => format!(
                "periodic:{}us/{}us",
                self.period_ns / 1000,
                self.run_ns / 1000
            ),
            WorkloadKind::Command => {
                let names: Vec<&str> = self.commands.iter().map(Command::name).collect();
                format!("command:{}", names.join(","))
            }
        }
    }

    /// Units per second of a workload whose speed is not calibrated: periodic (one period per
    /// period), a program (one unit), request (units are ns of its duration), and a rough
    /// figure for messaging (5 us per message, `fds` messages per loop of a task) and pipe
    /// (20 us per round trip), which only size deadlines and estimates; None: calibrated.
    pub fn nominal_rate(&self) -> Option<f64> {
        Some(match self.kind {
            WorkloadKind::Periodic => 1e9 / self.period_ns.max(1) as f64,
            WorkloadKind::Command => 1.0,
            WorkloadKind::Request => 1e9,
            WorkloadKind::Messaging => {
                let fds = self.messaging.unwrap_or_default().fds.max(1) as f64;
                1e9 / (5_000.0 * fds)
            }
            WorkloadKind::Pipe => 1e9 / 20_000.0,
            WorkloadKind::Cpu | WorkloadKind::Io | WorkloadKind::Mixed => return None,
        })
    }

    /// Whether the workload needs files in a trial directory.
    pub fn needs_files(&self) -> bool {
        matches!(self.kind, WorkloadKind::Io | WorkloadKind::Mixed)
            && self.io_mode == IoMode::SyncCopy
    }

    /// Whether a trial needs a scratch directory under the I/O directory: for its files, or
    /// as the starting directory of its programs.
    pub fn needs_trial_dir(&self) -> bool {
        self.needs_files() || self.kind == WorkloadKind::Command
    }

    /// Bytes one task's sync-copy I/O writes in `units` units (None: it writes no file).
    pub fn bytes_written(&self, units: u64) -> Option<u64> {
        if !self.needs_files() {
            return None;
        }
        let ops = match self.kind {
            WorkloadKind::Mixed => units / self.io_every.max(1),
            _ => units,
        };
        Some(ops.saturating_mul(self.io_block_bytes))
    }

    /// The most units whose sync-copy I/O writes at most `bytes` ([`Workload::bytes_written`]).
    pub fn units_for_bytes(&self, bytes: u64) -> u64 {
        let ops = bytes / self.io_block_bytes.max(1);
        match self.kind {
            WorkloadKind::Mixed => ops.saturating_mul(self.io_every.max(1)),
            _ => ops,
        }
    }

    /// Checks the parameters; the message names the bad parameter.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.io_block_bytes == 0 || self.io_block_bytes > 64 * 1024 * 1024 {
            return Err(CoreError::IoBlock {
                bytes: self.io_block_bytes,
            });
        }
        if self.io_every == 0 {
            return Err(CoreError::IoEvery);
        }
        // Work longer than the period is allowed: rt-app's overload, where every period misses.
        if self.kind == WorkloadKind::Periodic && self.period_ns < 10_000 {
            return Err(CoreError::PeriodTooShort {
                period_ns: self.period_ns,
            });
        }
        match self.comm_fault() {
            Some(f) => Err(CoreError::Workload(f)),
            None => Ok(()),
        }
    }
}

/// The prepared work of one task: opened before the measured region, run inside it.
pub struct TaskWork<'a> {
    kind: WorkloadKind,
    kernel: CpuKernel,
    every: u64,
    units: u64,
    cpu: CpuState,
    files: Option<IoFiles>,
    period_ns: u64,
    run_units: u64,
    rec: Recorder,
    role: Option<Role>,
    links: Links<'a>,
    /// Messaging: one message, written or read in place; its first 8 bytes carry the send time
    /// when `stamp`.
    buf: Vec<u8>,
    stamp: bool,
    /// Messaging receivers: messages to read (senders x loops).
    messages: u64,
    request: Option<request::RequestTask>,
}

impl<'a> TaskWork<'a> {
    /// Opens files and allocates buffers for `units` units of `w`; `run_units` are the CPU
    /// units per period of a periodic workload (per request of a request workload). Sync-copy
    /// I/O reads the input of the trial directory `dir` and writes task `index`'s output there
    /// ([`IoFiles::open`]). A communicating workload's task `index` plays
    /// [`Workload::role`]`(index)` over `links`.
    pub fn prepare(
        w: &Workload,
        units: u64,
        run_units: u64,
        seed: u64,
        dir: Option<BorrowedFd>,
        index: usize,
        links: Links<'a>,
    ) -> std::io::Result<TaskWork<'a>> {
        let files = if matches!(w.kind, WorkloadKind::Io | WorkloadKind::Mixed) {
            Some(IoFiles::open(
                w.io_mode,
                dir,
                index,
                w.io_block_bytes as usize,
            )?)
        } else {
            None
        };
        let role = w.role(index);
        let mut cpu = CpuState::new(seed);
        let worker = matches!(role, Some(Role::Worker { .. }));
        if w.cpu_kernel == CpuKernel::Matrix || worker {
            cpu.prepare_matrix(w.footprint_kib)?;
        }
        let m = w.messaging.unwrap_or_default();
        Ok(TaskWork {
            kind: w.kind,
            kernel: w.cpu_kernel,
            every: w.io_every.max(1),
            units,
            cpu,
            files,
            period_ns: w.period_ns,
            run_units,
            rec: Recorder::for_workload(w),
            role,
            links,
            buf: match w.kind {
                WorkloadKind::Messaging => vec![b'-'; m.data_size as usize],
                _ => Vec::new(),
            },
            stamp: m.latency,
            messages: units.saturating_mul(m.fds as u64),
            request: request_task(w, role, run_units),
        })
    }

    /// What the task recorded besides its counters (histograms, bytes, misses).
    pub fn recorder(&self) -> &Recorder {
        &self.rec
    }

    /// Its role in a communicating workload.
    pub fn role(&self) -> Option<Role> {
        self.role
    }

    /// Runs all units; returns how many were completed (fewer only if an I/O operation
    /// failed). Units are messages sent or received whole (messaging), round trips (pipe),
    /// requests handed out or completed (request), periods (periodic).
    #[inline]
    pub fn run(&mut self) -> u64 {
        match self.kind {
            WorkloadKind::Cpu => {
                self.cpu.run(self.kernel, self.units);
                self.units
            }
            WorkloadKind::Io => {
                let files = self.files.as_mut().expect("io files prepared");
                for done in 0..self.units {
                    if files.op().is_err() {
                        return done;
                    }
                }
                self.units
            }
            WorkloadKind::Mixed => {
                let files = self.files.as_mut().expect("io files prepared");
                let mut done = 0;
                while done < self.units {
                    let chunk = self.every.min(self.units - done);
                    self.cpu.run(self.kernel, chunk);
                    done += chunk;
                    if chunk == self.every && files.op().is_err() {
                        return done;
                    }
                }
                done
            }
            // A command task execs its program instead of running units.
            WorkloadKind::Command => 0,
            WorkloadKind::Periodic => periodic::run(
                &mut self.cpu,
                self.kernel,
                self.run_units,
                self.period_ns,
                self.units,
                &mut self.rec,
            ),
            WorkloadKind::Messaging | WorkloadKind::Pipe | WorkloadKind::Request => self.talk(),
        }
    }

    /// The communicating workloads' part of [`TaskWork::run`].
    #[inline]
    fn talk(&mut self) -> u64 {
        let l = &self.links;
        match (self.role, &self.request) {
            (Some(Role::Sender { .. }), _) => comm::send(
                &l.write,
                self.units,
                &mut self.buf,
                self.stamp,
                &mut self.rec,
            ),
            (Some(Role::Receiver { .. }), _) => match l.read {
                Some(fd) => {
                    comm::receive(fd, self.messages, &mut self.buf, self.stamp, &mut self.rec)
                }
                None => 0,
            },
            (Some(r @ (Role::Ping | Role::Pong)), _) => match (l.read, l.write.first()) {
                (Some(rd), Some(&wr)) => comm::ping_pong(rd, wr, self.units, r == Role::Ping),
                _ => 0,
            },
            (Some(Role::Messenger { .. }), Some(t)) if !l.words.is_empty() => {
                t.messenger(l.words, self.units, &mut self.rec)
            }
            (Some(Role::Worker { .. }), Some(t)) if !l.words.is_empty() => {
                t.worker(l.words, l.cpu_locks, &mut self.cpu, &mut self.rec)
            }
            _ => 0,
        }
    }

    /// Runs `chunk` units at a time until `stop` returns true (antagonists); returns units done.
    pub fn run_until(&mut self, chunk: u64, stop: impl Fn() -> bool) -> u64 {
        let mut done = 0;
        self.units = chunk.max(1);
        while !stop() {
            done += self.run();
        }
        done
    }
}

/// How task `role` of a request workload `w` works (None for other workloads).
fn request_task(w: &Workload, role: Option<Role>, run_units: u64) -> Option<request::RequestTask> {
    let r = w.request?;
    let (m, wk) = (r.message_threads as usize, r.workers as usize);
    let (me, messenger) = match role? {
        Role::Messenger { index } => (index as usize, index as usize),
        Role::Worker { messenger, index } => (
            m + messenger as usize * wk + index as usize,
            messenger as usize,
        ),
        _ => return None,
    };
    Some(request::RequestTask {
        me,
        messenger,
        workers: m + messenger * wk..m + (messenger + 1) * wk,
        interval_ns: match r.rps {
            0 => 0,
            rps => (1e9 * m as f64 / rps as f64).max(1.0) as u64,
        },
        run_units,
        lock: r.lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_work_does_one_io_per_io_every_units() {
        let base = tempfile::tempdir().unwrap();
        let dir = TrialDir::create(base.path(), "m", 4096).unwrap();
        let w = Workload {
            kind: WorkloadKind::Mixed,
            io_every: 10,
            io_block_bytes: 16,
            ..Workload::default()
        };
        let mut t = TaskWork::prepare(&w, 55, 0, 1, Some(dir.fd()), 0, Links::default()).unwrap();
        assert_eq!(t.run(), 55);
        // 5 full chunks of 10 units, each followed by one 16-byte write; the last 5 units write nothing.
        let out = dir.path().join(io::output_file(0));
        assert_eq!(std::fs::metadata(out).unwrap().len(), 5 * 16);
    }

    #[test]
    fn io_work_counts_operations() {
        let base = tempfile::tempdir().unwrap();
        let dir = TrialDir::create(base.path(), "i", 4096).unwrap();
        let w = Workload {
            kind: WorkloadKind::Io,
            io_block_bytes: 512,
            ..Workload::default()
        };
        let mut t = TaskWork::prepare(&w, 12, 0, 1, Some(dir.fd()), 1, Links::default()).unwrap();
        assert_eq!(t.run(), 12);
        let out = dir.path().join(io::output_file(1));
        assert_eq!(std::fs::metadata(out).unwrap().len(), 12 * 512);
    }

    #[test]
    fn labels_name_the_parameters() {
        let w = Workload {
            kind: WorkloadKind::Mixed,
            io_every: 1,
            ..Workload::default()
        };
        assert_eq!(w.label(), "mixed:pi+sync-copy/1");
        assert!(!Workload::default().needs_files());
        assert_eq!(
            Workload { io_every: 0, ..w }.validate(),
            Err(CoreError::IoEvery)
        );
    }
}
