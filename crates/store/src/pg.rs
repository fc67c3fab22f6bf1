//! PostgreSQL connections: URL parsing, a connection that starts no thread, errors that say
//! what to do, and whether an error means the server is out of reach.

use super::location::hide_password;
use crate::error::{Result, StoreError};
use std::net::ToSocketAddrs;
use std::time::Duration;

/// Time allowed to reach the server when the URL sets none (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to the server at `url`; with `read_only`, every transaction of the session is
/// read-only (`default_transaction_read_only`), so a reading command cannot write.
///
/// Host names are resolved here, on the calling thread: the client would otherwise resolve
/// them on a thread of its own, and a process with threads must not fork (the run stage forks
/// its launcher after the store is open).
pub fn connect(url: &str, read_only: bool) -> Result<postgres::Client> {
    let shown = hide_password(url);
    let bad = |why: String| StoreError::BadUrl {
        location: shown.clone(),
        why,
    };
    let mut cfg: postgres::Config = url.parse().map_err(|e| {
        bad(format!(
            "is not a valid PostgreSQL URL ({e}); write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
        ))
    })?;
    if cfg.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .or_else(|_| std::env::var("USER"))
            .map_err(|_| bad("names no user; write postgres://USER@HOST/DATABASE".into()))?;
        cfg.user(&user);
    }
    if cfg.get_password().is_none() {
        if let Ok(p) = std::env::var("PGPASSWORD") {
            cfg.password(p);
        }
    }
    if cfg.get_dbname().is_none() {
        return Err(bad(
            "names no database; write postgres://USER@HOST:PORT/DATABASE".into(),
        ));
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
                "the server refused user {user} ({}); check the user and password in the URL (or PGPASSWORD) and the server's pg_hba.conf",
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
