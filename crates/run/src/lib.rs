//! The run loop: calibrate, run every planned trial safely, store each as it ends, report progress.

#![forbid(unsafe_code)]

pub mod adaptive;
pub mod capacity;
mod cells;
pub mod cgroups;
pub mod error;
pub mod interference;
pub mod iosched;
pub mod journal;
pub mod knobfile;
pub mod knobpaths;
pub mod knobs;
pub mod launcher;
pub mod limits;
pub mod noise;
mod one;
mod owner;
pub mod progress;
pub mod sampler;
pub mod scx;
pub mod settle;
pub mod sink;
pub mod statedir;
pub mod task;
pub mod trace;
pub mod trial;
pub mod work;

pub use cells::{default_timeout_ns, estimate_trial_ns, units_per_task, Calibrator, CellState};
pub use error::{KernelError, RunError, SinkError, SinkResult, TraceError};

use error::Result;
use launcher::Launcher;
use one::{run_one, Observe};
use schedlab_core::records::{TrialOutcome, TrialStatus};
use schedlab_spec::plan::{Plan, PlannedTrial};
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

/// What a run, or a worker over the runs of its queue, did with its trials.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Trials stored as ok.
    pub ok: usize,
    /// Trials stored as skipped.
    pub skipped: usize,
    /// Trials stored as timeout or failed.
    pub failed: usize,
    /// Whether Ctrl-C, SIGTERM or SIGHUP ended it early.
    pub interrupted: bool,
    /// Whether it was SIGHUP (a closed terminal): the exit code is 129.
    pub hung_up: bool,
}

impl Summary {
    /// Counts a trial stored with `status`.
    pub fn count(&mut self, status: TrialStatus) {
        match status {
            TrialStatus::Ok => self.ok += 1,
            TrialStatus::Skipped => self.skipped += 1,
            _ => self.failed += 1,
        }
    }

    /// Trials stored.
    pub fn stored(&self) -> usize {
        self.ok + self.skipped + self.failed
    }
}

/// Runs `plan` and hands every trial to `sink` as it ends; returns the run's id and what its
/// trials did.
///
/// With `resume = Some(run_id)`, continues that stored run: trials already stored are skipped
/// and cells keep the units they were given.
pub fn execute(
    plan: &Plan,
    sink: &mut dyn Sink,
    opts: &RunOptions,
    resume: Option<i64>,
) -> Result<(i64, Summary)> {
    // First, while this process has no thread: the launcher, which forks every trial's host.
    let mut launcher = Launcher::start().map_err(RunError::Launcher)?;
    // Before anything is written: a missing I/O directory is bad input, named by its key.
    capacity::prepare_machine(plan)?;
    let quiet = progress::Progress::new(0, true);
    capacity::check_calibrated(
        plan,
        &mut Calibrator::new(Some(&mut *sink), &plan.settings.io_dir, &quiet),
    )?;
    let (run_id, stored) = match resume {
        Some(id) => (id, sink.resume_run(id)?),
        None => {
            let env_json = schedlab_machine::EnvRecord::capture().to_json();
            let id = sink.create_run(plan, &opts.argv, &env_json)?;
            (id, sink::Stored::default())
        }
    };
    let summary = run_trials(&mut launcher, sink, run_id, &stored, plan, opts);
    let status = match &summary {
        Ok(s) if s.interrupted => "interrupted",
        Ok(_) => "done",
        Err(_) => "failed",
    };
    sink.finish_run(run_id, status)?;
    Ok((run_id, summary?))
}

/// What every trial of a run (or of a worker's session) shares.
pub(crate) struct Session<'a> {
    /// The launcher, which forks every trial's host.
    pub launcher: &'a mut Launcher,
    /// Set by SIGINT, SIGTERM or SIGHUP.
    pub interrupted: Arc<AtomicBool>,
    /// The kernel settings of this process (one run's at a time); restored when dropped.
    pub settings: owner::KernelOwner,
    /// Progress output.
    pub progress: &'a progress::Progress,
    /// Kernel release, part of the key of stored calibrations.
    pub kernel: String,
    /// CPU model, the other part.
    pub cpu_model: String,
    /// The reference loop whose speed before and after each trial tells noise.
    pub reference: noise::Reference,
}

impl Session<'_> {
    /// A calibrator of this machine writing to `sink`.
    fn calibrator<'b>(
        &'b self,
        sink: &'b mut dyn Sink,
        io_dir: &'b std::path::Path,
    ) -> Calibrator<'b> {
        Calibrator {
            sink: Some(sink),
            io_dir,
            kernel: self.kernel.clone(),
            cpu_model: self.cpu_model.clone(),
            progress: self.progress,
        }
    }
}

