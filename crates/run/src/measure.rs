//! One trial of a run or a worker: its cell calibrated and its kernel settings applied, the
//! settle window, the trial measured between two runs of the reference loop, its checks, and
//! the trial and its warnings handed to the keeper.

use super::error::Result;
use super::one::{needs_trial_dir, run_one, Observe};
use super::settle::SystemSnapshot;
use super::SETTLE_NS;
use super::{contaminated, intrial, whose, History};
use super::{default_timeout_ns, knobs, limits, noise, CellState, Keeper, RunState, Session};
use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus};
use schedlab_core::warning::OutsideProcess;
use schedlab_spec::plan::{Cell, Plan, PlannedTrial};

/// One attempt at a planned trial.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    /// The trial's number in the run, from 0 (a re-run keeps its trial's).
    pub n: usize,
    /// The planned trial.
    pub planned: PlannedTrial,
    /// 0: the planned trial; k: its k-th re-run, at the end of its round.
    pub retry: u32,
    /// Its place in the progress count, from 1.
    pub shown: usize,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// Its status as stored.
    pub status: TrialStatus,
    /// It was contaminated and is to be run again at the end of its round (stored flagged).
    pub rerun: bool,
}

/// Runs attempt `a` (of run `run_id`, of `plan`) and hands it to `keeper`; returns how it
/// ended, or None when it was interrupted (nothing stored). `resumed`: the cell has trials
/// stored from before, so its warnings were given then.
pub(crate) fn one_trial(
    s: &mut Session,
    keeper: &mut dyn Keeper,
    (run_id, plan): (i64, &Plan),
    state: &mut RunState,
    a: &Attempt,
    resumed: bool,
) -> Result<Option<Done>> {
    let (planned, n) = (&a.planned, a.n);
    let io_dir = plan.settings.io_dir.as_path();
    let cell = &plan.cells[planned.cell];
    // This run's kernel settings, another run's restored first (a worker's runs alternate).
    s.settings.enter(run_id, plan, keeper.sink())?;
    let observe = state.observe;
    let cs = &mut state.cells[planned.cell];
    if !cs.prepared() {
        prepare_cell(s, keeper, run_id, (planned.cell, cell), cs, io_dir, resumed)?;
    }
    let timeout_ns = plan
        .settings
        .timeout_ns
        .unwrap_or_else(|| default_timeout_ns(cell, cs.alone_ns));
    let mut meta = TrialMeta {
        timeout_ns,
        retry: a.retry,
        ..Default::default()
    };
    if cs.skipped.is_none() {
        // Set before the settle window, so the change settles before the trial.
        apply_knobs(s, run_id, cell, cs, &mut meta);
    }
    let mut warnings: Vec<schedlab_core::Warning> = Vec::new();
    let mut top = Vec::new();
    let outcome = match &cs.skipped {
        Some(reason) => TrialOutcome::not_run(TrialStatus::Skipped, reason.clone()),
        None => {
            let trial = Measured {
                run_id,
                n,
                planned,
                cell,
                io_dir,
                observe,
                timeout_ns,
            };
            let ctx = (&mut *cs, &mut state.history);
            measure(s, keeper, &trial, ctx, &mut meta, (&mut warnings, &mut top))?
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
        say_err!(
            "skipped: {}: {}",
            cell.label(),
            outcome.reason.as_deref().unwrap_or("")
        );
    }
    meta.retried = contaminated::rerun(&meta, &outcome, planned.warmup, plan.settings.retries);
    warnings.extend(contaminated::warnings(&meta, top, (n + 1, &cell.label())));
    keep(s, keeper, (run_id, cell), a, (&outcome, &meta), warnings)?;
    Ok(Some(Done {
        status: outcome.status,
        rerun: meta.retried,
    }))
}

/// Hands attempt `a` at a trial of `cell` (its `outcome` and `meta`) and its `warnings` to
/// `keeper`, and shows it.
fn keep(
    s: &Session,
    keeper: &mut dyn Keeper,
    (run_id, cell): (i64, &Cell),
    a: &Attempt,
    (outcome, meta): (&TrialOutcome, &TrialMeta),
    warnings: Vec<schedlab_core::Warning>,
) -> Result<()> {
    let sink = keeper.sink();
    let trial_id = sink.insert_trial(run_id, &a.planned, outcome, meta)?;
    for w in warnings {
        sink.add_warning(run_id, Some(trial_id), &w)?;
        s.progress.note(&format!("warning: {w}"));
    }
    let label = match a.retry {
        0 => cell.label(),
        k => format!("{} (re-run {k})", cell.label()),
    };
    s.progress
        .trial_done(a.shown, &label, a.planned.warmup, outcome);
    Ok(())
}

/// Sets the cell's kernel settings and records what they read back in `meta`; a cell whose
/// settings cannot be applied is skipped from now on.
fn apply_knobs(
    s: &mut Session,
    run_id: i64,
    cell: &Cell,
    cs: &mut CellState,
    meta: &mut TrialMeta,
) {
    match s.settings.apply(run_id, cell) {
        Ok(readings) => {
            meta.io_scheduler = readings
                .iter()
                .find(|r| r.name == knobs::IO_SCHEDULER)
                .map(|r| r.read_back.clone());
            meta.knobs = readings;
        }
        Err(reason) => {
            say_err!("skipped: {}: {reason}", cell.label());
            cs.skipped = Some(reason.to_string());
        }
    }
}

/// Calibrates cell `index` (its units agreed with the keeper: another worker's calibration
/// holds for every trial) and warns, once per run, about what its tasks will run into.
fn prepare_cell(
    s: &mut Session,
    keeper: &mut dyn Keeper,
    run_id: i64,
    (index, cell): (usize, &Cell),
    cs: &mut CellState,
    io_dir: &std::path::Path,
    resumed: bool,
) -> Result<()> {
    cs.prepare(cell, &mut s.calibrator(keeper.sink(), io_dir))?;
    let units = keeper.cell_units(run_id, index, cs.units.unwrap_or(1))?;
    if cs.units != Some(units) {
        // Another worker calibrated the cell first: its units hold for every trial.
        cs.units = Some(units);
        cs.prepare(cell, &mut s.calibrator(keeper.sink(), io_dir))?;
    }
    if let (Some(w), false) = (limits::cell_warning(cell, cs.alone_ns), resumed) {
        s.progress.note(&format!("warning: {w}"));
        keeper.sink().add_warning(run_id, None, &w)?;
    }
    Ok(())
}

/// What [`measure`] needs to know of the trial it runs.
struct Measured<'a> {
    run_id: i64,
    /// The trial's number in the run, from 0.
    n: usize,
    planned: &'a PlannedTrial,
    cell: &'a Cell,
    io_dir: &'a std::path::Path,
    observe: Observe,
    timeout_ns: u64,
}

