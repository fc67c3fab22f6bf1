//! Dispatch of subcommands and the mapping of outcomes to exit codes (0 ok, 1 failure, 2 bad
//! input, 129 hung up, 130 interrupted).

mod judge;
mod push;
mod queue;
pub mod remote;
mod run;
mod runs;
mod sink;
mod worker;

use crate::cli::{Cli, Command};
use clap::Parser;
use schedlab_machine::secret;
use schedlab_spec::SpecError;

/// Exit code for bad input (flags, spec).
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a run ended by Ctrl-C or SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code for a run ended by SIGHUP (a closed terminal), after restoring everything: what
/// the shell reports for a process the signal killed (128 + 1).
pub const EXIT_HANGUP: i32 = 129;

/// Parses the command line, runs the subcommand, returns the exit code.
pub fn main() -> i32 {
    // Die quietly when a reader such as `head` closes the pipe, as other command-line tools do.
    let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGPIPE);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap repeats arguments it does not expect (a URL given without --db, say).
            let text = secret::scrub(&e.render().to_string(), &secret::process_secrets());
            if e.use_stderr() {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
            return e.exit_code();
        }
    };
    // Any command first puts back kernel settings a killed schedlab left changed.
    if !matches!(cli.command, Command::Restore) {
        schedlab_run::journal::recover_at_startup();
    }
    let result = match cli.command {
        Command::Run(args) => run::cmd_run(&args),
        Command::Export(args) => runs::cmd_export(&args).map(|_| 0),
        Command::Plan(args) => run::cmd_plan(&args),
        Command::Runs(args) => runs::cmd_runs(&args),
        Command::Show(args) => runs::cmd_show(&args),
        Command::Report(args) => args
            .options()
            .map_err(|m| SpecError(m).into())
            .and_then(|o| schedlab_report::cmd::report(&o)),
        Command::Stats(args) => args
            .options()
            .map_err(|m| SpecError(m).into())
            .and_then(|o| schedlab_report::cmd::stats(&o)),
        Command::Compare(args) => schedlab_report::cmd::compare(&args.options()),
        Command::Push(args) => push::cmd_push(&args),
        Command::Submit(args) => queue::cmd_submit(&args),
        Command::Worker(args) => worker::cmd_worker(&args),
        Command::Queue(args) => queue::cmd_queue(&args),
        Command::Restore => run::cmd_restore(),
        Command::Policies => {
            print!(
                "{}",
                schedlab_machine::render_policy_report(
                    &schedlab_machine::policy_report(),
                    &schedlab_machine::EnvRecord::capture()
                )
            );
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Messages are masked where they are made; this catches what a library echoed
            // (an error of the PostgreSQL client, say).
            let secrets = secret::process_secrets();
            if let Some(spec) = e.downcast_ref::<SpecError>() {
                eprintln!("error: {}", secret::scrub(&spec.to_string(), &secrets));
                return EXIT_USAGE;
            }
            eprintln!("error: {}", secret::scrub(&format!("{e:#}"), &secrets));
            1
        }
    }
}