/// How the trials of a run are kept: a sink, and (for a worker) the queue the trial came from.
pub trait Keeper {
    /// Where the trial and its warnings are stored.
    fn sink(&mut self) -> &mut dyn Sink;
    /// Records that cell `cell` of run `run_id` runs with `units` units of work per task, unless
    /// it has units already; returns the units in force.
    fn cell_units(&mut self, run_id: i64, cell: usize, units: u64) -> SinkResult<u64>;
    /// The trial is about to start and will be over (killed at its deadline if need be)
    /// within `within_ns`.
    fn starting(&mut self, within_ns: u64) -> SinkResult<()>;
}

/// The keeper of a local run: its sink alone.
struct Local<'a>(&'a mut dyn Sink);

impl Keeper for Local<'_> {
    fn sink(&mut self) -> &mut dyn Sink {
        self.0
    }

    fn cell_units(&mut self, run_id: i64, cell: usize, units: u64) -> SinkResult<u64> {
        self.0.set_cell_units(run_id, cell, units)?;
        Ok(units)
    }

    fn starting(&mut self, _within_ns: u64) -> SinkResult<()> {
        Ok(())
    }
}

/// A run's state across its trials: its cells and what its trials record. (Its kernel
/// settings belong to the process: [`Session::settings`].)
pub(crate) struct RunState {
    pub cells: Vec<CellState>,
    pub observe: Observe,
}

impl RunState {
    /// The state of `plan` before its first trial (with the units already stored); warns about
    /// what the run's results will need to be read with.
    pub fn new(
        plan: &Plan,
        run_id: i64,
        units: &[(usize, Option<u64>)],
        sink: &mut dyn Sink,
    ) -> Result<RunState> {
        let io_dir = &plan.settings.io_dir;
        if plan.cells.iter().any(|c| c.workload.needs_files())
            && schedlab_core::workload::io::is_tmpfs(io_dir)
        {
            let w = schedlab_core::Warning::IoDirTmpfs {
                dir: io_dir.display().to_string(),
            };
            eprintln!("warning: {w}");
            sink.add_warning(run_id, None, &w)?;
        }
        if plan.cells.iter().any(one::needs_trial_dir) {
            if let Some(w) = schedlab_core::workload::io::shared_dir_warning(io_dir) {
                eprintln!("warning: {w}");
                sink.add_warning(run_id, None, &w)?;
            }
        }
        let mut cells = vec![CellState::default(); plan.cells.len()];
        for &(cell, units) in units {
            if let Some(state) = cells.get_mut(cell) {
                state.units = units;
            }
        }
        Ok(RunState {
            cells,
            observe: Observe {
                sample_interval: plan
                    .settings
                    .sample_interval_ns
                    .map(std::time::Duration::from_nanos),
                trace: plan.settings.trace,
            },
        })
    }
}

