//! Dispatch of subcommands; their outcomes and errors become exit codes in [`exit`] (0 ok,
//! 1 failure, 2 bad input, 129 hung up, 130 interrupted).

/// `println!` through the one printable filter ([`schedlab_core::text::printable`]): what a
/// command prints may hold stored or given text, whose control characters would be commands
/// to the terminal. A failed write (a closed pipe, once a run ignores SIGPIPE) does not panic:
/// it makes the command fail ([`output_failed`]).
macro_rules! sayln {
    () => {
        $crate::app::write_out("\n")
    };
    ($($arg:tt)*) => {
        $crate::app::write_out(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through the one printable filter (see [`sayln`]).
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::app::write_out(&format!($($arg)*))
    };
}

/// `eprintln!` through the one printable filter, never panicking (see [`sayln`]).
macro_rules! warnln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let text = schedlab_core::text::printable(&format!($($arg)*));
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }};
}

/// Whether a write to standard output failed.
static OUTPUT_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to standard output through the printable filter; a failure is remembered
/// (the command then exits 1), not a panic.
pub fn write_out(text: &str) {
    use std::io::Write as _;
    let text = schedlab_core::text::printable(text);
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        OUTPUT_FAILED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Whether a write to standard output failed (its reader went away, say).
pub fn output_failed() -> bool {
    OUTPUT_FAILED.load(std::sync::atomic::Ordering::SeqCst)
}

pub mod exit;
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
use exit::Outcome;
use schedlab_machine::secret;

/// The message for a password given on the command line, which every user can read.
const ARGV_PASSWORD: &str = "a postgres:// URL on the command line holds a password, which every user of this machine can read (ps, /proc/PID/cmdline, the launcher's too); remove it from the URL and give it in PGPASSWORD, in ~/.pgpass (mode 0600: HOST:PORT:DATABASE:USER:PASSWORD) or in a file of your own with --db-password-file FILE (SCHEDLAB_DB may hold the whole URL: the environment is the process's own)";

/// Refuses (exit 2) a command line holding a postgres:// URL with a password, before anything
/// starts. Refused, not rewritten: the arguments were readable by every user from the moment
/// this process was started, so hiding them now would hide nothing.
fn refuse_argv_password() -> Result<(), i32> {
    if std::env::args_os()
        .skip(1)
        .any(|a| secret::url_with_password(&a.to_string_lossy()))
    {
        warnln!("error: {ARGV_PASSWORD}");
        return Err(exit::EXIT_USAGE);
    }
    Ok(())
}

/// Reads `--db-password-file` for the PostgreSQL connections; exit 2 when it is refused.
fn use_password_file(cli: &Cli) -> Result<(), i32> {
    if let Some(file) = &cli.db_password_file {
        match schedlab_store::read_password_file(file) {
            Ok(p) => schedlab_store::use_password(p),
            Err(e) => {
                warnln!("error: {e}");
                return Err(exit::EXIT_USAGE);
            }
        }
    }
    Ok(())
}

/// Parses the command line, runs the subcommand, returns the exit code.
pub fn main() -> i32 {
    // Die quietly when a reader such as `head` closes the pipe, as other command-line tools do.
    let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGPIPE);
    if let Err(code) = refuse_argv_password() {
        return code;
    }
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
    if let Err(code) = use_password_file(&cli) {
        return code;
    }
    // Any command first puts back kernel settings a killed schedlab left changed.
    if !matches!(cli.command, Command::Restore) {
        schedlab_run::journal::recover_at_startup();
    }
    let done = |r: Result<(), schedlab_report::ReportError>| r.map(|()| Outcome::Done);
    let result: anyhow::Result<Outcome> = match cli.command {
        Command::Run(args) => run::cmd_run(&args),
        Command::Export(args) => runs::cmd_export(&args),
        Command::Plan(args) => run::cmd_plan(&args),
        Command::Runs(args) => runs::cmd_runs(&args),
        Command::Show(args) => runs::cmd_show(&args),
        // A malformed --claim is bad input (a SpecError); the message names it.
        Command::Report(args) => args
            .options()
            .map_err(Into::into)
            .and_then(|o| done(schedlab_report::cmd::report(&o)).map_err(Into::into)),
        Command::Stats(args) => args
            .options()
            .map_err(Into::into)
            .and_then(|o| cmd_stats(&o)),
        Command::Compare(args) => {
            done(schedlab_report::cmd::compare(&args.options())).map_err(Into::into)
        }
        Command::Push(args) => push::cmd_push(&args),
        Command::Submit(args) => queue::cmd_submit(&args),
        Command::Worker(args) => worker::cmd_worker(&args),
        Command::Queue(args) => queue::cmd_queue(&args),
        Command::Restore => run::cmd_restore(),
        Command::Policies => {
            say!(
                "{}",
                schedlab_machine::render_policy_report(
                    &schedlab_machine::policy_report(),
                    &schedlab_machine::EnvRecord::capture()
                )
            );
            Ok(Outcome::Done)
        }
    };
    match result {
        Ok(Outcome::Done) if output_failed() => {
            warnln!("error: cannot write to standard output (the reader of its pipe is gone?); everything the command changed was put back");
            exit::EXIT_FAILURE
        }
        Ok(outcome) => outcome.code(),
        Err(e) => {
            // Messages are masked where they are made; this catches what a library echoed
            // (an error of the PostgreSQL client, say).
            let secrets = secret::process_secrets();
            warnln!("error: {}", secret::scrub(&exit::message(&e), &secrets));
            exit::error_code(&e)
        }
    }
}

/// `schedlab stats`: the tables or the claims as JSON; a failure when a declared claim's
/// verdict is one of `--fail-on`'s (each said on standard error).
fn cmd_stats(o: &schedlab_report::cmd::StatsOptions) -> anyhow::Result<Outcome> {
    let failed = schedlab_report::cmd::stats(o)?;
    for f in &failed {
        warnln!("--fail-on: claim {f}");
    }
    Ok(if failed.is_empty() {
        Outcome::Done
    } else {
        Outcome::Failed
    })
}
