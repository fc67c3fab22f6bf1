//! The run loop: calibrate, run every planned trial safely, store each as it ends, report progress.

pub mod task;
pub mod trial;

use crate::plan::{Cell, Plan, WorkSize};
use crate::policy::{self, PolicyKind, TaskPolicy};
use crate::spec::Spec;
use crate::store::Store;
use crate::sys;
use crate::workload::{calibrate, TrialDir};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use task::TaskPlan;
use trial::{TrialSetup, TrialStatus};

/// Options of `schedlab run` that are not part of the experiment itself.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The results database.
    pub db: PathBuf,
    /// No progress output.
    pub quiet: bool,
    /// The command line, stored with the run.
    pub argv: String,
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

/// Per-cell state during a run.
#[derive(Default, Clone)]
struct CellState {
    units: Option<u64>,
    alone_ns: u64,
    skipped: Option<String>,
}

/// Runs `plan` (made from `spec`) and stores everything in `opts.db`.
pub fn execute(spec: &Spec, plan: &Plan, opts: &RunOptions) -> Result<RunSummary> {
    let mut store = Store::open(&opts.db)?;
    let io_dir = spec
        .settings
        .io_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    if plan.cells.iter().any(|c| c.workload.needs_files()) && !io_dir.is_dir() {
        anyhow::bail!(
            "the I/O directory {} does not exist; create it or choose another with --io-dir (settings.io_dir)",
            io_dir.display()
        );
    }
    let mut as_run = spec.clone();
    as_run.settings.seed = Some(plan.seed);
    let spec_toml = toml::to_string(&as_run).context("cannot serialise the spec")?;
    let env_json = crate::env::EnvRecord::capture().to_json();
    let run_id = store.create_run(
        &crate::store::NewRun {
            name: &spec.name,
            seed: plan.seed,
            spec_toml: &spec_toml,
            argv: &opts.argv,
            env_json: Some(&env_json),
            trials_planned: plan.trials.len(),
        },
        &plan.cells,
    )?;
    let summary = run_trials(&mut store, run_id, spec, plan, opts, &io_dir);
    let status = match &summary {
        Ok(s) if s.interrupted => "interrupted",
        Ok(_) => "done",
        Err(_) => "failed",
    };
    store.finish_run(run_id, status)?;
    summary
}

fn run_trials(
    store: &mut Store,
    run_id: i64,
    spec: &Spec,
    plan: &Plan,
    opts: &RunOptions,
    io_dir: &std::path::Path,
) -> Result<RunSummary> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let sig_ids = [
        signal_hook::flag::register(libc::SIGINT, interrupted.clone())?,
        signal_hook::flag::register(libc::SIGTERM, interrupted.clone())?,
    ];
    // Orphaned tasks come back to us, so a killed trial can be reaped completely.
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    if plan.cells.iter().any(|c| c.workload.needs_files()) && crate::workload::io::is_tmpfs(io_dir)
    {
        let msg = format!(
            "{} is a tmpfs: O_SYNC writes do not reach a disk there, so io results are not disk I/O; use --io-dir on a disk-backed filesystem",
            io_dir.display()
        );
        eprintln!("warning: {msg}");
        store.add_warning(run_id, None, &msg)?;
    }
    let timeout_override = spec
        .settings
        .timeout
        .as_deref()
        .map(|t| crate::spec::parse_duration_ns("settings.timeout", t))
        .transpose()?;
    let mut cells = vec![CellState::default(); plan.cells.len()];
    let mut summary = RunSummary {
        run_id,
        ..Default::default()
    };
    let progress = crate::report::progress::Progress::new(plan.trials.len(), opts.quiet);
    let kernel = crate::env::kernel_release();
    let cpu_model = crate::env::cpu_model();
    for (n, planned) in plan.trials.iter().enumerate() {
        if interrupted.load(SeqCst) {
            summary.interrupted = true;
            break;
        }
        let cell = &plan.cells[planned.cell];
        let state = &mut cells[planned.cell];
        if state.units.is_none() {
            let key = calibrate::key(&cell.workload);
            let rate = match store.calibration(&key, &kernel, &cpu_model)? {
                Some(r) => calibrate::Rate { units_per_sec: r },
                None => {
                    progress.note(&format!("calibrating {}", cell.workload.label()));
                    let r = calibrate::measure(&cell.workload, io_dir).with_context(|| {
                        format!(
                            "calibration of {} failed (I/O directory {})",
                            cell.workload.label(),
                            io_dir.display()
                        )
                    })?;
                    store.save_calibration(&key, &kernel, &cpu_model, r.units_per_sec)?;
                    r
                }
            };
            let units = match cell.size {
                WorkSize::WorkNs(ns) => rate.units_for(ns),
                WorkSize::Iterations(n) => n,
            };
            state.units = Some(units);
            state.alone_ns = rate.ns_for(units);
            store.set_cell_units(run_id, planned.cell, units)?;
        }
        let timeout_ns =
            timeout_override.unwrap_or_else(|| default_timeout_ns(cell, state.alone_ns));
        let started_at = crate::store::now_utc();
        let outcome = match &state.skipped {
            Some(reason) => trial::TrialOutcome {
                status: TrialStatus::Skipped,
                reason: Some(reason.clone()),
                makespan_ns: None,
                harness_cpu_ns: 0,
                tasks: vec![],
                pgid: 0,
            },
            None => run_one(
                cell,
                state.units.unwrap_or(1),
                timeout_ns,
                io_dir,
                &format!("r{run_id}-t{n}"),
                &interrupted,
            )?,
        };
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
        store.insert_trial(run_id, planned, &outcome, timeout_ns, &started_at)?;
        match outcome.status {
            TrialStatus::Ok => summary.ok += 1,
            TrialStatus::Skipped => summary.skipped += 1,
            _ => summary.failed += 1,
        }
        progress.trial_done(n + 1, &cell.label(), planned.warmup, &outcome);
    }
    progress.finish();
    for id in sig_ids {
        signal_hook::low_level::unregister(id);
    }
    if interrupted.load(SeqCst) {
        summary.interrupted = true;
    }
    Ok(summary)
}

