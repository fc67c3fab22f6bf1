//! `schedlab worker`: the queue of a store, as the run stage's [`Queue`]. Claims trials with a
//! lease, rebuilds each run's plan from its stored spec and seed, stores every trial by
//! completing its claim (one transaction), and spools trials while the server is away.

use super::exit::{BadFlag, Outcome};
use super::remote::{Remote, RemoteError, Result, RunCopy};
use super::sink::StoreSink;
use crate::cli::WorkerArgs;
use schedlab_machine::{EnvRecord, HostIdentity};
use schedlab_run::sink::Sink;
use schedlab_run::work::allow::{self, Allowed};
use schedlab_run::work::{Claimed, Next, Queue, WorkOptions};
use schedlab_run::{Keeper, SinkResult};
use schedlab_spec::plan::Plan;
use schedlab_store::queue::{Claim, Idle};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long a worker waits for a lost server before it gives up.
const GIVE_UP: Duration = Duration::from_secs(600);
/// Longest `--lease`: a week (a trial itself may last at most 168 h, added to it).
const MAX_LEASE: Duration = Duration::from_secs(7 * 24 * 3600);

/// A worker: the queue it claims from, and the plans of the runs it works on. Its trials are
/// stored by the same sink as a run's ([`StoreSink`]), which completes their claims.
pub struct Worker {
    sink: StoreSink,
    name: String,
    labels: Vec<String>,
    lease_ms: i64,
    wait: bool,
    host: HostIdentity,
    env_json: String,
    plans: HashMap<i64, Rc<Plan>>,
    lost_since: Option<Instant>,
    /// Runs this worker cannot run (given back to the queue): never claimed again here.
    unfit: Vec<i64>,
}

impl Worker {
    /// The plan of run `run_id`, read from the server the first time (and the run made known
    /// to the sink); the run gets this worker's identity if it has none yet.
    fn learn_run(&mut self, run_id: i64) -> Result<Rc<Plan>> {
        if let Some(plan) = self.plans.get(&run_id) {
            return Ok(plan.clone());
        }
        let (host, env_json) = (self.host.clone(), self.env_json.clone());
        let server = self.sink.remote.reachable()?;
        server.start_queued_run(run_id, &host, &env_json)?;
        let (copy, plan) = RunCopy::read(server, run_id, host)?;
        let plan = Rc::new(plan);
        self.sink.know_run(run_id, copy);
        self.plans.insert(run_id, plan.clone());
        Ok(plan)
    }

    /// The next claim, or why there is none; None while the server cannot be reached.
    fn claim(&mut self) -> Result<Option<Result<Claim, Idle>>> {
        let (name, labels, lease) = (self.name.clone(), self.labels.clone(), self.lease_ms);
        let unfit = self.unfit.clone();
        self.sink
            .remote
            .try_server(|s| s.claim_except(&name, &labels, lease, &unfit))
    }

    /// What to do while the server cannot be reached: wait, or give up after [`GIVE_UP`].
    fn wait_for_server(&mut self) -> Result<Next> {
        let since = *self.lost_since.get_or_insert_with(Instant::now);
        if since.elapsed() > GIVE_UP {
            return Err(RemoteError::GaveUp {
                location: self.sink.remote.location().to_string(),
                waited_s: GIVE_UP.as_secs(),
                spool: self.sink.remote.spool_path().to_path_buf(),
            });
        }
        Ok(Next::Wait(Duration::from_secs(1)))
    }

