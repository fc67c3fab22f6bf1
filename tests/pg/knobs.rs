//! A worker's kernel settings have one owner: it restores a run's settings before the next
//! run's trials (a run without knobs is measured at the original value), journals the true
//! originals, and after a SIGKILL the next command restores them; SIGHUP restores and exits 129.
//!
//! Needs root (it varies vm.swappiness); puts it back when it ends, even on a panic.

use super::common::{self, value, Restore, Signal};
use super::server::Server;
use super::{ok, pg_int, schedlab};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

/// A spec of one cell of `trials` trials of one task of `work`, varying vm.swappiness to
/// `knob` if given.
fn spec(dir: &Path, name: &str, knob: Option<&str>, trials: u32, work: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    let knobs = knob.map_or(String::new(), |v| {
        format!("[[axes.knobs]]\nname = \"vm.swappiness\"\nvalues = [{v}]\n")
    });
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\n\
             [[axes.workloads]]\nkind = \"cpu\"\ncpu_kernel = \"spin\"\n{knobs}\
             [settings]\ntrials = {trials}\nwarmup = 0\nwork = \"{work}\"\ntimeout = \"30s\"\nsample_interval = \"off\"\nretries = 0\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// A worker process, SIGKILLed if a failed assertion leaves it running.
struct Worker(Option<Child>);

impl Worker {
    fn start(url: &str, state: &Path, spool: &Path) -> Worker {
        let child = schedlab()
            .env("SCHEDLAB_STATE_DIR", state)
            .args([
                "worker",
                "--db",
                url,
                "--quiet",
                "--allow-knobs",
                "vm.swappiness",
                "--spool-file",
            ])
            .arg(spool)
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Worker(Some(child))
    }

    fn signal(&self, sig: Signal) {
        common::signal(self.0.as_ref().unwrap().id(), sig);
    }

    /// Waits for it to end: its exit code (None: killed by a signal) and stderr.
    fn wait(mut self) -> (Option<i32>, String) {
        let o = self.0.take().unwrap().wait_with_output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Reads vm.swappiness every millisecond, with the CLOCK_MONOTONIC time (the clock of the
/// tasks' t_start_ns and t_end_ns), until dropped.
struct Poller {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<(i64, String)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Poller {
    fn start() -> Poller {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (s, v) = (stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(SeqCst) {
                let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
                let ns = t.tv_sec() * 1_000_000_000 + t.tv_nsec();
                v.lock().unwrap().push((ns, value(SWAPPINESS)));
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        Poller {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    /// The values read between `from_ns` and `to_ns`.
    fn between(&self, from_ns: i64, to_ns: i64) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(t, _)| (from_ns..=to_ns).contains(t))
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn texts(c: &mut postgres::Client, sql: &str) -> Vec<String> {
    c.query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
}

/// `schedlab restore` with the state directory `state`: exit code and output.
fn restore(state: &Path) -> (Option<i32>, String) {
    let o = schedlab()
        .env("SCHEDLAB_STATE_DIR", state)
        .arg("restore")
        .output()
        .unwrap();
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn journals(state: &Path) -> usize {
    std::fs::read_dir(state).map_or(0, |d| {
        d.flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("restore-"))
            .count()
    })
}

#[test]
fn a_worker_restores_each_runs_settings_before_the_next_run() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    if !schedlab_testkit::root("varying vm.swappiness") {
        return;
    }
    let guard = Restore::new(SWAPPINESS);
    let original = guard.original().to_string();
    let changed = if original == "10" { "11" } else { "10" };
    let db = s.fresh_db("knobs");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // Run 1 and run 3 vary the setting, run 2 does not; run 3's trials are long enough to be
    // killed in.
    for (name, knob, trials, work) in [
        ("knob1", Some(changed), 2, "200ms"),
        ("plain", None, 2, "200ms"),
        ("knob3", Some(changed), 3, "3s"),
    ] {
        let spec = spec(dir.path(), name, knob, trials, work);
        ok(&["submit", &spec, "--db", &url, "--seed", "3"]);
    }
    let mut c = s.client(&db);
    let poller = Poller::start();
    let w = Worker::start(&url, &state, &dir.path().join("a.db"));
    let t = Instant::now();
    while pg_int(
        &mut c,
        "SELECT COUNT(*) FROM queue WHERE run_id = 3 AND state = 'claimed'",
    ) == 0
        || value(SWAPPINESS) != changed
    {
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "run 3 never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // The worker and its launcher at once (its group): neither restores. (The worker alone:
    // its launcher restores at once, tests/signals.rs.)
    common::signal_group(w.0.as_ref().unwrap().id(), Signal::SIGKILL);
    let (_, err) = w.wait();
    poller.stop.store(true, SeqCst);
    // Every task was measured at its run's value: run 2 at the original.
    let windows = c
        .query(
            "SELECT t.run_id, k.t_start_ns, k.t_end_ns FROM tasks k JOIN trials t USING (trial_id)
             WHERE t.status = 'ok' ORDER BY k.t_start_ns",
            &[],
        )
        .unwrap();
    let mut per_run = [0; 3];
    for r in &windows {
        let (run, from, to): (i64, i64, i64) = (r.get(0), r.get(1), r.get(2));
        let want = if run == 2 { original.as_str() } else { changed };
        let seen = poller.between(from, to);
        assert!(!seen.is_empty(), "no reading during a task of run {run}");
        let off = seen.iter().filter(|v| *v != want).count();
        assert_eq!(
            off,
            0,
            "run {run}: {off} of {} readings during a task were not {want} (e.g. {:?}): {err}",
            seen.len(),
            seen.iter().find(|v| *v != want)
        );
        per_run[run as usize - 1] += 1;
    }
    assert_eq!(per_run[..2], [2, 2], "runs 1 and 2 finished: {err}");
    // The readings are honest: the knob runs read back their value, run 2 read nothing.
    let read = texts(
        &mut c,
        "SELECT t.run_id || ':' || r.requested || '=' || r.read_back FROM knob_readings r
         JOIN trials t USING (trial_id) ORDER BY t.run_id",
    );
    let want = format!("1:{changed}={changed}");
    assert_eq!(read[..2], [want.clone(), want], "{read:?}");
    assert!(read.iter().all(|r| !r.starts_with("2:")), "{read:?}");
    // Both knob runs journaled the true original, which their warnings repeat.
    let warned = texts(
        &mut c,
        "SELECT run_id || ': ' || (CAST(params AS jsonb) ->> 'original') FROM warnings
         WHERE code = 'knob_varied' AND CAST(params AS jsonb) ->> 'name' = 'vm.swappiness' ORDER BY run_id",
    );
    assert_eq!(warned.len(), 2, "{warned:?}");
    for w in &warned {
        assert!(w.ends_with(&format!(": {original}")), "{warned:?}");
    }
    // Killed during run 3: the setting stays changed until the next command restores it and
    // says what it did.
    assert_eq!(value(SWAPPINESS), changed);
    assert_eq!(journals(&state), 1);
    let (code, said) = restore(&state);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "restored vm.swappiness ({SWAPPINESS}): {changed} -> {original}"
        )),
        "{said}"
    );
    assert_eq!(value(SWAPPINESS), original, "{said}");
    assert_eq!(journals(&state), 0);
    // A worker that gets SIGHUP restores and exits 129.
    let w = Worker::start(&url, &state, &dir.path().join("b.db"));
    let t = Instant::now();
    while value(SWAPPINESS) != changed {
        assert!(t.elapsed() < Duration::from_secs(60), "run 3 never resumed");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    w.signal(Signal::SIGHUP);
    let (code, err) = w.wait();
    assert_eq!(code, Some(129), "{err}");
    assert_eq!(value(SWAPPINESS), original, "{err}");
    assert_eq!(journals(&state), 0, "{err}");
}

/// A journal as a SIGKILLed local run leaves it: vm.swappiness was `original` (its owner, a
/// pid of this process with a start time it never had, is dead).
fn plant_dead_journal(state: &Path, original: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(state).unwrap();
    std::fs::set_permissions(state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let journal = state.join("restore-999999.json");
    std::fs::write(
        &journal,
        format!(
            "{{\"version\":1,\"owner\":{{\"pid\":{},\"start_ticks\":1,\"boot_id\":\"{}\"}},\
             \"command\":\"schedlab run --knob vm.swappiness=10\",\"created_at\":\"2026-01-01T00:00:00Z\",\
             \"entries\":[{{\"name\":\"vm.swappiness\",\"path\":\"{SWAPPINESS}\",\"original\":\"{original}\"}}],\"scx\":null}}",
            std::process::id(),
            boot_id.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Waits until every queue row of run `run` is done.
fn wait_done(c: &mut postgres::Client, run: i64, err: &str) {
    let t = Instant::now();
    while pg_int(
        c,
        &format!("SELECT COUNT(*) FROM queue WHERE run_id = {run} AND state <> 'done'"),
    ) > 0
    {
        assert!(t.elapsed() < Duration::from_secs(120), "run {run}: {err}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_waiting_worker_recovers_a_dead_runs_journal_before_it_reads_originals() {
    // Issue 27 item 1: a local run SIGKILLed while a --wait worker waits leaves vm.swappiness
    // changed; the worker's next run read the changed value as its original, then recovered
    // the dead journal, then journaled the changed value and restored the machine to it.
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    if !schedlab_testkit::root("varying vm.swappiness") {
        return;
    }
    let guard = Restore::new(SWAPPINESS);
    let original = guard.original().to_string();
    let (killed, queued) = if original == "10" {
        ("11", "12")
    } else {
        ("10", "30")
    };
    let db = s.fresh_db("dead");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut c = s.client(&db);
    // A plain run first: the worker starts (its start-up recovery done) and waits.
    let plain = spec(dir.path(), "plain", None, 1, "100ms");
    ok(&["submit", &plain, "--db", &url, "--seed", "1"]);
    let child = schedlab()
        .env("SCHEDLAB_STATE_DIR", &state)
        .args(["worker", "--db", &url, "--quiet", "--wait"])
        .args(["--allow-knobs", "vm.swappiness", "--spool-file"])
        .arg(dir.path().join("spool.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let w = Worker(Some(child));
    wait_done(&mut c, 1, "the plain run never ended");
    // Now a local run is SIGKILLed with its knob changed, and a run comes for the worker.
    plant_dead_journal(&state, &original);
    std::fs::write(SWAPPINESS, killed).unwrap();
    let knob = spec(dir.path(), "knob", Some(queued), 1, "200ms");
    ok(&["submit", &knob, "--db", &url, "--seed", "2"]);
    wait_done(&mut c, 2, "the knob run never ended");
    w.signal(Signal::SIGTERM);
    let (code, err) = w.wait();
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(value(SWAPPINESS), original, "{err}");
    assert_eq!(journals(&state), 0, "{err}");
    let warned = texts(
        &mut c,
        "SELECT CAST(params AS jsonb) ->> 'original' FROM warnings WHERE code = 'knob_varied'",
    );
    assert_eq!(warned, std::slice::from_ref(&original), "{err}");
    assert!(
        err.contains(&format!(
            "restored vm.swappiness ({SWAPPINESS}): {killed} -> {original}"
        )),
        "{err}"
    );
}