/// Runs `planned`, trial `n` of run `run_id` (of `plan`), and hands it to `keeper`; returns
/// its status, or None when it was interrupted (nothing stored). `resumed`: the cell has
/// trials stored from before, so its warnings were given then.
#[allow(clippy::too_many_arguments)]
pub(crate) fn one_trial(
    s: &mut Session,
    keeper: &mut dyn Keeper,
    run_id: i64,
    plan: &Plan,
    state: &mut RunState,
    n: usize,
    planned: &PlannedTrial,
    resumed: bool,
) -> Result<Option<TrialStatus>> {
    let io_dir = plan.settings.io_dir.as_path();
    let cell = &plan.cells[planned.cell];
    // This run's kernel settings, another run's restored first (a worker's runs alternate).
    s.settings.enter(run_id, plan, keeper.sink())?;
    let cs = &mut state.cells[planned.cell];
    if !cs.prepared() {
        cs.prepare(cell, &mut s.calibrator(keeper.sink(), io_dir))?;
        let units = keeper.cell_units(run_id, planned.cell, cs.units.unwrap_or(1))?;
        if cs.units != Some(units) {
            // Another worker calibrated the cell first: its units hold for every trial.
            cs.units = Some(units);
            cs.prepare(cell, &mut s.calibrator(keeper.sink(), io_dir))?;
        }
        if let (Some(w), false) = (limits::cell_warning(cell, cs.alone_ns), resumed) {
            s.progress.note(&format!("warning: {w}"));
            keeper.sink().add_warning(run_id, None, &w)?;
        }
    }
    let timeout_ns = plan
        .settings
        .timeout_ns
        .unwrap_or_else(|| default_timeout_ns(cell, cs.alone_ns));
    let mut meta = schedlab_core::records::TrialMeta {
        timeout_ns,
        ..Default::default()
    };
    let mut warning = None;
    let mut trial_warnings: Vec<schedlab_core::Warning> = Vec::new();
    if cs.skipped.is_none() {
        // Set before the settle window, so the change settles before the trial.
        match s.settings.apply(run_id, cell) {
            Ok(readings) => {
                meta.io_scheduler = readings
                    .iter()
                    .find(|r| r.name == knobs::IO_SCHEDULER)
                    .map(|r| r.read_back.clone());
                meta.knobs = readings;
            }
            Err(reason) => {
                eprintln!("skipped: {}: {reason}", cell.label());
                cs.skipped = Some(reason.to_string());
            }
        }
    }
    let outcome = match &cs.skipped {
        Some(reason) => TrialOutcome::not_run(TrialStatus::Skipped, reason.clone()),
        None => 'measured: {
            keeper.starting(SETTLE_NS.saturating_add(timeout_ns))?;
            // The trial's task groups (CPU cgroups), before the settle window.
            let tag = format!("r{run_id}-c{}-t{}", planned.cell, planned.trial_index);
            let groups = match s.settings.start_groups(run_id, cell, &tag) {
                Ok(g) => g,
                Err(refused) => break 'measured refused.outcome(),
            };
            // A settle window before each trial, which also tells whether the machine is idle.
            let before = SystemSnapshot::capture();
            std::thread::sleep(std::time::Duration::from_nanos(SETTLE_NS));
            let after = SystemSnapshot::capture();
            let idle = after.busy_since(&before);
            meta.load1 = after.load1;
            meta.busy_pct = idle.busy_pct;
            meta.steal_pct = idle.steal_pct;
            meta.psi_cpu_some_pct = idle.psi_cpu_some_pct;
            warning = idle.warning(n + 1);
            meta.started_at = schedlab_core::records::now_utc();
            let around = noise::Around::before(&s.reference, cell.cpus.as_deref());
            let mut outcome = run_one(
                s.launcher,
                cell,
                cs,
                timeout_ns,
                io_dir,
                &format!("r{run_id}-t{n}"),
                &s.interrupted,
                (state.observe, groups.as_ref().map(|g| &g.groups)),
            )?;
            let label = cell.label();
            if let Some(g) = groups {
                let ended = s.settings.end_groups(g, cell, &mut outcome);
                trial_warnings.extend(ended.into_iter().map(|u| {
                    schedlab_core::Warning::CgroupTrial {
                        trial: n + 1,
                        cell: label.clone(),
                        problem: u.problem,
                        groups: u.groups,
                        error: u.error,
                    }
                }));
            }
            trial_warnings.extend(around.after(
                &s.reference,
                cell.cpus.as_deref(),
                &outcome,
                &mut meta,
                (n + 1, &label),
            ));
            trial_warnings.extend(limits::judge(cell, n + 1, &outcome, &mut meta));
            outcome
        }
    };
    if meta.started_at.is_empty() {
        meta.started_at = schedlab_core::records::now_utc();
    }
    if outcome.status == TrialStatus::Interrupted {
        return Ok(None);
    }
    if outcome.status == TrialStatus::Skipped && cs.skipped.is_none() {
        cs.skipped = outcome.reason.clone();
        eprintln!(
            "skipped: {}: {}",
            cell.label(),
            outcome.reason.as_deref().unwrap_or("")
        );
    }
    let sink = keeper.sink();
    let trial_id = sink.insert_trial(run_id, planned, &outcome, &meta)?;
    for w in warning.into_iter().chain(trial_warnings) {
        sink.add_warning(run_id, Some(trial_id), &w)?;
        s.progress.note(&format!("warning: {w}"));
    }
    s.progress
        .trial_done(n + 1, &cell.label(), planned.warmup, &outcome);
    Ok(Some(outcome.status))
}

/// The signals that end a run or a worker early, caught while this lives (and ignored after:
/// the handlers stay, without actions): SIGINT, SIGTERM and SIGHUP (a closed terminal or a
/// dropped ssh session) set the interrupted flag, so every setting is restored on the way out.
/// After SIGHUP, output that went to the terminal goes to /dev/null (the terminal is gone).
pub(crate) struct Caught {
    ids: Vec<signal_hook::SigId>,
    hung_up: Arc<AtomicBool>,
}

impl Caught {
    /// Whether SIGHUP came.
    pub fn hung_up(&self) -> bool {
        self.hung_up.load(SeqCst)
    }
}

