//! The run loop: calibrate, run every planned trial safely, store each as it ends, report progress.

pub mod adaptive;
mod cells;
pub mod iosched;
pub mod journal;
pub mod knobfile;
pub mod knobs;
pub mod launcher;
pub mod limits;
pub mod noise;
mod one;
pub mod progress;
pub mod sampler;
pub mod scx;
pub mod settle;
pub mod sink;
pub mod task;
pub mod trace;
pub mod trial;

pub use cells::{default_timeout_ns, estimate_trial_ns, units_per_task, Calibrator, CellState};

use crate::plan::Plan;
use crate::records::{TrialOutcome, TrialStatus};
use anyhow::{Context, Result};
use launcher::Launcher;
use one::{remove_stale_trial_dirs, run_one, Observe};
use settle::SystemSnapshot;
use sink::Sink;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

/// Settle time before each trial, ns; the machine's idleness is judged over it.
pub const SETTLE_NS: u64 = 100_000_000;

/// Options of `schedlab run` that are not part of the experiment itself.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// No progress output.
    pub quiet: bool,
    /// The command line, stored with the run.
    pub argv: String,
    /// Decides after each round of an adaptive run whether another is needed (None: the
    /// plan's trials only).
    pub judge: Option<Arc<dyn adaptive::Judge>>,
}

/// What a finished (or interrupted) run did.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// The run's id in the database.
    pub run_id: i64,
    /// Trials stored as ok.
    pub ok: usize,
    /// Trials stored as skipped.
    pub skipped: usize,
    /// Trials stored as timeout or failed.
    pub failed: usize,
    /// Whether Ctrl-C or SIGTERM ended the run early.
    pub interrupted: bool,
}

/// Runs `plan` and hands every trial to `sink` as it ends.
///
/// With `resume = Some(run_id)`, continues that stored run: trials already stored are skipped
/// and cells keep the units they were given.
pub fn execute(
    plan: &Plan,
    sink: &mut dyn Sink,
    opts: &RunOptions,
    resume: Option<i64>,
) -> Result<RunSummary> {
    // First, while this process has no thread: the launcher, which forks every trial's host.
    let mut launcher = Launcher::start().context(
        "cannot start the launcher process (it must be forked before any thread starts)",
    )?;
    let io_dir = plan.settings.io_dir.clone();
    if plan.cells.iter().any(|c| c.workload.needs_trial_dir()) && !io_dir.is_dir() {
        anyhow::bail!(
            "the I/O directory {} does not exist; create it or choose another with --io-dir (settings.io_dir)",
            io_dir.display()
        );
    }
    remove_stale_trial_dirs(&io_dir);
    if plan.settings.trace {
        trace::TraceSession::available()
            .map_err(|e| anyhow::anyhow!("--trace is not available: {e}"))?;
    }
    let (run_id, stored) = match resume {
        Some(id) => (id, sink.resume_run(id)?),
        None => {
            let env_json = crate::machine::EnvRecord::capture().to_json();
            let id = sink.create_run(plan, &opts.argv, &env_json)?;
            (id, sink::Stored::default())
        }
    };
    let summary = run_trials(&mut launcher, sink, run_id, &stored, plan, opts, &io_dir);
    let status = match &summary {
        Ok(s) if s.interrupted => "interrupted",
        Ok(_) => "done",
        Err(_) => "failed",
    };
    sink.finish_run(run_id, status)?;
    summary
}

