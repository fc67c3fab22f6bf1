//! The `--db` flag, declared once for every command that reads or writes a store, and its
//! parser, whose errors never repeat the value (it may hold a password).

use clap::Args;
use schedlab_store::Location;

/// `--db` (or `SCHEDLAB_DB`), declared once for every command that reads or writes a store;
/// its value is read by [`LocationParser`], so no message ever repeats its password.
#[derive(Debug, Clone, Default, Args)]
pub struct DbArg {
    /// Results database: a file path or postgres://USER@HOST:PORT/DATABASE (or SCHEDLAB_DB,
    /// which may hold the password); a password on the command line is refused: give it with
    /// --db-password-file, PGPASSWORD or ~/.pgpass. It is never stored or shown.
    #[arg(
        id = "db",
        long = "db",
        value_name = "DB",
        env = "SCHEDLAB_DB",
        hide_env_values = true,
        default_value = "schedlab.db",
        value_parser = LocationParser
    )]
    pub location: Location,
}

/// `--db` of the commands of the shared store (`submit`, `worker`): no default.
#[derive(Debug, Clone, Args)]
pub struct SharedDbArg {
    /// The shared store: postgres://USER@HOST:PORT/DATABASE (or SCHEDLAB_DB, which may hold
    /// the password); a password on the command line is refused: give it with
    /// --db-password-file, PGPASSWORD or ~/.pgpass. It is never stored or shown.
    #[arg(
        id = "db",
        long = "db",
        value_name = "DB",
        env = "SCHEDLAB_DB",
        hide_env_values = true,
        value_parser = LocationParser
    )]
    pub location: Location,
}

macro_rules! location_arg {
    ($t:ty) => {
        impl std::ops::Deref for $t {
            type Target = Location;
            fn deref(&self) -> &Location {
                &self.location
            }
        }
        impl From<&$t> for Location {
            fn from(a: &$t) -> Location {
                a.location.clone()
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.location.fmt(f)
            }
        }
    };
}
location_arg!(DbArg);
location_arg!(SharedDbArg);

/// Reads a [`Location`] for clap. Its errors are written here, without the value: clap's own
/// (`invalid value '...'`) would repeat a URL and its password, from the command line or
/// from SCHEDLAB_DB.
#[derive(Debug, Clone, Copy)]
pub struct LocationParser;

impl clap::builder::TypedValueParser for LocationParser {
    type Value = Location;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Location, clap::Error> {
        let flag = arg.map_or_else(|| "the database".to_string(), |a| a.to_string());
        let env = arg
            .and_then(|a| a.get_env())
            .map_or(String::new(), |e| format!(" (or {})", e.to_string_lossy()));
        let fail = |why: &str| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for {flag}{env}: {why}\n"),
            )
        };
        let text = value
            .to_str()
            .ok_or_else(|| fail("not valid UTF-8; give a file path or a postgres:// URL"))?;
        text.parse()
            .map_err(|e: schedlab_store::StoreError| fail(&e.to_string()))
    }
}
