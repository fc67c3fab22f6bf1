//! A real PostgreSQL server for the tests: Debian's binaries, `initdb` in a temporary
//! directory owned by an unprivileged user, a free port on 127.0.0.1, password authentication
//! over TCP. One per test process ([`shared`]), stopped and removed when the process exits
//! (also after failed tests), and by a watchdog if the process dies without exiting.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The server of this test process, started by the first test that asks (or why it cannot be).
static SHARED: OnceLock<Result<Server, String>> = OnceLock::new();
/// Held by the test using the server: they take turns (some stop and restart it).
static TURN: Mutex<()> = Mutex::new(());

/// The server, for one test at a time; None (the test skipped, with the reason shown) where
/// it cannot run, or a failure under `SCHEDLAB_TEST_REQUIRE`.
pub fn shared() -> Option<Turn> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let server = SHARED.get_or_init(|| {
        let started = Server::start();
        if started.is_ok() {
            // SAFETY: registers a plain function, run once when the process exits.
            unsafe { libc::atexit(stop_at_exit) };
        }
        started
    });
    match server {
        Ok(server) => {
            // A test that stopped the server and failed before starting it again.
            server.ensure_running();
            Some(Turn {
                server,
                _turn: turn,
            })
        }
        Err(reason) => {
            schedlab_testkit::skip(schedlab_testkit::Need::Postgresql, reason);
            None
        }
    }
}

/// The shared server, held by one test.
pub struct Turn {
    server: &'static Server,
    _turn: MutexGuard<'static, ()>,
}

impl std::ops::Deref for Turn {
    type Target = Server;
    fn deref(&self) -> &Server {
        self.server
    }
}

/// Stops the shared server and removes its directory (the process is exiting).
extern "C" fn stop_at_exit() {
    if let Some(Ok(server)) = SHARED.get() {
        server.shut_down();
    }
}

/// The superuser the tests connect as, and its password.
pub const USER: &str = "schedlab";
pub const PASSWORD: &str = "test-secret";

/// A running PostgreSQL server in a temporary directory.
pub struct Server {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// The unprivileged user the server runs as (when the tests run as root).
    run_as: Option<String>,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    watchdog: Mutex<Option<Child>>,
    databases: AtomicU32,
}

/// The directory holding initdb, pg_ctl and postgres: Debian's newest version, else PATH.
fn find_bin() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    dirs.sort();
    let has_all = |d: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| d.join(b).exists())
    };
    if let Some((_, d)) = dirs.into_iter().rev().find(|(_, d)| has_all(d)) {
        return Some(d);
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| has_all(d))
}

impl Server {
    /// Starts a server, or says why it cannot (then the tests skip).
    pub fn start() -> Result<Server, String> {
        let bin = find_bin().ok_or(
            "PostgreSQL's server binaries (initdb, pg_ctl, postgres) are not installed; `apt-get install postgresql` (CI installs it)",
        )?;
        let root = nix::unistd::geteuid().is_root();
        let run_as = if root {
            let user = ["postgres", "nobody"]
                .into_iter()
                .find(|u| nix::unistd::User::from_name(u).ok().flatten().is_some())
                .ok_or("running as root and no unprivileged user (postgres, nobody) to run the server as")?;
            Some(user.to_string())
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("schedlab-pg-")
            .tempdir()
            .map_err(|e| format!("no temporary directory: {e}"))?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| e.to_string())?;
        if let Some(u) = &run_as {
            let user = nix::unistd::User::from_name(u).unwrap().unwrap();
            std::os::unix::fs::chown(dir.path(), Some(user.uid.as_raw()), Some(user.gid.as_raw()))
                .map_err(|e| format!("cannot give the server's directory to {u}: {e}"))?;
        }
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&pwfile, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let mut server = Server {
            dir,
            bin,
            run_as,
            port,
            watchdog: Mutex::new(None),
            databases: AtomicU32::new(0),
        };
        let data = server.data();
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .args(["--locale=C", "--encoding=UTF8", "-N"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        server.watchdog = Mutex::new(server.spawn_watchdog());
        server.start_again()?;
        Ok(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A command for one of the server's binaries, as the server's user.
    fn command(&self, name: &str) -> Command {
        let mut c = match &self.run_as {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(self.bin.join(name));
                c
            }
            None => Command::new(self.bin.join(name)),
        };
        c.current_dir(self.dir.path()).stdin(Stdio::null());
        c
    }

    /// A shell that stops the server and removes its directory if this process dies first.
    fn spawn_watchdog(&self) -> Option<Child> {
        let stop = format!(
            "{} {} -D {} stop -m immediate",
            self.run_as
                .as_ref()
                .map_or(String::new(), |u| format!("runuser -u {u} --")),
            self.bin.join("pg_ctl").display(),
            self.data().display()
        );
        let script = format!(
            "while [ -d /proc/{pid} ]; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.path().display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
    }

    /// Starts the (stopped) server; waits until it accepts connections.
    pub fn start_again(&self) -> Result<(), String> {
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50",
            self.port,
            self.dir.path().display()
        );
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output()
            .map_err(|e| format!("cannot run pg_ctl: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
            return Err(format!(
                "the server did not start: {}{log}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Stops the server (fast shutdown: clients are disconnected).
    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-w", "-m", "fast", "stop"])
            .output();
    }

    /// The URL of database `db` with the right password.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// A connection to database `db`.
    pub fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).expect("test connection")
    }

    /// A new, empty database; returns its name.
    pub fn fresh_db(&self, prefix: &str) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst) + 1;
        let name = format!("{prefix}_{n}");
        self.client("postgres")
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create database");
        name
    }
}

impl Server {
    /// Starts the server again if a test left it stopped.
    fn ensure_running(&self) {
        let status = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("status")
            .output();
        if status.is_ok_and(|o| !o.status.success()) {
            self.start_again().expect("restart the test server");
        }
    }

    /// Stops the server at once, ends the watchdog and removes the server's directory.
    fn shut_down(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-w", "-m", "immediate", "stop"])
            .output();
        let watchdog = self
            .watchdog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut w) = watchdog {
            let _ = w.kill();
            let _ = w.wait();
        }
        let _ = std::fs::remove_dir_all(self.dir.path());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}
