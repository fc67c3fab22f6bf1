//! Exit codes, the one place they are decided: from what a command ended with ([`Outcome`])
//! or from the type of the error it failed with ([`error_code`]), never from a message's text.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | failure: the machine, the store or a trial failed (`--strict`: a cell was skipped; `run`, `worker`, `restore`: a setting stays changed) |
//! | 2 | bad input: a flag, a spec, a `--db` that is no schedlab database, a run id that is not stored |
//! | 129 | ended by SIGHUP (a closed terminal), after restoring everything |
//! | 130 | interrupted by Ctrl-C, SIGTERM or another terminating signal, after restoring everything |

use super::remote::RemoteError;
use schedlab_core::CoreError;
use schedlab_report::ReportError;
use schedlab_run::{KernelError, RunError};
use schedlab_spec::SpecError;
use schedlab_store::StoreError;
use std::error::Error;

/// Exit code of a command that did what it was asked.
pub const EXIT_OK: i32 = 0;
/// Exit code of a failure.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for bad input (flags, spec, `--db`, run ids), as clap's usage errors.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a run ended by SIGHUP (a closed terminal), after restoring everything: what
/// the shell reports for a process the signal killed (128 + 1).
pub const EXIT_HANGUP: i32 = 129;
/// Exit code for a run ended by Ctrl-C or SIGTERM.
pub const EXIT_INTERRUPTED: i32 = 130;

/// How a command that did not fail with an error ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did what it was asked.
    Done,
    /// It ran to its end but did not get what it was asked for (`--strict` with skipped
    /// trials; `restore` with settings it could not restore or journals it refused).
    Failed,
    /// Ctrl-C or SIGTERM ended it; everything was restored.
    Interrupted,
    /// SIGHUP ended it; everything was restored.
    HungUp,
}

impl Outcome {
    /// The process's exit code.
    pub fn code(self) -> i32 {
        match self {
            Outcome::Done => EXIT_OK,
            Outcome::Failed => EXIT_FAILURE,
            Outcome::Interrupted => EXIT_INTERRUPTED,
            Outcome::HungUp => EXIT_HANGUP,
        }
    }
}

/// A bad value of a flag that the binary itself checks (the stages check theirs).
#[derive(Debug, thiserror::Error)]
#[error("{flag} {value}: {message}")]
pub struct BadFlag {
    /// The flag, e.g. `--lease`.
    pub flag: &'static str,
    /// The value given.
    pub value: String,
    /// What is wrong and what to write instead.
    pub message: String,
}

/// Refuses host labels (`--hosts`, `--labels`) that are not printable text on one line: a
/// label is stored and shown on terminals and in reports.
pub fn check_labels(flag: &'static str, labels: &[String]) -> Result<(), BadFlag> {
    for label in labels {
        if let Some(why) = schedlab_core::text::refusal("the label", label) {
            return Err(BadFlag {
                flag,
                value: schedlab_core::text::printable_line(label),
                message: format!("{why}; give host names such as web1"),
            });
        }
    }
    Ok(())
}

/// The directory of output file `path` (given with `flag`), opened and checked, and the
/// file's name in it: a directory someone else could plant links in is refused, naming the
/// flag ([`schedlab_sys::OutDir`]).
pub fn output_parent(
    flag: &'static str,
    path: &std::path::Path,
) -> Result<(schedlab_sys::OutDir, String), BadFlag> {
    let bad = |message: String| BadFlag {
        flag,
        value: path.display().to_string(),
        message,
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| bad("name a file (a UTF-8 name, not a directory)".into()))?;
    let parent = path.parent().unwrap_or(std::path::Path::new(""));
    let dir = schedlab_sys::OutDir::open(parent).map_err(|e| {
        bad(format!(
            "{e}; write the file in a directory only you can write, or to standard output"
        ))
    })?;
    Ok((dir, name.to_string()))
}

/// A command line that asks for something impossible, whatever its values (a spec file
/// with `--resume`, nothing left to resume, a push from a store to itself).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The exit code of an error: the outermost error of a known type decides (anyhow's
/// contexts are looked through); an error of no known type is a failure.
pub fn error_code(e: &anyhow::Error) -> i32 {
    match e.chain().find_map(bad_input) {
        Some(true) => EXIT_USAGE,
        Some(false) | None => EXIT_FAILURE,
    }
}

