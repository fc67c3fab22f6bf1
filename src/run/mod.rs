//! The run loop: calibrate, run every planned trial safely, store each as it ends, report progress.

pub mod iosched;
pub mod sampler;
pub mod settle;
pub mod task;
pub mod trace;
pub mod trial;

use crate::plan::{Cell, Plan};
use crate::policy::{self, PolicyKind, PriorityMode, TaskPolicy};
use crate::records::WorkSize;
use crate::spec::Spec;
use crate::store::Store;
use crate::sys;
use crate::workload::{calibrate, TrialDir};
use anyhow::{Context, Result};
use settle::SystemSnapshot;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use task::TaskPlan;
use trial::{TrialSetup, TrialStatus};

/// Settle time before each trial, ns; the machine's idleness is judged over it.
pub const SETTLE_NS: u64 = 100_000_000;

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
    run_units: u64,
    antagonist_chunk: u64,
    alone_ns: u64,
    skipped: Option<String>,
}

/// Runs `plan` (made from `spec`) and stores everything in `opts.db`.
///
/// With `resume = Some(run_id)`, continues that stored run: trials already stored are skipped
/// and cells keep the units they were given.
pub fn execute(
    spec: &Spec,
    plan: &Plan,
    opts: &RunOptions,
    resume: Option<i64>,
) -> Result<RunSummary> {
    let mut store = Store::open(&opts.db)?;
    let io_dir = spec
        .settings
        .io_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    if plan.cells.iter().any(|c| c.workload.needs_trial_dir()) && !io_dir.is_dir() {
        anyhow::bail!(
            "the I/O directory {} does not exist; create it or choose another with --io-dir (settings.io_dir)",
            io_dir.display()
        );
    }
    remove_stale_trial_dirs(&io_dir);
    if spec.settings.trace {
        trace::TraceSession::available()
            .map_err(|e| anyhow::anyhow!("--trace is not available: {e}"))?;
    }
    let run_id = match resume {
        Some(id) => {
            store.mark_running(id)?;
            id
        }
        None => {
            let mut as_run = spec.clone();
            as_run.settings.seed = Some(plan.seed);
            let spec_toml = toml::to_string(&as_run).context("cannot serialise the spec")?;
            let env_json = crate::env::EnvRecord::capture().to_json();
            store.create_run(
                &crate::store::NewRun {
                    name: &spec.name,
                    seed: plan.seed,
                    spec_toml: &spec_toml,
                    argv: &opts.argv,
                    env_json: Some(&env_json),
                    trials_planned: plan.trials.len(),
                },
                &plan.cells,
            )?
        }
    };
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
    let observe = Observe {
        sample_interval: sample_interval(spec)?,
        trace: spec.settings.trace,
    };
    // Restores the device's original I/O scheduler when the run loop ends, however it ends.
    let mut io_guard = if plan.cells.iter().any(|c| c.io_scheduler.is_some()) {
        let device = match &spec.settings.device {
            Some(d) => d.clone(),
            None => iosched::device_for(io_dir).map_err(anyhow::Error::msg)?,
        };
        let g = iosched::IoSchedGuard::new(&device).map_err(anyhow::Error::msg)?;
        store.add_warning(
            run_id,
            None,
            &format!(
                "I/O scheduler of {} varied; it was {} and is restored after the run",
                g.device(),
                g.original()
            ),
        )?;
        Some(g)
    } else {
        None
    };
    let mut cells = vec![CellState::default(); plan.cells.len()];
    let stored = store.stored_trials(run_id)?;
    for (cell, units) in store.cell_units(run_id)? {
        if let Some(state) = cells.get_mut(cell) {
            state.units = units;
        }
    }
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
        if stored.contains(&(planned.cell, planned.trial_index)) {
            continue;
        }
        let cell = &plan.cells[planned.cell];
        let state = &mut cells[planned.cell];
        if state.alone_ns == 0 {
            let rate = workload_rate(
                Some(store),
                &cell.workload,
                io_dir,
                &kernel,
                &cpu_model,
                &progress,
            )?;
            if cell.antagonists > 0 {
                let w = antagonist_workload(cell);
                state.antagonist_chunk =
                    workload_rate(Some(store), &w, io_dir, &kernel, &cpu_model, &progress)?
                        .units_for(1_000_000);
            }
            state.run_units = run_units(
                Some(store),
                &cell.workload,
                io_dir,
                &kernel,
                &cpu_model,
                &progress,
            )?;
            let units = state.units.unwrap_or_else(|| units_per_task(cell, rate));
            state.units = Some(units);
            state.alone_ns = rate.ns_for(units);
            store.set_cell_units(run_id, planned.cell, units)?;
        }
        let timeout_ns =
            timeout_override.unwrap_or_else(|| default_timeout_ns(cell, state.alone_ns));
        let mut meta = crate::store::TrialMeta {
            timeout_ns,
            ..Default::default()
        };
        let mut warning = None;
        if let (Some(g), Some(name), None) = (io_guard.as_mut(), &cell.io_scheduler, &state.skipped)
        {
            match g.set(name) {
                Ok(()) => meta.io_scheduler = Some(name.clone()),
                Err(reason) => {
                    eprintln!("skipped: {}: {reason}", cell.label());
                    state.skipped = Some(reason);
                }
            }
        }
        let outcome = match &state.skipped {
            Some(reason) => trial::TrialOutcome {
                status: TrialStatus::Skipped,
                reason: Some(reason.clone()),
                makespan_ns: None,
                harness_cpu_ns: 0,
                tasks: vec![],
                pgid: 0,
                samples: vec![],
                trace_slices: vec![],
                trace_lost_events: None,
            },
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
                meta.started_at = crate::store::now_utc();
                run_one(
                    cell,
                    state,
                    timeout_ns,
                    io_dir,
                    &format!("r{run_id}-t{n}"),
                    &interrupted,
                    &observe,
                )?
            }
        };
        if meta.started_at.is_empty() {
            meta.started_at = crate::store::now_utc();
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

/// The calibrated speed of a workload: stored for this machine, kernel and build, or
/// measured now and stored. A periodic workload runs one unit (period) per period.
pub fn workload_rate(
    store: Option<&Store>,
    w: &crate::workload::Workload,
    io_dir: &std::path::Path,
    kernel: &str,
    cpu_model: &str,
    progress: &crate::report::progress::Progress,
) -> Result<calibrate::Rate> {
    if w.kind == crate::workload::WorkloadKind::Periodic {
        return Ok(calibrate::Rate {
            units_per_sec: 1e9 / w.period_ns.max(1) as f64,
        });
    }
    if w.kind == crate::workload::WorkloadKind::Command {
        // A program is one unit; its length is unknown until it runs.
        return Ok(calibrate::Rate { units_per_sec: 1.0 });
    }
    let key = calibrate::key(w);
    if let Some(r) = store
        .map(|s| s.calibration(&key, kernel, cpu_model))
        .transpose()?
        .flatten()
    {
        return Ok(calibrate::Rate { units_per_sec: r });
    }
    progress.note(&format!("calibrating {}", w.label()));
    let r = calibrate::measure(w, io_dir).with_context(|| {
        format!(
            "calibration of {} failed (I/O directory {})",
            w.label(),
            io_dir.display()
        )
    })?;
    if let Some(s) = store {
        s.save_calibration(&key, kernel, cpu_model, r.units_per_sec)?;
    }
    Ok(r)
}

/// The workload of `cell`'s antagonists: CPU hogs (spin) or I/O with the cell's I/O parameters.
pub fn antagonist_workload(cell: &Cell) -> crate::workload::Workload {
    crate::workload::Workload {
        kind: cell.antagonist_workload,
        cpu_kernel: crate::workload::CpuKernel::Spin,
        ..cell.workload.clone()
    }
}

/// CPU units per period of a periodic workload (0 for other workloads).
pub fn run_units(
    store: Option<&Store>,
    w: &crate::workload::Workload,
    io_dir: &std::path::Path,
    kernel: &str,
    cpu_model: &str,
    progress: &crate::report::progress::Progress,
) -> Result<u64> {
    if w.kind != crate::workload::WorkloadKind::Periodic {
        return Ok(0);
    }
    let cpu = crate::workload::Workload {
        kind: crate::workload::WorkloadKind::Cpu,
        ..w.clone()
    };
    Ok(workload_rate(store, &cpu, io_dir, kernel, cpu_model, progress)?.units_for(w.run_ns))
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

/// Rough wall time of one trial of `cell`, ns: the tasks' work spread over the CPUs they may
/// use (a deadline task gets only runtime/period of a CPU), plus creation and settling.
pub fn estimate_trial_ns(cell: &Cell, alone_ns: u64) -> u64 {
    let cpus = cell
        .cpus
        .as_ref()
        .map_or_else(|| sys::allowed_cpus().len(), |c| c.len())
        .max(1) as u64;
    let tasks = cell.tasks as u64;
    if cell.workload.kind == crate::workload::WorkloadKind::Command && cell.workload.window_ns > 0 {
        // Programs stopped by a window: the window is the trial.
        return cell.workload.window_ns + tasks * 300_000 + SETTLE_NS;
    }
    let mut wall = (alone_ns.saturating_mul(tasks) / cpus).max(alone_ns);
    if cell.policy == PolicyKind::Deadline {
        let share = cell.deadline.runtime_ns as f64 / cell.deadline.period_ns.max(1) as f64;
        wall = wall.max((alone_ns as f64 / share.max(1e-6)) as u64);
    }
    wall + tasks * 300_000 + SETTLE_NS
}

/// What is recorded next to the tasks during a trial.
struct Observe {
    /// Interval of the system-wide sampler; None = off.
    sample_interval: Option<std::time::Duration>,
    /// Record the kernel's scheduler trace.
    trace: bool,
}

/// The sampler interval of a spec (None for "off").
fn sample_interval(spec: &Spec) -> Result<Option<std::time::Duration>> {
    Ok(match spec.settings.sample_interval.trim() {
        "off" => None,
        d => Some(std::time::Duration::from_nanos(
            crate::spec::parse_duration_ns("settings.sample_interval", d)?,
        )),
    })
}

/// Stops the trace, reads it, and attaches per-task summaries and the timeline to the outcome.
fn attach_trace(t: &mut trace::TraceSession, o: &mut trial::TrialOutcome) -> Result<(), String> {
    t.stop()?;
    let raw = t.read()?;
    let (events, _) = trace::parse_lenient(&raw.text);
    let tids: Vec<i32> = o.tasks.iter().map(|r| r.tid).collect();
    for (r, tt) in o.tasks.iter_mut().zip(trace::per_task(&events, &tids)) {
        r.trace = Some(tt);
    }
    o.trace_slices = trace::timeline(&events, &tids)
        .into_iter()
        .filter_map(|s| tids.iter().position(|&t| t == s.tid).map(|i| (i as u32, s)))
        .collect();
    o.trace_lost_events = Some(raw.lost_events + raw.overruns);
    Ok(())
}

/// Removes trial directories left under `io_dir` by schedlab processes that no longer exist
/// (a launcher killed with SIGKILL cannot clean up after itself).
fn remove_stale_trial_dirs(io_dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(io_dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("schedlab-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0 || sys::errno() == libc::EPERM;
        if !alive && e.path().is_dir() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Generous default deadline: ten times the ideal time of all tasks on the CPUs they may use, plus 10 s.
pub fn default_timeout_ns(cell: &Cell, alone_ns: u64) -> u64 {
    if cell.workload.kind == crate::workload::WorkloadKind::Command {
        // Real programs: their window plus a minute, or ten minutes when they run to completion.
        return match cell.workload.window_ns {
            0 => 600_000_000_000,
            w => w + 60_000_000_000,
        };
    }
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
    state: &CellState,
    timeout_ns: u64,
    io_dir: &std::path::Path,
    tag: &str,
    interrupted: &AtomicBool,
    observe: &Observe,
) -> Result<trial::TrialOutcome> {
    let (sample_interval, trace_on) = (observe.sample_interval, observe.trace);
    let (units, run_units) = (state.units.unwrap_or(1), state.run_units);
    let needs_files = cell.workload.needs_trial_dir()
        || (cell.antagonists > 0 && antagonist_workload(cell).needs_files());
    let dir = if needs_files {
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
    let a = cell.antagonists as usize;
    let policies = (0..n)
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
        .chain((0..a).map(|i| {
            TaskPolicy::for_task(
                cell.antagonist_policy,
                PriorityMode::Same,
                i,
                a,
                None,
                None,
                cell.deadline,
            )
        }))
        .collect();
    let output = |i: usize| {
        dir.as_ref()
            .map_or_else(|| "/dev/null".into(), |d| d.output(i))
    };
    let plan = TaskPlan {
        dir: dir.as_ref().map(|d| d.path().to_path_buf()),
        policies,
        workload: cell.workload.clone(),
        units,
        cpus: cell.cpus.clone(),
        barrier: cell.start == crate::records::StartMode::Barrier,
        input: dir
            .as_ref()
            .map_or_else(|| "/dev/null".into(), |d| d.input()),
        outputs: (0..n + a).map(output).collect(),
        run_units,
        measured: n,
        antagonist_workload: (a > 0).then(|| antagonist_workload(cell)),
        antagonist_chunk: state.antagonist_chunk,
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
    let mut tracer = if trace_on {
        Some(trace::TraceSession::start(trace::DEFAULT_BUFFER_KB).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    let sampler = sample_interval.map(|i| sampler::Sampler::start(i, guard));
    let outcome = trial::run_trial(&TrialSetup {
        kind: cell.kind,
        plan: &plan,
        timeout_ns,
        guard,
        interrupted,
    });
    let samples = sampler.map(|s| s.finish()).unwrap_or_default();
    let mut outcome = outcome.map(|mut o| {
        o.samples = samples;
        o
    });
    if let (Some(t), Ok(o)) = (tracer.as_mut(), outcome.as_mut()) {
        attach_trace(t, o).map_err(anyhow::Error::msg)?;
    }
    drop(tracer);
    if guard {
        let _ = sys::sched_setattr(&sys::SchedAttr::default());
    }
    drop(dir);
    Ok(outcome?)
}