fn run_trials(
    launcher: &mut Launcher,
    store: &mut dyn Sink,
    run_id: i64,
    stored: &sink::Stored,
    plan: &Plan,
    opts: &RunOptions,
    io_dir: &std::path::Path,
) -> Result<RunSummary> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let sig_ids = [
        signal_hook::flag::register(libc::SIGINT, interrupted.clone())?,
        signal_hook::flag::register(libc::SIGTERM, interrupted.clone())?,
    ];
    if plan.cells.iter().any(|c| c.workload.needs_files()) && crate::workload::io::is_tmpfs(io_dir)
    {
        let msg = format!(
            "{} is a tmpfs: O_SYNC writes do not reach a disk there, so io results are not disk I/O; use --io-dir on a disk-backed filesystem",
            io_dir.display()
        );
        eprintln!("warning: {msg}");
        store.add_warning(run_id, None, &msg)?;
    }
    let timeout_override = plan.settings.timeout_ns;
    let observe = Observe {
        sample_interval: plan
            .settings
            .sample_interval_ns
            .map(std::time::Duration::from_nanos),
        trace: plan.settings.trace,
    };
    // Kernel settings (knobs, I/O scheduler, BPF scheduler): journaled before any change,
    // restored when the run loop ends, however it ends (the journal covers SIGKILL).
    let (mut knobs, knob_warnings) =
        knobs::Knobs::prepare(plan, io_dir).map_err(anyhow::Error::msg)?;
    for w in knob_warnings {
        store.add_warning(run_id, None, &w)?;
    }
    let mut cells = vec![CellState::default(); plan.cells.len()];
    for &(cell, units) in &stored.units {
        if let Some(state) = cells.get_mut(cell) {
            state.units = units;
        }
    }
    let mut summary = RunSummary {
        run_id,
        ..Default::default()
    };
    let progress = progress::Progress::new(plan.trials.len(), opts.quiet);
    let (kernel, cpu_model) = (
        crate::machine::kernel_release(),
        crate::machine::cpu_model(),
    );
    let reference = noise::Reference::new(&mut Calibrator {
        sink: Some(&mut *store),
        io_dir,
        kernel: kernel.clone(),
        cpu_model: cpu_model.clone(),
        progress: &progress,
    })?;
    let mut schedule = adaptive::Schedule::new(plan, &stored.trials);
    let metric = plan.settings.adaptive.as_ref().map(|a| a.metric.clone());
    while let Some((n, planned)) = schedule.next(opts.judge.as_deref(), |through| {
        // Skipped cells and cells without an ok trial cannot become precise: not judged.
        let all = store.key_values(run_id, metric.as_deref().unwrap_or("makespan"), through)?;
        Ok(all
            .into_iter()
            .enumerate()
            .filter(|(c, v)| cells.get(*c).is_some_and(|s| s.skipped.is_none()) && !v.is_empty())
            .map(|(_, v)| v)
            .collect())
    })? {
        progress.set_total(schedule.len());
        let planned = &planned;
        if interrupted.load(SeqCst) {
            summary.interrupted = true;
            break;
        }
        if stored.trials.contains(&(planned.cell, planned.trial_index)) {
            continue;
        }
        let cell = &plan.cells[planned.cell];
        let state = &mut cells[planned.cell];
        if !state.prepared() {
            state.prepare(
                cell,
                &mut Calibrator {
                    sink: Some(&mut *store),
                    io_dir,
                    kernel: kernel.clone(),
                    cpu_model: cpu_model.clone(),
                    progress: &progress,
                },
            )?;
            store.set_cell_units(run_id, planned.cell, state.units.unwrap_or(1))?;
            let resumed = stored.trials.iter().any(|&(c, _)| c == planned.cell);
            if let (Some(w), false) = (limits::cell_warning(cell, state.alone_ns), resumed) {
                progress.note(&format!("warning: {w}"));
                store.add_warning(run_id, None, &w)?;
            }
        }
        let timeout_ns =
            timeout_override.unwrap_or_else(|| default_timeout_ns(cell, state.alone_ns));
        let mut meta = crate::records::TrialMeta {
            timeout_ns,
            ..Default::default()
        };
        let mut warning = None;
        let mut trial_warnings: Vec<String> = Vec::new();
        if state.skipped.is_none() {
            // Set before the settle window, so the change settles before the trial.
            match knobs.apply(cell) {
                Ok(readings) => {
                    meta.io_scheduler = readings
                        .iter()
                        .find(|r| r.name == knobs::IO_SCHEDULER)
                        .map(|r| r.read_back.clone());
                    meta.knobs = readings;
                }
                Err(reason) => {
                    eprintln!("skipped: {}: {reason}", cell.label());
                    state.skipped = Some(reason);
                }
            }
        }
        let outcome = match &state.skipped {
            Some(reason) => TrialOutcome::not_run(TrialStatus::Skipped, reason.clone()),
            None => {
                // A settle window before each trial, which also tells whether the machine is idle.
                let before = SystemSnapshot::capture();
                std::thread::sleep(std::time::Duration::from_nanos(SETTLE_NS));
                let after = SystemSnapshot::capture();
                let idle = after.busy_since(&before);
                meta.load1 = after.load1;
                meta.busy_pct = idle.busy_pct;
                meta.steal_pct = idle.steal_pct;
                meta.psi_cpu_some_pct = idle.psi_cpu_some_pct;
                warning = idle.warning();
                meta.started_at = crate::records::now_utc();
                let around = noise::Around::before(&reference, cell.cpus.as_deref());
                let outcome = run_one(
                    launcher,
                    cell,
                    state,
                    timeout_ns,
                    io_dir,
                    &format!("r{run_id}-t{n}"),
                    &interrupted,
                    observe,
                )?;
                trial_warnings.extend(around.after(&reference, cell.cpus.as_deref(), &mut meta));
                trial_warnings.extend(limits::judge(cell, &outcome, &mut meta));
                outcome
            }
        };
        if meta.started_at.is_empty() {
            meta.started_at = crate::records::now_utc();
        }
        if outcome.status == TrialStatus::Interrupted {
            summary.interrupted = true;
            break;
        }
        if outcome.status == TrialStatus::Skipped && state.skipped.is_none() {
            state.skipped = outcome.reason.clone();
            eprintln!(
                "skipped: {}: {}",
                cell.label(),
                outcome.reason.as_deref().unwrap_or("")
            );
        }
        let trial_id = store.insert_trial(run_id, planned, &outcome, &meta)?;
        if let Some(w) = warning {
            store.add_warning(
                run_id,
                Some(trial_id),
                &format!("before trial {}: {w}", n + 1),
            )?;
            progress.note(&format!("warning: {w}"));
        }
        for w in trial_warnings {
            let w = format!("trial {} ({}): {w}", n + 1, cell.label());
            store.add_warning(run_id, Some(trial_id), &w)?;
            progress.note(&format!("warning: {w}"));
        }
        match outcome.status {
            TrialStatus::Ok => summary.ok += 1,
            TrialStatus::Skipped => summary.skipped += 1,
            _ => summary.failed += 1,
        }
        progress.trial_done(n + 1, &cell.label(), planned.warmup, &outcome);
    }
    progress.finish();
    if let (Some(a), Some(stop)) = (&plan.settings.adaptive, schedule.stop) {
        if let Some(w) = adaptive::stop_warning(a, stop, schedule.measured_rounds()) {
            eprintln!("warning: {w}");
            store.add_warning(run_id, None, &w)?;
        }
    }
    for id in sig_ids {
        signal_hook::low_level::unregister(id);
    }
    if interrupted.load(SeqCst) {
        summary.interrupted = true;
    }
    Ok(summary)
}
