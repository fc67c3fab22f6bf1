//! The reading commands about stored runs: `runs`, `show` and `export` (read-only).

use crate::cli::{DbArgs, ExportArgs, ShowArgs};
use crate::store::{export, query, Store};
use anyhow::Result;

/// `schedlab runs`: one line per stored run.
pub fn cmd_runs(args: &DbArgs) -> Result<i32> {
    let store = Store::open_read(&args.db)?;
    let mut b = tabled::builder::Builder::default();
    b.push_record([
        "run",
        "spec",
        "started (UTC)",
        "cells",
        "trials done/planned",
        "status",
    ]);
    for r in query::runs(&store, None)? {
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

/// `schedlab show`: a run's command, spec as run, environment record and warnings.
pub fn cmd_show(args: &ShowArgs) -> Result<i32> {
    let store = Store::open_read(&args.db)?;
    let run_id = store.resolve_run(args.run, &args.db)?;
    let info = query::run_info(&store, run_id)?;
    println!(
        "# run {run_id} ({})\n# command: {}\n",
        info.status, info.argv
    );
    println!("# spec as run\n{}", info.spec_toml);
    if let Some(env) = info.env_json {
        let v: serde_json::Value = serde_json::from_str(&env)?;
        println!(
            "# environment record\n{}",
            serde_json::to_string_pretty(&v)?
        );
    }
    let warnings = query::warnings(&store, run_id)?;
    if !warnings.is_empty() {
        println!("\n# warnings");
        for w in warnings {
            println!("- {w}");
        }
    }
    Ok(0)
}

/// `schedlab export`: a table of a run as CSV or JSON, to a file or standard output.
pub fn cmd_export(args: &ExportArgs) -> Result<()> {
    let store = Store::open_read(&args.db)?;
    let run_id = store.resolve_run(args.run, &args.db)?;
    let rows = match &args.output {
        Some(path) => {
            let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
            export::export(&store, run_id, args.table, args.format, &mut f)?
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            export::export(&store, run_id, args.table, args.format, &mut lock)?
        }
    };
    if args.output.is_some() {
        eprintln!("wrote {rows} rows of run {run_id}");
    }
    Ok(())
}
