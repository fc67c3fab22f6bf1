//! The `run` and `plan` commands: spec and plan from the command line, then the run or its estimate.

use super::exit::{Outcome, Usage};
use super::remote::Remote;
use super::sink::StoreSink;
use crate::cli::RunArgs;
use anyhow::Result;
use schedlab_run::sink::Sink;
use schedlab_run::{RunError, RunOptions};
use schedlab_spec::plan::Plan;
use schedlab_store::{Store, StoreError};

/// The spec, plan and (when resuming) run id that `run` and `plan` work on; knobs on the deny
/// list or naming one file twice are refused as bad input.
fn spec_and_plan(args: &RunArgs) -> Result<(schedlab_spec::plan::Plan, Option<i64>)> {
    let (plan, resume) = build_plan(args)?;
    schedlab_run::knobs::check(&plan, &plan.settings.io_dir).map_err(RunError::KnobsRefused)?;
    Ok((plan, resume))
}

fn build_plan(args: &RunArgs) -> Result<(schedlab_spec::plan::Plan, Option<i64>)> {
    if let Some(which) = args.resume {
        if args.spec.is_some() {
            return Err(Usage(
                "--resume continues a stored run with its stored spec; do not give a spec file too"
                    .into(),
            )
            .into());
        }
        if !args.db.exists() {
            return Err(StoreError::NoDatabase {
                location: args.db.to_string(),
            }
            .into());
        }
        let store = Store::open_read(&args.db)?;
        let run_id = match which {
            Some(id) => {
                store.require_run(id).map_err(|e| {
                    anyhow::Error::new(e).context(format!("--resume {id}, in {}", args.db))
                })?;
                id
            }
            None => store.latest_unfinished_run()?.ok_or_else(|| {
                Usage(format!(
                    "--resume: every run in {} has finished; nothing to resume",
                    args.db.display()
                ))
            })?,
        };
        let info = schedlab_store::query::run_info(&store, run_id)?;
        if info.status == schedlab_core::records::RunStatus::Running {
            anyhow::bail!(
                "run {run_id} in {} is still running in another schedlab process; wait for it or stop it (Ctrl-C) before resuming",
                args.db.display()
            );
        }
        // The spec as the store read it with the row, once: not read from the store again.
        let plan = schedlab_spec::plan::build(info.spec_read()?, info.seed)?;
        return Ok((plan, Some(run_id)));
    }
    let spec = args.to_spec()?;
    let seed = spec.settings.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let plan = match &args.spec {
        Some(path) => schedlab_spec::plan::build_for_file(path, &spec, seed)?,
        None => schedlab_spec::plan::build(&spec, seed)?,
    };
    Ok((plan, None))
}

/// `schedlab plan`: the plan's cells with their calibrated work and estimated time, what it
/// changes on the machine, and its length, without running it.
pub fn cmd_plan(args: &RunArgs) -> Result<Outcome> {
    let (plan, _) = spec_and_plan(args)?;
    schedlab_run::capacity::check_plan(&plan)?;
    let mut sink = if args.db.exists() {
        Some(StoreSink::local(&args.db, Store::open(&args.db)?))
    } else {
        None
    };
    let estimate = estimate(&plan, sink.as_mut())?;
    sayln!("{} — {}", plan.name, plan.description);
    say!("{}", estimate.table);
    sayln!();
    print_changes(&plan);
    sayln!("{}", plan_length(&plan, estimate.total_ns));
    if let Some(a) = &plan.settings.adaptive {
        sayln!("{}", adaptive_bounds(a));
    }
    for line in design_lines(&plan) {
        sayln!("{line}");
    }
    for w in &estimate.warnings {
        sayln!("warning: {w}");
    }
    Ok(Outcome::Done)
}

/// What `plan` prints of a plan's cells: their table, the estimated time of all their trials
/// and warnings about the kernel's limits.
struct Estimate {
    table: String,
    total_ns: u64,
    warnings: Vec<schedlab_core::Warning>,
}

