//! A worker's loop: trials claimed one at a time from a queue (trials of any run, planned by
//! whoever submitted it), each run under the same safety as a local run's trials (launcher
//! forked before any thread, deadlines, restored kernel settings), until the queue has nothing
//! left for this worker or it is stopped. The session owns the kernel settings: a run's are
//! restored before another run's trial and before the worker waits for work.
//!
//! The run stage still sees no database: the queue is a [`Queue`] that `app` implements on
//! the store. A run the worker's flags do not allow is refused before anything of it runs
//! ([`allow`]).

pub mod allow;
pub mod iodir;

use super::launcher::Launcher;
use super::{catch_signals, one_trial, progress, Keeper, RunState, Session, Summary};
use crate::error::{Result, RunError, SinkResult};
use schedlab_core::records::TrialStatus;
use schedlab_spec::plan::Plan;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A trial claimed from the queue.
#[derive(Debug, Clone)]
pub struct Claimed {
    /// The run it belongs to.
    pub run_id: i64,
    /// The run's plan (rebuilt from its stored spec and seed).
    pub plan: Rc<Plan>,
    /// Index of the trial in `plan.trials`.
    pub position: usize,
    /// 0: the planned trial; k: its k-th re-run (the queue holds a row per attempt).
    pub retry: u32,
    /// Units per task the run's cells have so far: (cell index, units).
    pub units: Vec<(usize, Option<u64>)>,
}

/// What the queue has for this worker.
#[derive(Debug)]
pub enum Next {
    /// A trial, now claimed by this worker.
    Trial(Claimed),
    /// Nothing now, but trials claimed by other workers may come back (their lease may lapse)
    /// or the server is away: ask again after this long.
    Wait(Duration),
    /// Nothing left.
    Done,
}

/// Where a worker's trials come from and go to.
pub trait Queue {
    /// Claims the next trial.
    fn next(&mut self) -> SinkResult<Next>;
    /// How the claimed trial is kept: storing it completes the claim.
    fn keeper(&mut self) -> &mut dyn Keeper;
    /// Gives the claimed trial back to the queue (it was interrupted; nothing was stored).
    fn release(&mut self) -> SinkResult<()>;
    /// Gives the claimed trial back as one this worker cannot run, for `reason` (its machine
    /// lacks what the run needs): the attempt counts, other workers may try it (after enough
    /// attempts the run is refused with the reason), and this worker claims none of the
    /// run's trials again.
    fn refuse(&mut self, reason: &str) -> SinkResult<()>;
}

/// Options of a worker.
#[derive(Debug, Clone, Default)]
pub struct WorkOptions {
    /// No line per trial.
    pub quiet: bool,
    /// What queued runs may do to this machine (the worker's `--allow-*` flags).
    pub allowed: allow::Allowed,
}

