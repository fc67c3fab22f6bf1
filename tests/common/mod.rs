//! Helpers shared by the integration tests: the real binary, a scratch database, queries.
#![allow(dead_code)]

pub mod crafted;

use assert_cmd::cargo::CommandCargoExt;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What [`run_ok`] adds unless a test asks for re-runs itself: the tests of a binary run side
/// by side and disturb each other's trials, which would make the number of trials stored
/// depend on the machine's load (re-runs are tested on their own, `tests/retries.rs`).
pub const NO_RETRIES: [&str; 2] = ["--retries", "0"];

/// The schedlab binary under test.
pub fn schedlab() -> Command {
    Command::cargo_bin("schedlab").expect("binary built")
}

/// What a test needs from the machine: [`root`] and [`skip`] say why a test cannot run, where
/// `cargo test` shows it, or fail it under `SCHEDLAB_TEST_REQUIRE` (see schedlab-testkit).
#[allow(unused_imports)]
pub use schedlab_testkit::{is_root, program, root, skip, Need};

/// Taken by every test of a binary that runs real-time tasks pinned to one CPU: two such
/// tests at once would make each other's RT tasks wait (libtest runs a binary's tests in
/// parallel threads), so they take turns.
pub fn rt_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Puts a kernel setting back to what it was when created, on drop (also during a panic).
pub struct Restore {
    path: PathBuf,
    original: String,
}

impl Restore {
    pub fn new(path: &str) -> Restore {
        Restore {
            path: path.into(),
            original: value(path),
        }
    }

    /// The value it had when this guard was made.
    pub fn original(&self) -> &str {
        &self.original
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if value(self.path.to_str().unwrap()) != self.original {
            // An empty write changes nothing: an empty value is written as a bare newline.
            std::fs::write(&self.path, format!("{}\n", self.original)).unwrap();
            eprintln!("test restored {} to {}", self.path.display(), self.original);
        }
    }
}

/// A setting's value: the bracketed choice of a list, else the trimmed text.
pub fn value(path: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or_else(|| text.trim().to_string())
}

/// A scratch directory with a database path inside.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("t.db")
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Where schedlab keeps its restore journals in this test (not /var/lib/schedlab).
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    pub fn conn(&self) -> Connection {
        Connection::open(self.db()).unwrap()
    }
}

/// Runs `schedlab run` with `args` on the scratch database; panics with its output on failure.
pub fn run_ok(s: &Scratch, args: &[&str]) -> String {
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .arg("run")
        .args(["--db", s.db().to_str().unwrap(), "--quiet"])
        .args(args)
        .args(NO_RETRIES.iter().filter(|_| !args.contains(&"--retries")))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "schedlab run failed: {text}");
    text
}

/// Every row of a query, each read as the tuple `T` (rusqlite reads a row into a tuple of up
/// to 16 columns).
pub fn rows<T>(conn: &Connection, sql: &str) -> Vec<T>
where
    T: for<'a> TryFrom<&'a rusqlite::Row<'a>, Error = rusqlite::Error>,
{
    let mut st = conn.prepare(sql).unwrap();
    st.query_map([], |r| T::try_from(r))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// One integer column of a query.
pub fn ints(conn: &Connection, sql: &str) -> Vec<i64> {
    let mut st = conn.prepare(sql).unwrap();
    st.query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Median of integers.
pub fn median(mut v: Vec<i64>) -> i64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_unstable();
    v[v.len() / 2]
}

/// The signals a test sends (see [`signal`]).
#[allow(unused_imports)]
pub use nix::sys::signal::Signal;

/// Sends `sig` to process `pid` (a process the test started); panics if it cannot.
pub fn signal(pid: u32, sig: Signal) {
    nix::sys::signal::kill(pid_of(pid), sig)
        .unwrap_or_else(|e| panic!("cannot send {sig} to process {pid}: {e}"));
}

/// Sends `sig` to every process of group `pgid`, as a terminal's Ctrl-C does; panics if it
/// cannot.
pub fn signal_group(pgid: u32, sig: Signal) {
    nix::sys::signal::killpg(pid_of(pgid), sig)
        .unwrap_or_else(|e| panic!("cannot send {sig} to process group {pgid}: {e}"));
}

/// A pid as nix takes it: a real process (above 0), never the "all processes" or "my group"
/// meanings of 0 and negative numbers.
fn pid_of(pid: u32) -> nix::unistd::Pid {
    let raw = i32::try_from(pid).unwrap_or(0);
    assert!(raw > 0, "not a process id: {pid}");
    nix::unistd::Pid::from_raw(raw)
}

/// Whether any process of group `pgid` exists (no signal sent: only the check).
pub fn group_alive(pgid: i32) -> bool {
    pgid > 1 && nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
}

/// Whether process `pid` exists (zombies included; no signal sent: only the check).
pub fn pid_alive(pid: i32) -> bool {
    pid > 1 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

/// The variable that carries a [`Tag`].
pub const TAG_VAR: &str = "SCHEDLAB_TEST_TAG";

/// A mark in the environment of a schedlab process under test. Every process it forks
/// inherits it (the launcher, each trial's host and tasks, stored or in flight), so the
/// process table tells what is left of a run, whatever was stored.
pub struct Tag(String);

impl Tag {
    /// A tag no other process of this machine carries.
    pub fn new() -> Tag {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        Tag(format!("{}-{n}-{t}", std::process::id()))
    }

    /// Puts the tag in the environment of `cmd`.
    pub fn mark<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env(TAG_VAR, &self.0)
    }

    /// The live processes carrying the tag: (pid, name). A zombie has no environment left
    /// to read, and is not counted: it runs nothing and holds nothing but its pid.
    pub fn processes(&self) -> Vec<(i32, String)> {
        let wanted = format!("{TAG_VAR}={}", self.0);
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(env) = std::fs::read(e.path().join("environ")) else {
                continue;
            };
            if env.split(|&b| b == 0).any(|v| v == wanted.as_bytes()) {
                let name = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
                out.push((pid, name.trim().to_string()));
            }
        }
        out
    }

    /// Waits until no process carries the tag (at most `limit`); returns those still there.
    pub fn wait_gone(&self, limit: std::time::Duration) -> Vec<(i32, String)> {
        let until = std::time::Instant::now() + limit;
        loop {
            let left = self.processes();
            if left.is_empty() || std::time::Instant::now() >= until {
                return left;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Waits until at least `n` processes carry the tag (a trial is in flight: the main
    /// process, the launcher, the host and its tasks); panics after `limit`.
    pub fn wait_for(&self, n: usize, limit: std::time::Duration) -> Vec<(i32, String)> {
        let until = std::time::Instant::now() + limit;
        loop {
            let now = self.processes();
            if now.len() >= n {
                return now;
            }
            assert!(
                std::time::Instant::now() < until,
                "fewer than {n} processes of the run within {limit:?}: {now:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
