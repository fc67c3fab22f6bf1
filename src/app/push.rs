//! `schedlab push`: a results database (or the spool) copied into another store, idempotently.

use super::exit::{Outcome, Usage};
use super::remote::default_spool;
use crate::cli::PushArgs;
use anyhow::{Context, Result};
use schedlab_store::push::{push, PushOptions};
use schedlab_store::{Location, Store};

/// `schedlab push FILE --to URL`, or `schedlab push --spool --to URL`.
pub fn cmd_push(args: &PushArgs) -> Result<Outcome> {
    if args.from.as_ref() == Some(&args.to) {
        return Err(Usage(format!(
            "--to {}: it is both the source and the target of the push",
            args.to
        ))
        .into());
    }
    let spool = args.spool_file.clone().unwrap_or_else(default_spool);
    // Every run asked for is in the source, before the target is opened (or created).
    match (&args.from, args.spool) {
        (Some(from), false) => check_runs(from, &args.runs)?,
        (_, true) if spool.exists() => check_runs(&Location::File(spool.clone()), &args.runs)?,
        _ => {}
    }
    // The target first: if it cannot be reached, the source is not opened for writing.
    let dst = Store::open(&args.to)?;
    let (src, remove_pushed) = if args.spool {
        let path = spool;
        if !path.exists() {
            sayln!("the spool {} is empty: nothing to push", path.display());
            return Ok(Outcome::Done);
        }
        (Store::open_existing(&path)?, true)
    } else {
        let Some(from) = &args.from else {
            return Err(Usage("give the database to push, or --spool".into()).into());
        };
        // Opened for writing: an older file is upgraded in place, which gives its runs their
        // UUIDs once and for all (a read-only copy would give new ones at every push).
        (Store::open_existing(from)?, false)
    };
    let s = push(
        &src,
        &dst,
        &PushOptions {
            runs: (!args.runs.is_empty()).then(|| args.runs.clone()),
            remove_pushed,
        },
    )
    .with_context(|| format!("push from {} stopped; what was pushed before stays pushed, and pushing again completes it", src.location()))?;
    sayln!(
        "pushed {} to {}: {} runs added, {} runs already there ({} trials added, {} already there)",
        src.location(),
        dst.location(),
        s.runs_added,
        s.runs_merged,
        s.trials_added,
        s.trials_present
    );
    if !s.runs_without_uuid.is_empty() {
        warnln!(
            "warning: runs {:?} have no UUID and were left out; they come from a database written outside schedlab",
            s.runs_without_uuid
        );
    }
    Ok(Outcome::Done)
}

/// Checks that every run of `runs` is stored at `from` (read only: nothing changes there).
fn check_runs(from: &Location, runs: &[i64]) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let src = Store::open_read(from)?;
    for &id in runs {
        src.require_run(id)
            .with_context(|| format!("--runs {id}, in {from}"))?;
    }
    Ok(())
}
