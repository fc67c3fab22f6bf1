//! `schedlab worker`: the queue of a store, as the run stage's [`Queue`]. Claims trials with a
//! lease, rebuilds each run's plan from its stored spec and seed, stores every trial by
//! completing its claim (one transaction), and spools trials while the server is away.

use super::exit::{BadFlag, Outcome};
use super::remote::{Remote, RunCopy};
use crate::cli::WorkerArgs;
use anyhow::{bail, Context, Result};
use schedlab_core::metric::Metric;
use schedlab_core::records::{TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_machine::{EnvRecord, HostIdentity};
use schedlab_run::sink::{Sink, Stored};
use schedlab_run::work::allow::{self, Allowed};
use schedlab_run::work::{Claimed, Next, Queue, WorkOptions};
use schedlab_run::{Keeper, SinkResult};
use schedlab_spec::plan::{Plan, PlannedTrial};
use schedlab_store::queue::{Claim, Completed, Idle};
use schedlab_store::{query, RunIdentity};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long a worker waits for a lost server before it gives up.
const GIVE_UP: Duration = Duration::from_secs(600);

/// Where the last trial went, so that its warnings follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Server(i64),
    Spool(i64),
    Dropped(i64),
}

/// A worker: the queue it claims from, and what it knows of the runs it works on.
pub struct Worker {
    remote: Remote,
    name: String,
    labels: Vec<String>,
    lease_ms: i64,
    wait: bool,
    host: HostIdentity,
    env_json: String,
    runs: HashMap<i64, (Rc<Plan>, RunCopy)>,
    claim: Option<Claim>,
    last: Option<Last>,
    lost_since: Option<Instant>,
}

impl Worker {
    fn run(&self, run_id: i64) -> Result<&RunCopy> {
        self.runs
            .get(&run_id)
            .map(|(_, r)| r)
            .context("internal error: a trial of a run the worker did not claim")
    }

    /// The plan and spool copy of run `run_id`, read from the server the first time; the run
    /// gets this worker's identity if it has none yet.
    fn learn_run(&mut self, run_id: i64) -> Result<()> {
        if self.runs.contains_key(&run_id) {
            return Ok(());
        }
        let (host, env_json) = (self.host.clone(), self.env_json.clone());
        let Some(server) = self.remote.server() else {
            bail!("the server went away");
        };
        server.start_queued_run(run_id, &host, &env_json)?;
        let info = query::run_info(server, run_id)?;
        let spec = info
            .spec()
            .with_context(|| format!("queued run {run_id} cannot be run here"))?;
        let plan = Rc::new(schedlab_spec::plan::build(&spec, info.seed)?);
        let copy = RunCopy {
            name: info.name,
            seed: info.seed,
            spec_toml: info.spec_toml,
            argv: info.argv,
            env_json: info.env_json,
            trials_planned: info.trials_planned as usize,
            cells: plan.cells.clone(),
            id: RunIdentity {
                uuid: info.uuid,
                host: Some(host),
                status: "running",
            },
            units: Vec::new(),
        };
        self.runs.insert(run_id, (plan, copy));
        Ok(())
    }

    /// The next claim, or why there is none; None while the server cannot be reached.
    fn claim(&mut self) -> Result<Option<Result<Claim, Idle>>> {
        let (name, labels, lease) = (self.name.clone(), self.labels.clone(), self.lease_ms);
        self.remote.try_server(|s| s.claim(&name, &labels, lease))
    }
}

impl Queue for Worker {
    fn next(&mut self) -> SinkResult<Next> {
        let claim = match self.claim()? {
            None => {
                let since = *self.lost_since.get_or_insert_with(Instant::now);
                if since.elapsed() > GIVE_UP {
                    return Err(anyhow::anyhow!(
                        "the server at {} has been out of reach for {} s; the trials this worker finished meanwhile are in the spool {} (`schedlab push --spool` sends them)",
                        self.remote.location(),
                        GIVE_UP.as_secs(),
                        self.remote.spool_path().display()
                    )
                    .into());
                }
                return Ok(Next::Wait(Duration::from_secs(1)));
            }
            Some(c) => c,
        };
        self.lost_since = None;
        let claim = match claim {
            Ok(c) => c,
            Err(Idle::Claimed) => return Ok(Next::Wait(Duration::from_millis(300))),
            Err(Idle::Empty) if self.wait => return Ok(Next::Wait(Duration::from_secs(2))),
            Err(Idle::Empty) => return Ok(Next::Done),
        };
        let learned = self.learn_run(claim.run_id);
        let units = match learned {
            Ok(()) => self.remote.try_server(|s| s.cell_units(claim.run_id))?,
            Err(e) => {
                self.claim = Some(claim);
                let _ = self.release();
                return Err(e.into());
            }
        };
        let Some(units) = units else {
            // Lost between the claim and its run: the claim lapses and comes back.
            return Ok(Next::Wait(Duration::from_secs(1)));
        };
        let (plan, _) = &self.runs[&claim.run_id];
        let plan = plan.clone();
        let found = plan
            .trials
            .get(claim.position)
            .is_some_and(|t| t.cell == claim.cell_index && t.trial_index == claim.trial_index);
        if !found {
            return Err(anyhow::anyhow!(
                "queue row {} of run {} does not match the run's plan (rebuilt from its spec and seed); was it submitted by another schedlab version?",
                claim.queue_id,
                claim.run_id
            )
            .into());
        }
        let claimed = Claimed {
            run_id: claim.run_id,
            plan,
            position: claim.position,
            units,
        };
        self.claim = Some(claim);
        Ok(Next::Trial(claimed))
    }

