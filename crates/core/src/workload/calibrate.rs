//! Calibration: how many units of a workload one task completes per second when it runs alone.
//!
//! CPU-bound work is timed by the thread's own CPU clock (so `--work` is CPU time, as the
//! studies meant); I/O and mixed work by the wall clock (their time alone is mostly waiting).

use super::{TaskWork, TrialDir, Workload, WorkloadKind};
use std::path::Path;

/// Minimum duration of one timed calibration batch, in nanoseconds.
const MIN_BATCH_NS: u64 = 40_000_000;

/// The measured speed of a workload on this machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Units completed per second when running alone.
    pub units_per_sec: f64,
}

impl Rate {
    /// Units needed for `work_ns` of work alone (at least 1).
    pub fn units_for(&self, work_ns: u64) -> u64 {
        ((self.units_per_sec * work_ns as f64 / 1e9).round() as u64).max(1)
    }

    /// Time one task needs alone for `units`, in nanoseconds.
    pub fn ns_for(&self, units: u64) -> u64 {
        (units as f64 / self.units_per_sec * 1e9) as u64
    }
}

/// The key under which a calibration is stored: workload parameters and build profile.
pub fn key(w: &Workload) -> String {
    format!(
        "{}|block={}|input={}|{}",
        w.label(),
        w.io_block_bytes,
        w.io_input_bytes,
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    )
}

/// Measures the rate of `w` in a fresh SCHED_OTHER nice-0 thread, with files under `io_dir`.
pub fn measure(w: &Workload, io_dir: &Path) -> std::io::Result<Rate> {
    let dir = if w.needs_files() {
        Some(TrialDir::create(io_dir, "calibration", w.io_input_bytes)?)
    } else {
        None
    };
    let fd = dir.as_ref().map(TrialDir::fd);
    // Each batch writes a new output file (created exclusively); the last one's is removed.
    let batch = |units: u64| {
        if let Some(d) = &dir {
            match d.remove_file(&super::io::output_file(0)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        TaskWork::prepare(w, units, 0, 7, fd, 0, super::Links::default())
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            // Whatever the caller's policy, calibrate as an ordinary task.
            let _ = schedlab_sys::sched_setattr(&schedlab_sys::SchedAttr::default());
            let clock = |k: WorkloadKind| {
                if k == WorkloadKind::Cpu {
                    schedlab_sys::thread_cpu_ns()
                } else {
                    schedlab_sys::now_ns()
                }
            };
            let mut units: u64 = 1;
            loop {
                let mut t = batch(units)?;
                let a = clock(w.kind);
                t.run();
                let elapsed = clock(w.kind) - a;
                if elapsed >= MIN_BATCH_NS {
                    break;
                }
                // Grow towards the target batch length, at most 16x per step.
                let factor = (MIN_BATCH_NS as f64 / elapsed.max(1) as f64 * 1.2).clamp(2.0, 16.0);
                units = (units as f64 * factor).ceil() as u64;
            }
            let mut rates = Vec::with_capacity(3);
            for _ in 0..3 {
                let mut t = batch(units)?;
                let a = clock(w.kind);
                t.run();
                let elapsed = (clock(w.kind) - a).max(1);
                rates.push(units as f64 * 1e9 / elapsed as f64);
            }
            rates.sort_by(|a, b| a.total_cmp(b));
            Ok(Rate {
                units_per_sec: rates[1],
            })
        })
        .join()
        .expect("calibration thread panicked")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrated_cpu_units_take_about_the_requested_cpu_time() {
        let w = Workload {
            cpu_kernel: super::super::CpuKernel::Spin,
            ..Workload::default()
        };
        let rate = measure(&w, Path::new("/tmp")).unwrap();
        assert!(rate.units_per_sec > 1000.0);
        let units = rate.units_for(30_000_000);
        let cpu = std::thread::spawn(move || {
            let mut t = TaskWork::prepare(&w, units, 0, 1, None, 0, super::super::Links::default())
                .unwrap();
            let a = schedlab_sys::thread_cpu_ns();
            t.run();
            schedlab_sys::thread_cpu_ns() - a
        })
        .join()
        .unwrap();
        // Generous bounds: the machine is shared and noisy.
        assert!(cpu > 10_000_000 && cpu < 120_000_000, "{cpu} ns");
    }

    #[test]
    fn rate_conversions_are_inverse() {
        let r = Rate {
            units_per_sec: 2_000_000.0,
        };
        assert_eq!(r.units_for(1_000_000_000), 2_000_000);
        assert_eq!(r.ns_for(2_000_000), 1_000_000_000);
        assert_eq!(r.units_for(0), 1);
    }
}
