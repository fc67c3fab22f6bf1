//! Parser for the text `trace` file of a tracefs instance recording the sched events.
//!
//! A line is `<comm>-<pid> [CPU] flags SECS.USECS: <event>: <fields>` (the kernel's
//! `"%16s-%-7d [%03d] "` context), or `CPU:N [LOST M EVENTS]`, or a `#` header comment.
//! The comm before the CPU marker is the kernel's saved-cmdlines copy and may hold spaces,
//! parentheses and brackets, so a line is read leftwards from the `TIMESTAMP: event:` marker.
//! Field values named `comm` may hold spaces too, so fields are found by their anchors
//! (` prev_pid=`, ` next_pid=`, ...) and never by splitting on spaces.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What one trace line says happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventKind {
    /// `sched_switch`: `prev` leaves the CPU, `next` starts running on it.
    Switch {
        /// Name of the task leaving the CPU (at most 15 bytes, may hold spaces).
        prev_comm: String,
        /// Thread id of the task leaving the CPU (0: the idle task).
        prev_pid: i32,
        /// Kernel priority of the task leaving (0..99 RT, 100..139 fair, -1 deadline).
        prev_prio: i32,
        /// State it left in: `R` or `R+` (still runnable, i.e. preempted), `S`, `D`, `I`, `Z`, ...
        prev_state: String,
        /// Name of the task entering the CPU.
        next_comm: String,
        /// Thread id of the task entering the CPU (0: the idle task).
        next_pid: i32,
        /// Kernel priority of the task entering.
        next_prio: i32,
    },
    /// `sched_waking`: a wake-up began (on the waker's CPU, before the task is enqueued).
    Waking {
        /// Name of the woken task.
        comm: String,
        /// Thread id of the woken task.
        pid: i32,
        /// Kernel priority of the woken task.
        prio: i32,
        /// CPU the task is expected to run on.
        target_cpu: u32,
    },
    /// `sched_wakeup`: the woken task is on a run queue and may be picked.
    Wakeup {
        /// Name of the woken task.
        comm: String,
        /// Thread id of the woken task.
        pid: i32,
        /// Kernel priority of the woken task.
        prio: i32,
        /// CPU whose run queue received the task.
        target_cpu: u32,
    },
    /// `sched_wakeup_new`: a newly created task was enqueued for the first time.
    WakeupNew {
        /// Name of the new task (its parent's name until it execs or renames itself).
        comm: String,
        /// Thread id of the new task.
        pid: i32,
        /// Kernel priority of the new task.
        prio: i32,
        /// CPU whose run queue received the task.
        target_cpu: u32,
    },
    /// `sched_migrate_task`: a task was moved from one CPU to another.
    Migrate {
        /// Name of the migrated task.
        comm: String,
        /// Thread id of the migrated task.
        pid: i32,
        /// Kernel priority of the migrated task.
        prio: i32,
        /// CPU it left.
        orig_cpu: u32,
        /// CPU it was moved to.
        dest_cpu: u32,
    },
    /// `CPU:N [LOST M EVENTS]`: the ring buffer of CPU N lost M events here;
    /// 0 when the kernel does not know how many (`CPU:N [LOST EVENTS]`).
    Lost(u64),
}

/// One parsed trace line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// CPU whose ring buffer recorded the event.
    pub cpu: u32,
    /// Trace-clock time in nanoseconds (CLOCK_MONOTONIC with `trace_clock` = mono). The text
    /// trace prints microseconds, so this is always a multiple of 1000. A `Lost` marker
    /// carries the time of the event that follows it.
    pub ts_ns: u64,
    /// What happened.
    pub kind: EventKind,
}

/// A trace line that is neither a comment, an event schedlab records, nor a lost-events marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number in the text.
    pub line_no: usize,
    /// The line itself.
    pub line: String,
    /// What was wrong with it.
    pub reason: LineFault,
}

