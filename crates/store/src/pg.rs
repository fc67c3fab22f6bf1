//! PostgreSQL connections: URL parsing, a connection that starts no thread, errors that say
//! what to do, and whether an error means the server is out of reach.

use super::location::hide_password;
use crate::error::{Result, StoreError};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Time allowed to reach the server when the URL sets none (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The password of `--db-password-file`, read once by the binary ([`use_password`]).
static GIVEN_PASSWORD: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Uses `password` for every connection whose URL names none, before `PGPASSWORD` and
/// `~/.pgpass` (the password of `--db-password-file`).
pub fn use_password(password: String) {
    let _ = GIVEN_PASSWORD.set(password);
}

/// Longest password file read, bytes.
const MAX_PASSWORD_FILE_BYTES: u64 = 4096;

/// The password in the file at `path` (`--db-password-file`): its first line. Refused, as
/// libpq refuses a `.pgpass` that others may read, unless it is a regular file (not a link)
/// of this process's user that nobody else may read or write.
pub fn read_password_file(path: &Path) -> Result<String> {
    use crate::error::BadPasswordFile;
    use std::io::Read;
    let refuse = |why: BadPasswordFile| StoreError::PasswordFile {
        path: path.to_path_buf(),
        why,
    };
    let m = schedlab_sys::lstat(path).map_err(|e| refuse(BadPasswordFile::Unreadable(e)))?;
    if m.kind != schedlab_sys::FileKind::Regular {
        return Err(refuse(BadPasswordFile::NotRegular));
    }
    if m.uid != schedlab_sys::euid() {
        return Err(refuse(BadPasswordFile::Owner { uid: m.uid }));
    }
    if m.mode & 0o077 != 0 {
        return Err(refuse(BadPasswordFile::OpenToOthers { mode: m.mode }));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PASSWORD_FILE_BYTES).read_to_string(&mut text))
        .map_err(|e| refuse(BadPasswordFile::Unreadable(e)))?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.is_empty() {
        return Err(refuse(BadPasswordFile::Empty));
    }
    Ok(line.to_string())
}

/// The password `~/.pgpass` (or `$PGPASSFILE`) gives for `host`, `port`, `db` and `user`, as
/// libpq reads it: `host:port:database:user:password` lines, `*` matching anything, `\:` and
/// `\\` escaped, `#` comments; a file others may read or write is ignored, as libpq does.
fn pgpass(host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let path = match std::env::var_os("PGPASSFILE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    let m = schedlab_sys::lstat(&path).ok()?;
    if m.kind != schedlab_sys::FileKind::Regular || m.mode & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let port = port.to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|line| {
            let f = pgpass_fields(line);
            let matches = |i: usize, want: &str| f.get(i).is_some_and(|v| v == "*" || v == want);
            (f.len() == 5
                && matches(0, host)
                && matches(1, &port)
                && matches(2, db)
                && matches(3, user))
            .then(|| f[4].clone())
        })
}

/// The fields of a `.pgpass` line: four split at unescaped `:`, then the rest of the line (the
/// password, which may hold `:`), `\` escaping the next character.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("one").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one").push(c),
        }
    }
    fields
}

/// Connects to the server at `url`; with `read_only`, every transaction of the session is
/// read-only (`default_transaction_read_only`), so a reading command cannot write.
///
/// Host names are resolved here, on the calling thread: the client would otherwise resolve
/// them on a thread of its own, and a process with threads must not fork (the run stage forks
/// its launcher after the store is open).
pub fn connect(url: &str, read_only: bool) -> Result<postgres::Client> {
    let shown = hide_password(url);
    use crate::error::BadUrl;
    let bad = |why: BadUrl| StoreError::BadUrl {
        location: shown.clone(),
        why,
    };
    let mut cfg: postgres::Config = url.parse().map_err(|e| bad(BadUrl::Syntax(e)))?;
    if cfg.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .or_else(|_| std::env::var("USER"))
            .map_err(|_| bad(BadUrl::NoUser))?;
        cfg.user(&user);
    }
    if cfg.get_password().is_none() {
        if let Some(p) = password_for(&cfg) {
            cfg.password(p);
        }
    }
    if cfg.get_dbname().is_none() {
        return Err(bad(BadUrl::NoDatabase));
    }
    if cfg.get_connect_timeout().is_none() {
        cfg.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that vanishes mid-query (network loss) is noticed within a minute, not hours.
    cfg.keepalives_idle(Duration::from_secs(30));
    if cfg.get_tcp_user_timeout().is_none() {
        cfg.tcp_user_timeout(Duration::from_secs(60));
    }
    if cfg.get_hosts().is_empty() {
        cfg.host("localhost");
    }
    resolve_hosts(&mut cfg, &shown)?;
    let mut options = cfg.get_options().unwrap_or("").to_string();
    if read_only {
        options += " -c default_transaction_read_only=on";
    }
    cfg.options(options.trim());
    cfg.application_name("schedlab");
    cfg.connect(postgres::NoTls)
        .map_err(|e| connect_error(&shown, &cfg, &e).into())
}

