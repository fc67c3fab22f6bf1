//! Why the state directory of restore journals, or a journal in it, is not trusted or cannot
//! be used ([`super::KernelError::State`]): the paths, owners and modes found, as values.

use super::IoCause;
use crate::journal::STATE_DIR_ENV;
use std::path::PathBuf;

/// `uid 65534 (nobody)`.
fn who(uid: u32) -> String {
    match schedlab_sys::user_name(uid) {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// What is wrong with a parent of the state directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentOpen {
    /// Another user's directory.
    #[error("is owned by {}", who(*uid))]
    Owner {
        /// Its owner.
        uid: u32,
    },
    /// Written by group or others, not sticky.
    #[error("may be written by group or others (mode {mode:04o}, not sticky)")]
    Writable {
        /// Its mode bits.
        mode: u32,
    },
}

/// Why the state directory or a journal in it is not trusted, or cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// A relative path with no working directory.
    #[error("cannot resolve {}: {cause}", path.display())]
    Resolve {
        /// The path.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A `.` or `..` in the path.
    #[error(
        "the state directory {} has a `..` or `.` component; set {STATE_DIR_ENV} to its plain path",
        dir.display()
    )]
    DotComponent {
        /// The state directory.
        dir: PathBuf,
    },
    /// The directory cannot be created.
    #[error(
        "cannot create the state directory {} ({}: {cause}); run as root or set {STATE_DIR_ENV} to a directory you own",
        dir.display(),
        part.display()
    )]
    Create {
        /// The state directory.
        dir: PathBuf,
        /// The component that failed.
        part: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A component cannot be examined.
    #[error("cannot check {}: {cause}", part.display())]
    Check {
        /// The component.
        part: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A symbolic link on the way.
    #[error(
        "the state directory {} is reached through a symbolic link ({} -> {to}), which could lead schedlab's restore journals anywhere; set {STATE_DIR_ENV} to the real directory's path",
        dir.display(),
        part.display()
    )]
    Link {
        /// The state directory.
        dir: PathBuf,
        /// The link.
        part: PathBuf,
        /// Where it points (empty when unreadable).
        to: String,
    },
    /// Something on the way that is no directory.
    #[error(
        "{} is not a directory, so it cannot hold the state directory {}; remove it or set {STATE_DIR_ENV}",
        part.display(),
        dir.display()
    )]
    NotDir {
        /// The state directory.
        dir: PathBuf,
        /// What is there.
        part: PathBuf,
    },
    /// A parent someone else could change.
    #[error(
        "the state directory {} lies in {}, which {why}: someone else could replace the state directory and its journals; set {STATE_DIR_ENV} to a directory whose parents only root writes",
        dir.display(),
        parent.display()
    )]
    ParentOpen {
        /// The state directory.
        dir: PathBuf,
        /// The parent.
        parent: PathBuf,
        /// What is wrong with it.
        why: ParentOpen,
    },
    /// The directory cannot be opened.
    #[error("cannot open the state directory {}: {cause}", dir.display())]
    Open {
        /// The state directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The opened directory cannot be examined.
    #[error("cannot check the state directory {}: {cause}", dir.display())]
    CheckOpen {
        /// The state directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// Another user's state directory.
    #[error(
        "the state directory {} is owned by {}, not by {} that runs schedlab, so someone else could have written its restore journals; nothing in it was obeyed. Check its journals, then `chown {euid} {}` and `chmod 0700 {}`, or remove it",
        dir.display(),
        who(*owner),
        who(*euid),
        dir.display(),
        dir.display()
    )]
    Owner {
        /// The state directory.
        dir: PathBuf,
        /// Its owner.
        owner: u32,
        /// The effective uid.
        euid: u32,
    },
    /// A state directory group or others may write.
    #[error(
        "the state directory {} may be written by group or others (mode {mode:04o}), so anyone could have planted restore journals; nothing in it was obeyed. Check its journals, then `chmod 0700 {}`",
        dir.display(),
        dir.display()
    )]
    Writable {
        /// The state directory.
        dir: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// Its mode cannot be made 0700.
    #[error("cannot make {} mode 0700: {cause}", dir.display())]
    Chmod {
        /// The state directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// It cannot be locked.
    #[error("cannot lock {}: {cause}", dir.display())]
    Lock {
        /// The state directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A journal cannot be written.
    #[error("cannot write the restore journal {}: {cause}", file.display())]
    Write {
        /// The journal.
        file: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A journal that may not be trusted or read.
    #[error(transparent)]
    Journal(#[from] Untrusted),
}

/// Why a journal in the state directory is not read (shown after its name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    /// A symbolic link.
    #[error("it is a symbolic link")]
    Link,
    /// It cannot be opened.
    #[error("cannot open it: {cause}")]
    Open {
        /// What failed.
        cause: IoCause,
    },
    /// Not a regular file.
    #[error("it is not a regular file")]
    NotRegular,
    /// Another user's file.
    #[error("it is owned by {}, not by {} that runs schedlab", who(*owner), who(*euid))]
    Owner {
        /// Its owner.
        owner: u32,
        /// The effective uid.
        euid: u32,
    },
    /// Group or others may write it.
    #[error("group or others may write it (mode {mode:04o})")]
    Writable {
        /// Its mode bits.
        mode: u32,
    },
    /// More than one name.
    #[error("it has {links} hard links")]
    HardLinks {
        /// Its link count.
        links: u64,
    },
    /// It cannot be read.
    #[error("cannot read it: {cause}")]
    Read {
        /// What failed.
        cause: IoCause,
    },
    /// Larger than a journal grows.
    #[error("it is larger than {max_bytes} bytes")]
    TooLarge {
        /// The largest read, bytes.
        max_bytes: u64,
    },
}
