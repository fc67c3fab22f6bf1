//! A real PostgreSQL server for the tests: Debian's binaries, `initdb` in a temporary
//! directory owned by an unprivileged user, a free port on 127.0.0.1, password authentication
//! over TCP. One per test process ([`shared`]), stopped and removed by a watchdog when the
//! process ends, however it ends (see [`Server::spawn_watchdog`]): the server lives in a
//! static, which Rust never drops.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
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
    let server = SHARED.get_or_init(Server::start);
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
    /// The watchdog, whose stdin is the pipe it waits on ([`Server::spawn_watchdog`]).
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
        // Before initdb: a test process that dies during it leaves no directory either.
        server.watchdog = Mutex::new(Some(server.spawn_watchdog()?));
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

    /// A shell that stops the server and removes its directory once this process has ended.
    /// Its stdin is a pipe whose only write end this process holds, in the [`Child`] kept by
    /// the (never dropped) shared server, and never writes to: the kernel closes it when the
    /// process ends, whether it returns, exits, panics, aborts or is killed (SIGKILL too), and
    /// `cat` then sees the end of its input. The write end is close-on-exec, so no program
    /// the tests start (schedlab, pg_ctl, the server) holds it open. In a process group of
    /// its own, it outlives a terminal's Ctrl-C, which goes to the tests' group.
    ///
    /// The stop is PostgreSQL's immediate shutdown, what `pg_ctl stop -m immediate` does:
    /// SIGQUIT to the postmaster, which ends its children before it exits; the shell waits
    /// for the postmaster to be gone (at most 30 s), then removes the directory. The pid in
    /// `postmaster.pid` counts only while that process's working directory is this data
    /// directory (the postmaster's is; a zombie has none), so a stale pid file never has a
    /// stranger signalled.
    ///
    /// All this happens after the process has ended, not before: the test binary (and
    /// `cargo test`) returns before the server and its directory are gone. Measured on a
    /// loaded machine: the server within a few ms; the directory, with the tests' databases
    /// in it, after 0.3 s to 12 s of `rm -rf`.
    fn spawn_watchdog(&self) -> Result<Child, String> {
        const SCRIPT: &str = r#"
data=$1 dir=$2
cat >/dev/null
pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null)
running() { [ "/proc/$pid/cwd" -ef "$data" ]; }
if [ -n "$pid" ] && running && kill -QUIT "$pid"; then
    n=0
    while running && [ $n -lt 3000 ]; do sleep 0.01; n=$((n + 1)); done
fi
rm -rf "$dir"
"#;
        Command::new("sh")
            .args(["-c", SCRIPT, "schedlab-pg-watchdog"])
            .arg(self.data())
            .arg(self.dir.path())
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the server's watchdog (sh): {e}"))
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

    /// The URL of database `db`, without the password: schedlab refuses a password on its
    /// command line, and the tests' schedlab gets it in PGPASSWORD (`super::schedlab`).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// The URL of database `db` with the right password, for the tests' own clients.
    pub fn client_url(&self, db: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{db}", self.port)
    }

    /// A connection to database `db`.
    pub fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.client_url(db), postgres::NoTls).expect("test connection")
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
