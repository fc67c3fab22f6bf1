//! The results store: an SQLite file or a PostgreSQL server behind one type, [`Store`].
//! Opening (read-write for runs, read-only for every reading command), the schema and its
//! versions. The store is the only module that holds SQL; [`db`] runs each query on either
//! engine.

#![forbid(unsafe_code)]

mod db;
pub mod error;
pub mod export;
pub mod figures;
pub mod groups;
pub mod kernel;
mod knobs;
mod location;
mod migrate;
mod pg;
pub mod push;
pub mod quality;
pub mod query;
pub mod queue;
mod rows;
mod spool;
mod value;
mod write;

pub use error::{
    is_unreachable, BadLocation, BadPasswordFile, BadUrl, NotSchedlab, Result, StoreError,
    UnsafeFile,
};
pub use location::{hide_password, Location};
pub use pg::{read_password_file, use_password};
pub use spool::SpooledRun;
pub use value::WrongKind;
pub use write::RunIdentity;

use db::{params, Db, Engine};
use error::Context;
use rusqlite::{Connection, OpenFlags};
use std::fmt::Display;

/// The schema, applied to every database opened (written for SQLite; PostgreSQL gets it
/// through [`db::translate_ddl`]).
const SCHEMA: &str = include_str!("schema.sql");
/// Schema version (SQLite: `PRAGMA user_version`, 0 = a new, empty database; PostgreSQL: the
/// `schedlab_meta` table).
const SCHEMA_VERSION: i64 = 9;

/// An open results database.
pub struct Store {
    db: Db,
    location: Location,
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

pub use schedlab_core::records::now_utc;

/// Tables every schedlab database has (since schema 2).
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

/// Oldest schema version this schedlab can read (and upgrade).
const OLDEST_VERSION: i64 = SCHEMA_VERSION - migrate::MIGRATIONS.len() as i64;
/// Oldest schema a PostgreSQL store can have (the first version with PostgreSQL support).
const OLDEST_PG_VERSION: i64 = 3;

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Read-write; the schema is created or upgraded.
    Write,
    /// Read-write, but the schema must already be there (a worker, a push's source).
    Existing,
    /// Read only: nothing is ever written.
    Read,
}

impl Store {
    /// Opens the store at `db` (a file path or a postgres:// URL) for a run, creating it if
    /// needed, and brings its schema up to date. A database that is not a schedlab database is
    /// refused, not changed.
    pub fn open(db: impl Into<Location>) -> Result<Store> {
        Self::open_as(db.into(), Mode::Write)
    }

    /// Opens an existing store for writing: a database without the schedlab schema is refused
    /// and left as it was.
    pub fn open_existing(db: impl Into<Location>) -> Result<Store> {
        Self::open_as(db.into(), Mode::Existing)
    }

    /// Opens an existing store for reading only: it is never changed (an SQLite file keeps the
    /// same bytes; a PostgreSQL session is read-only). An older SQLite schema is upgraded in a
    /// copy held in memory.
    pub fn open_read(db: impl Into<Location>) -> Result<Store> {
        Self::open_as(db.into(), Mode::Read)
    }

    fn open_as(location: Location, mode: Mode) -> Result<Store> {
        let db = match &location {
            Location::File(path) => open_sqlite(path, &location, mode)?,
            Location::Server(url) => open_pg(url, &location, mode)?,
        };
        Ok(Store { db, location })
    }

    /// Where the store is.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Whether the store is a PostgreSQL server.
    pub fn is_server(&self) -> bool {
        self.db.engine() == Engine::Postgres
    }

    /// The id of the most recent run, if any.
    pub fn latest_run(&self) -> Result<Option<i64>> {
        self.db
            .query_one("SELECT MAX(run_id) FROM runs", &[], |r| r.get(0))
    }

    /// Checks that run `id` exists; the error lists how to find valid ids.
    pub fn require_run(&self, id: i64) -> Result<()> {
        let found: Option<i64> = self.db.query_opt(
            "SELECT run_id FROM runs WHERE run_id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        match found {
            Some(_) => Ok(()),
            None => Err(StoreError::NoSuchRun { id }),
        }
    }

    /// The given run id if it exists, else the latest run; `flag` (what gave the id, e.g.
    /// `--run`) and `db` name it and the store in errors.
    pub fn resolve_run(&self, run: Option<i64>, flag: &str, db: &dyn Display) -> Result<i64> {
        match run {
            Some(id) => {
                self.require_run(id)
                    .with_context(|| format!("{flag} {id}, in {db}"))?;
                Ok(id)
            }
            None => self.latest_run()?.ok_or_else(|| StoreError::NoRuns {
                location: db.to_string(),
            }),
        }
    }

    /// The most recent run that did not finish (status other than done, not a queued run), if
    /// any.
    pub fn latest_unfinished_run(&self) -> Result<Option<i64>> {
        self.db.query_one(
            "SELECT MAX(run_id) FROM runs WHERE status NOT IN ('done', 'queued')",
            &[],
            |r| r.get(0),
        )
    }
}

