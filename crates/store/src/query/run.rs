//! A run's stored row as read for a report: its status as the type, and its spec as run read
//! once, when the row is read.

use super::{Runner, Store};
use crate::db::params;
use crate::error::Result;
use schedlab_core::records::RunStatus;
use schedlab_spec::{Spec, SpecError};
use serde::Serialize;
use std::sync::Arc;

/// The stored row of a run, as read for a report.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// Run id.
    pub run_id: i64,
    /// Spec name.
    pub name: String,
    /// Start, UTC RFC 3339.
    pub started_at: String,
    /// End, UTC RFC 3339, if it ended.
    pub finished_at: Option<String>,
    /// Running, done, interrupted or failed (queued: not started by a worker yet).
    pub status: RunStatus,
    /// Seed of the trial order; also seeds every bootstrap of the report.
    pub seed: u64,
    /// schedlab version that ran it.
    pub version: String,
    /// Command line of the run.
    pub argv: String,
    /// The spec as run, as stored (TOML), shown as it is; [`RunInfo::spec`] is the spec it
    /// reads as, read once with it ([`RunInfo::set_spec_toml`]).
    spec_toml: String,
    /// `spec_toml` read as the spec crate's type, or why it does not read.
    #[serde(skip)]
    spec: std::result::Result<Spec, Arc<SpecError>>,
    /// The hash of the spec as run, seed aside, as stored with the run (see
    /// [`super::spec_hash`]).
    #[serde(skip)]
    spec_hash: String,
    /// Environment record (JSON text), if captured.
    pub env_json: Option<String>,
    /// Trials in the plan.
    pub trials_planned: i64,
    /// The run's UUID (the same in every database it is pushed to).
    pub uuid: Option<String>,
    /// Host name of the machine that ran it.
    pub host: Option<String>,
    /// That machine's /etc/machine-id.
    pub machine_id: Option<String>,
    /// Its kernel release.
    pub kernel: Option<String>,
    /// Its CPU model.
    pub cpu_model: Option<String>,
    /// Commit of the schedlab that ran it.
    pub git_commit: Option<String>,
}

impl Default for RunInfo {
    fn default() -> RunInfo {
        RunInfo {
            run_id: 0,
            name: String::new(),
            started_at: String::new(),
            finished_at: None,
            status: RunStatus::default(),
            seed: 0,
            version: String::new(),
            argv: String::new(),
            spec: Spec::read_as_run("").map_err(Arc::new),
            spec_toml: String::new(),
            spec_hash: super::spec_hash(""),
            env_json: None,
            trials_planned: 0,
            uuid: None,
            host: None,
            machine_id: None,
            kernel: None,
            cpu_model: None,
            git_commit: None,
        }
    }
}

impl RunInfo {
    /// The spec as run, read back as the spec crate's type when the run was read; an error
    /// says why it does not read (written by another version) and what to do.
    pub fn spec(&self) -> std::result::Result<&Spec, &SpecError> {
        self.spec.as_ref().map_err(|e| &**e)
    }

    /// The spec as run, or why it does not read, to keep.
    pub fn spec_read(&self) -> std::result::Result<&Spec, Arc<SpecError>> {
        self.spec.as_ref().map_err(Arc::clone)
    }

    /// The spec as run as stored (TOML).
    pub fn spec_toml(&self) -> &str {
        &self.spec_toml
    }

    /// Sets the spec as run to `text`, and reads it (once, here) and hashes it as a stored
    /// run's is.
    pub fn set_spec_toml(&mut self, text: String) {
        self.spec = Spec::read_as_run(&text).map_err(Arc::new);
        self.spec_hash = schedlab_spec::as_run::read_spec_hash(self.spec().ok(), &text);
        self.spec_toml = text;
    }

    /// The hash of the spec as run, seed aside (see [`super::spec_hash`]), as stored with
    /// the run.
    pub fn spec_hash(&self) -> &str {
        &self.spec_hash
    }
}

/// The stored row of run `run_id`.
pub fn run_info(store: &Store, run_id: i64) -> Result<RunInfo> {
    store.require_run(run_id)?;
    let (mut info, runner) = store.db.query_one(
        "SELECT run_id, name, started_at, finished_at, status, seed, version, argv, spec_toml, env_json, trials_planned,
                runner_pid, runner_boot_id, runner_start_ticks, uuid, host, machine_id, kernel, cpu_model, git_commit,
                spec_hash
         FROM runs WHERE run_id = ?1",
        params![run_id],
        |r| {
            Ok((
                RunInfo {
                    run_id: r.get(0)?,
                    name: r.get(1)?,
                    started_at: r.get(2)?,
                    finished_at: r.get(3)?,
                    status: super::stored(r.get(4)?, "runs.status")?,
                    seed: r.get::<i64>(5)? as u64,
                    version: r.get(6)?,
                    // Masked again: a row written by an older schedlab may hold a password.
                    argv: schedlab_machine::secret::mask_command_line(&r.get::<String>(7)?),
                    // The stored spec is read here, once for the command.
                    spec: Spec::read_as_run(&r.get::<String>(8)?).map_err(Arc::new),
                    spec_toml: r.get(8)?,
                    spec_hash: r.get(20)?,
                    env_json: r.get(9)?,
                    trials_planned: r.get(10)?,
                    uuid: r.get(14)?,
                    host: r.get(15)?,
                    machine_id: r.get(16)?,
                    kernel: r.get(17)?,
                    cpu_model: r.get(18)?,
                    git_commit: r.get(19)?,
                },
                Runner {
                    pid: r.get(11)?,
                    boot_id: r.get(12)?,
                    start_ticks: r.get(13)?,
                },
            ))
        },
    )?;
    info.status = runner.status(info.status);
    Ok(info)
}
