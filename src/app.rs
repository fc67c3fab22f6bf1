//! Dispatch of subcommands and the mapping of outcomes to exit codes (0 ok, 1 failure, 2 bad input, 130 interrupted).

use crate::cli::{Cli, Command, ExportArgs, RunArgs};
use crate::run::{self, RunOptions};
use crate::spec::SpecError;
use crate::store::{self, Store};
use anyhow::Result;
use clap::Parser;

/// Exit code for bad input (flags, spec).
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a run ended by Ctrl-C or SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Parses the command line, runs the subcommand, returns the exit code.
pub fn main() -> i32 {
    // Die quietly when a reader such as `head` closes the pipe, as other command-line tools do.
    let _ = crate::sys::restore_default_signal(crate::sys::Signal::SIGPIPE);
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cmd_run(&args),
        Command::Export(args) => cmd_export(&args).map(|_| 0),
        Command::Plan(args) => cmd_plan(&args),
        Command::Runs(args) => cmd_runs(&args),
        Command::Show(args) => cmd_show(&args),
        Command::Report(args) => crate::report::cmd::report(&args),
        Command::Stats(args) => crate::report::cmd::stats(&args),
        Command::Compare(args) => crate::report::cmd::compare(&args),
        Command::Policies => {
            print!(
                "{}",
                crate::env::render_policy_report(
                    &crate::env::policy_report(),
                    &crate::env::EnvRecord::capture()
                )
            );
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(spec) = e.downcast_ref::<SpecError>() {
                eprintln!("error: {spec}");
                return EXIT_USAGE;
            }
            eprintln!("error: {e:#}");
            1
        }
    }
}

/// The spec, plan and (when resuming) run id that `run` and `plan` work on.
fn spec_and_plan(args: &RunArgs) -> Result<(crate::spec::Spec, crate::plan::Plan, Option<i64>)> {
    if let Some(which) = args.resume {
        if args.spec.is_some() {
            return Err(SpecError(
                "--resume continues a stored run with its stored spec; do not give a spec file too"
                    .into(),
            )
            .into());
        }
        if !args.db.exists() {
            anyhow::bail!(
                "no results database at {} to resume from; pass --db PATH",
                args.db.display()
            );
        }
        let store = Store::open(&args.db)?;
        let run_id = match which {
            Some(id) => id,
            None => store.latest_unfinished_run()?.ok_or_else(|| {
                anyhow::anyhow!(
                    "every run in {} has finished; nothing to resume",
                    args.db.display()
                )
            })?,
        };
        let (toml_text, seed) = store.run_spec(run_id)?;
        let spec = crate::spec::Spec::from_toml(&toml_text)?;
        let plan = spec.plan(seed)?;
        return Ok((spec, plan, Some(run_id)));
    }
    let spec = args.to_spec()?;
    let seed = spec.settings.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let plan = match &args.spec {
        Some(path) => crate::spec::locate::plan_spec_file(path, &spec, seed)?,
        None => spec.plan(seed)?,
    };
    Ok((spec, plan, None))
}

fn cmd_plan(args: &RunArgs) -> Result<i32> {
    let (spec, plan, _) = spec_and_plan(args)?;
    let store = if args.db.exists() {
        Some(Store::open(&args.db)?)
    } else {
        None
    };
    let io_dir = spec
        .settings
        .io_dir
        .clone()
        .unwrap_or_else(|| "/var/tmp".into());
    let progress = crate::report::progress::Progress::new(0, true);
    let (kernel, cpu_model) = (crate::env::kernel_release(), crate::env::cpu_model());
    let per_cell = spec.settings.trials + spec.settings.warmup;
    let mut b = tabled::builder::Builder::default();
    b.push_record(["#", "cell", "units/task", "est. per trial"]);
    let mut total_ns: u64 = 0;
    let mut rates = std::collections::HashMap::new();
    for (i, cell) in plan.cells.iter().enumerate() {
        let key = crate::workload::calibrate::key(&cell.workload);
        let rate = match rates.get(&key) {
            Some(&r) => r,
            None => {
                let r = crate::run::workload_rate(
                    store.as_ref(),
                    &cell.workload,
                    &io_dir,
                    &kernel,
                    &cpu_model,
                    &progress,
                )?;
                rates.insert(key, r);
                r
            }
        };
        let units = crate::run::units_per_task(cell, rate);
        let est = crate::run::estimate_trial_ns(cell, rate.ns_for(units));
        total_ns += est * per_cell as u64;
        b.push_record([
            i.to_string(),
            cell.label(),
            units.to_string(),
            crate::report::terminal::fmt_ns(est as f64),
        ]);
    }
    println!("{} — {}", spec.name, spec.description);
    print!("{}", b.build().with(tabled::settings::Style::sharp()));
    println!();
    println!(
        "{} cells x {} trials ({} warm-up) = {} trials; estimated duration {} (seed {})",
        plan.cells.len(),
        per_cell,
        spec.settings.warmup,
        plan.trials.len(),
        fmt_duration(total_ns),
        plan.seed
    );
    Ok(0)
}