    /// The trial `claim` names, with the units its run's cells have so far.
    fn claimed(&mut self, claim: Claim) -> Result<Next> {
        let plan = match self.learn_run(claim.run_id) {
            Ok(plan) => plan,
            Err(e) => {
                self.sink.claim = Some(claim);
                let _ = self.release();
                return Err(e);
            }
        };
        let Some(units) = self
            .sink
            .remote
            .try_server(|s| s.cell_units(claim.run_id))?
        else {
            // Lost between the claim and its run: the claim lapses and comes back.
            return Ok(Next::Wait(Duration::from_secs(1)));
        };
        // A planned trial's row has its place in the plan; a re-run's, its round's end.
        let same = |t: &schedlab_spec::plan::PlannedTrial| {
            t.cell == claim.cell_index && t.trial_index == claim.trial_index
        };
        let position = match plan.trials.get(claim.position) {
            Some(t) if same(t) => Some(claim.position),
            _ if claim.retry > 0 => plan.trials.iter().position(same),
            _ => None,
        };
        let Some(position) = position else {
            return Err(RemoteError::PlanMismatch {
                queue_id: claim.queue_id,
                run_id: claim.run_id,
            });
        };
        let claimed = Claimed {
            run_id: claim.run_id,
            plan,
            position,
            retry: claim.retry,
            units,
        };
        self.sink.claim = Some(claim);
        Ok(Next::Trial(claimed))
    }
}

impl Queue for Worker {
    fn next(&mut self) -> SinkResult<Next> {
        let Some(claim) = self.claim()? else {
            return Ok(self.wait_for_server()?);
        };
        self.lost_since = None;
        match claim {
            Ok(c) => Ok(self.claimed(c)?),
            Err(Idle::Claimed) => Ok(Next::Wait(Duration::from_millis(300))),
            Err(Idle::Empty) if self.wait => Ok(Next::Wait(Duration::from_secs(2))),
            Err(Idle::Empty) => Ok(Next::Done),
        }
    }

    fn keeper(&mut self) -> &mut dyn Keeper {
        self
    }

    fn release(&mut self) -> SinkResult<()> {
        if let Some(c) = self.sink.claim.take() {
            self.sink.remote.try_server(|s| s.release(&c))?;
        }
        Ok(())
    }

    fn refuse(&mut self, reason: &str) -> SinkResult<()> {
        if let Some(c) = self.sink.claim.take() {
            self.unfit.push(c.run_id);
            let refused = self.sink.remote.try_server(|s| s.give_back(&c, reason))?;
            if refused == Some(true) {
                warnln!(
                    "run {} is refused: no worker could run it ({} tried)",
                    c.run_id,
                    c.attempt
                );
            }
        }
        Ok(())
    }
}

impl Keeper for Worker {
    fn sink(&mut self) -> &mut dyn Sink {
        &mut self.sink
    }

    fn cell_units(&mut self, run_id: i64, cell: usize, units: u64) -> SinkResult<u64> {
        Ok(self.sink.settle_cell_units(run_id, cell, units)?)
    }

    fn starting(&mut self, within_ns: u64) -> SinkResult<()> {
        let trial_ms = i64::try_from(within_ns / 1_000_000).unwrap_or(i64::MAX);
        let lease = self.lease_ms.saturating_add(trial_ms);
        let Some(c) = self.sink.claim.clone() else {
            return Ok(());
        };
        if self.sink.remote.try_server(|s| s.extend_lease(&c, lease))? == Some(false) {
            warnln!(
                "schedlab: the lease of run {} trial {} lapsed before it started; another worker may run it too (only one result is kept)",
                c.run_id,
                c.position + 1
            );
        }
        Ok(())
    }
}

/// What the worker's `--allow-*` flags let queued runs do, and where they may write (its
/// `--io-dir`); a knob is known by the file its name stands for, as a spec's knob is.
fn allowed(args: &WorkerArgs) -> Result<Allowed, BadFlag> {
    let knobs = args
        .allow_knobs
        .iter()
        .map(|name| match name.trim() {
            allow::IO_SCHEDULER => Ok(allow::IO_SCHEDULER.to_string()),
            allow::PARTITION => Ok(allow::PARTITION.to_string()),
            name => schedlab_spec::knob_path(name).map_err(|e| BadFlag {
                flag: "--allow-knobs",
                value: name.to_string(),
                message: e.to_string(),
            }),
        })
        .collect::<Result<_, BadFlag>>()?;
    Ok(Allowed {
        commands: allowed_programs(&args.allow_commands)?,
        command_user: Some(command_user(&args.command_user)?),
        knobs,
        scx: args.allow_scx,
        io_dir: args.io_dir.clone(),
    })
}

