//! The I/O scheduler axis: set per cell, read back, restored on every exit path.

mod common;

use common::*;
use schedlab_run::iosched;
use std::path::Path;
use std::time::{Duration, Instant};

/// The device under /var/tmp and its current scheduler, or why the test cannot run.
fn device() -> Option<(String, String, Vec<String>)> {
    if !root("switching I/O schedulers") {
        return None;
    }
    let dev = match iosched::device_for(Path::new("/var/tmp")) {
        Ok(d) => d,
        Err(e) => {
            skip(Need::Kernel, e);
            return None;
        }
    };
    let s = iosched::read(&dev).unwrap();
    if s.available.len() < 2 {
        skip(
            Need::Kernel,
            format!("{dev} offers only the I/O schedulers {:?}", s.available),
        );
        return None;
    }
    Some((dev, s.current, s.available))
}

// One test, so that the three runs never change the scheduler at the same time.
#[test]
fn the_io_scheduler_is_restored_after_a_normal_run_an_error_and_sigterm() {
    let Some((dev, original, available)) = device() else {
        return;
    };
    let other: Vec<&str> = available
        .iter()
        .map(String::as_str)
        .filter(|a| *a != original)
        .collect();
    let names = format!("{},{},no-such-sched", other[0], original);

    // 1. Normal end: every offered scheduler is set and read back; the unknown one is skipped.
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--workload",
            "io",
            "--io-bytes",
            "4096",
            "--tasks",
            "1",
            "--trials",
            "1",
            "--io-schedulers",
            &names,
        ],
    );
    assert_eq!(
        iosched::read(&dev).unwrap().current,
        original,
        "restored after a normal run"
    );
    let c = s.conn();
    let read_back: Vec<String> = c
        .prepare("SELECT c.io_scheduler || '=' || COALESCE(t.io_scheduler, t.status) FROM trials t JOIN cells c USING (cell_id) ORDER BY c.cell_index")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(
        read_back,
        vec![
            format!("{}={}", other[0], other[0]),
            format!("{original}={original}"),
            "no-such-sched=skipped".to_string()
        ]
    );
    let reason: String = c
        .query_row(
            "SELECT reason FROM trials WHERE status = 'skipped'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(reason.contains("offered"), "{reason}");

    // 2. An error ends the run (I/O files cannot be created under /proc).
    let s = Scratch::new();
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args([
            "run",
            "--retries",
            "0",
            "--db",
            s.db().to_str().unwrap(),
            "--quiet",
            "--workload",
            "io",
            "--io-dir",
            "/proc",
            "--device",
            &dev,
        ])
        .args(["--io-schedulers", other[0], "--trials", "1", "--tasks", "1"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        iosched::read(&dev).unwrap().current,
        original,
        "restored after an error"
    );

    // 3. SIGTERM in the middle of a trial.
    let s = Scratch::new();
    let mut child = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args([
            "run",
            "--retries",
            "0",
            "--db",
            s.db().to_str().unwrap(),
            "--quiet",
            "--workload",
            "cpu",
            "--work",
            "3s",
            "--tasks",
            "1",
        ])
        .args([
            "--io-schedulers",
            other[0],
            "--trials",
            "3",
            "--device",
            &dev,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while iosched::read(&dev).unwrap().current == original {
        assert!(
            Instant::now() < deadline,
            "the scheduler was never switched"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), Signal::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        iosched::read(&dev).unwrap().current,
        original,
        "restored after SIGTERM"
    );
}
