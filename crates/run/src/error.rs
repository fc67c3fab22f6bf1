//! The run stage's errors. [`RunError`] is what `execute` and `work` fail with; its variants
//! say whether the plan asked what this machine cannot give ([`RunError::is_bad_input`]), the
//! store failed (a [`SinkError`], whatever the sink's own type is), or the machine did.
//! [`KernelError`] is what the kernel settings (knobs, I/O scheduler, BPF scheduler, restore
//! journal and its state directory) fail with, and [`TraceError`] the kernel's tracer. Their
//! variants name the kind and hold what it is about (files, values, errno: `kernel`, `state`,
//! `trace`); each shows as the sentence printed, cause and remedy.

mod kernel;
mod state;
mod trace;

pub use kernel::{
    Busy, Internal, NotRestored, Refusal, ScxError, SettingError, Unavailable, Unrestored,
};
pub use state::{ParentOpen, StateError, Untrusted};
pub use trace::{TraceFailure, TraceUnavailable};

use schedlab_spec::SpecError;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// An I/O error kept as a value (the errors of this crate are cloned and compared): the
/// kernel's errno when it gave one, and the error as `io::Error` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoCause {
    /// The errno, when the kernel refused.
    pub errno: Option<i32>,
    /// `io::Error`'s text (for an errno: the C library's message and `(os error N)`).
    text: String,
}

impl From<&io::Error> for IoCause {
    fn from(e: &io::Error) -> IoCause {
        IoCause {
            errno: e.raw_os_error(),
            text: e.to_string(),
        }
    }
}

impl From<io::Error> for IoCause {
    fn from(e: io::Error) -> IoCause {
        IoCause::from(&e)
    }
}

impl std::fmt::Display for IoCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// An error of the cgroup layer, shared (it is not `Clone`) and compared by its code and text.
#[derive(Debug, Clone)]
pub struct CgroupCause(pub Arc<schedlab_cgroup::Error>);

impl From<schedlab_cgroup::Error> for CgroupCause {
    fn from(e: schedlab_cgroup::Error) -> CgroupCause {
        CgroupCause(Arc::new(e))
    }
}