/// Whether `e` is bad input; None when its type is none of those known here.
fn bad_input(e: &(dyn Error + 'static)) -> Option<bool> {
    // A stored spec that does not read comes as the store read it with its row (shared).
    let spec = e.is::<SpecError>() || e.is::<std::sync::Arc<SpecError>>();
    if spec || e.is::<BadFlag>() || e.is::<Usage>() || e.is::<CoreError>() {
        return Some(true);
    }
    if let Some(e) = e.downcast_ref::<StoreError>() {
        return Some(e.is_bad_input());
    }
    if let Some(e) = e.downcast_ref::<ReportError>() {
        return Some(e.is_bad_input());
    }
    if let Some(e) = e.downcast_ref::<RemoteError>() {
        return Some(e.is_bad_input());
    }
    if let Some(e) = e.downcast_ref::<KernelError>() {
        return Some(matches!(e, KernelError::Refused(_)));
    }
    match e.downcast_ref::<RunError>()? {
        // What the sink failed with: the store's own type decides.
        RunError::Sink(inner) => Some(bad_input(&**inner).unwrap_or(false)),
        e => Some(e.is_bad_input()),
    }
}

/// The message of `e` on one line: each cause in turn, unless the message already holds it
/// (typed errors show their cause in their own message; anyhow's contexts do not).
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn the_type_decides_through_contexts_and_sinks() {
        let spec: anyhow::Error = SpecError::Flag {
            flag: "--knob",
            value: "x".into(),
            message: "give NAME=V1,V2".into(),
        }
        .into();
        assert_eq!(error_code(&spec), EXIT_USAGE);
        let run: anyhow::Result<()> = Err(StoreError::NoSuchRun { id: 9 }.into());
        let run = run.context("while resuming").unwrap_err();
        assert_eq!(error_code(&run), EXIT_USAGE);
        let sink: anyhow::Error = RunError::Sink(Box::new(StoreError::NoRow)).into();
        assert_eq!(error_code(&sink), EXIT_FAILURE);
        let sink: anyhow::Error = RunError::Sink(Box::new(StoreError::NoSuchRun { id: 1 })).into();
        assert_eq!(error_code(&sink), EXIT_USAGE);
        let remote = RunError::Sink(Box::new(RemoteError::Store(StoreError::NoSuchRun {
            id: 2,
        })));
        assert_eq!(error_code(&remote.into()), EXIT_USAGE);
        let gave_up = RunError::Sink(Box::new(RemoteError::GaveUp {
            location: "postgres://u@h/db".into(),
            waited_s: 600,
            spool: "spool.db".into(),
        }));
        assert_eq!(error_code(&gave_up.into()), EXIT_FAILURE);
        let io: anyhow::Error = std::io::Error::other("disk on fire").into();
        assert_eq!(error_code(&io), EXIT_FAILURE);
        let knob: anyhow::Error = KernelError::from(schedlab_run::error::Refusal::DeniedHeld {
            file: "/proc/sys/kernel/modprobe".into(),
            reason: "deny list",
        })
        .into();
        assert_eq!(error_code(&knob), EXIT_USAGE);
        let busy: anyhow::Error = KernelError::from(schedlab_run::error::Busy {
            name: "vm.swappiness".into(),
            path: "/proc/sys/vm/swappiness".into(),
            pid: 1,
            command: "schedlab run".into(),
        })
        .into();
        assert_eq!(error_code(&busy), EXIT_FAILURE);
    }

    #[test]
    fn a_stored_spec_that_does_not_read_is_bad_input_as_the_store_shares_it() {
        let why = schedlab_spec::Spec::read_as_run("quantum = 4").unwrap_err();
        let shared: anyhow::Error = std::sync::Arc::new(why).into();
        assert_eq!(error_code(&shared), EXIT_USAGE);
        assert!(message(&shared).contains("does not read"), "{shared}");
    }

    #[test]
    fn a_message_shows_each_cause_once() {
        let e: anyhow::Result<()> = Err(StoreError::NoSuchRun { id: 9 }.into());
        let e = e.context("run B (9), in a.db").unwrap_err();
        assert_eq!(
            message(&e),
            "run B (9), in a.db: run 9 is not in this database; `schedlab runs` lists the stored runs"
        );
        let nested =
            schedlab_store::error::Context::context(Err::<(), _>(StoreError::NoRow), "reading")
                .unwrap_err();
        assert_eq!(
            message(&nested.into()),
            "reading: the query returned no row"
        );
    }
}
