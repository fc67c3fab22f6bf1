//! The reading commands about stored runs: `runs`, `show` and `export` (read-only).

use super::exit::Outcome;
use crate::cli::{ExportArgs, RunsArgs, ShowArgs};
use anyhow::Result;
use schedlab_store::{export, query, Store};
use std::io::Write as _;

/// `schedlab runs`: one line per stored run (of one host with `--host`).
pub fn cmd_runs(args: &RunsArgs) -> Result<Outcome> {
    let store = Store::open_read(&args.db)?;
    let mut b = tabled::builder::Builder::default();
    b.push_record([
        "run",
        "spec",
        "spec hash",
        "host",
        "kernel",
        "started (UTC)",
        "cells",
        "trials done/planned",
        "status",
    ]);
    for r in query::runs(&store, args.host.as_deref())? {
        b.push_record([
            r.run_id.to_string(),
            r.name,
            r.spec_hash[..8].to_string(),
            r.host.unwrap_or_else(|| "-".into()),
            r.kernel.unwrap_or_else(|| "-".into()),
            r.started_at,
            r.cells.to_string(),
            format!("{}/{}", r.trials_done, r.trials_planned),
            r.status.to_string(),
        ]);
    }
    sayln!("{}", b.build().with(tabled::settings::Style::sharp()));
    Ok(Outcome::Done)
}

/// `schedlab show`: a run's command, spec as run, environment record and warnings.
pub fn cmd_show(args: &ShowArgs) -> Result<Outcome> {
    let store = Store::open_read(&args.db)?;
    let run_id = store.resolve_run(args.run, "show", &args.db)?;
    let info = query::run_info(&store, run_id)?;
    sayln!("# run {run_id} ({})\n# command: {}", info.status, info.argv);
    sayln!(
        "# host: {} ({}), kernel {}, CPU {}",
        info.host.as_deref().unwrap_or("unknown"),
        info.machine_id.as_deref().unwrap_or("no machine id"),
        info.kernel.as_deref().unwrap_or("unknown"),
        info.cpu_model.as_deref().unwrap_or("unknown")
    );
    sayln!(
        "# schedlab {}{}; run UUID {}\n",
        info.version,
        info.git_commit
            .as_deref()
            .map_or(String::new(), |c| format!(" ({c})")),
        info.uuid.as_deref().unwrap_or("none")
    );
    sayln!("# spec as run\n{}", info.spec_toml());
    if let Some(env) = info.env_json {
        let v: serde_json::Value = serde_json::from_str(&env)?;
        sayln!(
            "# environment record\n{}",
            serde_json::to_string_pretty(&v)?
        );
    }
    let warnings = query::warnings(&store, run_id)?;
    if !warnings.is_empty() {
        sayln!("\n# warnings");
        for w in warnings {
            sayln!("- {w}");
        }
    }
    Ok(Outcome::Done)
}

/// `schedlab export`: a table of a run as CSV or JSON, to a file or standard output.
pub fn cmd_export(args: &ExportArgs) -> Result<Outcome> {
    let store = Store::open_read(&args.db)?;
    let run_id = store.resolve_run(args.run, "--run", &args.db)?;
    let rows = match &args.output {
        Some(path) => {
            // Written anew beside its name and renamed over it, in a directory nobody else
            // may write: a link planted at the name is replaced, never followed.
            let (dir, name) = super::exit::output_parent("-o", path)?;
            let mut rows = Ok(0);
            dir.write_file(&name, 0o666, |f| {
                let mut w = std::io::BufWriter::new(f);
                rows = export::export(&store, run_id, args.table, args.format, &mut w);
                match &rows {
                    Ok(_) => w.flush(),
                    Err(e) => Err(std::io::Error::other(e.to_string())),
                }
            })
            .or_else(|e| if rows.is_err() { Ok(()) } else { Err(e) })?;
            rows?
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            export::export(&store, run_id, args.table, args.format, &mut lock)?
        }
    };
    if args.output.is_some() {
        warnln!("wrote {rows} rows of run {run_id}");
    }
    Ok(Outcome::Done)
}