/// What is wrong with one trace line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineFault {
    /// A sched event whose fields do not read as the kernel prints them.
    #[error("unexpected fields of {event}")]
    Fields {
        /// The event's name.
        event: String,
    },
    /// An event schedlab does not record.
    #[error("event {event:?} is not one schedlab records")]
    Foreign {
        /// The event's name.
        event: String,
    },
    /// No `[CPU] flags SECS.USECS: ` before an event name.
    #[error("no \"[CPU] flags SECS.USECS: \" context")]
    NoContext,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "trace line {}: {}: {:?}",
            self.line_no, self.reason, self.line
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses a whole trace; any line that is not a header comment, blank, a sched event or a
/// lost-events marker is an error.
pub fn parse(text: &str) -> Result<Vec<Event>, ParseError> {
    let mut events = Vec::new();
    let mut fix_from = None;
    for (i, line) in text.lines().enumerate() {
        match parse_line(line) {
            Ok(Some(e)) => push(&mut events, &mut fix_from, e),
            Ok(None) => {}
            Err(reason) => {
                return Err(ParseError {
                    line_no: i + 1,
                    line: line.to_string(),
                    reason,
                });
            }
        }
    }
    Ok(events)
}

/// Parses a whole trace, skipping lines it cannot read; returns the events and how many
/// lines were skipped (comments and blank lines are not counted).
pub fn parse_lenient(text: &str) -> (Vec<Event>, usize) {
    let mut events = Vec::new();
    let mut fix_from = None;
    let mut skipped = 0;
    for line in text.lines() {
        match parse_line(line) {
            Ok(Some(e)) => push(&mut events, &mut fix_from, e),
            Ok(None) => {}
            Err(_) => skipped += 1,
        }
    }
    (events, skipped)
}

/// The lost-events marker `CPU:N [LOST M EVENTS]` as (N, M); M is 0 when not known.
pub(super) fn lost_marker(line: &str) -> Option<(u32, u64)> {
    let rest = line.trim_end().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let inner = rest.strip_prefix("[LOST ")?.strip_suffix("EVENTS]")?;
    let count = match inner.strip_suffix(' ') {
        Some(n) => n.parse().ok()?,
        None if inner.is_empty() => 0,
        None => return None,
    };
    Some((cpu.parse().ok()?, count))
}

// A lost marker has no timestamp of its own: the kernel prints it just before the first
// event read from that CPU after the gap, so it takes that event's time.
fn push(events: &mut Vec<Event>, fix_from: &mut Option<usize>, e: Event) {
    if matches!(e.kind, EventKind::Lost(_)) {
        fix_from.get_or_insert(events.len());
    } else if let Some(from) = fix_from.take() {
        for lost in &mut events[from..] {
            lost.ts_ns = e.ts_ns;
        }
    }
    let ts = match (&e.kind, events.last()) {
        (EventKind::Lost(_), Some(prev)) => prev.ts_ns,
        _ => e.ts_ns,
    };
    events.push(Event { ts_ns: ts, ..e });
}

/// One line: `Ok(None)` for comments and blank lines.
fn parse_line(line: &str) -> Result<Option<Event>, LineFault> {
    // Header comments start in column 0; an event line starts with its right-aligned comm,
    // which may itself begin with '#'.
    if line.starts_with('#') || line.trim().is_empty() {
        return Ok(None);
    }
    if let Some((cpu, n)) = lost_marker(line) {
        return Ok(Some(Event {
            cpu,
            ts_ns: 0,
            kind: EventKind::Lost(n),
        }));
    }
    // The context ends at the first ": " that follows "[CPU] [flags] TIMESTAMP" and precedes
    // "<known event>: ". A comm can imitate the context ("x [001] 1.5: y" is a valid comm) but
    // not also a known event name: ": sched_wakeup: " alone is longer than the 15-byte comm.
    let mut foreign = None;
    for (at, _) in line.match_indices(": ") {
        let Some((cpu, ts_ns)) = context(&line[..at]) else {
            continue;
        };
        let rest = &line[at + 2..];
        let (name, fields) = rest.split_once(": ").unwrap_or((rest, ""));
        let kind = match name {
            "sched_switch" => switch(fields),
            "sched_waking" => wake(fields).map(|(comm, pid, prio, target_cpu)| EventKind::Waking {
                comm,
                pid,
                prio,
                target_cpu,
            }),
            "sched_wakeup" => wake(fields).map(|(comm, pid, prio, target_cpu)| EventKind::Wakeup {
                comm,
                pid,
                prio,
                target_cpu,
            }),
            "sched_wakeup_new" => {
                wake(fields).map(|(comm, pid, prio, target_cpu)| EventKind::WakeupNew {
                    comm,
                    pid,
                    prio,
                    target_cpu,
                })
            }
            "sched_migrate_task" => migrate(fields),
            _ => {
                let plausible = !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                if plausible && foreign.is_none() {
                    foreign = Some(name);
                }
                continue;
            }
        };
        return kind
            .map(|kind| Some(Event { cpu, ts_ns, kind }))
            .ok_or_else(|| LineFault::Fields {
                event: name.to_string(),
            });
    }
    if let Some(name) = foreign {
        return Err(LineFault::Foreign {
            event: name.to_string(),
        });
    }
    Err(LineFault::NoContext)
}