/// `--allow-commands`: each an absolute path to a program that exists, with its links
/// resolved (as a spec's programs are compared).
fn allowed_programs(paths: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>, BadFlag> {
    paths
        .iter()
        .map(|p| {
            let bad = |message: String| BadFlag {
                flag: "--allow-commands",
                value: p.display().to_string(),
                message,
            };
            if !p.is_absolute() {
                return Err(bad(
                    "name the program by its absolute path, e.g. /usr/bin/chromium (a program is never looked up in PATH)".into(),
                ));
            }
            std::fs::canonicalize(p).map_err(|e| bad(format!("{e}; name a program that exists")))
        })
        .collect()
}

/// `--command-user`: the user database's entry of `name` (a worker that is not root cannot
/// become another user: its programs run as itself).
fn command_user(name: &str) -> Result<schedlab_core::workload::Sandbox, BadFlag> {
    if !schedlab_sys::is_root() {
        let uid = schedlab_sys::euid();
        return Ok(schedlab_core::workload::Sandbox {
            user: schedlab_sys::user_name(uid).unwrap_or_else(|| uid.to_string()),
            uid,
            gid: schedlab_sys::egid(),
        });
    }
    let (uid, gid) = schedlab_sys::user_ids(name).ok_or_else(|| BadFlag {
        flag: "--command-user",
        value: name.to_string(),
        message: "no such user; name an existing unprivileged user (default nobody)".into(),
    })?;
    Ok(schedlab_core::workload::Sandbox {
        user: name.to_string(),
        uid,
        gid,
    })
}

/// The `--lease` in ms: a duration of at most [`MAX_LEASE`], converted without overflow.
fn lease_ms(text: &str) -> Result<i64, BadFlag> {
    let bad = |message: String| BadFlag {
        flag: "--lease",
        value: text.to_string(),
        message,
    };
    let lease =
        humantime::parse_duration(text).map_err(|e| bad(format!("{e}; write e.g. 60s or 5min")))?;
    if lease > MAX_LEASE || lease.is_zero() {
        return Err(bad(format!(
            "a lease lasts more than 0 and at most {} (a lapsed lease gives the trial to another worker; a trial's own length is added to it); write e.g. 60s or 5min",
            humantime::format_duration(MAX_LEASE)
        )));
    }
    i64::try_from(lease.as_millis()).map_err(|_| bad("too long".into()))
}

/// `schedlab worker`: runs queued trials until none is left for this worker.
pub fn cmd_worker(args: &WorkerArgs) -> anyhow::Result<Outcome> {
    let spool = args
        .spool_file
        .clone()
        .unwrap_or_else(super::remote::default_spool);
    let lease_ms = lease_ms(&args.lease)?;
    super::exit::check_labels("--labels", &args.labels)?;
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
        warnln!(
            "schedlab worker on {} (labels {}): claiming trials from {}",
            host.hostname,
            labels.join(","),
            args.db
        );
    }
    let mut worker = Worker {
        sink: StoreSink::new(remote),
        name: format!("{}:{}", host.hostname, std::process::id()),
        labels,
        lease_ms,
        wait: args.wait,
        env_json: EnvRecord::capture().to_json(),
        host,
        plans: HashMap::new(),
        lost_since: None,
        unfit: Vec::new(),
    };
    let opts = WorkOptions {
        quiet: args.quiet,
        allowed,
    };
    let summary = schedlab_run::work::work(&mut worker, &opts)?;
    if worker.sink.remote.spooled > 0 {
        std::thread::sleep(Duration::from_secs(1));
        let _ = worker.sink.remote.server();
    }
    if worker.sink.remote.spooled > 0 {
        warnln!(
            "{} finished trials are kept in the spool {} because the server at {} cannot be reached; `schedlab push --spool` sends them when it is back",
            worker.sink.remote.spooled,
            worker.sink.remote.spool_path().display(),
            args.db
        );
    }
    if !args.quiet {
        warnln!(
            "worker done: {} trials ok, {} skipped, {} failed or timed out",
            summary.ok,
            summary.skipped,
            summary.failed
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
