//! The run loop: calibrate, run every planned trial safely, store each as it ends, report progress.

#![forbid(unsafe_code)]

/// `eprintln!` that never panics: a write to a closed pipe (EPIPE: SIGPIPE is ignored during
/// runs) fails quietly, so that neither a run with settings changed nor the launcher ends in
/// a panic (a panic while one unwinds aborts, and skips every restore).
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod adaptive;
pub mod capacity;
mod cells;
pub mod cgroups;
mod contaminated;
pub mod error;
pub mod interference;
pub mod intrial;
pub mod iosched;
pub mod journal;
pub mod knobfile;
pub mod knobpaths;
pub mod knobs;
pub mod launcher;
pub mod limits;
mod measure;
pub mod noise;
mod one;
mod owner;
pub mod progress;
mod reruns;
pub mod sampler;
pub mod scx;
pub mod settle;
pub mod sink;
pub mod statedir;
pub mod task;
pub mod trace;
pub mod trial;
pub mod whose;
pub mod work;

pub use cells::{
    default_timeout_ns, estimate_trial_ns, units_per_task, Calibrator, CellState, Measured,
};
pub use error::{KernelError, RunError, SinkError, SinkResult, TraceError};

use error::Result;
use launcher::Launcher;
use measure::one_trial;
pub use measure::{Attempt, Done};
use one::Observe;
use schedlab_core::records::{RunStatus, TrialStatus};
use schedlab_spec::plan::Plan;
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
    // Measured speeds are stored only once the plan is accepted: a refused one writes nothing.
    let measured = capacity::check_calibrated(
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
    for m in &measured {
        m.save(sink)?;
    }
    let summary = run_trials(&mut launcher, sink, run_id, &stored, plan, opts);
    let status = match &summary {
        Ok(s) if s.interrupted => RunStatus::Interrupted,
        Ok(_) => RunStatus::Done,
        Err(_) => RunStatus::Failed,
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

impl<'a> Session<'a> {
    /// The session of a run or a worker: its kernel settings entered already, the reference
    /// loop calibrated now (with `sink` and `io_dir`, see [`Calibrator`]).
    fn new(
        launcher: &'a mut Launcher,
        interrupted: &Arc<AtomicBool>,
        settings: owner::KernelOwner,
        progress: &'a progress::Progress,
        (sink, io_dir): (&mut dyn Sink, &std::path::Path),
    ) -> Result<Session<'a>> {
        let (kernel, cpu_model) = (
            schedlab_machine::kernel_release(),
            schedlab_machine::cpu_model(),
        );
        let reference = noise::Reference::new(&mut Calibrator {
            sink: Some(sink),
            io_dir,
            kernel: kernel.clone(),
            cpu_model: cpu_model.clone(),
            progress,
        })?;
        Ok(Session {
            launcher,
            interrupted: interrupted.clone(),
            settings,
            progress,
            kernel,
            cpu_model,
            reference,
        })
    }

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

/// A run's state across its trials: its cells, what its trials record, and the speeds its
/// trials are judged against. (Its kernel settings belong to the process:
/// [`Session::settings`].)
pub(crate) struct RunState {
    pub cells: Vec<CellState>,
    pub observe: Observe,
    pub history: History,
}

/// The speeds of a run's trials so far, whose medians are its steady speeds.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// The reference loop's, around each trial.
    pub reference: noise::Steady,
    /// The calibrated CPU work's, in each trial.
    pub in_trial: intrial::Steady,
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
            say_err!("warning: {w}");
            sink.add_warning(run_id, None, &w)?;
        }
        if plan.cells.iter().any(one::needs_trial_dir) {
            if let Some(w) = schedlab_core::workload::io::shared_dir_warning(io_dir) {
                say_err!("warning: {w}");
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
            history: History::default(),
        })
    }
}

/// The signals that end a run or a worker early, caught while this lives (and ignored after:
/// the handlers stay, without actions): every signal whose default action ends the process
/// (SIGINT, SIGTERM, SIGHUP from a closed terminal or a dropped ssh session, SIGQUIT, SIGUSR1,
/// SIGALRM, the real-time ones, ...: `sys::terminating_signals`) sets the interrupted flag, so
/// every setting is restored on the way out. SIGPIPE is ignored from here on: a closed pipe
/// makes a write fail, it does not end the process with settings changed. After SIGHUP,
/// output that went to the terminal goes to /dev/null (the terminal is gone). What cannot be
/// caught (SIGKILL, a fault) is left to the launcher, which restores from the journal when
/// this process dies.
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

