//! The store's errors: [`StoreError`], one variant per kind of failure, so that a caller tells
//! a mistake in what it was given (a `--db` that is no schedlab database, a run id that is not
//! stored: [`StoreError::is_bad_input`]) from a database that failed, and a server out of reach
//! ([`StoreError::is_unreachable`]) from one that refused. [`Context`] adds what was being done,
//! as `anyhow`'s does, without hiding the kind.

use super::pg::ConnectError;

/// A result of the store.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A reading command was given a file that does not exist.
    #[error("no results database at {location}; run `schedlab run` first or pass --db PATH")]
    NoDatabase {
        /// The location given (password masked).
        location: String,
    },
    /// The database is not one this schedlab can use: not SQLite, another program's, a schema
    /// too old or too new, or a server without the schema. `why` says which and what to do.
    #[error("{location} {why}")]
    NotSchedlab {
        /// The location given (password masked).
        location: String,
        /// What it is instead.
        why: NotSchedlab,
    },
    /// An SQLite file that cannot be opened (no such directory, no permission).
    #[error("cannot open the results database {location}{hint}: {source}")]
    CannotOpen {
        /// The path given.
        location: String,
        /// What to check.
        hint: &'static str,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// An SQLite file (or its directory) someone else could have planted or could change: a
    /// symbolic link, another user's file, a directory others may write.
    #[error("the results database {location} {why}; pass --db a file of your own in a directory only you can write")]
    Unsafe {
        /// The path given.
        location: String,
        /// What is wrong with it.
        why: UnsafeFile,
    },
    /// A `--db-password-file` that cannot be used: a link, another user's, readable by others.
    #[error("the password file {} {why}; give --db-password-file a file of your own, mode 0600 (or use PGPASSWORD or ~/.pgpass)", path.display())]
    PasswordFile {
        /// The file given.
        path: std::path::PathBuf,
        /// What is wrong with it.
        why: BadPasswordFile,
    },
    /// A `--db` value that is no file path or PostgreSQL URL schedlab accepts (never holding the
    /// password).
    #[error("{0}")]
    BadLocation(BadLocation),
    /// A PostgreSQL URL that names no user or database, or a host that does not resolve.
    #[error("{location} {why}")]
    BadUrl {
        /// The URL, password masked.
        location: String,
        /// What is missing and how to write it.
        why: BadUrl,
    },
    /// A PostgreSQL URL whose host name does not resolve.
    #[error("cannot resolve the host {host} of {location}; check its name")]
    UnknownHost {
        /// The host name.
        host: String,
        /// The URL, password masked.
        location: String,
    },
    /// A run id that is not stored.
    #[error("run {id} is not in this database; `schedlab runs` lists the stored runs")]
    NoSuchRun {
        /// The id asked for.
        id: i64,
    },
    /// A store without runs, where one was needed.
    #[error("{location} holds no runs yet; run `schedlab run` first")]
    NoRuns {
        /// The location (password masked).
        location: String,
    },
    /// A `--spec-hash` too short to pick runs.
    #[error("--spec-hash needs at least 4 hex digits of the hash `schedlab runs` shows")]
    ShortSpecHash,
    /// A sample column the store does not know.
    #[error("no sample column {column}; known: {known}")]
    NoSampleColumn {
        /// The column asked for.
        column: String,
        /// The columns known, comma-separated.
        known: String,
    },
    /// A run pushed from a store whose table has a column this schedlab does not know.
    #[error(
        "the source's table {table} has a column {column:?}, which the schedlab schema does not have; the file was altered or not written by schedlab, so nothing of it is pushed"
    )]
    PushRefused {
        /// The source's table.
        table: &'static str,
        /// The column the schema does not have.
        column: String,
    },
    /// The PostgreSQL server could not be reached or refused the connection.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// SQLite failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    /// A column held another kind of value than the store reads there.
    #[error("column {index}: {why}")]
    Column {
        /// The column's index in the row.
        index: usize,
        /// What was found.
        why: crate::value::WrongKind,
    },
    /// A column held a value this version does not know (a run or trial status, a policy, a
    /// task kind, a start or priority mode), named by the type it was read as.
    #[error("column {column}: {why}")]
    Unknown {
        /// The column, `table.column`.
        column: &'static str,
        /// The value and what it was read as.
        why: schedlab_core::CoreError,
    },
    /// A query that returns one row returned none.
    #[error("the query returned no row")]
    NoRow,
    /// Writing an export or a file failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Writing CSV failed.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// Reading or writing JSON failed.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A broken promise of the store's own code (a bug, not the user's or the database's).
    #[error("internal error: {0}")]
    Internal(String),
    /// What was being done when `source` happened.
    #[error("{what}: {source}")]
    Context {
        /// What was being done.
        what: String,
        /// What went wrong.
        source: Box<StoreError>,
    },
}

