//! A store that may drop, and the spool for what cannot reach it. A PostgreSQL server: trials
//! that end while it is away go to an SQLite spool file (the server run's copy, same UUID) and
//! are pushed to the server at the next trial that finds it back, or by `schedlab push
//! --spool`; nothing is lost, and nothing is stored twice (a push skips the trials the server
//! has). A local SQLite file is the same thing that never drops ([`Remote::local`]), so one
//! sink ([`super::sink::StoreSink`]) serves both. [`RemoteError`] is what they fail with.

use schedlab_core::records::RunStatus;
use schedlab_machine::HostIdentity;
use schedlab_report::ReportError;
use schedlab_spec::plan::{Cell, Plan};
use schedlab_spec::SpecError;
use schedlab_store::push::{push, PushOptions};
use schedlab_store::{Location, NewRun, RunIdentity, SpooledRun, Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A result of a store that may drop.
pub type Result<T, E = RemoteError> = std::result::Result<T, E>;

/// Why a run's or a worker's store failed, beyond the store's own errors.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The store failed, or refused what it was given.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A run cannot be created or resumed: the server is away.
    #[error("the server at {location} cannot be reached; check that it is running and that this machine reaches it, then run again")]
    Unreachable {
        /// The server (password masked).
        location: String,
    },
    /// The server is away and the spool's directory cannot be made.
    #[error("the server at {location} cannot be reached and the spool's directory {} cannot be created or used ({source}); give --spool-file (or SCHEDLAB_SPOOL) a file in a directory only you can write", dir.display())]
    SpoolDir {
        /// The server (password masked).
        location: String,
        /// The directory.
        dir: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The server is away and the spool cannot be opened.
    #[error("the server at {location} cannot be reached and the spool {} cannot be opened ({source}); give a writable --spool-file", spool.display())]
    SpoolOpen {
        /// The server (password masked).
        location: String,
        /// The spool file.
        spool: PathBuf,
        /// What failed.
        source: Box<StoreError>,
    },
    /// Pushing the spool to the server failed; what it holds stays in it.
    #[error("pushing the spool {} to {location} failed ({source}); the trials in it stay there, and `schedlab push --spool --spool-file {} --to URL` sends them", spool.display(), spool.display())]
    Push {
        /// The server (password masked).
        location: String,
        /// The spool file.
        spool: PathBuf,
        /// What failed.
        source: Box<StoreError>,
    },
    /// An adaptive run needs its stored trials, and the server is away.
    #[error("{run} on its stored trials, and the server at {location} cannot be reached; the trials so far are kept in the spool {} (`schedlab push --spool` sends them), and `schedlab run --resume --db URL` continues when it is back", spool.display())]
    Judging {
        /// What the run does with its trials.
        run: &'static str,
        /// The server (password masked).
        location: String,
        /// The spool file.
        spool: PathBuf,
    },
    /// A worker waited too long for a lost server.
    #[error("the server at {location} has been out of reach for {waited_s} s; the trials this worker finished meanwhile are in the spool {} (`schedlab push --spool` sends them)", spool.display())]
    GaveUp {
        /// The server (password masked).
        location: String,
        /// How long it waited, in seconds.
        waited_s: u64,
        /// The spool file.
        spool: PathBuf,
    },
    /// A claimed queue row names a trial the run's plan does not have.
    #[error("queue row {queue_id} of run {run_id} does not match the run's plan (rebuilt from its spec and seed); was it submitted by another schedlab version?")]
    PlanMismatch {
        /// The queue row.
        queue_id: i64,
        /// The run.
        run_id: i64,
    },
    /// A stored run's spec does not read back or plan here.
    #[error("run {run_id} cannot be run here: {source}")]
    StoredSpec {
        /// The run.
        run_id: i64,
        /// Why.
        source: Arc<SpecError>,
    },
    /// The claims of a run could not be judged.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A broken promise of schedlab's own code.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl RemoteError {
    /// Whether the user gave something the store cannot use (exit 2, not 1): only the store's
    /// own errors can say so; a queued run's spec was not this worker's input.
    pub fn is_bad_input(&self) -> bool {
        match self {
            RemoteError::Store(e) => e.is_bad_input(),
            RemoteError::Report(e) => e.is_bad_input(),
            _ => false,
        }
    }
}

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

/// A connection to a store that may drop, and a spool file for what cannot reach it.
pub struct Remote {
    location: Location,
    server: Option<Store>,
    spool_path: PathBuf,
    spool: Option<Store>,
    last_attempt: Option<Instant>,
    /// Trials written to the spool since the last successful push of it.
    pub spooled: usize,
    /// Why the server was last said to be lost (each reason is said once, not once per
    /// retry); `None` while it is reachable.
    told: Option<String>,
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
        Ok(Remote::with(location, server, spool_path))
    }

    /// The open local store `store` (at `location`): a file, never out of reach, so its spool
    /// is never used.
    pub fn local(location: &Location, store: Store) -> Remote {
        Remote::with(location, store, Path::new(""))
    }

    fn with(location: &Location, server: Store, spool_path: &Path) -> Remote {
        Remote {
            location: location.clone(),
            server: Some(server),
            spool_path: spool_path.to_path_buf(),
            spool: None,
            last_attempt: None,
            spooled: 0,
            told: None,
        }
    }

    /// The server, reconnected (and the spool pushed to it) if it was lost and can be reached
    /// again; None while it cannot.
    pub fn server(&mut self) -> Option<&mut Store> {
        if self.server.is_none() && self.last_attempt.is_none_or(|t| t.elapsed() >= RETRY) {
            self.last_attempt = Some(Instant::now());
            if let Ok(s) = Store::open_existing(&self.location) {
                self.server = Some(s);
                // "Back" only once the spool went through: a server that accepts the
                // connection but refuses the trials (read-only, full) is still lost, and is
                // said so once per reason, not once per retry.
                match self.flush() {
                    Ok(()) => {
                        if self.told.take().is_some() {
                            warnln!("schedlab: the server at {} is back", self.location);
                        }
                    }
                    Err(e) => {
                        self.lost(&e);
                    }
                }
            }
        }
        self.server.as_mut()
    }

    /// The server back, as `store`, without a connection attempt (tests reach no server).
    #[cfg(test)]
    pub fn back_for_test(&mut self, store: Store) {
        self.server = Some(store);
    }

    /// The server, or an error saying it cannot be reached.
    pub fn reachable(&mut self) -> Result<&mut Store> {
        let location = self.location.to_string();
        self.server().ok_or(RemoteError::Unreachable { location })
    }

    /// The server if connected now (no attempt to reconnect).
    pub fn current(&self) -> Option<&Store> {
        self.server.as_ref()
    }

    /// Notes that the server was lost (`e` said so), and says so unless this reason was the
    /// last one said; returns whether it was said.
    pub fn lost(&mut self, e: &dyn std::fmt::Display) -> bool {
        self.server = None;
        self.last_attempt = Some(Instant::now());
        let reason = e.to_string();
        if self.told.as_deref() == Some(reason.as_str()) {
            return false;
        }
        eprintln!(
            "schedlab: cannot reach the server at {} ({reason}); finished trials go to the spool {} until it is back",
            self.location,
            self.spool_path.display()
        );
        self.told = Some(reason);
        true
    }

    /// The spool, opened (created) on first use.
    pub fn spool(&mut self) -> Result<&Store> {
        if self.spool.is_none() {
            if self.spool_path.as_os_str().is_empty() {
                return Err(RemoteError::Internal("a local store has no spool"));
            }
            if let Some(dir) = self
                .spool_path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                // Made under held parents (mode 0700), none of which others may write: a
                // $HOME or $XDG_STATE_HOME of another user's is refused, not followed.
                schedlab_sys::OutDir::create_all(dir, 0o700).map_err(|source| {
                    RemoteError::SpoolDir {
                        location: self.location.to_string(),
                        dir: dir.to_path_buf(),
                        source,
                    }
                })?;
            }
            let spool = Store::open(&self.spool_path).map_err(|e| RemoteError::SpoolOpen {
                location: self.location.to_string(),
                spool: self.spool_path.clone(),
                source: Box::new(e),
            })?;
            self.spool = Some(spool);
        }
        Ok(self.spool.as_ref().expect("opened above"))
    }

    /// Pushes whatever the spool holds to the server, and empties it of what was pushed; on
    /// failure, what was not pushed stays in the spool.
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
        let opts = PushOptions {
            runs: None,
            remove_pushed: true,
        };
        let s = push(spool, server, &opts).map_err(|e| RemoteError::Push {
            location: self.location.to_string(),
            spool: self.spool_path.clone(),
            source: Box::new(e),
        })?;
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
    /// A new run of `plan`, started by `argv` on the machine `env_json` describes, with a new
    /// UUID and this host's identity.
    pub fn new(plan: &Plan, argv: &str, env_json: &str) -> RunCopy {
        RunCopy {
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
                status: RunStatus::Running,
            },
            units: Vec::new(),
        }
    }

    /// Stored run `run_id` as `server` has it, run by `host` (units: none yet), and its plan,
    /// rebuilt from its spec and seed.
    pub fn read(server: &Store, run_id: i64, host: HostIdentity) -> Result<(RunCopy, Plan)> {
        let info = schedlab_store::query::run_info(server, run_id)?;
        let spec = info
            .spec_read()
            .map_err(|source| RemoteError::StoredSpec { run_id, source })?;
        let plan =
            schedlab_spec::plan::build(spec, info.seed).map_err(|e| RemoteError::StoredSpec {
                run_id,
                source: Arc::new(e),
            })?;
        let spec_toml = info.spec_toml().to_string();
        let copy = RunCopy {
            name: info.name,
            seed: info.seed,
            spec_toml,
            argv: info.argv,
            env_json: info.env_json,
            trials_planned: info.trials_planned as usize,
            cells: plan.cells.clone(),
            id: RunIdentity {
                uuid: info.uuid,
                host: Some(host),
                status: RunStatus::Running,
            },
            units: Vec::new(),
        };
        Ok((copy, plan))
    }

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

#[cfg(test)]
#[path = "remote_tests.rs"]
mod tests;
