//! Inputs bounded before they cost anything (issue 27 item 9): a huge `--cpus` list is parsed
//! in bounded memory and refused by its size, a `--lease` too long for the queue's clock is
//! bad input, a run refused for its trials' length writes nothing (no database is left), and
//! cgroup names that are control files are refused up front.

mod common;

use common::*;
use std::process::{Command, Output};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_128_kb_cpu_list_is_refused_in_bounded_memory() {
    let s = Scratch::new();
    let list = vec!["0-65535"; 128 * 1024 / 8].join(",");
    assert!(list.len() > 128_000);
    // Under a 1 GiB address-space limit: the list took 8.2 GB before.
    let out = Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && exec \"$@\"", "sh"])
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(["plan", "--db", s.db().to_str().unwrap(), "--cpus", &list])
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &said[..said.len().min(2000)]
    );
    assert!(
        said.contains("axes.cpus[0]") || said.contains("--cpus"),
        "{}",
        &said[..said.len().min(2000)]
    );
}

#[test]
fn a_lease_beyond_what_the_queue_can_hold_is_bad_input() {
    let s = Scratch::new();
    for lease in ["292271024years", "10000days"] {
        let out = schedlab()
            .args(["worker", "--db", s.db().to_str().unwrap(), "--lease", lease])
            .env("SCHEDLAB_STATE_DIR", s.state_dir())
            .output()
            .unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{lease}: {said}");
        assert!(said.contains("--lease"), "{lease}: {said}");
    }
    assert!(!s.db().exists());
}

#[test]
fn a_run_refused_for_its_length_leaves_no_database() {
    let s = Scratch::new();
    let out = schedlab()
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(["--policy", "other", "--tasks", "1", "--trials", "1"])
        .args([
            "--iterations",
            "1000000000000000",
            "--sample-interval",
            "off",
        ])
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("iterations"), "{said}");
    assert!(!s.db().exists(), "a database was left: {said}");
    // Into an existing database: no calibration row either.
    let first = schedlab()
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(["--policy", "other", "--tasks", "1", "--trials", "1"])
        .args(["--work", "2ms", "--sample-interval", "off"])
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", text(&first));
    let before = ints(&s.conn(), "SELECT COUNT(*) FROM calibrations");
    let out = schedlab()
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(["--policy", "other", "--tasks", "1", "--trials", "1"])
        .args(["--workload", "io", "--iterations", "1000000000000000"])
        .args(["--sample-interval", "off"])
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        ints(&s.conn(), "SELECT COUNT(*) FROM calibrations"),
        before,
        "{}",
        text(&out)
    );
    assert_eq!(ints(&s.conn(), "SELECT COUNT(*) FROM runs"), [1]);
}

#[test]
fn cgroup_names_that_are_control_files_are_refused() {
    let s = Scratch::new();
    for name in ["tasks", "notify_on_release", "release_agent"] {
        let out = schedlab()
            .args(["plan", "--db", s.db().to_str().unwrap()])
            .args(["--tasks", "2", "--work", "2ms", "--trials", "1"])
            .args(["--groups", &format!("{name}=1:b=1")])
            .env("SCHEDLAB_STATE_DIR", s.state_dir())
            .output()
            .unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {said}");
        assert!(
            said.contains(name) && said.contains("control file"),
            "{name}: {said}"
        );
    }
}