/// What a database that is not one this schedlab can use is instead
/// ([`StoreError::NotSchedlab`]); shown after its location, with the remedy.
#[derive(Debug, thiserror::Error)]
pub enum NotSchedlab {
    /// An SQLite file without schedlab's tables, opened to read.
    #[error("is not a schedlab results database (it has no schedlab tables); pass the file `schedlab run` wrote with --db PATH")]
    NoTablesToRead,
    /// An SQLite file without schedlab's tables, where a store must exist already.
    #[error("is not a schedlab results database (it has no schedlab tables); pass the file `schedlab run` wrote")]
    NoTables,
    /// A file SQLite cannot read.
    #[error("is not a SQLite database, so not a schedlab results database; pass the file `schedlab run` wrote with --db PATH: {0}")]
    NotSqlite(rusqlite::Error),
    /// A schema newer than this schedlab's.
    #[error("was written by a newer schedlab (schema {version}, this one knows up to {}); use a newer schedlab or another --db", crate::SCHEMA_VERSION)]
    Newer {
        /// Its schema version.
        version: i64,
    },
    /// A schema too old, or schedlab tables missing.
    #[error(
        "is not a schedlab results database this schedlab can use (schema version {version}{}); pass the database `schedlab run` wrote with --db, or a new one",
        if missing.is_empty() { String::new() } else { format!(", no table {}", missing.join(", ")) }
    )]
    Unusable {
        /// Its schema version.
        version: i64,
        /// The schedlab tables it lacks.
        missing: Vec<&'static str>,
    },
    /// A PostgreSQL database without the schema, opened to read.
    #[error("has no schedlab schema (no runs stored there yet); run `schedlab run --db URL` or `schedlab submit` first, or check the database name")]
    NoSchemaToRead,
    /// A PostgreSQL database with an older schema, opened to read (only writers upgrade it).
    #[error("has schedlab schema {version}; a writing command (run, submit, push) of this schedlab upgrades it to {}", crate::SCHEMA_VERSION)]
    OlderToRead {
        /// Its schema version.
        version: i64,
    },
    /// A PostgreSQL database without the schema, where a store must exist already.
    #[error("has no schedlab schema; `schedlab submit SPEC --db URL` or `schedlab run --db URL` creates it")]
    NoSchema,
}

/// Why a `--db-password-file` is refused ([`StoreError::PasswordFile`]); shown after its name.
#[derive(Debug, thiserror::Error)]
pub enum BadPasswordFile {
    /// It cannot be read.
    #[error("cannot be read: {0}")]
    Unreadable(std::io::Error),
    /// A link, a directory or another kind of file.
    #[error("is not a regular file (a link or something else)")]
    NotRegular,
    /// Another user's file.
    #[error("is owned by uid {uid}, not by the user running schedlab")]
    Owner {
        /// Its owner.
        uid: u32,
    },
    /// Others may read or write it.
    #[error("may be read or written by others (mode {mode:04o}); chmod 0600 it")]
    OpenToOthers {
        /// Its permission bits.
        mode: u32,
    },
    /// Its first line is empty.
    #[error("holds no password on its first line")]
    Empty,
}

/// What a PostgreSQL URL lacks ([`StoreError::BadUrl`]); shown after the URL, with how to
/// write it.
#[derive(Debug, thiserror::Error)]
pub enum BadUrl {
    /// It does not parse.
    #[error(
        "is not a valid PostgreSQL URL ({0}); write it as postgres://USER@HOST[:PORT]/DATABASE"
    )]
    Syntax(postgres::Error),
    /// No user in it, PGUSER or USER.
    #[error("names no user; write postgres://USER@HOST/DATABASE")]
    NoUser,
    /// No database in it.
    #[error("names no database; write postgres://USER@HOST:PORT/DATABASE")]
    NoDatabase,
}

/// Why a `--db` value is refused ([`StoreError::BadLocation`]); never holding a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadLocation {
    /// Nothing but blanks.
    #[error("empty database location; give a file path or a postgres:// URL")]
    Empty,
    /// A postgres:// URL with a `/ ? # @` in its user name or password, so that it reads more
    /// than one way (not kept: it holds a password).
    #[error("the postgres:// URL (not shown: it holds a password) has a / ? # or @ in its user name or password; percent-encode them there (%2F %3F %23 %40, and % as %25) so that it reads one way only")]
    AmbiguousUrl,
    /// A URL of another scheme than postgres://.
    #[error("{masked} is neither a file path nor a postgres:// URL; use a path such as results.db or postgres://USER@HOST:PORT/DATABASE")]
    OtherScheme {
        /// The URL given, password masked.
        masked: String,
    },
    /// A libpq key=value connection string (not kept: it may hold a password).
    #[error("a key=value connection string (not shown: it may hold a password) is not accepted; write postgres://USER@HOST:PORT/DATABASE, with the password in PGPASSWORD, ~/.pgpass or --db-password-file")]
    ConnectionString,
}