/// A [`StoreError::NotSchedlab`] of the store at `shown`.
fn not_schedlab(shown: &Location, why: NotSchedlab) -> StoreError {
    StoreError::NotSchedlab {
        location: shown.to_string(),
        why,
    }
}

/// Opens an SQLite file in `mode`, after [`check_file`].
fn open_sqlite(path: &std::path::Path, shown: &Location, mode: Mode) -> Result<Db> {
    if mode != Mode::Write && schedlab_sys::lstat(path).is_err() {
        return Err(StoreError::NoDatabase {
            location: shown.to_string(),
        });
    }
    check_file(path, shown, mode)?;
    if mode != Mode::Read {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|source| StoreError::CannotOpen {
                location: shown.to_string(),
                hint: "; check that its directory exists and is writable, or pass --db PATH",
                source,
            })?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.set_prepared_statement_cache_capacity(64);
        // A current version comes with its whole schema (both are made in one transaction):
        // then nothing is written, and a read-only file can still be opened. Anything else is
        // read again, and made, under the write lock.
        let current = conn
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .is_ok_and(|v| v == SCHEMA_VERSION);
        if current {
            check_version(&conn, shown)?;
        } else {
            // A table rebuild of an upgrade must not delete the rows that refer to it: foreign
            // keys are off around the transaction (the pragma is a no-op inside one).
            let enforced: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
            conn.execute_batch("PRAGMA foreign_keys = OFF")?;
            let prepared = in_immediate(&conn, || prepare_schema(&conn, shown, mode));
            if enforced {
                conn.execute_batch("PRAGMA foreign_keys = ON")?;
            }
            prepared?;
        }
        return Ok(Db::Sqlite(conn));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn =
        Connection::open_with_flags(path, flags).map_err(|source| StoreError::CannotOpen {
            location: shown.to_string(),
            hint: " for reading; check its permissions",
            source,
        })?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(64);
    let version = check_version(&conn, shown)?;
    if version == 0 {
        return Err(not_schedlab(shown, NotSchedlab::NoTablesToRead));
    }
    if version == SCHEMA_VERSION {
        return Ok(Db::Sqlite(conn));
    }
    let mut mem = Connection::open_in_memory()?;
    {
        let copy = rusqlite::backup::Backup::new(&conn, &mut mem)?;
        copy.run_to_completion(1024, std::time::Duration::ZERO, None)
            .with_context(|| format!("cannot read {shown}"))?;
    }
    // A copy: its rebuilt tables keep the rows that refer to them (foreign keys off).
    mem.execute_batch("PRAGMA foreign_keys = OFF")?;
    migrate::upgrade_sqlite(&mem, version)
        .with_context(|| format!("cannot read the schema of {shown} (version {version})"))?;
    Ok(Db::Sqlite(mem))
}