/// Each cell's units of work per task (calibrated, or as stored in `sink`) and estimated
/// trial time.
fn estimate(plan: &Plan, sink: Option<&mut StoreSink>) -> Result<Estimate> {
    let progress = schedlab_run::progress::Progress::new(0, true);
    let sink = sink.map(|s| s as &mut dyn Sink);
    let mut cal = schedlab_run::Calibrator::new(sink, &plan.settings.io_dir, &progress);
    let per_cell = plan.settings.trials + plan.settings.warmup;
    let mut b = tabled::builder::Builder::default();
    b.push_record(["#", "cell", "units/task", "est. per trial"]);
    let mut total_ns: u64 = 0;
    let mut rates = std::collections::HashMap::new();
    let mut warnings = Vec::new();
    for (i, cell) in plan.cells.iter().enumerate() {
        let key = schedlab_core::workload::calibrate::key(&cell.workload);
        let rate = match rates.get(&key) {
            Some(&r) => r,
            None => {
                let r = cal.rate(&cell.workload)?;
                rates.insert(key, r);
                r
            }
        };
        let units = schedlab_run::units_per_task(cell, rate);
        schedlab_run::capacity::check_trial_length(cell, rate.ns_for(units))?;
        let est = schedlab_run::estimate_trial_ns(cell, rate.ns_for(units));
        total_ns = total_ns.saturating_add(est.saturating_mul(u64::from(per_cell)));
        warnings.extend(schedlab_run::limits::cell_warning(cell, rate.ns_for(units)));
        b.push_record([
            i.to_string(),
            cell.label(),
            units.to_string(),
            schedlab_report::render::fmt::fmt_ns(est as f64),
        ]);
    }
    let table = b.build().with(tabled::settings::Style::sharp()).to_string();
    Ok(Estimate {
        table,
        total_ns,
        warnings,
    })
}

/// The kernel settings and CPU cgroups `plan` changes, if any.
fn print_changes(plan: &Plan) {
    let changes = schedlab_run::knobs::describe(plan, &plan.settings.io_dir);
    if !changes.is_empty() {
        sayln!("Kernel settings this plan changes (read back before every trial, restored after the run):");
        for line in changes {
            sayln!("  {line}");
        }
    }
    let groups = schedlab_run::cgroups::describe(plan);
    if !groups.is_empty() {
        sayln!("CPU cgroups of this plan (each trial's task groups, created before it and removed after it):");
        for line in groups {
            sayln!("  {line}");
        }
    }
}

/// How many trials `plan` runs and how long they take (`total_ns` for every cell's trials of a
/// fixed plan), as ranges for an adaptive plan.
fn plan_length(plan: &Plan, total_ns: u64) -> String {
    let per_cell = plan.settings.trials + plan.settings.warmup;
    let w = plan.settings.warmup;
    let Some(a) = &plan.settings.adaptive else {
        return format!(
            "{} cells x {} trials ({} warm-up) = {} trials; estimated duration {} (seed {})",
            plan.cells.len(),
            per_cell,
            w,
            plan.trials.len(),
            fmt_duration(total_ns),
            plan.seed
        );
    };
    let rounds = |measured: u32| plan.cells.len() as u64 * u64::from(measured + w);
    let per_round = total_ns / u64::from(per_cell.max(1));
    format!(
        "{} cells x {}..{} trials ({w} warm-up) = {}..{} trials; estimated duration {}..{} (seed {})",
        plan.cells.len(),
        a.min_trials,
        a.max_trials,
        rounds(a.min_trials),
        rounds(a.max_trials),
        fmt_duration(per_round.saturating_mul(u64::from(a.min_trials + w))),
        fmt_duration(per_round.saturating_mul(u64::from(a.max_trials + w))),
        plan.seed
    )
}

/// What a run is about to do, on standard error: its size, its adaptive bounds and what its
/// design can decide.
fn announce(plan: &Plan, args: &RunArgs) {
    warnln!(
        "schedlab: {} — {} cells x {} trials = {} trials, results in {}",
        plan.name,
        plan.cells.len(),
        plan.trials.len() / plan.cells.len().max(1),
        plan.trials.len(),
        args.db.display()
    );
    if let Some(a) = &plan.settings.adaptive {
        warnln!("{}", adaptive_bounds(a));
    }
    for line in design_lines(plan) {
        warnln!("{line}");
    }
}

