//! Restores that must not fail quietly (issue 27 item 4): an empty original is written back as
//! the kernel reads it (a bare newline), and a restore that cannot be done makes the command
//! exit 1 and names the hand fix, shell-quoted so that pasting it runs nothing else.
//!
//! Needs root (kernel settings, a cgroup); each test puts back what it changed, even on a
//! panic, and takes its turn with the other runs of this binary.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const RESERVED_PORTS: &str = "/proc/sys/net/ipv4/ip_local_reserved_ports";

fn schedlab_in(state: &Path) -> Command {
    let mut c = schedlab();
    c.env("SCHEDLAB_STATE_DIR", state);
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn journals(state: &Path) -> Vec<String> {
    std::fs::read_dir(state)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("restore-"))
                .collect()
        })
        .unwrap_or_default()
}

/// A short run of one cell of `trials` trials of one task of `work`, with `knob`.
fn run_args(s: &Scratch, knob: &str, trials: &str, work: &str) -> Vec<String> {
    [
        "run",
        "--db",
        s.db().to_str().unwrap(),
        "--quiet",
        "--policy",
        "other",
        "--tasks",
        "1",
        "--work",
        work,
        "--trials",
        trials,
        "--sample-interval",
        "off",
        "--knob",
        knob,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

#[test]
fn an_empty_original_is_written_back_empty() {
    if !root("varies net.ipv4.ip_local_reserved_ports") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(RESERVED_PORTS);
    if !guard.original().is_empty() {
        return skip(
            Need::Kernel,
            format!(
                "{RESERVED_PORTS} holds {:?} here, not the empty default this test restores",
                guard.original()
            ),
        );
    }
    let s = Scratch::new();
    let out = schedlab_in(&s.state_dir())
        .args(run_args(
            &s,
            "net.ipv4.ip_local_reserved_ports=50000",
            "1",
            "50ms",
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(value(RESERVED_PORTS), "", "{}", text(&out));
    assert!(journals(&s.state_dir()).is_empty(), "{}", text(&out));
}

/// A CPU cgroup of the test's own (v1 `cpu` hierarchy), removed when dropped.
struct Group(PathBuf);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_restore_that_fails_exits_1_and_names_a_quoted_hand_fix() {
    if !root("creates a CPU cgroup and varies a setting in it") {
        return;
    }
    let cpu = Path::new("/sys/fs/cgroup/cpu");
    if !cpu.join("cpu.shares").exists() {
        return skip(
            Need::Cgroup,
            "no cgroup v1 cpu hierarchy at /sys/fs/cgroup/cpu",
        );
    }
    let _turn = rt_turn();
    let group = Group(cpu.join(format!("t27-restore-{}", std::process::id())));
    std::fs::create_dir(&group.0).unwrap();
    let shares = group.0.join("cpu.shares");
    let original = value(shares.to_str().unwrap());
    let s = Scratch::new();
    let knob = format!("{}=512", shares.display());
    let child = schedlab_in(&s.state_dir())
        .args(run_args(&s, &knob, "3", "1s"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the setting is changed, the group goes away: nothing can put it back.
    let t = Instant::now();
    while std::fs::read_to_string(&shares).map_or(true, |v| v.trim() != "512") {
        assert!(t.elapsed() < Duration::from_secs(60), "never set");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::remove_dir(&group.0).unwrap();
    let out = child.wait_with_output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let fix = format!("printf '%s\\n' '{original}' > '{}'", shares.display());
    assert!(said.contains(&fix), "no {fix} in: {said}");
    assert_eq!(journals(&s.state_dir()).len(), 1, "{said}");
}