    fn keeper(&mut self) -> &mut dyn Keeper {
        self
    }

    fn release(&mut self) -> SinkResult<()> {
        if let Some(c) = self.claim.take() {
            self.remote.try_server(|s| s.release(&c))?;
        }
        Ok(())
    }
}

impl Keeper for Worker {
    fn sink(&mut self) -> &mut dyn Sink {
        self
    }

    fn cell_units(&mut self, run_id: i64, cell: usize, units: u64) -> SinkResult<u64> {
        let settled = self
            .remote
            .try_server(|s| s.settle_cell_units(run_id, cell, units))?
            .unwrap_or(units);
        if let Some((_, copy)) = self.runs.get_mut(&run_id) {
            copy.units.retain(|(c, _)| *c != cell);
            copy.units.push((cell, settled));
        }
        Ok(settled)
    }

    fn starting(&mut self, within_ns: u64) -> SinkResult<()> {
        let lease = self.lease_ms + (within_ns / 1_000_000) as i64;
        if let Some(c) = self.claim.clone() {
            if self.remote.try_server(|s| s.extend_lease(&c, lease))? == Some(false) {
                eprintln!(
                    "schedlab: the lease of run {} trial {} lapsed before it started; another worker may run it too (only one result is kept)",
                    c.run_id,
                    c.position + 1
                );
            }
        }
        Ok(())
    }
}

impl Sink for Worker {
    fn create_run(&mut self, _: &Plan, _: &str, _: &str) -> SinkResult<i64> {
        Err(anyhow::anyhow!("internal error: a worker does not create runs").into())
    }

    fn resume_run(&mut self, _: i64) -> SinkResult<Stored> {
        Err(anyhow::anyhow!("internal error: a worker does not resume runs").into())
    }

    fn set_cell_units(&mut self, run_id: i64, cell_index: usize, units: u64) -> SinkResult<()> {
        self.cell_units(run_id, cell_index, units).map(|_| ())
    }

    fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> SinkResult<i64> {
        let claim = self
            .claim
            .take()
            .context("internal error: a trial stored without a claim")?;
        match self
            .remote
            .try_server(|s| s.complete(&claim, planned, outcome, meta))?
        {
            Some(Completed::Stored(id)) => {
                self.last = Some(Last::Server(id));
                Ok(id)
            }
            Some(Completed::Lost) => {
                eprintln!(
                    "schedlab: run {run_id} trial {}: its lease lapsed and another worker took it over; this result is dropped",
                    claim.position + 1
                );
                self.last = Some(Last::Dropped(-1));
                Ok(-1)
            }
            None => {
                let run = self.run(run_id)?.clone();
                let (_, id) =
                    self.remote
                        .spool()?
                        .spool_trial(&run.spooled(), planned, outcome, meta)?;
                self.remote.spooled += 1;
                self.last = Some(Last::Spool(id));
                Ok(id)
            }
        }
    }

    fn add_warning(
        &mut self,
        run_id: i64,
        trial_id: Option<i64>,
        message: &Warning,
    ) -> SinkResult<()> {
        match (trial_id, self.last) {
            (Some(t), Some(Last::Dropped(d))) if t == d => return Ok(()),
            (Some(t), Some(Last::Spool(s))) if t == s => {
                let run = self.run(run_id)?.clone();
                return Ok(self
                    .remote
                    .spool()?
                    .spool_warning(&run.spooled(), Some(t), message)?);
            }
            _ => {}
        }
        if self
            .remote
            .try_server(|s| s.add_warning(run_id, trial_id, message))?
            .is_none()
        {
            let run = self.run(run_id)?.clone();
            self.remote
                .spool()?
                .spool_warning(&run.spooled(), None, message)?;
        }
        Ok(())
    }