/// Catches every terminating signal into `flag` (see [`Caught`]) and ignores SIGPIPE; a
/// signal that is ignored already is left so (`nohup schedlab ...` is meant to outlive its
/// terminal).
pub(crate) fn catch_signals(flag: &Arc<AtomicBool>) -> Result<Caught> {
    let hung_up = Arc::new(AtomicBool::new(false));
    let mut ids = Vec::new();
    let mut register = || -> std::io::Result<()> {
        schedlab_sys::ignore_signal(schedlab_sys::Signal::SIGPIPE)?;
        for sig in schedlab_sys::terminating_signals() {
            let ignored =
                schedlab_sys::Signal::try_from(sig).is_ok_and(schedlab_sys::signal_ignored);
            if sig != libc::SIGHUP && !ignored {
                ids.push(signal_hook::flag::register(sig, flag.clone())?);
            }
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

/// What an adaptive run's judge sees after the rounds through `through`: the key metric of
/// every judged cell, and where the claims stand.
fn evidence(
    store: &dyn Sink,
    run_id: i64,
    plan: &Plan,
    state: &RunState,
    through: u32,
) -> Result<adaptive::Evidence> {
    let Some(a) = &plan.settings.adaptive else {
        return Ok(adaptive::Evidence::default());
    };
    let mut e = adaptive::Evidence::default();
    if a.precision.is_some() {
        // Skipped cells and cells without an ok trial cannot become precise: not judged. A
        // cell whose ok trials are all contaminated is judged (not precise yet).
        e.cells = store
            .key_values(run_id, a.metric, through)?
            .into_iter()
            .enumerate()
            .filter(|(c, _)| state.cells.get(*c).is_some_and(|s| s.skipped.is_none()))
            .filter_map(|(_, v)| v)
            .collect();
    }
    if a.until_decided {
        let progress = store.claims_progress(run_id)?;
        e.undecided = Some(progress.undecided);
        // Cells leave only when the run decides claims alone (a precision still needs them).
        if a.precision.is_none() {
            e.finished_cells = progress.finished_cells;
        }
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
    let mut session = Session::new(
        launcher,
        &interrupted,
        settings,
        &progress,
        (&mut *store, &plan.settings.io_dir),
    )?;
    let mut schedule = adaptive::Schedule::new(plan, &stored.trials);
    let mut trials = Trials {
        session: &mut session,
        keeper: Local(&mut *store),
        state: &mut state,
        plan,
        run_id,
        summary: &mut summary,
        reruns: reruns::Reruns::owed(plan, &stored.reruns),
    };
    trials.run_all(&mut schedule, stored, opts.judge.as_deref(), &progress)?;
    progress.finish();
    // Restored here, not only when dropped: a setting left changed fails the command.
    session.settings.leave()?;
    if interrupted.load(SeqCst) {
        summary.interrupted = true;
    }
    warn_adaptive_stop(store, run_id, plan, &schedule)?;
    summary.hung_up = caught.hung_up();
    Ok(summary)
}

/// What runs the attempts of a local run.
struct Trials<'s, 'a, 'b> {
    session: &'s mut Session<'a>,
    keeper: Local<'b>,
    state: &'s mut RunState,
    plan: &'s Plan,
    run_id: i64,
    summary: &'s mut Summary,
    reruns: reruns::Reruns,
}

impl Trials<'_, '_, '_> {
    /// Runs every trial of `schedule` not `stored` yet, each round's re-runs at its end,
    /// until the schedule ends or a signal stops the run; `judge` decides an adaptive run's
    /// rounds.
    fn run_all(
        &mut self,
        schedule: &mut adaptive::Schedule,
        stored: &sink::Stored,
        judge: Option<&dyn adaptive::Judge>,
        progress: &progress::Progress,
    ) -> Result<()> {
        let interrupted = self.session.interrupted.clone();
        // Trials shown so far, and re-runs among them.
        let (mut shown, mut extra) = (0, 0);
        loop {
            // Before a trial of a later round, or the judge's look at the rounds so far, the
            // re-runs of the rounds before it.
            while let Some(mut a) = self.reruns.due(schedule.peek_round()) {
                (shown, extra) = (shown + 1, extra + 1);
                a.shown = shown;
                progress.set_total(schedule.len() + extra + self.reruns.len());
                reruns::wait_quiet(&interrupted);
                if interrupted.load(SeqCst) || !self.attempt(&a, true)? {
                    return Ok(());
                }
            }
            let (run_id, plan) = (self.run_id, self.plan);
            let Some((n, planned)) = schedule.next(judge, |through, _| {
                evidence(&*self.keeper.0, run_id, plan, self.state, through)
            })?
            else {
                return Ok(());
            };
            progress.set_total(schedule.len() + extra + self.reruns.len());
            if interrupted.load(SeqCst) {
                return Ok(());
            }
            shown += 1;
            if stored.trials.contains(&(planned.cell, planned.trial_index)) {
                continue;
            }
            let resumed = stored.trials.iter().any(|&(c, _)| c == planned.cell);
            let a = Attempt {
                n,
                planned,
                retry: 0,
                shown,
            };
            if !self.attempt(&a, resumed)? {
                return Ok(());
            }
        }
    }

    /// Runs attempt `a` (`resumed`: its cell has trials stored from before) and asks for it to
    /// be run again if it was contaminated; false when it was interrupted.
    fn attempt(&mut self, a: &Attempt, resumed: bool) -> Result<bool> {
        let run = (self.run_id, self.plan);
        let done = one_trial(self.session, &mut self.keeper, run, self.state, a, resumed)?;
        let Some(done) = done else {
            self.summary.interrupted = true;
            return Ok(false);
        };
        self.summary.count(done.status);
        if done.rerun {
            self.reruns.push(a);
        }
        Ok(true)
    }
}

/// Warns (stored with the run) when an adaptive run stopped before its precision was reached.
fn warn_adaptive_stop(
    store: &mut dyn Sink,
    run_id: i64,
    plan: &Plan,
    schedule: &adaptive::Schedule,
) -> Result<()> {
    if let (Some(a), Some(stop)) = (&plan.settings.adaptive, schedule.stop) {
        if let Some(w) = adaptive::stop_warning(a, stop, schedule.measured_rounds()) {
            say_err!("warning: {w}");
            store.add_warning(run_id, None, &w)?;
        }
    }
    Ok(())
}
