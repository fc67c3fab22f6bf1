//! Where a results store is: an SQLite file or a PostgreSQL server (`--db PATH` or
//! `--db postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or `SCHEDLAB_DB`).

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

impl FromStr for Location {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("empty database location; give a file path or a postgres:// URL".into());
        }
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Ok(Location::Server(t.to_string()))
        } else if lower.contains("://") {
            Err(format!(
                "{} is neither a file path nor a postgres:// URL; use a path such as results.db or postgres://USER@HOST:PORT/DATABASE",
                hide_password(t)
            ))
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

/// `url` with the password of its user part replaced by `***`.
pub fn hide_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let Some(at) = rest[..auth_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_servers_and_everything_else_is_a_file() {
        assert_eq!(
            "postgres://u@h:5432/d".parse::<Location>(),
            Ok(Location::Server("postgres://u@h:5432/d".into()))
        );
        assert!("PostgreSQL://u@h/d"
            .parse::<Location>()
            .unwrap()
            .is_server());
        assert_eq!(
            "results.db".parse::<Location>(),
            Ok(Location::File("results.db".into()))
        );
        let err = "mysql://u:secret@h/d".parse::<Location>().unwrap_err();
        assert!(
            err.contains("mysql://u:***@h/d") && !err.contains("secret"),
            "{err}"
        );
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