/// The password for a URL that names none: `--db-password-file`'s, else `PGPASSWORD`, else
/// the `~/.pgpass` line for the URL's host, port, database and user.
fn password_for(cfg: &postgres::Config) -> Option<String> {
    if let Some(p) = GIVEN_PASSWORD.get() {
        return Some(p.clone());
    }
    if let Ok(p) = std::env::var("PGPASSWORD") {
        return Some(p);
    }
    let host = match cfg.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = cfg.get_ports().first().copied().unwrap_or(5432);
    pgpass(
        &host,
        port,
        cfg.get_dbname().unwrap_or(""),
        cfg.get_user().unwrap_or(""),
    )
}

/// Resolves the URL's host names to addresses on the calling thread (see [`connect`]), unless
/// it gives addresses itself.
fn resolve_hosts(cfg: &mut postgres::Config, shown: &str) -> Result<()> {
    if !cfg.get_hostaddrs().is_empty() {
        return Ok(());
    }
    let hosts = cfg.get_hosts().to_vec();
    let ports = cfg.get_ports().to_vec();
    let mut addrs = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        if let postgres::config::Host::Tcp(name) = h {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            let all: Vec<std::net::SocketAddr> = (name.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect)
                .unwrap_or_default();
            // The first address that answers (localhost may be ::1 and 127.0.0.1, and
            // the server listen on one of them only), else the first.
            let addr = all
                .iter()
                .find(|a| {
                    all.len() == 1
                        || std::net::TcpStream::connect_timeout(a, Duration::from_secs(2)).is_ok()
                })
                .or(all.first())
                .ok_or_else(|| StoreError::UnknownHost {
                    host: name.clone(),
                    location: shown.to_string(),
                })?;
            addrs.push(addr.ip());
        }
    }
    if addrs.len() == hosts.len() {
        for a in addrs {
            cfg.hostaddr(a);
        }
    }
    Ok(())
}

/// A failure to connect, as a sentence that says what happened and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    /// The sentence.
    pub message: String,
    /// Whether the server could not be reached at all (as opposed to refusing the user or
    /// lacking the database).
    pub unreachable: bool,
    /// Whether the server refused what the URL names: its user and password, or its database.
    pub refused: bool,
}

/// A connection failure as a [`ConnectError`].
fn connect_error(shown: &str, cfg: &postgres::Config, e: &postgres::Error) -> ConnectError {
    let user = cfg.get_user().unwrap_or("?");
    let db = cfg.get_dbname().unwrap_or("?");
    if let Some(d) = e.as_db_error() {
        let what = match d.code().code() {
            "28P01" | "28000" => format!(
                "the server refused user {user} ({}); check the user, the password (PGPASSWORD, ~/.pgpass or --db-password-file) and the server's pg_hba.conf",
                d.message()
            ),
            "3D000" => format!(
                "the server has no database {db}; create it (createdb {db}) or name another in the URL"
            ),
            "57P03" => "the server is starting up or shutting down; try again in a moment".into(),
            _ => d.message().to_string(),
        };
        return ConnectError {
            message: format!("cannot connect to the PostgreSQL server at {shown}: {what}"),
            unreachable: d.code().code() == "57P03",
            // SQLSTATE 28xxx invalid authorization, 3D000 invalid catalog name.
            refused: matches!(d.code().code(), "28P01" | "28000" | "3D000"),
        };
    }
    let cause = std::error::Error::source(e)
        .map(|s| s.to_string())
        .unwrap_or_else(|| e.to_string());
    ConnectError {
        message: format!(
            "cannot connect to the PostgreSQL server at {shown}: {cause}; check that the server is running and accepts TCP connections at that host and port (listen_addresses, port, firewall)"
        ),
        unreachable: true,
        refused: false,
    }
}

/// Whether `pe` says the server cannot be reached (connection refused or lost, server shutting
/// down), as opposed to a mistake in what was asked of it.
pub(crate) fn unreachable(pe: &postgres::Error) -> bool {
    if pe.is_closed() {
        return true;
    }
    if let Some(code) = pe.code() {
        let code = code.code();
        // SQLSTATE classes: 08 connection exception, 57P0x operator intervention.
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    // An error without a server's answer: the connection itself failed.
    pe.as_db_error().is_none()
        && std::error::Error::source(pe)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_match_as_libpq_reads_them() {
        assert_eq!(
            pgpass_fields(r"h:5432:d\:b:u:p\\w:x"),
            ["h", "5432", "d:b", "u", r"p\w:x"]
        );
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pgpass");
        std::fs::write(
            &f,
            "# c\nother:*:*:*:no\n127.0.0.1:*:lab:alice:s3:cr\\:et\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::env::set_var("PGPASSFILE", &f);
        assert_eq!(
            pgpass("127.0.0.1", 5433, "lab", "alice").as_deref(),
            Some("s3:cr:et")
        );
        assert_eq!(pgpass("127.0.0.1", 5433, "lab", "bob"), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            pgpass("127.0.0.1", 5433, "lab", "alice"),
            None,
            "others may read it"
        );
        std::env::remove_var("PGPASSFILE");
        let e = read_password_file(&f).unwrap_err().to_string();
        assert!(e.contains("mode 0644"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_password_file(&f).unwrap(), "# c");
    }
}
