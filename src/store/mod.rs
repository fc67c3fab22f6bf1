//! The SQLite results store: opening (read-write for runs, read-only for every reading command),
//! the schema and its versions. The store is the only module that holds SQL.

pub mod export;
pub mod kernel;
mod knobs;
pub mod quality;
pub mod query;
mod write;

use anyhow::{bail, Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::Path;

/// The schema, applied to every database opened.
const SCHEMA: &str = include_str!("schema.sql");
/// Schema version kept in `PRAGMA user_version` (0 = a new, empty database).
const SCHEMA_VERSION: i64 = 3;

/// An open results database.
pub struct Store {
    conn: Connection,
}

/// What is stored about a run when it starts.
#[derive(Debug, Clone, Copy)]
pub struct NewRun<'a> {
    /// Experiment name.
    pub name: &'a str,
    /// Seed of the trial order.
    pub seed: u64,
    /// The spec as run, defaults filled in.
    pub spec_toml: &'a str,
    /// The command line.
    pub argv: &'a str,
    /// Environment record as JSON.
    pub env_json: Option<&'a str>,
    /// Number of trials in the plan.
    pub trials_planned: usize,
}

pub use crate::records::now_utc;

/// Tables every schedlab database has.
const TABLES: [&str; 9] = [
    "runs",
    "cells",
    "trials",
    "tasks",
    "histograms",
    "samples",
    "trace_slices",
    "calibrations",
    "warnings",
];

/// Schema changes from one version to the next: `MIGRATIONS[i]` takes version `i + 2` to `i + 3`.
const MIGRATIONS: [&str; 1] = [
    // 2 -> 3: who runs a run, to tell a dead run from a running one.
    // Kernel knobs (issue 12): the cell's slice, knobs and BPF scheduler, the slice read back
    // per task, and every setting read back before each trial.
    // Trust (issue 11): exact task CPU time; each trial's reference speed, steal, noise flag
    // and RT throttling.
    "ALTER TABLE runs ADD COLUMN runner_pid INTEGER;
     ALTER TABLE runs ADD COLUMN runner_boot_id TEXT;
     ALTER TABLE runs ADD COLUMN runner_start_ticks INTEGER;
     ALTER TABLE cells ADD COLUMN slice_ns INTEGER;
     ALTER TABLE cells ADD COLUMN knobs TEXT;
     ALTER TABLE cells ADD COLUMN scx TEXT;
     ALTER TABLE tasks ADD COLUMN slice_getattr_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN slice_proc_ns INTEGER;
     CREATE TABLE IF NOT EXISTS knob_readings (
         trial_id INTEGER NOT NULL REFERENCES trials(trial_id), name TEXT NOT NULL,
         path TEXT NOT NULL, requested TEXT NOT NULL, read_back TEXT NOT NULL);
     CREATE INDEX IF NOT EXISTS knob_readings_by_trial ON knob_readings(trial_id);
     ALTER TABLE tasks ADD COLUMN cpu_ns INTEGER;
     ALTER TABLE trials ADD COLUMN speed_before REAL;
     ALTER TABLE trials ADD COLUMN speed_after REAL;
     ALTER TABLE trials ADD COLUMN trial_steal_pct REAL;
     ALTER TABLE trials ADD COLUMN noisy INTEGER;
     ALTER TABLE trials ADD COLUMN rt_throttled INTEGER;",
];

/// Oldest schema version this schedlab can read (and upgrade).
const OLDEST_VERSION: i64 = SCHEMA_VERSION - MIGRATIONS.len() as i64;