    fn finish_run(&mut self, _: i64, _: &str) -> SinkResult<()> {
        // A queued run is done when its last trial is stored (see Store::complete).
        Ok(())
    }

    fn key_values(&self, _: i64, _: Metric, _: u32) -> SinkResult<Vec<Vec<f64>>> {
        Err(anyhow::anyhow!(
            "internal error: a queued run has a fixed set of trials (no adaptive rounds)"
        )
        .into())
    }

    fn undecided_claims(&self, _: i64, _: usize) -> SinkResult<usize> {
        Err(anyhow::anyhow!(
            "internal error: a queued run has a fixed set of trials (no adaptive rounds)"
        )
        .into())
    }

    fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> SinkResult<Option<f64>> {
        Ok(self.remote.calibration(key, kernel, cpu_model)?)
    }

    fn save_calibration(
        &mut self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
    ) -> SinkResult<()> {
        Ok(self
            .remote
            .save_calibration(key, kernel, cpu_model, units_per_sec)?)
    }
}

/// What the worker's `--allow-*` flags let queued runs do, and where they may write (its
/// `--io-dir`); a knob is known by the file its name stands for, as a spec's knob is.
fn allowed(args: &WorkerArgs) -> Result<Allowed> {
    let knobs = args
        .allow_knobs
        .iter()
        .map(|name| match name.trim() {
            allow::IO_SCHEDULER => Ok(allow::IO_SCHEDULER.to_string()),
            name => schedlab_spec::knob_path(name).map_err(|message| BadFlag {
                flag: "--allow-knobs",
                value: name.to_string(),
                message,
            }),
        })
        .collect::<Result<_, BadFlag>>()?;
    Ok(Allowed {
        commands: args.allow_commands,
        knobs,
        scx: args.allow_scx,
        io_dir: args.io_dir.clone(),
    })
}

/// `schedlab worker`: runs queued trials until none is left for this worker.
pub fn cmd_worker(args: &WorkerArgs) -> Result<Outcome> {
    let spool = args
        .spool_file
        .clone()
        .unwrap_or_else(super::remote::default_spool);
    let lease = humantime::parse_duration(&args.lease).map_err(|e| BadFlag {
        flag: "--lease",
        value: args.lease.clone(),
        message: format!("{e}; write e.g. 60s or 5min"),
    })?;
    let host = HostIdentity::capture();
    let labels = if args.labels.is_empty() {
        vec![host.hostname.clone()]
    } else {
        args.labels.clone()
    };
    // Every flag is checked before the server is reached.
    if !args.io_dir.is_dir() {
        return Err(BadFlag {
            flag: "--io-dir",
            value: args.io_dir.display().to_string(),
            message: "not a directory; create it or name the directory queued runs may write their files in".to_string(),
        }
        .into());
    }
    let allowed = allowed(args)?;
    let remote = Remote::connect(&args.db, &spool, true)?;
    if !args.quiet {
        eprintln!(
            "schedlab worker on {} (labels {}): claiming trials from {}",
            host.hostname,
            labels.join(","),
            args.db
        );
    }
    let mut worker = Worker {
        remote,
        name: format!("{}:{}", host.hostname, std::process::id()),
        labels,
        lease_ms: lease.as_millis() as i64,
        wait: args.wait,
        env_json: EnvRecord::capture().to_json(),
        host,
        runs: HashMap::new(),
        claim: None,
        last: None,
        lost_since: None,
    };
    let opts = WorkOptions {
        quiet: args.quiet,
        allowed,
    };
    let summary = schedlab_run::work::work(&mut worker, &opts)?;
    if worker.remote.spooled > 0 {
        std::thread::sleep(Duration::from_secs(1));
        let _ = worker.remote.server();
    }
    if worker.remote.spooled > 0 {
        eprintln!(
            "{} finished trials are kept in the spool {} because the server at {} cannot be reached; `schedlab push --spool` sends them when it is back",
            worker.remote.spooled,
            worker.remote.spool_path().display(),
            args.db
        );
    }
    if !args.quiet {
        eprintln!(
            "worker done: {} trials ok, {} skipped, {} failed or timed out",
            summary.ok, summary.skipped, summary.failed
        );
    }
    Ok(if summary.hung_up {
        Outcome::HungUp
    } else if summary.interrupted {
        Outcome::Interrupted
    } else {
        Outcome::Done
    })
}