/// What the plan's design can decide, as lines (none without claims).
fn design_lines(plan: &Plan) -> Vec<String> {
    schedlab_report::claims::design::statement(plan).map_or_else(Vec::new, |s| s.lines())
}

/// The table of a run's cells printed after it, then its claims' verdicts.
fn print_cells(store: &Store, run_id: i64, name: &str, wide: bool) -> Result<()> {
    let (cells, left_out) = schedlab_report::model::quality::clean_cells(
        schedlab_store::query::cells(store, run_id, false)?,
        schedlab_store::quality::trial_quality(store, run_id, false)?,
    );
    sayln!("run {run_id} ({name})");
    say!(
        "{}",
        schedlab_report::render::terminal::render(
            &schedlab_report::model::run_table::lines(&cells),
            wide
        )
    );
    if let Some(l) = schedlab_report::model::quality::left_out(&left_out) {
        sayln!("{}", schedlab_report::render::notes::left_out(&l));
    }
    let input = schedlab_report::pool::load_input(store, run_id, false)?;
    if let Some(claims) = schedlab_report::claims::eval::build(&input) {
        sayln!();
        say!(
            "{}",
            schedlab_core::text::printable(&schedlab_report::render::claims::terminal::render(
                &claims
            ))
        );
    }
    Ok(())
}

/// What an adaptive run stops on, in one sentence.
fn adaptive_bounds(a: &schedlab_spec::plan::Adaptive) -> String {
    let mut targets: Vec<String> = Vec::new();
    if let Some(p) = a.precision {
        targets.push(format!(
            "every cell's 95% confidence sequence of its {} is within ±{}% of its median (a sequence is finite from 10 trials)",
            a.metric,
            p * 100.0
        ));
    }
    if a.until_decided {
        targets.push("no claim is inconclusive (alpha spent over the looks)".into());
    }
    format!(
        "adaptive: whole shuffled rounds are added after the first {} until {}, or after {} rounds{}",
        a.min_trials,
        targets.join(" and "),
        a.max_trials,
        a.max_time_ns.map_or(String::new(), |t| format!(
            ", or when another round would end after {}",
            fmt_duration(t)
        ))
    )
}