impl PartialEq for CgroupCause {
    fn eq(&self, other: &CgroupCause) -> bool {
        self.0.code() == other.0.code() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for CgroupCause {}

impl std::fmt::Display for CgroupCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

/// A result of the run stage.
pub type Result<T, E = RunError> = std::result::Result<T, E>;

/// An error of whatever stores the run (the sink and queue `app` plugs in): boxed, so that the
/// run stage need not know the store's type, and found again by downcasting.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// What a [`crate::sink::Sink`], [`crate::Keeper`] or [`crate::work::Queue`] returns.
pub type SinkResult<T> = Result<T, SinkError>;

/// Why a run or a worker stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan asks what this machine cannot give (too many tasks, no I/O directory, too
    /// little space, a trial too long): bad input.
    #[error(transparent)]
    Plan(#[from] SpecError),
    /// The plan's kernel settings are refused (deny list, one file under two names): bad input.
    #[error("{0}")]
    KnobsRefused(KernelError),
    /// `--trace` asked for on a machine or user that cannot trace: bad input.
    #[error("--trace is not available: {0}")]
    TraceUnavailable(TraceError),
    /// A queued run that this worker's machine cannot run (it was not the worker's input).
    #[error("run {run_id} {why}")]
    QueuedRunUnfit {
        /// The queued run.
        run_id: i64,
        /// What it needs and this machine lacks.
        why: Unfit,
    },
    /// The launcher process could not be forked.
    #[error("cannot start the launcher process (it must be forked before any thread starts): {0}")]
    Launcher(#[source] io::Error),
    /// The launcher process stopped answering or failed a trial.
    #[error("the launcher process failed: {0}")]
    LauncherFailed(#[source] io::Error),
    /// The signal handlers could not be installed.
    #[error("cannot catch SIGINT, SIGTERM and SIGHUP: {0}")]
    Signals(#[source] io::Error),
    /// Storing or reading through the sink or queue failed.
    #[error(transparent)]
    Sink(SinkError),
    /// Measuring a workload's speed failed.
    #[error("calibration of {workload} failed (I/O directory {}): {source}", io_dir.display())]
    Calibration {
        /// The workload's label.
        workload: String,
        /// Where its files were.
        io_dir: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// A trial's directory and files could not be made.
    #[error("cannot create the trial's I/O files under {}; choose a writable --io-dir: {source}", io_dir.display())]
    TrialDir {
        /// The I/O directory.
        io_dir: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The tracer failed during a trial.
    #[error(transparent)]
    Trace(TraceError),
    /// Kernel settings could not be prepared or put in place.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// Kernel settings stay changed after the run.
    #[error("the kernel settings of run {run_id} could not all be restored: {source}")]
    NotRestored {
        /// The run whose settings they are.
        run_id: i64,
        /// What could not be restored.
        source: KernelError,
    },
}

impl RunError {
    /// Whether the user asked for what cannot be (exit 2, not 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            RunError::Plan(_) | RunError::KnobsRefused(_) | RunError::TraceUnavailable(_)
        )
    }

    /// A sink's or queue's error.
    pub fn sink(e: impl Into<SinkError>) -> RunError {
        RunError::Sink(e.into())
    }
}

impl From<SinkError> for RunError {
    fn from(e: SinkError) -> RunError {
        RunError::Sink(e)
    }
}

/// Why a queued run cannot run on a worker's machine ([`RunError::QueuedRunUnfit`]): the
/// machine's check of its plan failed with this error. Shown after the run's id, and given back
/// to the queue as the reason.
#[derive(Debug, thiserror::Error)]
#[error("cannot run on this machine: {0}")]
pub struct Unfit(pub Box<RunError>);

/// Why a kernel setting, the I/O scheduler, a BPF scheduler or the restore journal failed.
/// Each kind's value is boxed, so that a result of the run stage stays small.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A setting schedlab refuses to change (deny list without `--allow-knob`, outside
    /// /proc/sys and /sys, one file under two names).
    #[error(transparent)]
    Refused(Box<Refusal>),
    /// This machine cannot give a cell what it asks (the setting is absent, needs root, an
    /// I/O scheduler not offered, no sched_ext, a slice not kept): the cell is skipped.
    #[error(transparent)]
    Unavailable(Box<Unavailable>),
    /// Reading or writing a setting failed, or it read back otherwise.
    #[error(transparent)]
    Setting(Box<SettingError>),
    /// Something stays changed; the journal keeps it for `schedlab restore`.
    #[error(transparent)]
    NotRestored(Box<NotRestored>),
    /// Another live schedlab process varies the same setting.
    #[error(transparent)]
    Busy(Box<Busy>),
    /// The state directory or a restore journal is not trusted, or cannot be written.
    #[error(transparent)]
    State(Box<StateError>),
    /// A BPF scheduler could not be started or stopped.
    #[error(transparent)]
    Scx(Box<ScxError>),
    /// A broken promise of schedlab's own code.
    #[error("internal error: {0}")]
    Internal(#[from] Internal),
}

/// `From<KIND>` for [`KernelError`], boxing the kind's value.
macro_rules! kernel_from {
    ($($kind:ident => $variant:ident),* $(,)?) => {
        $(impl From<$kind> for KernelError {
            fn from(e: $kind) -> KernelError {
                KernelError::$variant(Box::new(e))
            }
        })*
    };
}

kernel_from! {
    Refusal => Refused,
    SettingError => Setting,
    NotRestored => NotRestored,
    Busy => Busy,
    StateError => State,
    ScxError => Scx,
}

impl From<Unavailable> for KernelError {
    /// A refusal found while resolving a file stays a refusal (bad input); anything else the
    /// machine lacks is [`KernelError::Unavailable`].
    fn from(u: Unavailable) -> KernelError {
        match u {
            Unavailable::Refused(r) => r.into(),
            u => KernelError::Unavailable(Box::new(u)),
        }
    }
}

/// Why the kernel's tracer (tracefs) cannot be used or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// Tracing cannot work here (not root, no tracefs, a tracefs not to be trusted).
    #[error(transparent)]
    Unavailable(#[from] TraceUnavailable),
    /// Setting up, stopping or reading a trace failed.
    #[error(transparent)]
    Failed(#[from] TraceFailure),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfit_queued_run_holds_the_machines_error() {
        let e = RunError::QueuedRunUnfit {
            run_id: 12,
            why: Unfit(Box::new(RunError::Signals(io::Error::from_raw_os_error(
                libc::EINVAL,
            )))),
        };
        let RunError::QueuedRunUnfit { why, .. } = &e else {
            unreachable!()
        };
        assert!(
            matches!(*why.0, RunError::Signals(ref s) if s.raw_os_error() == Some(libc::EINVAL))
        );
        let io_text = io::Error::from_raw_os_error(libc::EINVAL).to_string();
        assert_eq!(
            why.to_string(),
            format!(
                "cannot run on this machine: cannot catch SIGINT, SIGTERM and SIGHUP: {io_text}"
            )
        );
        assert_eq!(
            e.to_string(),
            format!("run 12 cannot run on this machine: cannot catch SIGINT, SIGTERM and SIGHUP: {io_text}")
        );
        assert!(!e.is_bad_input());
    }
}
