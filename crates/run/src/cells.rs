//! What each cell needs before its first trial: calibrated work per task, antagonists' chunks,
//! and the deadline and estimated duration of its trials.

use super::progress::Progress;
use super::sink::Sink;
use super::SETTLE_NS;
use crate::error::{Result, RunError};
use schedlab_core::policy::PolicyKind;
use schedlab_core::records::WorkSize;
use schedlab_core::workload::{calibrate, CpuKernel, Workload, WorkloadKind};
use schedlab_spec::plan::Cell;
use std::path::Path;

/// Where calibrations come from: stored ones for this kernel and CPU model (when there is a
/// sink), or a measurement now, which is then stored.
pub struct Calibrator<'a> {
    /// The run's sink, which keeps calibrations (None: measure, keep nothing).
    pub sink: Option<&'a mut dyn Sink>,
    /// Directory for the I/O files of an I/O calibration.
    pub io_dir: &'a Path,
    /// Kernel release, part of a calibration's key.
    pub kernel: String,
    /// CPU model, part of a calibration's key.
    pub cpu_model: String,
    /// Where "calibrating ..." is noted.
    pub progress: &'a Progress,
}

impl<'a> Calibrator<'a> {
    /// A calibrator for this machine.
    pub fn new(sink: Option<&'a mut dyn Sink>, io_dir: &'a Path, progress: &'a Progress) -> Self {
        Calibrator {
            sink,
            io_dir,
            kernel: schedlab_machine::kernel_release(),
            cpu_model: schedlab_machine::cpu_model(),
            progress,
        }
    }

    /// The calibrated speed of a workload. A periodic workload runs one unit (period) per
    /// period; a program is one unit; the communicating workloads are sized exactly
    /// ([`Workload::nominal_rate`]).
    pub fn rate(&mut self, w: &Workload) -> Result<calibrate::Rate> {
        let (r, measured) = self.rate_unsaved(w)?;
        if let Some(m) = measured {
            self.save(&m)?;
        }
        Ok(r)
    }

    /// Like [`Calibrator::rate`], but a speed measured now is returned to be saved later
    /// ([`Calibrator::save`]), not stored: a run checks its plan with it before it writes
    /// anything.
    pub fn rate_unsaved(&mut self, w: &Workload) -> Result<(calibrate::Rate, Option<Measured>)> {
        if let Some(units_per_sec) = w.nominal_rate() {
            return Ok((calibrate::Rate { units_per_sec }, None));
        }
        let key = calibrate::key(w);
        if let Some(sink) = self.sink.as_deref() {
            if let Some(r) = sink.calibration(&key, &self.kernel, &self.cpu_model)? {
                return Ok((calibrate::Rate { units_per_sec: r }, None));
            }
        }
        self.progress.note(&format!("calibrating {}", w.label()));
        let r = calibrate::measure(w, self.io_dir).map_err(|source| RunError::Calibration {
            workload: w.label(),
            io_dir: self.io_dir.to_path_buf(),
            source,
        })?;
        let measured = Measured {
            key,
            kernel: self.kernel.clone(),
            cpu_model: self.cpu_model.clone(),
            units_per_sec: r.units_per_sec,
        };
        Ok((r, Some(measured)))
    }

    /// Stores a speed measured by [`Calibrator::rate_unsaved`] (nowhere without a sink).
    pub fn save(&mut self, m: &Measured) -> Result<()> {
        if let Some(sink) = self.sink.as_deref_mut() {
            m.save(sink)?;
        }
        Ok(())
    }

    /// CPU units per period of a periodic workload, rows of the matrix kernel per request of a
    /// request workload (calibrated at its footprint); 0 for other workloads.
    pub fn run_units(&mut self, w: &Workload) -> Result<u64> {
        let cpu_kernel = match w.kind {
            WorkloadKind::Periodic => w.cpu_kernel,
            WorkloadKind::Request => CpuKernel::Matrix,
            _ => return Ok(0),
        };
        let cpu = Workload {
            kind: WorkloadKind::Cpu,
            cpu_kernel,
            footprint_kib: w.footprint_kib,
            ..Workload::default()
        };
        Ok(self.rate(&cpu)?.units_for(w.run_ns))
    }
}

/// A workload's speed measured now, not stored yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The calibration's key (the workload's).
    pub key: String,
    /// Kernel release it was measured on.
    pub kernel: String,
    /// CPU model it was measured on.
    pub cpu_model: String,
    /// Units completed per second alone.
    pub units_per_sec: f64,
}

impl Measured {
    /// Stores it in `sink`.
    pub fn save(&self, sink: &mut dyn Sink) -> Result<()> {
        sink.save_calibration(
            &self.key,
            &self.kernel,
            &self.cpu_model,
            self.units_per_sec,
            None,
        )?;
        Ok(())
    }
}