/// `schedlab restore`: restores what dead schedlab processes left changed (their restore
/// journals), says for every setting what it found and did, names journals still held by
/// running ones, and refuses (exit 1) journals or a state directory it cannot trust.
pub fn cmd_restore() -> Result<Outcome> {
    let dir = schedlab_run::journal::state_dir();
    if !schedlab_sys::is_root() && dir.exists() {
        anyhow::bail!(
            "restoring kernel settings needs root; run `sudo schedlab restore` (journals in {})",
            dir.display()
        );
    }
    let r = schedlab_run::journal::recover(&dir, &schedlab_run::knobfile::system_roots())?;
    for line in &r.lines {
        sayln!("{line}");
    }
    for (pid, command) in &r.live {
        sayln!("schedlab pid {pid} (`{command}`) is running and restores its own settings when it ends");
    }
    for (file, why) in &r.unreadable {
        sayln!(
            "{} is not a schedlab restore journal ({why}); left as it is",
            file.display()
        );
    }
    for line in &r.refused {
        warnln!("error: {line}");
    }
    let stale = schedlab_run::cgroups::remove_stale();
    for line in &stale.lines {
        sayln!("{line}");
    }
    if r.lines.is_empty()
        && r.live.is_empty()
        && r.unreadable.is_empty()
        && r.refused.is_empty()
        && stale.lines.is_empty()
    {
        sayln!(
            "nothing to restore: no restore journal in {}",
            dir.display()
        );
    }
    Ok(if r.failed || stale.failed || !r.refused.is_empty() {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

/// A long duration as `1 h 02 min`, `3 min 20 s` or `12 s`; a sum that saturated at
/// `u64::MAX` ns (584 years) says so rather than wrap.
fn fmt_duration(ns: u64) -> String {
    if ns == u64::MAX {
        return "more than 5124095 h".into();
    }
    let s = ns / 1_000_000_000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// The plan's counted work calibrated (stored speeds taken from `db` if it exists, read only)
/// and checked, before anything is written: a refused plan leaves no database and no row.
/// Returns the speeds measured now, to be stored once the store is open.
fn precheck(plan: &Plan, db: &schedlab_store::Location) -> Result<Vec<schedlab_run::Measured>> {
    let quiet = schedlab_run::progress::Progress::new(0, true);
    let mut cache = match db.path() {
        Some(p) if p.exists() => Some(StoreSink::local(db, Store::open_read(db)?)),
        _ => None,
    };
    let sink = cache.as_mut().map(|s| s as &mut dyn Sink);
    let mut cal = schedlab_run::Calibrator::new(sink, &plan.settings.io_dir, &quiet);
    Ok(schedlab_run::capacity::check_calibrated(plan, &mut cal)?)
}

/// A run whose store is a PostgreSQL server (trials spooled while it cannot be reached); the
/// speeds `measured` by the plan's check are stored first.
fn run_on_server(
    args: &RunArgs,
    plan: &Plan,
    opts: &RunOptions,
    resume: Option<i64>,
    measured: &[schedlab_run::Measured],
) -> Result<(i64, schedlab_run::Summary)> {
    let spool = args
        .spool_file
        .clone()
        .unwrap_or_else(super::remote::default_spool);
    let mut sink = StoreSink::new(Remote::connect(&args.db, &spool, false)?);
    for m in measured {
        m.save(&mut sink)?;
    }
    let (run_id, summary) = schedlab_run::execute(plan, &mut sink, opts, resume)?;
    let remote = &mut sink.remote;
    if remote.spooled > 0 {
        // One more try, so that a server back by now gets everything.
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    let reachable = remote.server().is_some();
    if reachable && remote.spooled == 0 {
        let store = remote.server().expect("reachable");
        print_cells(store, run_id, &plan.name, args.wide)?;
    } else {
        warnln!(
            "run {} ({}): the server at {} cannot be reached; {} finished trials and the run's end are kept in the spool {}, and \
             `schedlab push --spool --to URL` sends them when the server is back (a later run or worker does it too)",
            run_id,
            plan.name,
            args.db,
            remote.spooled,
            remote.spool_path().display()
        );
    }
    Ok((run_id, summary))
}

pub fn cmd_run(args: &RunArgs) -> Result<Outcome> {
    let (plan, resume) = spec_and_plan(args)?;
    // Before the store is opened: a plan this machine cannot hold creates nothing.
    schedlab_run::capacity::check_plan(&plan)?;
    let measured = precheck(&plan, &args.db)?;
    let opts = RunOptions {
        quiet: args.quiet,
        argv: schedlab_machine::secret::command_line(),
        judge: Some(std::sync::Arc::new(super::judge::StoppingJudge)),
    };
    if !args.quiet {
        announce(&plan, args);
    }
    let (run_id, summary) = if args.db.is_server() {
        run_on_server(args, &plan, &opts, resume, &measured)?
    } else {
        let mut sink = StoreSink::local(&args.db, Store::open(&args.db)?);
        for m in &measured {
            m.save(&mut sink)?;
        }
        let (run_id, summary) = schedlab_run::execute(&plan, &mut sink, &opts, resume)?;
        let store = sink.store().expect("a local store is never out of reach");
        print_cells(store, run_id, &plan.name, args.wide)?;
        (run_id, summary)
    };
    if summary.interrupted {
        warnln!(
            "interrupted: {} finished trials are stored in run {}; no task was left running",
            summary.stored(),
            run_id
        );
        return Ok(if summary.hung_up {
            Outcome::HungUp
        } else {
            Outcome::Interrupted
        });
    }
    if args.strict && summary.skipped > 0 {
        warnln!(
            "error: {} trials were skipped and --strict is set",
            summary.skipped
        );
        return Ok(Outcome::Failed);
    }
    Ok(Outcome::Done)
}
