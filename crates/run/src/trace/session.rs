//! A tracefs instance that records the sched events of a trial into per-CPU ring buffers.
//!
//! The instance (`/sys/kernel/tracing/instances/schedlab-PID`) has its own buffers, events,
//! clock and on/off switch, so the global trace settings are never touched. Nothing reads the
//! buffers while the trial runs (a reader would add its own switches and wake-ups): the text
//! is read once, after `stop`. Dropping the session removes the instance.

use super::parser::lost_marker;
use crate::error::{TraceError, TraceFailure, TraceUnavailable};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Where tracefs must be mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The sched events a session enables.
pub const EVENTS: [&str; 5] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
];

/// Buffer size per CPU, in KiB, that holds about 150 000 sched events per CPU.
pub const DEFAULT_BUFFER_KB: u32 = 8192;

// One instance per process: its name is derived from the pid.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The text of a stopped session's trace and how much of it the kernel lost.
/// The trace is complete only when both counts are 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawTrace {
    /// The instance's `trace` file: header comments, then one event per line in time order.
    pub text: String,
    /// Events lost and never recorded: the sum of the text's `[LOST N EVENTS]` markers (1 for a
    /// marker without a count) and of every CPU's `dropped events:` (buffer full; the session
    /// keeps the start of the trial and drops later events rather than overwriting).
    pub lost_events: u64,
    /// Events recorded then overwritten: every CPU's `overrun:` plus `commit overrun:`.
    pub overruns: u64,
}

/// A recording tracefs instance; dropping it stops recording and removes the instance.
#[derive(Debug)]
pub struct TraceSession {
    dir: PathBuf,
    recording: bool,
}

impl TraceSession {
    /// Whether a session can start here; [`TraceError::Unavailable`] says why not and what
    /// to do.
    pub fn available() -> Result<(), TraceError> {
        Ok(check_tracefs(Path::new(TRACEFS), effective_uid())?)
    }

    /// Creates the instance, sizes its per-CPU buffers (`buffer_kb_per_cpu` KiB each), sets
    /// its clock to CLOCK_MONOTONIC, enables the sched events and turns recording on.
    pub fn start(buffer_kb_per_cpu: u32) -> Result<TraceSession, TraceError> {
        if buffer_kb_per_cpu == 0 {
            return Err(TraceFailure::ZeroBuffer.into());
        }
        Self::available()?;
        if ACTIVE.swap(true, Ordering::SeqCst) {
            return Err(TraceFailure::AlreadyRecording.into());
        }
        Ok(Self::create(buffer_kb_per_cpu)?)
    }

    /// [`TraceSession::start`] once this process holds the one session slot.
    fn create(buffer_kb_per_cpu: u32) -> Result<TraceSession, TraceFailure> {
        remove_stale_instances();
        let dir = Path::new(TRACEFS)
            .join("instances")
            .join(format!("schedlab-{}", std::process::id()));
        if let Err(e) = make_instance(&dir) {
            ACTIVE.store(false, Ordering::SeqCst);
            return Err(e);
        }
        // From here on, dropping `session` removes the instance on every error path.
        let mut session = TraceSession {
            dir,
            recording: false,
        };
        // A new instance records from birth; keep it off until it is configured.
        session.write("tracing_on", "0")?;
        session.write("trace_clock", "mono")?;
        // A full buffer drops new events rather than overwriting the trial's start.
        session.write("options/overwrite", "0")?;
        let kb = buffer_kb_per_cpu;
        session
            .write("buffer_size_kb", &kb.to_string())
            .map_err(|e| match e {
                TraceFailure::Write { path, cause, .. } => {
                    TraceFailure::BufferSize { kb, path, cause }
                }
                other => other,
            })?;
        for event in EVENTS {
            session.write(&format!("events/sched/{event}/enable"), "1")?;
        }
        session.write("tracing_on", "1")?;
        session.recording = true;
        Ok(session)
    }

    /// Turns recording off (the events stay in the buffers). Calling it twice is harmless.
    pub fn stop(&mut self) -> Result<(), TraceError> {
        self.write("tracing_on", "0")?;
        self.recording = false;
        Ok(())
    }

    /// Reads the recorded text and the lost-event counts; only after `stop`, so the reading
    /// itself is not recorded.
    pub fn read(&self) -> Result<RawTrace, TraceError> {
        if self.recording {
            return Err(TraceFailure::ReadWhileRecording.into());
        }
        Ok(self.read_stopped()?)
    }