impl Store {
    /// Opens the database at `path` for a run, creating it if needed, and brings its schema up
    /// to date. A file that is not a schedlab database is refused, not changed.
    pub fn open(path: &Path) -> Result<Store> {
        let conn = Connection::open(path).with_context(|| {
            format!("cannot open the results database {}; check that its directory exists and is writable, or pass --db PATH", path.display())
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let version = check_version(&conn, path)?;
        if version == 0 {
            conn.execute_batch(SCHEMA)
                .with_context(|| format!("cannot create the schema in {}", path.display()))?;
        } else {
            upgrade(&conn, version)
                .with_context(|| format!("cannot upgrade the schema of {}", path.display()))?;
        }
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        Ok(Store { conn })
    }

    /// Opens an existing database for reading only: the file is never changed (same bytes
    /// before and after). An older schema is upgraded in a copy held in memory.
    pub fn open_read(path: &Path) -> Result<Store> {
        if !path.exists() {
            bail!(
                "no results database at {}; run `schedlab run` first or pass --db PATH",
                path.display()
            );
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).with_context(|| {
            format!(
                "cannot open the results database {} for reading; check its permissions",
                path.display()
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let version = check_version(&conn, path)?;
        if version == 0 {
            bail!(
                "{} is not a schedlab results database (it has no schedlab tables); pass the file `schedlab run` wrote with --db PATH",
                path.display()
            );
        }
        if version == SCHEMA_VERSION {
            return Ok(Store { conn });
        }
        let mut mem = Connection::open_in_memory()?;
        {
            let copy = rusqlite::backup::Backup::new(&conn, &mut mem)?;
            copy.run_to_completion(1024, std::time::Duration::ZERO, None)
                .with_context(|| format!("cannot read {}", path.display()))?;
        }
        upgrade(&mem, version).with_context(|| {
            format!(
                "cannot read the schema of {} (version {version})",
                path.display()
            )
        })?;
        Ok(Store { conn: mem })
    }

    /// The id of the most recent run, if any.
    pub fn latest_run(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row("SELECT MAX(run_id) FROM runs", [], |r| r.get(0))?)
    }

    /// Checks that run `id` exists; the error lists how to find valid ids.
    pub fn require_run(&self, id: i64) -> Result<()> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT run_id FROM runs WHERE run_id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        match found {
            Some(_) => Ok(()),
            None => anyhow::bail!(
                "run {id} is not in this database; `schedlab runs` lists the stored runs"
            ),
        }
    }

    /// The given run id if it exists, else the latest run; `db` names the file in errors.
    pub fn resolve_run(&self, run: Option<i64>, db: &Path) -> Result<i64> {
        match run {
            Some(id) => {
                self.require_run(id)
                    .with_context(|| format!("in {}", db.display()))?;
                Ok(id)
            }
            None => self.latest_run()?.ok_or_else(|| {
                anyhow::anyhow!(
                    "{} holds no runs yet; run `schedlab run` first",
                    db.display()
                )
            }),
        }
    }

    /// The most recent run that did not finish (status other than done), if any.
    pub fn latest_unfinished_run(&self) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT MAX(run_id) FROM runs WHERE status != 'done'",
            [],
            |r| r.get(0),
        )?)
    }

    /// The spec (TOML, as run) and seed of a stored run.
    pub fn run_spec(&self, run_id: i64) -> Result<(String, u64)> {
        self.require_run(run_id)?;
        Ok(self.conn.query_row(
            "SELECT spec_toml, seed FROM runs WHERE run_id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)),
        )?)
    }
}

/// The schema version of `conn`'s database: 0 for a new, empty one. Refuses a file that is not
/// SQLite, another program's database, and versions this schedlab cannot read.
fn check_version(conn: &Connection, path: &Path) -> Result<i64> {
    let not_sqlite = || {
        format!(
            "{} is not a SQLite database, so not a schedlab results database; pass the file `schedlab run` wrote with --db PATH",
            path.display()
        )
    };
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .with_context(not_sqlite)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .with_context(not_sqlite)?;
    if version > SCHEMA_VERSION {
        bail!(
            "{} was written by a newer schedlab (schema {version}, this one knows up to {SCHEMA_VERSION}); use a newer schedlab or another --db",
            path.display()
        );
    }
    let missing: Vec<&str> = TABLES
        .iter()
        .filter(|t| !tables.iter().any(|x| x == *t))
        .copied()
        .collect();
    if version == 0 && tables.is_empty() {
        return Ok(0);
    }
    if version < OLDEST_VERSION || !missing.is_empty() {
        bail!(
            "{} is not a schedlab results database this schedlab can use (schema version {version}{}); pass the file `schedlab run` wrote with --db PATH, or a new file name",
            path.display(),
            if missing.is_empty() {
                String::new()
            } else {
                format!(", no table {}", missing.join(", "))
            }
        );
    }
    Ok(version)
}

/// Applies the migrations from `version` to [`SCHEMA_VERSION`].
fn upgrade(conn: &Connection, version: i64) -> Result<()> {
    for m in &MIGRATIONS[(version - OLDEST_VERSION) as usize..] {
        conn.execute_batch(m)?;
    }
    Ok(())
}