/// The CPU and time at the end of the context: `... [CPU] [flags] SECS.FRACTION`.
fn context(head: &str) -> Option<(u32, u64)> {
    let mut tokens = head.split_ascii_whitespace().rev();
    let ts_ns = timestamp(tokens.next()?)?;
    let cpu = match cpu_marker(tokens.next()?) {
        Some(cpu) => cpu,
        None => cpu_marker(tokens.next()?)?,
    };
    Some((cpu, ts_ns))
}

fn cpu_marker(token: &str) -> Option<u32> {
    let digits = token.strip_prefix('[')?.strip_suffix(']')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `SECS.FRACTION` (1 to 9 fraction digits) in nanoseconds.
fn timestamp(token: &str) -> Option<u64> {
    let (secs, frac) = token.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || frac.len() > 9 {
        return None;
    }
    if !secs.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    secs.parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac.parse::<u64>().ok()? * scale)
}

/// `prev_comm=C prev_pid=P prev_prio=Q prev_state=S ==> next_comm=C next_pid=P next_prio=Q`.
fn switch(fields: &str) -> Option<EventKind> {
    let rest = fields.strip_prefix("prev_comm=")?;
    // The next_* numbers are the last two fields, so the rightmost anchors are the real ones.
    let (left, next_prio) = rest.rsplit_once(" next_prio=")?;
    let (left, next_pid) = left.rsplit_once(" next_pid=")?;
    let (next_pid, next_prio) = (next_pid.parse().ok()?, next_prio.parse().ok()?);
    // prev_comm may itself contain " prev_pid=": take the first anchor whose tail parses.
    for (at, anchor) in left.match_indices(" prev_pid=") {
        let tail = &left[at + anchor.len()..];
        let Some((prev_pid, tail)) = tail.split_once(" prev_prio=") else {
            continue;
        };
        let Some((prev_prio, tail)) = tail.split_once(" prev_state=") else {
            continue;
        };
        let Some((prev_state, next_comm)) = tail.split_once(" ==> next_comm=") else {
            continue;
        };
        let state_ok = !prev_state.is_empty()
            && prev_state
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'+' || b == b'|');
        if let (Ok(prev_pid), Ok(prev_prio), true) = (prev_pid.parse(), prev_prio.parse(), state_ok)
        {
            return Some(EventKind::Switch {
                prev_comm: left[..at].to_string(),
                prev_pid,
                prev_prio,
                prev_state: prev_state.to_string(),
                next_comm: next_comm.to_string(),
                next_pid,
                next_prio,
            });
        }
    }
    None
}

/// `comm=C pid=P prio=Q target_cpu=NNN` as (comm, pid, prio, target_cpu).
fn wake(fields: &str) -> Option<(String, i32, i32, u32)> {
    let (left, target_cpu) = fields.rsplit_once(" target_cpu=")?;
    let (left, prio) = left.rsplit_once(" prio=")?;
    let (left, pid) = left.rsplit_once(" pid=")?;
    let comm = left.strip_prefix("comm=")?;
    Some((
        comm.to_string(),
        pid.parse().ok()?,
        prio.parse().ok()?,
        target_cpu.parse().ok()?,
    ))
}

/// `comm=C pid=P prio=Q orig_cpu=N dest_cpu=M`.
fn migrate(fields: &str) -> Option<EventKind> {
    let (left, dest_cpu) = fields.rsplit_once(" dest_cpu=")?;
    let (left, orig_cpu) = left.rsplit_once(" orig_cpu=")?;
    let (left, prio) = left.rsplit_once(" prio=")?;
    let (left, pid) = left.rsplit_once(" pid=")?;
    Some(EventKind::Migrate {
        comm: left.strip_prefix("comm=")?.to_string(),
        pid: pid.parse().ok()?,
        prio: prio.parse().ok()?,
        orig_cpu: orig_cpu.parse().ok()?,
        dest_cpu: dest_cpu.parse().ok()?,
    })
}
