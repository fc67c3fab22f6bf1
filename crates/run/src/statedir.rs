//! The state directory that holds restore journals, trusted only when nobody but the user
//! schedlab runs as (root, to change kernel settings) can have written what is in it.
//!
//! - The directory is a real one: no symbolic link anywhere on its path.
//! - It is owned by the effective user and nobody else may write it (it is created, and kept,
//!   with mode 0700); its parents are owned by root or that user and written by nobody else,
//!   unless sticky (as /tmp is), so it cannot be replaced either. Missing parents are created
//!   0755, the directory itself 0700.
//! - A journal is read through the directory's descriptor without following a link, and
//!   only when it is a regular file of that user with one link and no group or other write
//!   permission.
//! - A journal is written 0600 to a temp file created with `O_EXCL | O_NOFOLLOW` and renamed
//!   into place, all relative to the directory's descriptor.
//!
//! What is refused is said with its cause and what to do.

use super::journal::STATE_DIR_ENV;
use crate::error::KernelError;
use schedlab_sys::{DirFd, FileKind, FileMeta};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Largest journal read, bytes (a journal of a few hundred settings is a few tens of KiB).
const MAX_JOURNAL_BYTES: u64 = 1 << 20;

/// A state directory that passed every check, held open.
#[derive(Debug)]
pub struct StateDir {
    path: PathBuf,
    dir: DirFd,
}

/// `uid 65534 (nobody)`.
fn who(uid: u32) -> String {
    match schedlab_sys::user_name(uid) {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// What is wrong with a parent of the state directory, if anything.
fn parent_open_to_others(info: &FileMeta, euid: u32) -> Option<String> {
    if info.uid != 0 && info.uid != euid {
        return Some(format!("is owned by {}", who(info.uid)));
    }
    if info.mode & 0o022 != 0 && info.mode & 0o1000 == 0 {
        return Some(format!(
            "may be written by group or others (mode {:04o}, not sticky)",
            info.mode
        ));
    }
    None
}

impl StateDir {
    /// Opens the state directory at `path` after checking it and its parents; with `create`,
    /// creates what is missing, else answers None when it does not exist. Refusals and
    /// failures are [`KernelError::State`].
    pub fn open(path: &Path, create: bool) -> Result<Option<StateDir>, KernelError> {
        Self::open_checked(path, create).map_err(KernelError::State)
    }

    fn open_checked(path: &Path, create: bool) -> Result<Option<StateDir>, String> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| format!("cannot resolve {}: {e}", path.display()))?
                .join(path)
        };
        let shown = abs.display();
        let parts: Vec<Component> = abs.components().collect();
        if parts
            .iter()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        {
            return Err(format!(
                "the state directory {shown} has a `..` or `.` component; set {STATE_DIR_ENV} to its plain path"
            ));
        }
        let euid = schedlab_sys::euid();
        let mut cur = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            cur.push(part);
            if !check_part(&cur, i + 1 == parts.len(), create, &shown, euid)? {
                return Ok(None);
            }
        }
        let dir = DirFd::open(&abs)
            .map_err(|e| format!("cannot open the state directory {shown}: {e}"))?;
        check_owner(&dir, &shown, euid)?;
        Ok(Some(StateDir { path: abs, dir }))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of entry `name`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Holds an exclusive flock on the directory itself while journals are read or written
    /// (no lock file to leave behind).
    pub fn lock(&self) -> Result<schedlab_sys::FileLock, KernelError> {
        self.dir
            .try_clone()
            .and_then(schedlab_sys::lock_exclusive)
            .map_err(|e| KernelError::State(format!("cannot lock {}: {e}", self.path.display())))
    }

    /// The names of the entries that `keep` accepts, sorted.
    pub fn names(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut names = self.dir.names().unwrap_or_default();
        names.retain(|n| keep(n));
        names
    }

    /// The text of file `name`, if it may be trusted: a regular file owned by this user with
    /// one link, written by nobody else, not larger than 1 MiB. Else why not
    /// ([`KernelError::State`]).
    pub fn read(&self, name: &str) -> Result<String, KernelError> {
        self.read_trusted(name).map_err(KernelError::State)
    }

    fn read_trusted(&self, name: &str) -> Result<String, String> {
        let euid = schedlab_sys::euid();
        let (mut f, info) = self.dir.open_read(name).map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                "it is a symbolic link".to_string()
            } else {
                format!("cannot open it: {e}")
            }
        })?;
        let why = if info.kind != FileKind::Regular {
            Some("it is not a regular file".to_string())
        } else if info.uid != euid {
            Some(format!(
                "it is owned by {}, not by {} that runs schedlab",
                who(info.uid),
                who(euid)
            ))
        } else if info.mode & 0o022 != 0 {
            Some(format!(
                "group or others may write it (mode {:04o})",
                info.mode
            ))
        } else if info.nlink != 1 {
            Some(format!("it has {} hard links", info.nlink))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(why);
        }
        let mut text = String::new();
        Read::by_ref(&mut f)
            .take(MAX_JOURNAL_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read it: {e}"))?;
        if text.len() as u64 > MAX_JOURNAL_BYTES {
            return Err(format!("it is larger than {MAX_JOURNAL_BYTES} bytes"));
        }
        Ok(text)
    }

    /// Writes `text` to file `name` (mode 0600) so that a reader sees the old file or the new
    /// one, never half: through `NAME.tmp`, created anew (a stale one, even a symbolic link, is
    /// removed, never followed), synced and renamed.
    pub fn write(&self, name: &str, text: &str) -> Result<(), KernelError> {
        let tmp = format!("{name}.tmp");
        let write = || -> std::io::Result<()> {
            let mut f = match self.dir.create_new(&tmp, 0o600) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    self.dir.remove(&tmp)?;
                    self.dir.create_new(&tmp, 0o600)?
                }
                other => other?,
            };
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            self.dir.rename(&tmp, name)?;
            self.dir.sync()
        };
        write().map_err(|e| {
            let _ = self.dir.remove(&tmp);
            KernelError::State(format!(
                "cannot write the restore journal {}: {e}",
                self.file(name).display()
            ))
        })
    }

    /// Removes file `name` (never what a link there points to).
    pub fn remove(&self, name: &str) {
        let _ = self.dir.remove(name);
    }
}