impl Drop for Caught {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP into `flag`; SIGHUP not when it is ignored (`nohup`
/// schedlab ... is meant to outlive its terminal).
pub(crate) fn catch_signals(flag: &Arc<AtomicBool>) -> Result<Caught> {
    let hung_up = Arc::new(AtomicBool::new(false));
    let mut ids = Vec::new();
    let mut register = || -> std::io::Result<()> {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            ids.push(signal_hook::flag::register(sig, flag.clone())?);
        }
        if !schedlab_sys::signal_ignored(schedlab_sys::Signal::SIGHUP) {
            ids.push(signal_hook::flag::register(libc::SIGHUP, flag.clone())?);
            ids.push(signal_hook::flag::register(libc::SIGHUP, hung_up.clone())?);
            ids.extend(schedlab_sys::detach_terminal_on_hangup()?);
        }
        Ok(())
    };
    register().map_err(RunError::Signals)?;
    Ok(Caught { ids, hung_up })
}

/// What an adaptive run's judge sees after the rounds through `through` (`measured` of them
/// measured): the key metric of every judged cell, and the claims still undecided.
fn evidence(
    store: &dyn Sink,
    run_id: i64,
    plan: &Plan,
    state: &RunState,
    through: u32,
    measured: u32,
) -> Result<adaptive::Evidence> {
    let Some(a) = &plan.settings.adaptive else {
        return Ok(adaptive::Evidence::default());
    };
    let mut e = adaptive::Evidence::default();
    if a.precision.is_some() {
        // Skipped cells and cells without an ok trial cannot become precise: not judged.
        e.cells = store
            .key_values(run_id, a.metric, through)?
            .into_iter()
            .enumerate()
            .filter(|(c, v)| {
                state.cells.get(*c).is_some_and(|s| s.skipped.is_none()) && !v.is_empty()
            })
            .map(|(_, v)| v)
            .collect();
    }
    if a.until_decided {
        // Look k after min_trials + k - 1 measured rounds.
        let look = measured.saturating_sub(a.min_trials) as usize + 1;
        e.undecided = Some(store.undecided_claims(run_id, look)?);
    }
    Ok(e)
}

fn run_trials(
    launcher: &mut Launcher,
    store: &mut dyn Sink,
    run_id: i64,
    stored: &sink::Stored,
    plan: &Plan,
    opts: &RunOptions,
) -> Result<Summary> {
    let interrupted = Arc::new(AtomicBool::new(false));
    // Dropped last: signals are still caught while the settings are restored.
    let caught = catch_signals(&interrupted)?;
    let mut state = RunState::new(plan, run_id, &stored.units, store)?;
    // Kernel settings: journaled before any change, restored when the session is dropped,
    // however the run ends (the journal covers SIGKILL). Before calibrating, so that a run
    // that cannot have them stops at once.
    let mut settings = owner::KernelOwner::default();
    settings.enter(run_id, plan, store)?;
    let mut summary = Summary::default();
    let progress = progress::Progress::new(plan.trials.len(), opts.quiet);
    let (kernel, cpu_model) = (
        schedlab_machine::kernel_release(),
        schedlab_machine::cpu_model(),
    );
    let reference = noise::Reference::new(&mut Calibrator {
        sink: Some(&mut *store),
        io_dir: &plan.settings.io_dir,
        kernel: kernel.clone(),
        cpu_model: cpu_model.clone(),
        progress: &progress,
    })?;
    let mut session = Session {
        launcher,
        interrupted: interrupted.clone(),
        settings,
        progress: &progress,
        kernel,
        cpu_model,
        reference,
    };
    let mut schedule = adaptive::Schedule::new(plan, &stored.trials);
    while let Some((n, planned)) = schedule.next(opts.judge.as_deref(), |through, measured| {
        evidence(&*store, run_id, plan, &state, through, measured)
    })? {
        progress.set_total(schedule.len());
        if interrupted.load(SeqCst) {
            summary.interrupted = true;
            break;
        }
        if stored.trials.contains(&(planned.cell, planned.trial_index)) {
            continue;
        }
        let resumed = stored.trials.iter().any(|&(c, _)| c == planned.cell);
        let mut keeper = Local(&mut *store);
        let status = one_trial(
            &mut session,
            &mut keeper,
            run_id,
            plan,
            &mut state,
            n,
            &planned,
            resumed,
        )?;
        match status {
            None => {
                summary.interrupted = true;
                break;
            }
            Some(status) => summary.count(status),
        }
    }
    progress.finish();
    if let (Some(a), Some(stop)) = (&plan.settings.adaptive, schedule.stop) {
        if let Some(w) = adaptive::stop_warning(a, stop, schedule.measured_rounds()) {
            eprintln!("warning: {w}");
            store.add_warning(run_id, None, &w)?;
        }
    }
    if interrupted.load(SeqCst) {
        summary.interrupted = true;
    }
    summary.hung_up = caught.hung_up();
    Ok(summary)
}