/// The SQLite file at `path` may be opened in `mode`: never a symbolic link; for writing, in a
/// directory nobody else may write (SQLite creates its journal beside it, by name), and
/// either created here anew (`O_CREAT | O_EXCL | O_NOFOLLOW`) or a regular file of this
/// process's user with one link. Else [`StoreError::Unsafe`], saying why.
fn check_file(path: &std::path::Path, shown: &Location, mode: Mode) -> Result<()> {
    use error::UnsafeFile;
    let unsafe_file = |why: UnsafeFile| StoreError::Unsafe {
        location: shown.to_string(),
        why,
    };
    if mode == Mode::Read {
        return match schedlab_sys::lstat(path) {
            Ok(m) if m.kind == schedlab_sys::FileKind::Symlink => {
                Err(unsafe_file(UnsafeFile::Symlink))
            }
            _ => Ok(()),
        };
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| unsafe_file(UnsafeFile::NoName))?;
    let dir = schedlab_sys::OutDir::open(path.parent().unwrap_or(std::path::Path::new("")))
        .map_err(|e| unsafe_file(UnsafeFile::Directory(e)))?;
    let existing = dir
        .entry(name)
        .map_err(|e| unsafe_file(UnsafeFile::Unchecked(e)))?;
    let found = match existing {
        Some(m) => m,
        None => {
            // Created anew, or by a concurrent run a moment before: either way checked below.
            match dir.create_new(name, 0o666) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(unsafe_file(UnsafeFile::Uncreated(e))),
            }
            dir.entry(name)
                .map_err(|e| unsafe_file(UnsafeFile::Unchecked(e)))?
                .ok_or_else(|| unsafe_file(UnsafeFile::Vanished))?
        }
    };
    schedlab_sys::OutDir::own_file(&found).map_err(|why| unsafe_file(why.into()))
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction of `conn`: the write lock is taken before
/// anything is read, so two processes opening one new file never see each other's half-made
/// schema (the second waits, then finds it whole). Rolled back when `f` fails.
fn in_immediate<T>(conn: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match f() {
        Ok(v) => {
            conn.execute_batch("COMMIT")?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Creates the schema of a new database, or upgrades an older one, in `mode` (inside the
/// caller's transaction); refuses a database without the schema when `mode` needs one.
fn prepare_schema(conn: &Connection, shown: &Location, mode: Mode) -> Result<()> {
    let version = check_version(conn, shown)?;
    if version == 0 {
        if mode == Mode::Existing {
            return Err(not_schedlab(shown, NotSchedlab::NoTables));
        }
        conn.execute_batch(SCHEMA)
            .with_context(|| format!("cannot create the schema in {shown}"))?;
    } else {
        migrate::upgrade_sqlite(conn, version)
            .with_context(|| format!("cannot upgrade the schema of {shown}"))?;
    }
    if version != SCHEMA_VERSION {
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    Ok(())
}

/// The schema version of `conn`'s database: 0 for a new, empty one. Refuses a file that is not
/// SQLite, another program's database, and versions this schedlab cannot read.
fn check_version(conn: &Connection, shown: &Location) -> Result<i64> {
    let not_sqlite = |e: rusqlite::Error| not_schedlab(shown, NotSchedlab::NotSqlite(e));
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(not_sqlite)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(not_sqlite)?;
    check_tables(shown, version, &tables, OLDEST_VERSION)
}

/// Checks a database's version and tables: 0 for a new, empty one, else its version.
fn check_tables(shown: &Location, version: i64, tables: &[String], oldest: i64) -> Result<i64> {
    if version > SCHEMA_VERSION {
        return Err(not_schedlab(shown, NotSchedlab::Newer { version }));
    }
    let missing: Vec<&'static str> = TABLES
        .iter()
        .filter(|t| !tables.iter().any(|x| x == *t))
        .copied()
        .collect();
    if version == 0 && missing.len() == TABLES.len() && (shown.is_server() || tables.is_empty()) {
        return Ok(0);
    }
    if version < oldest || !missing.is_empty() {
        return Err(not_schedlab(
            shown,
            NotSchedlab::Unusable { version, missing },
        ));
    }
    Ok(version)
}

/// Key of the advisory lock that serialises schema changes on a PostgreSQL server.
const PG_SCHEMA_LOCK: i64 = 0x5343_4845_444c_4142; // "SCHEDLAB"

/// Opens a PostgreSQL store in `mode`.
fn open_pg(url: &str, shown: &Location, mode: Mode) -> Result<Db> {
    let db = Db::Postgres(Box::new(db::Pg::new(pg::connect(url, mode == Mode::Read)?)));
    if mode == Mode::Read {
        let version = pg_version(&db, shown)?;
        if version == 0 {
            return Err(not_schedlab(shown, NotSchedlab::NoSchemaToRead));
        }
        if version != SCHEMA_VERSION {
            return Err(not_schedlab(shown, NotSchedlab::OlderToRead { version }));
        }
        return Ok(db);
    }
    db.transaction(|| {
        db.execute("SELECT pg_advisory_xact_lock(?1)", params![PG_SCHEMA_LOCK])?;
        let version = pg_version(&db, shown)?;
        if version == 0 {
            if mode == Mode::Existing {
                return Err(not_schedlab(shown, NotSchedlab::NoSchema));
            }
            db.batch(&db::translate_ddl(SCHEMA))
                .with_context(|| format!("cannot create the schema in {shown}; does the user own the database or have CREATE on its schema?"))?;
            db.batch("CREATE TABLE schedlab_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")?;
            db.execute(
                "INSERT INTO schedlab_meta (key, value) VALUES ('schema_version', ?1)",
                params![SCHEMA_VERSION.to_string()],
            )?;
        } else if version < SCHEMA_VERSION {
            migrate::upgrade_pg(&db, version)?;
            db.execute(
                "UPDATE schedlab_meta SET value = ?1 WHERE key = 'schema_version'",
                params![SCHEMA_VERSION.to_string()],
            )?;
        }
        Ok(())
    })?;
    Ok(db)
}

/// The schema version of a PostgreSQL store: 0 when it has none of schedlab's tables.
fn pg_version(db: &Db, shown: &Location) -> Result<i64> {
    let tables: Vec<String> = db.query(
        "SELECT CAST(tablename AS TEXT) FROM pg_tables WHERE schemaname = current_schema()",
        &[],
        |r| r.get(0),
    )?;
    let version = if tables.iter().any(|t| t == "schedlab_meta") {
        db.query_opt(
            "SELECT value FROM schedlab_meta WHERE key = 'schema_version'",
            &[],
            |r| r.get::<String>(0),
        )?
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
    } else {
        0
    };
    check_tables(shown, version, &tables, OLDEST_PG_VERSION)
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
