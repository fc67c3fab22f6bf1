//! Workloads: what a task does (cpu, io, mixed), its size in units, and the loop a task runs.

pub mod calibrate;
pub mod cpu;
pub mod io;
pub mod periodic;

pub use cpu::{CpuKernel, CpuState};
pub use io::{IoFiles, IoMode, TrialDir, TrialDirRef};

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::os::fd::BorrowedFd;
use std::str::FromStr;

/// The family of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// CPU-bound: units of a CPU kernel.
    Cpu,
    /// I/O-bound: units are I/O operations.
    Io,
    /// Units of a CPU kernel with one I/O operation every `io_every` units.
    Mixed,
    /// Sleep to the next absolute period, record the wake-up latency, run busy work; units are periods.
    Periodic,
    /// Real programs, one task each, exec'd under the cell's policy.
    Command,
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
        }
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
            _ => Err(CoreError::unknown(
                "workload",
                s,
                "cpu, io, mixed, periodic, command",
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
    /// Periodic: busy work per period (CPU time alone), ns.
    pub run_ns: u64,
    /// Command: the programs, in start order (task i runs `commands[i]`).
    pub commands: Vec<Command>,
    /// Command: delay between starting one program and the next, ns.
    pub start_gap_ns: u64,
    /// Command: stop every program this long after release (0: run them to completion), ns.
    pub window_ns: u64,
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
        }
    }
}

impl Workload {
    /// A short label, e.g. `cpu:pi`, `io:sync-copy`, `mixed:pi/1000`.
    pub fn label(&self) -> String {
        match self.kind {
            WorkloadKind::Cpu => format!("cpu:{}", self.cpu_kernel.name()),
            WorkloadKind::Io => format!("io:{}", self.io_mode.name()),
            WorkloadKind::Mixed => format!(
                "mixed:{}+{}/{}",
                self.cpu_kernel.name(),
                self.io_mode.name(),
                self.io_every
            ),
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
        if self.kind == WorkloadKind::Periodic {
            if self.period_ns < 10_000 {
                return Err(CoreError::PeriodTooShort {
                    period_ns: self.period_ns,
                });
            }
            if self.run_ns >= self.period_ns {
                return Err(CoreError::RunFillsPeriod {
                    run_ns: self.run_ns,
                    period_ns: self.period_ns,
                });
            }
        }
        Ok(())
    }
}

/// The prepared work of one task: opened before the measured region, run inside it.
pub struct TaskWork {
    kind: WorkloadKind,
    kernel: CpuKernel,
    every: u64,
    units: u64,
    cpu: CpuState,
    files: Option<IoFiles>,
    period_ns: u64,
    run_units: u64,
    latency: Option<hdrhistogram::Histogram<u64>>,
}

impl TaskWork {
    /// Opens files and allocates buffers for `units` units of `w`; `run_units` are the CPU
    /// units per period of a periodic workload. Sync-copy I/O reads the input of the trial
    /// directory `dir` and writes task `index`'s output there ([`IoFiles::open`]).
    pub fn prepare(
        w: &Workload,
        units: u64,
        run_units: u64,
        seed: u64,
        dir: Option<BorrowedFd>,
        index: usize,
    ) -> std::io::Result<TaskWork> {
        let files = if matches!(
            w.kind,
            WorkloadKind::Cpu | WorkloadKind::Periodic | WorkloadKind::Command
        ) {
            None
        } else {
            Some(IoFiles::open(
                w.io_mode,
                dir,
                index,
                w.io_block_bytes as usize,
            )?)
        };
        Ok(TaskWork {
            kind: w.kind,
            kernel: w.cpu_kernel,
            every: w.io_every.max(1),
            units,
            cpu: CpuState::new(seed),
            files,
            period_ns: w.period_ns,
            run_units,
            latency: (w.kind == WorkloadKind::Periodic).then(periodic::new_histogram),
        })
    }

    /// The wake-up latency histogram of a periodic workload.
    pub fn latency(&self) -> Option<&hdrhistogram::Histogram<u64>> {
        self.latency.as_ref()
    }

    /// Runs all units; returns how many were completed (fewer only if an I/O operation failed).
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
            WorkloadKind::Periodic => {
                let hist = self.latency.as_mut().expect("histogram prepared");
                periodic::run(
                    &mut self.cpu,
                    self.kernel,
                    self.run_units,
                    self.period_ns,
                    self.units,
                    hist,
                )
            }
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
        let mut t = TaskWork::prepare(&w, 55, 0, 1, Some(dir.fd()), 0).unwrap();
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
        let mut t = TaskWork::prepare(&w, 12, 0, 1, Some(dir.fd()), 1).unwrap();
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