/// Generous default deadline: ten times the ideal time of all tasks on the CPUs they may use, plus 10 s.
pub fn default_timeout_ns(cell: &Cell, alone_ns: u64) -> u64 {
    let cpus = cell
        .cpus
        .as_ref()
        .map_or_else(|| sys::allowed_cpus().len(), |c| c.len())
        .max(1) as u64;
    let mut ideal = alone_ns.saturating_mul(cell.tasks as u64) / cpus;
    if cell.policy == PolicyKind::Deadline {
        // A deadline task only gets runtime/period of a CPU.
        let share = cell.deadline.runtime_ns as f64 / cell.deadline.period_ns.max(1) as f64;
        ideal = (alone_ns as f64 / share.max(1e-6)) as u64;
    }
    ideal.saturating_mul(10).saturating_add(10_000_000_000)
}

/// Runs one trial of `cell`: files, policies, the launcher's guard priority, then the trial.
fn run_one(
    cell: &Cell,
    units: u64,
    timeout_ns: u64,
    io_dir: &std::path::Path,
    tag: &str,
    interrupted: &AtomicBool,
) -> Result<trial::TrialOutcome> {
    let dir = if cell.workload.needs_files() {
        Some(
            TrialDir::create(io_dir, tag, cell.workload.io_input_bytes).with_context(|| {
                format!(
                    "cannot create the trial's I/O files under {}; choose a writable --io-dir",
                    io_dir.display()
                )
            })?,
        )
    } else {
        None
    };
    let n = cell.tasks as usize;
    let plan = TaskPlan {
        policies: (0..n)
            .map(|i| {
                TaskPolicy::for_task(
                    cell.policy,
                    cell.priorities,
                    i,
                    n,
                    cell.nice,
                    cell.rt_priority,
                    cell.deadline,
                )
            })
            .collect(),
        workload: cell.workload.clone(),
        units,
        cpus: cell.cpus.clone(),
        barrier: cell.start == crate::plan::StartMode::Barrier,
        input: dir
            .as_ref()
            .map_or_else(|| "/dev/null".into(), |d| d.input()),
        outputs: (0..n)
            .map(|i| {
                dir.as_ref()
                    .map_or_else(|| "/dev/null".into(), |d| d.output(i))
            })
            .collect(),
    };
    // The launcher stays above RT workers where permitted; its children start reset to OTHER.
    let guard = cell.policy.needs_guard()
        && sys::sched_setattr(&sys::SchedAttr {
            policy: PolicyKind::Fifo.number(),
            priority: policy::RT_LAUNCHER,
            flags: sys::FLAG_RESET_ON_FORK,
            ..Default::default()
        })
        .is_ok();
    let outcome = trial::run_trial(&TrialSetup {
        kind: cell.kind,
        plan: &plan,
        timeout_ns,
        guard,
        interrupted,
    });
    if guard {
        let _ = sys::sched_setattr(&sys::SchedAttr::default());
    }
    drop(dir);
    Ok(outcome?)
}
