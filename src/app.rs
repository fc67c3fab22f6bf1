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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => cmd_run(&args),
        Command::Export(args) => cmd_export(&args).map(|_| 0),
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

fn cmd_run(args: &RunArgs) -> Result<i32> {
    let spec = args.to_spec()?;
    let seed = spec.settings.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let plan = spec.plan(seed)?;
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
    let summary = run::execute(&spec, &plan, &opts)?;
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
    let store = Store::open(&args.db)?;
    let run_id = match args.run {
        Some(id) => {
            store.require_run(id)?;
            id
        }
        None => store.latest_run()?.ok_or_else(|| {
            anyhow::anyhow!(
                "{} holds no runs yet; run `schedlab run` first",
                args.db.display()
            )
        })?,
    };
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