    fn read_stopped(&self) -> Result<RawTrace, TraceFailure> {
        let read = |path: PathBuf| {
            fs::read_to_string(&path).map_err(|e| TraceFailure::Read {
                path,
                cause: e.into(),
            })
        };
        let text = read(self.dir.join("trace"))?;
        let mut lost_events: u64 = text
            .lines()
            .filter_map(lost_marker)
            .map(|(_, n)| n.max(1))
            .sum();
        let mut overruns = 0;
        let per_cpu = self.dir.join("per_cpu");
        let listing = |e: std::io::Error| TraceFailure::List {
            path: per_cpu.clone(),
            cause: e.into(),
        };
        for entry in fs::read_dir(&per_cpu).map_err(listing)? {
            let stats = read(entry.map_err(listing)?.path().join("stats"))?;
            let s = parse_stats(&stats);
            lost_events += s.dropped_events;
            overruns += s.overrun + s.commit_overrun;
        }
        Ok(RawTrace {
            text,
            lost_events,
            overruns,
        })
    }

    /// The instance directory (gone once the session is dropped).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write(&self, file: &str, value: &str) -> Result<(), TraceFailure> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|e| TraceFailure::Write {
            value: value.to_string(),
            path,
            cause: e.into(),
        })
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        // rmdir fails with EBUSY while any process holds one of the instance's files open.
        let mut failure = None;
        for _ in 0..50 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => {
                    failure = None;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    failure = None;
                    break;
                }
                Err(e) => failure = Some(e),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(e) = failure {
            say_err!(
                "warning: could not remove the tracing instance {}: {e}; remove it with `rmdir {}`",
                self.dir.display(),
                self.dir.display()
            );
        }
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

/// The checks of [`TraceSession::available`] on the tracefs mounted (or not) at `root`.
pub(super) fn check_tracefs(root: &Path, euid: Option<u32>) -> Result<(), TraceUnavailable> {
    let root_path = root.to_path_buf();
    if euid != Some(0) {
        return Err(TraceUnavailable::NotRoot {
            euid,
            root: root_path,
        });
    }
    if !root.join("instances").is_dir() {
        let known = fs::read_to_string("/proc/filesystems")
            .map(|t| {
                t.lines()
                    .any(|l| l.split_whitespace().last() == Some("tracefs"))
            })
            .unwrap_or(false);
        return Err(if known {
            TraceUnavailable::NotMounted { root: root_path }
        } else {
            TraceUnavailable::NoTracefs
        });
    }
    let missing: Vec<&str> = EVENTS
        .iter()
        .filter(|e| !root.join("events/sched").join(e).join("enable").exists())
        .copied()
        .collect();
    if !missing.is_empty() {
        return Err(TraceUnavailable::MissingEvents { missing });
    }
    let clocks = fs::read_to_string(root.join("trace_clock")).unwrap_or_default();
    if !clocks
        .split_whitespace()
        .any(|c| c.trim_matches(['[', ']']) == "mono")
    {
        return Err(TraceUnavailable::NoMonoClock {
            root: root_path,
            clocks: clocks.trim().to_string(),
        });
    }
    Ok(())
}

/// The loss counters of one `per_cpu/cpuN/stats` file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferStats {
    /// Events overwritten by newer ones (overwrite mode).
    pub overrun: u64,
    /// Events lost because a nested write overflowed a buffer page.
    pub commit_overrun: u64,
    /// Events discarded because the buffer was full (non-overwrite mode).
    pub dropped_events: u64,
}

/// Parses `per_cpu/cpuN/stats` ("key: value" lines); missing keys count as 0.
pub fn parse_stats(text: &str) -> BufferStats {
    let mut s = BufferStats::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().parse().unwrap_or(0);
        match key.trim() {
            "overrun" => s.overrun = value,
            "commit overrun" => s.commit_overrun = value,
            "dropped events" => s.dropped_events = value,
            _ => {}
        }
    }
    s
}

fn make_instance(dir: &Path) -> Result<(), TraceFailure> {
    let mkdir = || fs::create_dir(dir);
    let result = match mkdir() {
        // Our pid is ours, so an existing instance was left by a killed earlier process.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            fs::remove_dir(dir).and_then(|()| mkdir())
        }
        other => other,
    };
    result.map_err(|e| TraceFailure::Instance {
        dir: dir.to_path_buf(),
        cause: e.into(),
    })
}

/// Removes `schedlab-PID` instances whose process no longer exists (killed by SIGKILL, so
/// their Drop never ran and their events still fire). A schedlab in another pid namespace
/// sharing this tracefs would be taken for dead: schedlab does not support that setup.
fn remove_stale_instances() {
    let Ok(entries) = fs::read_dir(Path::new(TRACEFS).join("instances")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("schedlab-")) else {
            continue;
        };
        if pid.parse::<u32>().is_err() || Path::new("/proc").join(pid).exists() {
            continue;
        }
        let _ = fs::write(entry.path().join("tracing_on"), "0");
        let _ = fs::remove_dir(entry.path());
    }
}

/// The effective uid, from `/proc/self/status` ("Uid: real effective saved fs").
fn effective_uid() -> Option<u32> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}
