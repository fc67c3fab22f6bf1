//! The refusals of this crate that are schedlab's own, not the kernel's: each is a
//! [`SysError`] variant, carried inside the `io::Error` the wrappers return (so that every
//! wrapper keeps one error type, and the kernel's refusals keep their errno). A caller tells
//! them apart by type: `e.get_ref().and_then(|e| e.downcast_ref::<SysError>())`.

use std::io;
use std::path::PathBuf;

/// Why this crate refused, where the kernel did not.
#[derive(Debug, thiserror::Error)]
pub enum SysError {
    /// `fork` was asked of a process with other threads.
    #[error(
        "refusing to fork: this process has {threads} threads, and the child of a multi-threaded process may only call async-signal-safe functions; fork before starting threads, or stop them first"
    )]
    MultiThreaded {
        /// Threads the process had when the wait gave up.
        threads: usize,
    },
    /// `/proc/self/task` could not be read, so the thread count is unknown.
    #[error(
        "cannot fork: /proc/self/task, needed to check that this process has a single thread, is unreadable ({source}); mount /proc"
    )]
    ThreadsUnknown {
        /// Why it could not be read.
        source: io::Error,
    },
    /// A CPU number beyond what an affinity mask can name.
    #[error(
        "CPU {cpu} is beyond what an affinity mask can name (CPUs 0 to {}, glibc's cpu_set_t); choose CPUs below {capacity}",
        capacity - 1
    )]
    CpuBeyondMask {
        /// The CPU asked for.
        cpu: usize,
        /// CPUs an affinity mask holds.
        capacity: usize,
    },
    /// A directory schedlab created is no longer the one found at its path.
    #[error("{} is no longer the directory schedlab created (it was moved or replaced)", path.display())]
    DirReplaced {
        /// Where it was.
        path: PathBuf,
    },
    /// A new private directory was swapped for someone else's between `mkdir` and `open`.
    #[error("the new directory {name} was replaced by another user's before it was opened")]
    NewDirReplaced {
        /// Its name in its parent.
        name: String,
    },
    /// Every random name tried for a private directory existed.
    #[error("{tries} random names {prefix}* under the directory all existed")]
    NamesTaken {
        /// The names' prefix.
        prefix: String,
        /// How many were tried.
        tries: usize,
    },
    /// A tree to remove is nested deeper than schedlab ever makes one.
    #[error("more than {depth} nested directories")]
    TooDeep {
        /// The deepest nesting removed.
        depth: usize,
    },
    /// A directory schedlab would write into, where someone else could plant entries.
    #[error("{} {why}, so another user could plant a link or a file at the names schedlab writes; choose a directory only you (or root) can write", path.display())]
    OpenToOthers {
        /// The directory.
        path: PathBuf,
        /// Who else may write it.
        why: crate::outdir::OthersMayWrite,
    },
    /// Shared memory cannot hold a type aligned to more than a page.
    #[error("a shared slice cannot hold a type aligned to more than a page (4096 bytes)")]
    OverAligned,
}

impl SysError {
    /// The `io::ErrorKind` it is carried with.
    fn kind(&self) -> io::ErrorKind {
        match self {
            SysError::ThreadsUnknown { source } => source.kind(),
            SysError::CpuBeyondMask { .. } | SysError::OverAligned => io::ErrorKind::InvalidInput,
            SysError::NamesTaken { .. } => io::ErrorKind::AlreadyExists,
            SysError::OpenToOthers { .. } => io::ErrorKind::PermissionDenied,
            _ => io::ErrorKind::Other,
        }
    }

    /// The refusal inside `e`, if `e` is one of this crate's.
    pub fn of(e: &io::Error) -> Option<&SysError> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<SysError>())
    }
}

impl From<SysError> for io::Error {
    fn from(e: SysError) -> io::Error {
        io::Error::new(e.kind(), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_travels_inside_an_io_error_and_is_found_by_type() {
        let e: io::Error = SysError::CpuBeyondMask {
            cpu: 2000,
            capacity: 1024,
        }
        .into();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(matches!(
            SysError::of(&e),
            Some(SysError::CpuBeyondMask { cpu: 2000, .. })
        ));
        assert!(SysError::of(&io::Error::from_raw_os_error(libc::EPERM)).is_none());
    }
}