/// Why an SQLite file may not be used as a results database ([`StoreError::Unsafe`]); shown
/// after the file's name.
#[derive(Debug, thiserror::Error)]
pub enum UnsafeFile {
    /// A symbolic link (read only: checked before it is opened).
    #[error("is a symbolic link")]
    Symlink,
    /// A path that names no file.
    #[error("names no file (a UTF-8 name, not a directory)")]
    NoName,
    /// Its directory cannot be opened safely (others may write it, or a link on the way).
    #[error("cannot be kept safe: {0}")]
    Directory(std::io::Error),
    /// Its entry cannot be read in its directory.
    #[error("cannot be checked: {0}")]
    Unchecked(std::io::Error),
    /// It cannot be created anew.
    #[error("cannot be created: {0}")]
    Uncreated(std::io::Error),
    /// It was gone right after it was created.
    #[error("vanished as it was created")]
    Vanished,
    /// Not a file of this process's own (a link, another user's, hard links).
    #[error("{0}")]
    NotOwn(#[from] schedlab_sys::NotOwnFile),
}

impl StoreError {
    /// The error under every [`StoreError::Context`].
    pub fn root(&self) -> &StoreError {
        match self {
            StoreError::Context { source, .. } => source.root(),
            e => e,
        }
    }

    /// Whether the user gave something the store cannot use (`--db`, a server's user,
    /// password or database, a run id, `--spec-hash`, a sample column): exit 2, not 1.
    pub fn is_bad_input(&self) -> bool {
        if let StoreError::Connect(c) = self.root() {
            return c.refused;
        }
        matches!(
            self.root(),
            StoreError::NoDatabase { .. }
                | StoreError::NotSchedlab { .. }
                | StoreError::CannotOpen { .. }
                | StoreError::Unsafe { .. }
                | StoreError::PasswordFile { .. }
                | StoreError::BadLocation(_)
                | StoreError::BadUrl { .. }
                | StoreError::UnknownHost { .. }
                | StoreError::NoSuchRun { .. }
                | StoreError::NoRuns { .. }
                | StoreError::ShortSpecHash
                | StoreError::NoSampleColumn { .. }
                | StoreError::PushRefused { .. }
        )
    }

    /// Whether the server cannot be reached (connection refused or lost, server shutting
    /// down), as opposed to a mistake in what was asked of it.
    pub fn is_unreachable(&self) -> bool {
        match self.root() {
            StoreError::Connect(c) => c.unreachable,
            StoreError::Postgres(pe) => super::pg::unreachable(pe),
            _ => false,
        }
    }
}

/// Whether `e`, or an error it was caused by, is a [`StoreError`] that says the server cannot
/// be reached.
pub fn is_unreachable(e: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(e), |e| e.source()).any(|e| {
        e.downcast_ref::<StoreError>()
            .is_some_and(StoreError::is_unreachable)
    })
}

/// Adds what was being done to an error, keeping its kind.
pub trait Context<T> {
    /// The error, if any, under `what`.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// The error, if any, under the text `what` makes (only made on error).
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<StoreError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| StoreError::Context {
            what: what.into(),
            source: Box::new(e.into()),
        })
    }

    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| StoreError::Context {
            what: what().into(),
            source: Box::new(e.into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_the_kind_under_it() {
        let e: Result<()> = Err(StoreError::NoSuchRun { id: 9 });
        let e = e.context("in a.db").context("run B").unwrap_err();
        assert_eq!(
            e.to_string(),
            "run B: in a.db: run 9 is not in this database; `schedlab runs` lists the stored runs"
        );
        assert!(matches!(e.root(), StoreError::NoSuchRun { id: 9 }));
        assert!(e.is_bad_input());
        assert!(!StoreError::NoRow.is_bad_input());
        let unreachable = StoreError::Connect(ConnectError {
            message: "down".into(),
            unreachable: true,
            refused: false,
        });
        assert!(!unreachable.is_bad_input());
        let wrapped: Result<()> = Err(unreachable);
        let wrapped = wrapped.context("claiming").unwrap_err();
        assert!(wrapped.is_unreachable());
        assert!(is_unreachable(&wrapped));
    }
}