/// Checks one component `cur` of the state directory's path `shown` (the directory itself if
/// `last`): a real directory, not a link, and, for a parent, written by no one but root and
/// `euid`. With `create`, creates it if missing; false if it is missing and not created.
fn check_part(
    cur: &Path,
    last: bool,
    create: bool,
    shown: &std::path::Display,
    euid: u32,
) -> Result<bool, String> {
    let mut info = schedlab_sys::lstat(cur);
    if matches!(&info, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
        if !create {
            return Ok(false);
        }
        let mut b = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut b, if last { 0o700 } else { 0o755 });
        match b.create(cur) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "cannot create the state directory {shown} ({}: {e}); run as root or set {STATE_DIR_ENV} to a directory you own",
                    cur.display()
                ))
            }
        }
        info = schedlab_sys::lstat(cur);
    }
    let info = info.map_err(|e| format!("cannot check {}: {e}", cur.display()))?;
    match info.kind {
        FileKind::Dir => {}
        FileKind::Symlink => {
            let to = std::fs::read_link(cur)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(format!(
                "the state directory {shown} is reached through a symbolic link ({} -> {to}), which could lead schedlab's restore journals anywhere; set {STATE_DIR_ENV} to the real directory's path",
                cur.display()
            ));
        }
        _ => {
            return Err(format!(
                "{} is not a directory, so it cannot hold the state directory {shown}; remove it or set {STATE_DIR_ENV}",
                cur.display()
            ))
        }
    }
    if !last {
        if let Some(why) = parent_open_to_others(&info, euid) {
            return Err(format!(
                "the state directory {shown} lies in {}, which {why}: someone else could replace the state directory and its journals; set {STATE_DIR_ENV} to a directory whose parents only root writes",
                cur.display()
            ));
        }
    }
    Ok(true)
}

/// Checks the opened state directory `dir` (at `shown`): owned by `euid`, written by no one
/// else; makes it mode 0700 if others could read it.
fn check_owner(dir: &DirFd, shown: &std::path::Display, euid: u32) -> Result<(), String> {
    let info = dir
        .meta()
        .map_err(|e| format!("cannot check the state directory {shown}: {e}"))?;
    if info.uid != euid {
        return Err(format!(
            "the state directory {shown} is owned by {}, not by {} that runs schedlab, so someone else could have written its restore journals; nothing in it was obeyed. Check its journals, then `chown {euid} {shown}` and `chmod 0700 {shown}`, or remove it",
            who(info.uid),
            who(euid)
        ));
    }
    if info.mode & 0o022 != 0 {
        return Err(format!(
            "the state directory {shown} may be written by group or others (mode {:04o}), so anyone could have planted restore journals; nothing in it was obeyed. Check its journals, then `chmod 0700 {shown}`",
            info.mode
        ));
    }
    if info.mode & 0o077 != 0 {
        // Readable by others (an older schedlab made it 0755): journals hold command lines.
        dir.chmod(0o700)
            .map_err(|e| format!("cannot make {shown} mode 0700: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "statedir_tests.rs"]
mod tests;
