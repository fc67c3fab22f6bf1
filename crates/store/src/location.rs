//! Where a results store is: an SQLite file or a PostgreSQL server (`--db PATH` or
//! `--db postgres://USER@HOST[:PORT]/DATABASE`, or `SCHEDLAB_DB`, which may hold a password).

use crate::error::{BadLocation, StoreError};
use schedlab_machine::secret;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A results store's address.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    File(PathBuf),
    /// A PostgreSQL server: the connection URL as given.
    Server(String),
}

impl Location {
    /// Whether the store may already exist: a file that exists, or any server.
    pub fn exists(&self) -> bool {
        match self {
            Location::File(p) => p.exists(),
            Location::Server(_) => true,
        }
    }

    /// Whether this is a PostgreSQL server.
    pub fn is_server(&self) -> bool {
        matches!(self, Location::Server(_))
    }

    /// The location as shown to people: the path, or the URL with its password hidden.
    pub fn display(&self) -> &Self {
        self
    }

    /// The file's path, for an SQLite store.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Server(_) => None,
        }
    }
}

impl Default for Location {
    /// `schedlab.db` in the current directory.
    fn default() -> Location {
        Location::File(PathBuf::from("schedlab.db"))
    }
}

/// libpq's connection-string keywords: a `--db` value starting with one of them and `=` is a
/// key=value connection string, not a file name.
const CONNINFO_KEYS: [&str; 8] = [
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
];

impl FromStr for Location {
    type Err = StoreError;
    /// Reads a location; an error ([`StoreError::BadLocation`]) never holds the password (nor,
    /// for a value that may hide one where it cannot be found, the value at all).
    fn from_str(s: &str) -> Result<Self, StoreError> {
        let t = s.trim();
        if t.is_empty() {
            return Err(StoreError::BadLocation(BadLocation::Empty));
        }
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            if secret::ambiguous(t) {
                return Err(StoreError::BadLocation(BadLocation::AmbiguousUrl));
            }
            Ok(Location::Server(t.to_string()))
        } else if lower.contains("://") {
            Err(StoreError::BadLocation(BadLocation::OtherScheme {
                masked: secret::mask_url(t),
            }))
        } else if lower.split_whitespace().any(|w| {
            CONNINFO_KEYS
                .iter()
                .any(|k| w.strip_prefix(k).is_some_and(|r| r.starts_with('=')))
        }) {
            Err(StoreError::BadLocation(BadLocation::ConnectionString))
        } else {
            Ok(Location::File(PathBuf::from(s)))
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(p) => write!(f, "{}", p.display()),
            Location::Server(url) => f.write_str(&hide_password(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

impl From<&Path> for Location {
    fn from(p: &Path) -> Location {
        Location::File(p.to_path_buf())
    }
}

impl From<&PathBuf> for Location {
    fn from(p: &PathBuf) -> Location {
        Location::File(p.clone())
    }
}

impl From<PathBuf> for Location {
    fn from(p: PathBuf) -> Location {
        Location::File(p)
    }
}

impl From<&Location> for Location {
    fn from(l: &Location) -> Location {
        l.clone()
    }
}

/// `url` with its password (user part or `password` parameter) replaced by `***`, read with
/// a URL parser (see [`secret::mask_url`]).
pub fn hide_password(url: &str) -> String {
    secret::mask_url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_servers_and_everything_else_is_a_file() {
        assert_eq!(
            "postgres://u@h:5432/d".parse::<Location>().unwrap(),
            Location::Server("postgres://u@h:5432/d".into())
        );
        assert!("PostgreSQL://u@h/d"
            .parse::<Location>()
            .unwrap()
            .is_server());
        assert_eq!(
            "results.db".parse::<Location>().unwrap(),
            Location::File("results.db".into())
        );
        let err = "mysql://u:secret@h/d".parse::<Location>().unwrap_err();
        assert!(
            matches!(&err, StoreError::BadLocation(BadLocation::OtherScheme { masked }) if masked == "mysql://u:***@h/d"),
            "{err}"
        );
        let err = err.to_string();
        assert!(
            err.contains("mysql://u:***@h/d") && !err.contains("secret"),
            "{err}"
        );
    }

    #[test]
    fn ambiguous_urls_and_connection_strings_are_refused_without_their_password() {
        for bad in [
            "postgres://lab:Sq/Kt@h/d",
            "postgres://lab:Sq?Kt@h/d",
            "postgres://lab:Sq#Kt@h/d",
            "postgres://lab:Sq@Kt@h/d",
        ] {
            let err = bad.parse::<Location>().unwrap_err().to_string();
            assert!(
                err.contains("percent-encode") && !err.contains("Kt"),
                "{err}"
            );
        }
        let ok: Location = "postgres://lab:Sq%2FK%3Ft%40x%23y@h/d".parse().unwrap();
        assert_eq!(ok.to_string(), "postgres://lab:***@h/d");
        for conninfo in ["host=h password=Kt3", "dbname=d user=lab", "PASSWORD=Kt3"] {
            let err = conninfo.parse::<Location>().unwrap_err().to_string();
            assert!(err.contains("key=value") && !err.contains("Kt3"), "{err}");
        }
        assert!(!"results=1.db".parse::<Location>().unwrap().is_server());
    }

    #[test]
    fn each_refusal_is_its_reason_and_shows_its_sentence() {
        let reason = |s: &str| match s.parse::<Location>() {
            Err(StoreError::BadLocation(why)) => why,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(reason("  "), BadLocation::Empty);
        assert_eq!(
            StoreError::BadLocation(BadLocation::Empty).to_string(),
            "empty database location; give a file path or a postgres:// URL"
        );
        assert_eq!(
            reason("postgres://lab:Sq/Kt@h/d"),
            BadLocation::AmbiguousUrl
        );
        assert_eq!(
            BadLocation::AmbiguousUrl.to_string(),
            "the postgres:// URL (not shown: it holds a password) has a / ? # or @ in its user name or password; percent-encode them there (%2F %3F %23 %40, and % as %25) so that it reads one way only"
        );
        let other = reason("mysql://u@h/d");
        assert_eq!(
            other,
            BadLocation::OtherScheme {
                masked: "mysql://u@h/d".into()
            }
        );
        assert_eq!(
            other.to_string(),
            "mysql://u@h/d is neither a file path nor a postgres:// URL; use a path such as results.db or postgres://USER@HOST:PORT/DATABASE"
        );
        assert_eq!(reason("user=lab"), BadLocation::ConnectionString);
        assert_eq!(
            StoreError::BadLocation(BadLocation::ConnectionString).to_string(),
            "a key=value connection string (not shown: it may hold a password) is not accepted; write postgres://USER@HOST:PORT/DATABASE, with the password in PGPASSWORD, ~/.pgpass or --db-password-file"
        );
        assert!(StoreError::BadLocation(BadLocation::Empty).is_bad_input());
    }

    #[test]
    fn passwords_are_hidden_when_shown() {
        assert_eq!(
            hide_password("postgres://me:s3cr:et@db.example:5432/lab?x=1"),
            "postgres://me:***@db.example:5432/lab?x=1"
        );
        assert_eq!(hide_password("postgres://me@h/d"), "postgres://me@h/d");
        assert_eq!(hide_password("postgres://h/d"), "postgres://h/d");
        let l: Location = "postgres://a:b@h/d".parse().unwrap();
        assert_eq!(l.to_string(), "postgres://a:***@h/d");
        assert_eq!(format!("{:?}", l), "Location(postgres://a:***@h/d)");
    }
}