/// Runs claimed trials until the queue has nothing left or a signal stops the worker.
pub fn work(queue: &mut dyn Queue, opts: &WorkOptions) -> Result<Summary> {
    // First, while this process has no thread: the launcher.
    let mut launcher = Launcher::start().map_err(RunError::Launcher)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    // Dropped last: signals are still caught while the settings are restored.
    let caught = catch_signals(&interrupted)?;
    let progress = progress::Progress::new(0, true);
    // The noise reference (spin chunks): no I/O, so any directory does.
    let mut session = Session::new(
        &mut launcher,
        &interrupted,
        Default::default(),
        &progress,
        (queue.keeper().sink(), &std::env::temp_dir()),
    )?;
    let mut runs: HashMap<i64, Admission> = HashMap::new();
    let mut summary = Summary::default();
    let result = (|| -> Result<()> {
        while !interrupted.load(SeqCst) {
            let claimed = match queue.next()? {
                Next::Done => break,
                Next::Wait(d) => {
                    // Nothing of this worker's stays changed while it waits.
                    session.settings.leave()?;
                    let until = Instant::now() + d;
                    while Instant::now() < until && !interrupted.load(SeqCst) {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    continue;
                }
                Next::Trial(c) => c,
            };
            let status = match run_claimed(&mut session, queue, &mut runs, &claimed, opts) {
                Ok(s) => s,
                Err(RunError::QueuedRunUnfit { run_id, why }) => {
                    // Not this worker's to run, and no reason to stop: counted, passed on.
                    say_err!("run {run_id} cannot run here: {why}; given back to the queue");
                    queue.refuse(&why.to_string())?;
                    continue;
                }
                Err(e) => {
                    let _ = queue.release();
                    return Err(e);
                }
            };
            let Some(status) = status else {
                queue.release()?;
                summary.interrupted = true;
                break;
            };
            summary.count(status);
            if !opts.quiet {
                print_done(&claimed, status);
            }
        }
        Ok(())
    })();
    let restored = session.settings.leave();
    drop(runs);
    result?;
    restored?;
    if interrupted.load(SeqCst) {
        summary.interrupted = true;
    }
    summary.hung_up = caught.hung_up();
    Ok(summary)
}

/// One line on stderr for a trial of a claimed run that ended with `status`.
fn print_done(claimed: &Claimed, status: TrialStatus) {
    let planned = &claimed.plan.trials[claimed.position];
    say_err!(
        "run {}, trial {}/{} ({}{}{}): {}",
        claimed.run_id,
        claimed.position + 1,
        claimed.plan.trials.len(),
        claimed.plan.cells[planned.cell].label(),
        if planned.warmup { ", warm-up" } else { "" },
        match claimed.retry {
            0 => String::new(),
            k => format!(", re-run {k}"),
        },
        status.name()
    );
}

/// A queued run this worker admitted: its plan as run here (in the worker's I/O directory,
/// its programs in the worker's sandbox), the I/O directory as admitted, and its state across
/// its trials.
struct Admitted {
    plan: Plan,
    io_dir: iodir::IoDir,
    state: RunState,
}

/// What this worker decided about a queued run, the first time it claimed one of its trials.
enum Admission {
    /// It runs here.
    Admitted(Box<Admitted>),
    /// Its flags do not allow it, for this reason (said once, stored with each trial).
    Refused(String),
}

/// Runs one claimed trial; None when it was interrupted.
fn run_claimed(
    session: &mut Session,
    queue: &mut dyn Queue,
    runs: &mut HashMap<i64, Admission>,
    c: &Claimed,
    opts: &WorkOptions,
) -> Result<Option<TrialStatus>> {
    let admission = match runs.entry(c.run_id) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(e) => {
            let admission = admit(queue, c, opts)?;
            if let Admission::Refused(reason) = &admission {
                say_err!("refused: {reason}");
            }
            e.insert(admission)
        }
    };
    let run = match admission {
        Admission::Admitted(run) => run,
        Admission::Refused(reason) => {
            // Nothing of the run is prepared, calibrated or started: each of its trials is
            // stored as skipped with the reason, so its queue rows end.
            let (outcome, meta) = allow::refused(reason);
            let sink = queue.keeper().sink();
            sink.insert_trial(c.run_id, &c.plan.trials[c.position], &outcome, &meta)?;
            return Ok(Some(TrialStatus::Skipped));
        }
    };
    let a = super::Attempt {
        n: c.position,
        planned: run.plan.trials[c.position],
        retry: c.retry,
        shown: c.position + 1,
    };
    if let Some(why) = run.io_dir.moved() {
        let (mut outcome, mut meta) = allow::refused(&why);
        outcome.status = TrialStatus::Failed;
        meta.retry = c.retry;
        let sink = queue.keeper().sink();
        sink.insert_trial(c.run_id, &a.planned, &outcome, &meta)?;
        return Ok(Some(TrialStatus::Failed));
    }
    let done = one_trial(
        session,
        queue.keeper(),
        (c.run_id, &run.plan),
        &mut run.state,
        &a,
        false,
    )?;
    // A re-run is queued by the store as the contaminated trial is stored (`meta.retried`).
    Ok(done.map(|d| d.status))
}

/// Run `c.run_id` on this worker, if its flags allow what it does (else the reason): in the
/// I/O directory they allow, after the same checks as a local run's.
fn admit(queue: &mut dyn Queue, c: &Claimed, opts: &WorkOptions) -> Result<Admission> {
    let io_dir = match opts.allowed.refusal(c.run_id, &c.plan.cells) {
        Some(reason) => Err(reason),
        None => opts
            .allowed
            .io_dir(c.run_id, &c.plan)
            .map_err(|e| e.to_string()),
    };
    let io_dir = match io_dir {
        Ok(d) => d,
        Err(reason) => return Ok(Admission::Refused(reason)),
    };
    let mut plan = (*c.plan).clone();
    plan.settings.io_dir = io_dir.path.clone();
    opts.allowed.confine(&mut plan);
    super::capacity::prepare_machine(&plan).map_err(|e| RunError::QueuedRunUnfit {
        run_id: c.run_id,
        why: crate::error::Unfit(Box::new(e)),
    })?;
    let state = RunState::new(&plan, c.run_id, &c.units, queue.keeper().sink())?;
    Ok(Admission::Admitted(Box::new(Admitted {
        plan,
        io_dir,
        state,
    })))
}
