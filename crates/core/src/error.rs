//! The errors of the shared vocabulary: a name that is no policy, task kind or workload, and
//! parameters that cannot work together. Each is a user's mistake; the spec stage ties it to
//! the key it came from.

/// A mistake in a value of the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// A name that is none of the accepted ones (policy, task kind, start mode, ...).
    #[error("unknown {what} '{given}'; accepted: {accepted}")]
    UnknownName {
        /// What was named: "policy", "task kind", ...
        what: &'static str,
        /// The name given.
        given: String,
        /// The names accepted, comma-separated.
        accepted: &'static str,
    },
    /// A knob value longer than schedlab writes.
    #[error("it is {bytes} bytes long, more than {max}")]
    KnobValueTooLong {
        /// Its length, bytes.
        bytes: usize,
        /// The longest accepted, bytes.
        max: usize,
    },
    /// A knob value that is not one line of text.
    #[error("it holds the control character {found:?}; a knob's value is one line of text")]
    KnobValueControl {
        /// The first control character.
        found: char,
    },
    /// A SCHED_DEADLINE runtime below the kernel's minimum.
    #[error("deadline runtime must be at least 1024 ns")]
    DeadlineRuntimeTooShort,
    /// SCHED_DEADLINE parameters out of order.
    #[error(
        "deadline parameters need runtime <= deadline <= period, got runtime {runtime_ns} ns, deadline {deadline_ns} ns, period {period_ns} ns"
    )]
    DeadlineOrder {
        /// Runtime, ns.
        runtime_ns: u64,
        /// Relative deadline, ns.
        deadline_ns: u64,
        /// Period, ns.
        period_ns: u64,
    },
    /// An I/O block size out of range.
    #[error("io block must be between 1 byte and 64 MiB, got {bytes} bytes")]
    IoBlock {
        /// The size given, bytes.
        bytes: u64,
    },
    /// `io_every` of 0.
    #[error("io_every must be at least 1")]
    IoEvery,
    /// A periodic workload's period below 10 us.
    #[error("period must be at least 10us, got {period_ns} ns")]
    PeriodTooShort {
        /// The period, ns.
        period_ns: u64,
    },
    /// A parameter of a communicating workload (messaging, request, pipe) out of range.
    #[error("{key}: {0}", key = .0.key())]
    Workload(crate::workload::params::CommFault),
}

impl CoreError {
    /// An unknown `what` named `given`, with the names accepted.
    pub fn unknown(what: &'static str, given: &str, accepted: &'static str) -> CoreError {
        CoreError::UnknownName {
            what,
            given: given.to_string(),
            accepted,
        }
    }
}
