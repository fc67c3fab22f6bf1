//! A run stored on a PostgreSQL server, with a local spool for when the server cannot be
//! reached: trials that end while it is away go to an SQLite spool file (the server run's copy,
//! same UUID) and are pushed to the server at the next trial that finds it back, or by
//! `schedlab push --spool`. Nothing is lost, and nothing is stored twice (a push skips the
//! trials the server has).

use anyhow::{Context, Result};
use schedlab_core::metric::Metric;
use schedlab_core::records::{TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_machine::HostIdentity;
use schedlab_run::sink::{Sink, Stored};
use schedlab_run::SinkResult;
use schedlab_spec::plan::{Cell, Plan, PlannedTrial};
use schedlab_store::push::{push, PushOptions};
use schedlab_store::{Location, NewRun, RunIdentity, SpooledRun, Store};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The default spool: `$SCHEDLAB_SPOOL`, else `$XDG_STATE_HOME/schedlab/spool.db`, else
/// `~/.local/state/schedlab/spool.db`, else `schedlab-spool.db` here.
pub fn default_spool() -> PathBuf {
    if let Some(p) = std::env::var_os("SCHEDLAB_SPOOL") {
        return PathBuf::from(p);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")));
    match state {
        Some(dir) => dir.join("schedlab").join("spool.db"),
        None => PathBuf::from("schedlab-spool.db"),
    }
}

/// A connection to a server that may drop, and a spool file for what cannot reach it.
pub struct Remote {
    location: Location,
    server: Option<Store>,
    spool_path: PathBuf,
    spool: Option<Store>,
    last_attempt: Option<Instant>,
    /// Trials written to the spool since the last successful push of it.
    pub spooled: usize,
    /// Whether "server unreachable" was said already (said once per outage).
    told: bool,
}

/// Shortest time between two attempts to reach a lost server.
const RETRY: Duration = Duration::from_secs(1);

impl Remote {
    /// Connects to the server at `location` (which must have the schema when `existing`).
    pub fn connect(location: &Location, spool_path: &Path, existing: bool) -> Result<Remote> {
        let server = if existing {
            Store::open_existing(location)?
        } else {
            Store::open(location)?
        };
        Ok(Remote {
            location: location.clone(),
            server: Some(server),
            spool_path: spool_path.to_path_buf(),
            spool: None,
            last_attempt: None,
            spooled: 0,
            told: false,
        })
    }

    /// The server, reconnected (and the spool pushed to it) if it was lost and can be reached
    /// again; None while it cannot.
    pub fn server(&mut self) -> Option<&mut Store> {
        if self.server.is_none() && self.last_attempt.is_none_or(|t| t.elapsed() >= RETRY) {
            self.last_attempt = Some(Instant::now());
            if let Ok(s) = Store::open_existing(&self.location) {
                eprintln!("schedlab: the server at {} is back", self.location);
                self.told = false;
                self.server = Some(s);
                if let Err(e) = self.flush() {
                    self.lost(&super::exit::message(&e));
                }
            }
        }
        self.server.as_mut()
    }

    /// The server if connected now (no attempt to reconnect).
    pub fn current(&self) -> Option<&Store> {
        self.server.as_ref()
    }

    /// Notes that the server was lost (`e` said so).
    pub fn lost(&mut self, e: &dyn std::fmt::Display) {
        self.server = None;
        self.last_attempt = Some(Instant::now());
        if !self.told {
            self.told = true;
            eprintln!(
                "schedlab: cannot reach the server at {} ({e}); finished trials go to the spool {} until it is back",
                self.location,
                self.spool_path.display()
            );
        }
    }

    /// The spool, opened (created) on first use.
    pub fn spool(&mut self) -> Result<&Store> {
        if self.spool.is_none() {
            if let Some(dir) = self
                .spool_path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir).with_context(|| {
                    format!("cannot create the spool's directory {}", dir.display())
                })?;
            }
            self.spool = Some(Store::open(&self.spool_path).with_context(|| {
                format!(
                    "the server at {} cannot be reached and the spool {} cannot be opened",
                    self.location,
                    self.spool_path.display()
                )
            })?);
        }
        Ok(self.spool.as_ref().expect("opened above"))
    }

    /// Pushes whatever the spool holds to the server, and empties it of what was pushed.
    pub fn flush(&mut self) -> Result<()> {
        if !self.spool_path.exists() {
            return Ok(());
        }
        self.spool()?;
        let (Some(server), Some(spool)) = (&self.server, &self.spool) else {
            return Ok(());
        };
        if spool.trial_count()? == 0 && spool.latest_run()?.is_none() {
            return Ok(());
        }
        let s = push(
            spool,
            server,
            &PushOptions {
                runs: None,
                remove_pushed: true,
            },
        )?;
        if s.trials_added + s.trials_present > 0 || s.runs_added + s.runs_merged > 0 {
            eprintln!(
                "schedlab: pushed the spool {} to {}: {} trials added, {} already there",
                self.spool_path.display(),
                self.location,
                s.trials_added,
                s.trials_present
            );
        }
        self.spooled = 0;
        Ok(())
    }

    /// Where the store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The spool's path.
    pub fn spool_path(&self) -> &Path {
        &self.spool_path
    }

    /// A calibration stored on the server, if connected now; an unreachable server has none
    /// (the workload is then calibrated here).
    pub fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> Result<Option<f64>> {
        match &self.server {
            Some(s) => match s.calibration(key, kernel, cpu_model) {
                Err(e) if e.is_unreachable() => Ok(None),
                other => Ok(other?),
            },
            None => Ok(None),
        }
    }

    /// Stores a calibration on the server when it can be reached.
    pub fn save_calibration(
        &mut self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
    ) -> Result<()> {
        self.try_server(|s| s.save_calibration(key, kernel, cpu_model, units_per_sec))?;
        Ok(())
    }

    /// Runs `f` on the server; None if the server cannot be reached (now, or during `f`).
    pub fn try_server<T>(
        &mut self,
        f: impl FnOnce(&mut Store) -> schedlab_store::Result<T>,
    ) -> Result<Option<T>> {
        let Some(server) = self.server() else {
            return Ok(None);
        };
        match f(server) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_unreachable() => {
                self.lost(&e);
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// What a spool needs to hold a run's trials: the run as created on the server.
#[derive(Debug, Clone)]
pub struct RunCopy {
    /// Experiment name.
    pub name: String,
    /// Seed of the trial order.
    pub seed: u64,
    /// The spec as run.
    pub spec_toml: String,
    /// The command line that created it.
    pub argv: String,
    /// Environment record (JSON).
    pub env_json: Option<String>,
    /// Trials in the plan.
    pub trials_planned: usize,
    /// The cells.
    pub cells: Vec<Cell>,
    /// UUID (set), host and state.
    pub id: RunIdentity,
    /// Units per task of the cells calibrated so far.
    pub units: Vec<(usize, u64)>,
}

impl RunCopy {
    /// The run as a spool keeps it.
    pub fn spooled(&self) -> SpooledRun<'_> {
        SpooledRun {
            run: NewRun {
                name: &self.name,
                seed: self.seed,
                spec_toml: &self.spec_toml,
                argv: &self.argv,
                env_json: self.env_json.as_deref(),
                trials_planned: self.trials_planned,
            },
            cells: &self.cells,
            id: &self.id,
            units: &self.units,
        }
    }
}

/// Where the last trial went, so that its warnings follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Last {
    Server(i64),
    Spool(i64),
}

/// The run stage's sink for a run on a server.
pub struct RemoteSink {
    /// The server and the spool.
    pub remote: Remote,
    /// The run, once created or resumed.
    pub run: Option<RunCopy>,
    last: Option<Last>,
}

impl RemoteSink {
    /// A sink writing to `remote`.
    pub fn new(remote: Remote) -> RemoteSink {
        RemoteSink {
            remote,
            run: None,
            last: None,
        }
    }

    fn run(&self) -> Result<&RunCopy> {
        self.run
            .as_ref()
            .context("internal error: no run created on the server yet")
    }
}

impl Sink for RemoteSink {
    fn create_run(&mut self, plan: &Plan, argv: &str, env_json: &str) -> SinkResult<i64> {
        let copy = RunCopy {
            name: plan.name.clone(),
            seed: plan.seed,
            spec_toml: plan.spec_toml.clone(),
            argv: argv.to_string(),
            env_json: Some(env_json.to_string()),
            trials_planned: plan.trials.len(),
            cells: plan.cells.clone(),
            id: RunIdentity {
                uuid: Some(uuid::Uuid::new_v4().to_string()),
                host: Some(HostIdentity::capture()),
                status: "running",
            },
            units: Vec::new(),
        };
        let shown = self.remote.location().to_string();
        let server = self
            .remote
            .server()
            .with_context(|| format!("the server at {shown} cannot be reached"))?;
        let run_id = server.create_run_as(&copy.spooled().run, &plan.cells, &copy.id)?;
        self.run = Some(copy);
        Ok(run_id)
    }

    fn resume_run(&mut self, run_id: i64) -> SinkResult<Stored> {
        let shown = self.remote.location().to_string();
        let server = self
            .remote
            .server()
            .with_context(|| format!("the server at {shown} cannot be reached"))?;
        server.mark_running(run_id)?;
        let info = schedlab_store::query::run_info(server, run_id)?;
        let stored = Stored {
            trials: server.stored_trials(run_id)?,
            units: server.cell_units(run_id)?,
        };
        let spec = info.spec()?;
        let plan = schedlab_spec::plan::build(&spec, info.seed)?;
        self.run = Some(RunCopy {
            name: info.name,
            seed: info.seed,
            spec_toml: info.spec_toml,
            argv: info.argv,
            env_json: info.env_json,
            trials_planned: info.trials_planned as usize,
            cells: plan.cells,
            id: RunIdentity {
                uuid: info.uuid,
                host: Some(HostIdentity::capture()),
                status: "running",
            },
            units: stored
                .units
                .iter()
                .filter_map(|&(c, u)| u.map(|u| (c, u)))
                .collect(),
        });
        Ok(stored)
    }

    fn set_cell_units(&mut self, run_id: i64, cell_index: usize, units: u64) -> SinkResult<()> {
        if let Some(run) = self.run.as_mut() {
            run.units.retain(|(c, _)| *c != cell_index);
            run.units.push((cell_index, units));
        }
        // Without the server the spool gets the units with the cell's first trial.
        self.remote
            .try_server(|s| s.set_cell_units(run_id, cell_index, units))?;
        Ok(())
    }

    fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> SinkResult<i64> {
        if let Some(id) = self
            .remote
            .try_server(|s| s.insert_trial(run_id, planned, outcome, meta))?
        {
            self.last = Some(Last::Server(id));
            return Ok(id);
        }
        let run = self.run()?.clone();
        let (_, id) = self
            .remote
            .spool()?
            .spool_trial(&run.spooled(), planned, outcome, meta)?;
        self.remote.spooled += 1;
        self.last = Some(Last::Spool(id));
        Ok(id)
    }

    fn add_warning(
        &mut self,
        run_id: i64,
        trial_id: Option<i64>,
        message: &Warning,
    ) -> SinkResult<()> {
        let spooled_trial = match (trial_id, self.last) {
            (Some(t), Some(Last::Spool(s))) if t == s => Some(t),
            _ => None,
        };
        if spooled_trial.is_none()
            && self
                .remote
                .try_server(|s| s.add_warning(run_id, trial_id, message))?
                .is_some()
        {
            return Ok(());
        }
        let run = self.run()?.clone();
        Ok(self
            .remote
            .spool()?
            .spool_warning(&run.spooled(), spooled_trial, message)?)
    }

    fn finish_run(&mut self, run_id: i64, status: &str) -> SinkResult<()> {
        if self
            .remote
            .try_server(|s| s.finish_run(run_id, status))?
            .is_some()
        {
            return Ok(());
        }
        let run = self.run()?.clone();
        Ok(self.remote.spool()?.spool_finish(&run.spooled(), status)?)
    }

    fn key_values(
        &self,
        run_id: i64,
        metric: Metric,
        through_round: u32,
    ) -> SinkResult<Vec<Vec<f64>>> {
        match self.remote.current() {
            Some(s) => Ok(super::sink::key_values(s, run_id, metric, through_round)?),
            None => Err(anyhow::anyhow!(
                "an adaptive run judges its precision on its stored trials, and the server at {} cannot be reached; \
                 the trials so far are kept (`schedlab push --spool`), and `schedlab run --resume --db URL` continues when it is back",
                self.remote.location()
            )
            .into()),
        }
    }

    fn undecided_claims(&self, run_id: i64, look: usize) -> SinkResult<usize> {
        match self.remote.current() {
            Some(s) => Ok(super::sink::undecided_claims(s, run_id, look)?),
            None => Err(anyhow::anyhow!(
                "an --until-decided run decides its claims on its stored trials, and the server at {} cannot be reached; \
                 the trials so far are kept (`schedlab push --spool`), and `schedlab run --resume --db URL` continues when it is back",
                self.remote.location()
            )
            .into()),
        }
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
