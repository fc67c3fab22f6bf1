//! Every signal whose default action ends the process restores a run's kernel settings
//! (issue 27 item 3): QUIT, USR1, USR2, ALRM and the others are caught like SIGTERM (exit
//! 130); SIGPIPE is ignored during a run, so a closed output pipe is an error of the write,
//! not the end of the process; and when the main process dies of what it cannot catch
//! (SIGKILL), its launcher restores the settings from the journal at once.
//!
//! Needs root (vm.swappiness); takes turns with the other runs and puts swappiness back even
//! on a panic; every process of a run carries a tag, and none may be left.

mod common;

use common::*;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

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

/// A run of `trials` trials of `work` that sets vm.swappiness to `changed`.
fn run(s: &Scratch, tag: &Tag, changed: &str, trials: &str, work: &str, quiet: bool) -> Command {
    let mut c = schedlab();
    tag.mark(&mut c);
    c.env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["run", "--db", s.db().to_str().unwrap()])
        .args(["--policy", "other", "--tasks", "1", "--work", work])
        .args(["--trials", trials, "--sample-interval", "off", "--knob"])
        .arg(format!("vm.swappiness={changed}"));
    if quiet {
        c.arg("--quiet");
    }
    c
}

/// Waits until vm.swappiness is `changed` (a trial has started), and a little more.
fn wait_for(changed: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while value(SWAPPINESS) != changed {
        assert!(Instant::now() < deadline, "the knob was never changed");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
}

/// Ends `child` with SIGKILL if a failed assertion leaves it running.
struct Reaped(Option<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn other_than(original: &str) -> &'static str {
    if original == "10" {
        "11"
    } else {
        "10"
    }
}

#[test]
fn every_terminating_signal_restores_and_sigpipe_is_ignored() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    for sig in [
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
        Signal::SIGALRM,
        Signal::SIGVTALRM,
        Signal::SIGPIPE,
    ] {
        let s = Scratch::new();
        let tag = Tag::new();
        let child = run(&s, &tag, changed, "2", "5s", true)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reaped = Reaped(Some(child));
        wait_for(changed);
        let pid = reaped.0.as_ref().unwrap().id();
        signal(pid, sig);
        if sig == Signal::SIGPIPE {
            std::thread::sleep(Duration::from_millis(500));
            assert!(pid_alive(pid as i32), "a run outlives a SIGPIPE");
            assert_eq!(value(SWAPPINESS), changed);
            signal(pid, Signal::SIGTERM);
        }
        let out = reaped.0.take().unwrap().wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(130),
            "{sig}: {:?}: {}",
            out.status,
            text(&out)
        );
        assert_eq!(value(SWAPPINESS), guard.original(), "{sig}: {}", text(&out));
        assert!(journals(&s.state_dir()).is_empty(), "{sig}");
        assert_eq!(tag.wait_gone(Duration::from_secs(10)), [], "{sig}");
    }
}

#[test]
fn a_closed_output_pipe_ends_nothing_but_the_writes() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let tag = Tag::new();
    // `schedlab run ... 2>&1 | grep -m1 ...`: the reader goes away after the knob changed,
    // and the run's next progress line meets a closed pipe.
    let child = run(&s, &tag, changed, "2", "1s", false)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reaped = Reaped(Some(child));
    wait_for(changed);
    let mut c = reaped.0.take().unwrap();
    drop(c.stdout.take());
    drop(c.stderr.take());
    let status = c.wait().unwrap();
    assert!(status.code().is_some(), "killed by a signal: {status:?}");
    assert_eq!(value(SWAPPINESS), guard.original(), "{status:?}");
    assert!(journals(&s.state_dir()).is_empty(), "{status:?}");
    assert_eq!(tag.wait_gone(Duration::from_secs(10)), []);
}

#[test]
fn when_the_main_process_is_sigkilled_its_launcher_restores_the_settings() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let tag = Tag::new();
    let child = run(&s, &tag, changed, "2", "5s", true)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reaped = Reaped(Some(child));
    wait_for(changed);
    let mut c = reaped.0.take().unwrap();
    c.kill().unwrap(); // SIGKILL to the main process alone: nothing of its own runs
    c.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while value(SWAPPINESS) != guard.original() {
        assert!(
            Instant::now() < deadline,
            "the launcher never restored it (journals: {:?})",
            journals(&s.state_dir())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(tag.wait_gone(Duration::from_secs(10)), []);
    assert!(journals(&s.state_dir()).is_empty());
}