/// Runs a trial that is not skipped: its task groups, the settle window (which tells whether
/// the machine is idle, and the kernel's own rate of work), the trial itself between two runs
/// of the reference loop, and the checks after it; fills `meta` (speeds judged against the
/// run's `history`) and appends the trial's warnings (the idle check's first) and the outside
/// processes that used the most.
fn measure(
    s: &mut Session,
    keeper: &mut dyn Keeper,
    t: &Measured,
    (cs, history): (&mut CellState, &mut History),
    meta: &mut TrialMeta,
    (warnings, top): (&mut Vec<schedlab_core::Warning>, &mut Vec<OutsideProcess>),
) -> Result<TrialOutcome> {
    let (cell, n) = (t.cell, t.n);
    keeper.starting(SETTLE_NS.saturating_add(t.timeout_ns))?;
    // The trial's task groups (CPU cgroups), before the settle window.
    let tag = format!(
        "r{}-c{}-t{}",
        t.run_id, t.planned.cell, t.planned.trial_index
    );
    let groups = match s.settings.start_groups(t.run_id, cell, &tag) {
        Ok(g) => g,
        Err(refused) => return Ok(refused.outcome()),
    };
    let settle = settle(meta, warnings, n);
    meta.started_at = schedlab_core::records::now_utc();
    let around = noise::Around::before(&s.reference, cell.cpus.as_deref(), &settle);
    let mut outcome = run_one(
        s.launcher,
        cell,
        cs,
        t.timeout_ns,
        t.io_dir,
        &format!("r{}-t{n}", t.run_id),
        &s.interrupted,
        (t.observe, groups.as_ref().map(|g| &g.groups)),
    )?;
    let label = cell.label();
    if let Some(g) = groups {
        let ended = s.settings.end_groups(g, cell, &mut outcome);
        warnings.extend(
            ended
                .into_iter()
                .map(|u| schedlab_core::Warning::CgroupTrial {
                    trial: n + 1,
                    cell: label.clone(),
                    problem: u.problem,
                    groups: u.groups,
                    error: u.error,
                }),
        );
    }
    let seen = around.after(
        &s.reference,
        cell.cpus.as_deref(),
        &outcome,
        meta,
        &mut history.reference,
    );
    *top = seen.top;
    if outcome.status == TrialStatus::Ok {
        judge_speed(t, (cs, history), &outcome, meta);
        warnings.extend(contaminated::kernel_work(
            meta,
            cs,
            (needs_trial_dir(cell), seen.capacity_ns),
            (n + 1, &label),
        ));
    }
    warnings.extend(limits::judge(cell, n + 1, &outcome, meta));
    Ok(outcome)
}

/// The settle window before trial `n`, which tells whether the machine is idle (in `meta`, and
/// a warning in `warnings` if not); returns the process table at its start.
fn settle(
    meta: &mut TrialMeta,
    warnings: &mut Vec<schedlab_core::Warning>,
    n: usize,
) -> whose::Scan {
    let scan = whose::Scan::take();
    let before = SystemSnapshot::capture();
    std::thread::sleep(std::time::Duration::from_nanos(SETTLE_NS));
    let after = SystemSnapshot::capture();
    let idle = after.busy_since(&before);
    meta.load1 = after.load1;
    meta.busy_pct = idle.busy_pct;
    meta.steal_pct = idle.steal_pct;
    meta.psi_cpu_some_pct = idle.psi_cpu_some_pct;
    warnings.extend(idle.warning(n + 1));
    scan
}

/// The in-trial speed of trial `t` of the cell `cs` (ok, with `outcome`), judged against the
/// run's `history`, in `meta`.
fn judge_speed(
    t: &Measured,
    (cs, history): (&CellState, &mut History),
    outcome: &TrialOutcome,
    meta: &mut TrialMeta,
) {
    let speed = intrial::speed(&t.cell.workload, cs.units_per_sec, outcome);
    intrial::record(meta, speed, &mut history.in_trial, t.planned.cell);
}
