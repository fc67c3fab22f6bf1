//! `schedlab submit` (an experiment's trials into the work queue, one run per host label and
//! repeat) and `schedlab queue` (the queue's state per run, host label and worker).

use super::exit::Outcome;
use crate::cli::{DbArgs, RunArgs, SubmitArgs};
use anyhow::Result;
use schedlab_run::RunError;
use schedlab_spec::{Problem, SpecError};
use schedlab_store::{NewRun, Store};

/// `schedlab submit SPEC --db URL [--hosts A,B] [--repeat N]`.
pub fn cmd_submit(args: &SubmitArgs) -> Result<Outcome> {
    super::exit::check_labels("--hosts", &args.hosts)?;
    let spec_args = RunArgs {
        spec: Some(args.spec.clone()),
        seed: args.seed,
        ..RunArgs::default()
    };
    let spec = spec_args.to_spec()?;
    let seed = spec.settings.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let plan = schedlab_spec::plan::build_for_file(&args.spec, &spec, seed)?;
    schedlab_run::knobs::check(&plan, &plan.settings.io_dir).map_err(RunError::KnobsRefused)?;
    if plan.settings.adaptive.is_some() {
        return Err(SpecError::Invalid(Problem::new(
            "settings.precision",
            "the work queue holds a fixed set of trials: give the spec a trial count, not a precision (adaptive runs go through `schedlab run`)",
        ))
        .into());
    }
    if args.repeat == 0 {
        return Err(SpecError::Flag {
            flag: "--repeat",
            value: "0".into(),
            message: "must be at least 1".into(),
        }
        .into());
    }
    let labels: Vec<Option<&str>> = if args.hosts.is_empty() {
        vec![None]
    } else {
        args.hosts.iter().map(|h| Some(h.as_str())).collect()
    };
    let mut store = Store::open(&args.db)?;
    let argv = schedlab_machine::secret::command_line();
    let run = NewRun {
        name: &plan.name,
        seed: plan.seed,
        spec_toml: &plan.spec_toml,
        argv: &argv,
        env_json: None,
        trials_planned: plan.trials.len(),
    };
    let mut ids = Vec::new();
    for label in &labels {
        for _ in 0..args.repeat {
            let id = store.submit(&run, &plan.cells, &plan.trials, *label)?;
            ids.push((id, *label));
        }
    }
    for (id, label) in &ids {
        sayln!(
            "run {id}: {} trials of {} queued for {}",
            plan.trials.len(),
            plan.name,
            label.map_or("any worker".to_string(), |l| format!(
                "workers labelled {l}"
            ))
        );
    }
    sayln!(
        "seed {}; start `schedlab worker --db URL{}` on each machine, then `schedlab report --runs {}`",
        plan.seed,
        if args.hosts.is_empty() {
            ""
        } else {
            " --labels LABEL"
        },
        ids.iter()
            .map(|(id, _)| id.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    Ok(Outcome::Done)
}

/// `schedlab queue`: trials per state, per run and host label, and per worker.
pub fn cmd_queue(args: &DbArgs) -> Result<Outcome> {
    let store = Store::open_read(&args.db)?;
    let lines = store.queue_lines()?;
    if lines.is_empty() {
        sayln!(
            "the queue of {} is empty (`schedlab submit` fills it)",
            args.db
        );
        return Ok(Outcome::Done);
    }
    let mut b = tabled::builder::Builder::default();
    b.push_record([
        "run", "spec", "host", "pending", "claimed", "done", "failed",
    ]);
    for l in lines {
        b.push_record([
            l.run_id.to_string(),
            l.name,
            l.label.unwrap_or_else(|| "(any)".into()),
            l.pending.to_string(),
            l.claimed.to_string(),
            l.done.to_string(),
            l.failed.to_string(),
        ]);
    }
    sayln!("{}", b.build().with(tabled::settings::Style::sharp()));
    let workers = store.worker_lines()?;
    if !workers.is_empty() {
        let mut b = tabled::builder::Builder::default();
        b.push_record(["worker (host:pid)", "claimed", "done", "failed"]);
        for w in workers {
            b.push_record([
                w.worker,
                w.claimed.to_string(),
                w.done.to_string(),
                w.failed.to_string(),
            ]);
        }
        sayln!("{}", b.build().with(tabled::settings::Style::sharp()));
    }
    Ok(Outcome::Done)
}