/// A cell's state during a run.
#[derive(Debug, Default, Clone)]
pub struct CellState {
    /// Units of work per task (stored with the cell once known).
    pub units: Option<u64>,
    /// CPU units per period (periodic work).
    pub run_units: u64,
    /// Units per antagonist chunk (about 1 ms of work).
    pub antagonist_chunk: u64,
    /// Time one task needs alone, ns (0: not prepared yet).
    pub alone_ns: u64,
    /// Why the cell is skipped, once it is.
    pub skipped: Option<String>,
    /// Calibrated units per second of its work (CPU seconds for CPU work; 0: not prepared).
    pub units_per_sec: f64,
    /// Kernel work each of its trials caused so far in this run, ns (`kernel_cpu_ns`).
    pub kernel_ns: Vec<u64>,
}

impl CellState {
    /// Whether [`CellState::prepare`] has run.
    pub fn prepared(&self) -> bool {
        self.alone_ns > 0
    }

    /// Calibrates what `cell` needs; keeps units already given (a resumed run).
    pub fn prepare(&mut self, cell: &Cell, cal: &mut Calibrator) -> Result<()> {
        let rate = cal.rate(&cell.workload)?;
        if cell.antagonists > 0 {
            self.antagonist_chunk = cal.rate(&antagonist_workload(cell))?.units_for(1_000_000);
        }
        self.run_units = cal.run_units(&cell.workload)?;
        let units = self.units.unwrap_or_else(|| units_per_task(cell, rate));
        self.units = Some(units);
        self.units_per_sec = rate.units_per_sec;
        self.alone_ns = rate.ns_for(units).max(1);
        super::capacity::check_trial_length(cell, self.alone_ns)?;
        Ok(())
    }
}

/// The workload of `cell`'s antagonists: CPU hogs (spin) or I/O with the cell's I/O parameters.
pub fn antagonist_workload(cell: &Cell) -> Workload {
    Workload {
        kind: cell.antagonist_workload,
        cpu_kernel: CpuKernel::Spin,
        ..cell.workload.clone()
    }
}

/// Units of work each task of `cell` does.
pub fn units_per_task(cell: &Cell, rate: calibrate::Rate) -> u64 {
    let units = match cell.size {
        WorkSize::WorkNs(ns) => rate.units_for(ns),
        WorkSize::Iterations(n) => n,
    };
    if cell.split {
        units.div_ceil(cell.tasks as u64).max(1)
    } else {
        units
    }
}

/// CPUs the tasks of `cell` may use.
fn cpus_of(cell: &Cell) -> u64 {
    cell.cpus
        .as_ref()
        .map_or_else(|| schedlab_sys::allowed_cpus().len(), |c| c.len())
        .max(1) as u64
}

/// Share of a CPU a deadline task of `cell` gets (runtime / period).
fn deadline_share(cell: &Cell) -> f64 {
    (cell.deadline.runtime_ns as f64 / cell.deadline.period_ns.max(1) as f64).max(1e-6)
}

/// Rough wall time of one trial of `cell`, ns: the tasks' work spread over the CPUs they may
/// use (a deadline task gets only runtime/period of a CPU), plus creation and settling.
pub fn estimate_trial_ns(cell: &Cell, alone_ns: u64) -> u64 {
    let tasks = cell.tasks as u64;
    if cell.workload.kind == WorkloadKind::Command && cell.workload.window_ns > 0 {
        // Programs stopped by a window: the window is the trial.
        return cell
            .workload
            .window_ns
            .saturating_add(tasks * 300_000 + SETTLE_NS);
    }
    let mut wall = (alone_ns.saturating_mul(tasks) / cpus_of(cell)).max(alone_ns);
    if cell.workload.kind == WorkloadKind::Request {
        // Its tasks all run for the same duration.
        wall = alone_ns;
    }
    if cell.policy == PolicyKind::Deadline {
        wall = wall.max((alone_ns as f64 / deadline_share(cell)) as u64);
    }
    wall.saturating_add(tasks * 300_000 + SETTLE_NS)
}

/// Generous default deadline: ten times the ideal time of all tasks on the CPUs they may use,
/// plus 10 s.
pub fn default_timeout_ns(cell: &Cell, alone_ns: u64) -> u64 {
    if cell.workload.kind == WorkloadKind::Command {
        // Real programs: their window plus a minute, or ten minutes when they run to completion.
        return match cell.workload.window_ns {
            0 => 600_000_000_000,
            w => w.saturating_add(60_000_000_000),
        };
    }
    let mut ideal = alone_ns.saturating_mul(cell.tasks as u64) / cpus_of(cell);
    if cell.workload.kind == WorkloadKind::Request {
        ideal = alone_ns;
    }
    if cell.policy == PolicyKind::Deadline {
        // A deadline task only gets runtime/period of a CPU.
        ideal = (alone_ns as f64 / deadline_share(cell)) as u64;
    }
    ideal.saturating_mul(10).saturating_add(10_000_000_000)
}
