//! `--trace`: the kernel's own view of a trial, from the sched tracepoints.
//!
//! A [`TraceSession`] records `sched_switch`, `sched_waking`, `sched_wakeup`,
//! `sched_wakeup_new` and `sched_migrate_task` for the whole machine into the per-CPU ring
//! buffers of a private tracefs instance; nothing reads them until the trial's tasks have
//! ended, so the reader adds no switches or wake-ups to what it measures. Afterwards the text
//! is [`parse`]d and filtered to the trial's threads by [`per_task`] and [`timeline`].
//!
//! ```text
//! let mut session = TraceSession::start(DEFAULT_BUFFER_KB)?;   // before release
//! // ... release the tasks, reap them ...
//! session.stop()?;
//! let raw = session.read()?;                 // raw.lost_events, raw.overruns: 0 if complete
//! drop(session);                             // removes the instance
//! let events = parse(&raw.text)?;
//! let tasks = per_task(&events, &tids);      // wake-up delays, preemptions, migrations
//! ```
//!
//! Times are the trace clock `mono`, i.e. CLOCK_MONOTONIC like every schedlab timestamp, at
//! the text trace's resolution of 1 microsecond.

mod analysis;
mod parser;
mod session;

pub use crate::error::{TraceError, TraceFailure, TraceUnavailable};
pub use analysis::{per_task, timeline, Slice, TaskTrace};
pub use parser::{parse, parse_lenient, Event, EventKind, LineFault, ParseError};
pub use session::{
    parse_stats, BufferStats, RawTrace, TraceSession, DEFAULT_BUFFER_KB, EVENTS, TRACEFS,
};

#[cfg(test)]
mod analysis_tests;
#[cfg(test)]
mod parser_tests;
#[cfg(test)]
mod session_tests;
