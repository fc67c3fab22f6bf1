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

use crate::error::{KernelError, ParentOpen, StateError, Untrusted};
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

/// What is wrong with a parent of the state directory, if anything.
fn parent_open_to_others(info: &FileMeta, euid: u32) -> Option<ParentOpen> {
    if info.uid != 0 && info.uid != euid {
        return Some(ParentOpen::Owner { uid: info.uid });
    }
    if info.mode & 0o022 != 0 && info.mode & 0o1000 == 0 {
        return Some(ParentOpen::Writable { mode: info.mode });
    }
    None
}

impl StateDir {
    /// Opens the state directory at `path` after checking it and its parents; with `create`,
    /// creates what is missing, else answers None when it does not exist. Refusals and
    /// failures are [`KernelError::State`].
    pub fn open(path: &Path, create: bool) -> Result<Option<StateDir>, KernelError> {
        Ok(Self::open_checked(path, create)?)
    }

    fn open_checked(path: &Path, create: bool) -> Result<Option<StateDir>, StateError> {
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map_err(|e| StateError::Resolve {
                    path: path.to_path_buf(),
                    cause: e.into(),
                })?
                .join(path)
        };
        let parts: Vec<Component> = abs.components().collect();
        if parts
            .iter()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        {
            return Err(StateError::DotComponent { dir: abs.clone() });
        }
        let euid = schedlab_sys::euid();
        let mut cur = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            cur.push(part);
            if !check_part(&cur, i + 1 == parts.len(), create, &abs, euid)? {
                return Ok(None);
            }
        }
        let dir = DirFd::open(&abs).map_err(|e| StateError::Open {
            dir: abs.clone(),
            cause: e.into(),
        })?;
        check_owner(&dir, &abs, euid)?;
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
            .map_err(|e| {
                StateError::Lock {
                    dir: self.path.clone(),
                    cause: e.into(),
                }
                .into()
            })
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
        Ok(self.read_trusted(name).map_err(StateError::from)?)
    }

    fn read_trusted(&self, name: &str) -> Result<String, Untrusted> {
        let euid = schedlab_sys::euid();
        let (mut f, info) = self.dir.open_read(name).map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                Untrusted::Link
            } else {
                Untrusted::Open { cause: e.into() }
            }
        })?;
        let why = if info.kind != FileKind::Regular {
            Some(Untrusted::NotRegular)
        } else if info.uid != euid {
            Some(Untrusted::Owner {
                owner: info.uid,
                euid,
            })
        } else if info.mode & 0o022 != 0 {
            Some(Untrusted::Writable { mode: info.mode })
        } else if info.nlink != 1 {
            Some(Untrusted::HardLinks { links: info.nlink })
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
            .map_err(|e| Untrusted::Read { cause: e.into() })?;
        if text.len() as u64 > MAX_JOURNAL_BYTES {
            return Err(Untrusted::TooLarge {
                max_bytes: MAX_JOURNAL_BYTES,
            });
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
            StateError::Write {
                file: self.file(name),
                cause: e.into(),
            }
            .into()
        })
    }

    /// Removes file `name` (never what a link there points to).
    pub fn remove(&self, name: &str) {
        let _ = self.dir.remove(name);
    }
}

/// Checks one component `cur` of the state directory's path `dir` (the directory itself if
/// `last`): a real directory, not a link, and, for a parent, written by no one but root and
/// `euid`. With `create`, creates it if missing; false if it is missing and not created.
fn check_part(
    cur: &Path,
    last: bool,
    create: bool,
    dir: &Path,
    euid: u32,
) -> Result<bool, StateError> {
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
                return Err(StateError::Create {
                    dir: dir.to_path_buf(),
                    part: cur.to_path_buf(),
                    cause: e.into(),
                })
            }
        }
        info = schedlab_sys::lstat(cur);
    }
    let info = info.map_err(|e| StateError::Check {
        part: cur.to_path_buf(),
        cause: e.into(),
    })?;
    match info.kind {
        FileKind::Dir => {}
        FileKind::Symlink => {
            let to = std::fs::read_link(cur)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            return Err(StateError::Link {
                dir: dir.to_path_buf(),
                part: cur.to_path_buf(),
                to,
            });
        }
        _ => {
            return Err(StateError::NotDir {
                dir: dir.to_path_buf(),
                part: cur.to_path_buf(),
            })
        }
    }
    if !last {
        if let Some(why) = parent_open_to_others(&info, euid) {
            return Err(StateError::ParentOpen {
                dir: dir.to_path_buf(),
                parent: cur.to_path_buf(),
                why,
            });
        }
    }
    Ok(true)
}

/// Checks the opened state directory `fd` (at `dir`): owned by `euid`, written by no one
/// else; makes it mode 0700 if others could read it.
fn check_owner(fd: &DirFd, dir: &Path, euid: u32) -> Result<(), StateError> {
    let dir = dir.to_path_buf();
    let info = fd.meta().map_err(|e| StateError::CheckOpen {
        dir: dir.clone(),
        cause: e.into(),
    })?;
    if info.uid != euid {
        return Err(StateError::Owner {
            dir,
            owner: info.uid,
            euid,
        });
    }
    if info.mode & 0o022 != 0 {
        return Err(StateError::Writable {
            dir,
            mode: info.mode,
        });
    }
    if info.mode & 0o077 != 0 {
        // Readable by others (an older schedlab made it 0755): journals hold command lines.
        fd.chmod(0o700).map_err(|e| StateError::Chmod {
            dir,
            cause: e.into(),
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "statedir_tests.rs"]
mod tests;