/// A long duration as `1 h 02 min`, `3 min 20 s` or `12 s`.
fn fmt_duration(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

fn cmd_runs(args: &crate::cli::DbArgs) -> Result<i32> {
    let store = open_existing(&args.db)?;
    let mut b = tabled::builder::Builder::default();
    b.push_record([
        "run",
        "spec",
        "started (UTC)",
        "cells",
        "trials done/planned",
        "status",
    ]);
    for r in store::query::runs(store.conn())? {
        b.push_record([
            r.run_id.to_string(),
            r.name,
            r.started_at,
            r.cells.to_string(),
            format!("{}/{}", r.trials_done, r.trials_planned),
            r.status,
        ]);
    }
    println!("{}", b.build().with(tabled::settings::Style::sharp()));
    Ok(0)
}

fn cmd_show(args: &crate::cli::ShowArgs) -> Result<i32> {
    let store = open_existing(&args.db)?;
    let run_id = resolve_run(&store, args.run, &args.db)?;
    let (spec_toml, _) = store.run_spec(run_id)?;
    let (env_json, argv, status): (Option<String>, String, String) = store.conn().query_row(
        "SELECT env_json, argv, status FROM runs WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    println!(
        "# run {run_id} ({status})
# command: {argv}
"
    );
    println!(
        "# spec as run
{spec_toml}"
    );
    if let Some(env) = env_json {
        let v: serde_json::Value = serde_json::from_str(&env)?;
        println!(
            "# environment record
{}",
            serde_json::to_string_pretty(&v)?
        );
    }
    let warnings = store::query::warnings(store.conn(), run_id)?;
    if !warnings.is_empty() {
        println!(
            "
# warnings"
        );
        for w in warnings {
            println!("- {w}");
        }
    }
    Ok(0)
}

fn open_existing(db: &std::path::Path) -> Result<Store> {
    if !db.exists() {
        anyhow::bail!(
            "no results database at {}; run `schedlab run` first or pass --db PATH",
            db.display()
        );
    }
    Store::open(db)
}

fn resolve_run(store: &Store, run: Option<i64>, db: &std::path::Path) -> Result<i64> {
    match run {
        Some(id) => {
            store.require_run(id)?;
            Ok(id)
        }
        None => store.latest_run()?.ok_or_else(|| {
            anyhow::anyhow!(
                "{} holds no runs yet; run `schedlab run` first",
                db.display()
            )
        }),
    }
}

fn cmd_run(args: &RunArgs) -> Result<i32> {
    let (spec, plan, resume) = spec_and_plan(args)?;
    let opts = RunOptions {
        db: args.db.clone(),
        quiet: args.quiet,
        argv: std::env::args().collect::<Vec<_>>().join(" "),
    };
    if !args.quiet {
        eprintln!(
            "schedlab: {} — {} cells x {} trials = {} trials, results in {}",
            spec.name,
            plan.cells.len(),
            spec.settings.trials + spec.settings.warmup,
            plan.trials.len(),
            args.db.display()
        );
    }
    let summary = run::execute(&spec, &plan, &opts, resume)?;
    let store = Store::open(&args.db)?;
    let cells = store::query::cells(store.conn(), summary.run_id, false)?;
    println!("run {} ({})", summary.run_id, spec.name);
    print!("{}", crate::report::terminal::render(&cells));
    if summary.interrupted {
        eprintln!(
            "interrupted: {} finished trials are stored in run {}; no task was left running",
            summary.ok + summary.skipped + summary.failed,
            summary.run_id
        );
        return Ok(EXIT_INTERRUPTED);
    }
    if args.strict && summary.skipped > 0 {
        eprintln!(
            "error: {} trials were skipped and --strict is set",
            summary.skipped
        );
        return Ok(1);
    }
    Ok(0)
}

fn cmd_export(args: &ExportArgs) -> Result<()> {
    if !args.db.exists() {
        anyhow::bail!(
            "no results database at {}; run `schedlab run` first or pass --db PATH",
            args.db.display()
        );
    }
    let store = open_existing(&args.db)?;
    let run_id = resolve_run(&store, args.run, &args.db)?;
    let rows = match &args.output {
        Some(path) => {
            let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
            store::export::export(store.conn(), run_id, args.table, args.format, &mut f)?
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            store::export::export(store.conn(), run_id, args.table, args.format, &mut lock)?
        }
    };
    if args.output.is_some() {
        eprintln!("wrote {rows} rows of run {run_id}");
    }
    Ok(())
}
