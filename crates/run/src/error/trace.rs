//! What a [`super::TraceError`] holds: why tracefs cannot be used here, or which file of the
//! instance failed and how.

use super::IoCause;
use std::path::PathBuf;

/// Why tracing cannot work on this machine or as this user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceUnavailable {
    /// Not root.
    #[error(
        "--trace needs root (effective uid {}): it creates a tracefs instance under {}/instances; run schedlab as root (sudo), or leave out --trace",
        euid.map_or("unknown".to_string(), |u| u.to_string()),
        root.display()
    )]
    NotRoot {
        /// The effective uid, when it could be read.
        euid: Option<u32>,
        /// Where tracefs must be.
        root: PathBuf,
    },
    /// The kernel has tracefs but it is not mounted there.
    #[error(
        "tracefs is not mounted at {}; mount it with `mount -t tracefs nodev {}`, or leave out --trace",
        root.display(),
        root.display()
    )]
    NotMounted {
        /// Where tracefs must be.
        root: PathBuf,
    },
    /// A kernel built without tracing.
    #[error("this kernel has no tracefs (built without CONFIG_TRACING); leave out --trace")]
    NoTracefs,
    /// Sched tracepoints missing.
    #[error(
        "this kernel lacks the tracepoints sched:{}; --trace needs all of sched:{{{}}}; leave out --trace",
        missing.join(", sched:"),
        crate::trace::EVENTS.join(",")
    )]
    MissingEvents {
        /// The events missing.
        missing: Vec<&'static str>,
    },
    /// No CLOCK_MONOTONIC trace clock.
    #[error(
        "{}/trace_clock offers no `mono` clock ({clocks}), so trace times could not be compared with schedlab's CLOCK_MONOTONIC times; leave out --trace",
        root.display()
    )]
    NoMonoClock {
        /// Where tracefs is.
        root: PathBuf,
        /// The clocks offered, as the file lists them (trimmed).
        clocks: String,
    },
}

/// Why setting up, stopping or reading a trace failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceFailure {
    /// A buffer of 0 KiB asked for.
    #[error("the trace buffer size must be at least 1 KiB per CPU")]
    ZeroBuffer,
    /// A second session in one process.
    #[error("a trace session is already recording in this process")]
    AlreadyRecording,
    /// A read while recording.
    #[error("read() while recording would trace the reader; call stop() first")]
    ReadWhileRecording,
    /// The instance cannot be created.
    #[error(
        "creating the tracing instance {}: {cause}; tracefs instances need root with CAP_SYS_ADMIN and memory for the buffers",
        dir.display()
    )]
    Instance {
        /// The instance directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A file of the instance cannot be written.
    #[error("writing {value:?} to {}: {cause}", path.display())]
    Write {
        /// The value.
        value: String,
        /// The file.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The per-CPU buffers cannot be sized.
    #[error(
        "writing \"{kb}\" to {}: {cause}: the kernel could not allocate {kb} KiB per CPU; use a smaller buffer",
        path.display()
    )]
    BufferSize {
        /// KiB per CPU asked for.
        kb: u32,
        /// `buffer_size_kb`.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A file of the instance cannot be read.
    #[error("reading {}: {cause}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The per-CPU directory cannot be listed.
    #[error("listing {}: {cause}", path.display())]
    List {
        /// The directory.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
}
