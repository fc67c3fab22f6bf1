//! Directories held open and the files in them reached through the held fd, none of it ever
//! following a symbolic link: private directories in shared ones (trial directories), and the
//! state directory of the restore journals ([`DirFd`]).
//!
//! schedlab runs as root and writes its trial files under /var/tmp or a user-given directory,
//! where other users can create entries. So a private directory gets a random name and mode
//! 0700 (`mkdirat`, which refuses an existing name), it is opened once with `O_DIRECTORY |
//! O_NOFOLLOW`, and everything after that goes through that fd: files are created with
//! `O_CREAT | O_EXCL | O_NOFOLLOW` and opened with `O_NOFOLLOW` (`openat`), and removal walks
//! the tree with `openat`/`unlinkat` without following links. Renaming the directory and
//! planting a symlink at its old name then redirects nothing. Where another process must find
//! the directory again by path, [`open_dir_checked`] opens it without following a link at its
//! last component and refuses anything but the very directory ([`DirId`]) that was created.
//! A name under a held directory is always one path component (no `/`, `.`, `..`), so no
//! call reaches around the fd.

use super::SysError;
use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, mkdirat, FileStat, Mode, SFlag};
use nix::unistd::{fchdir, unlinkat, UnlinkatFlags};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Deepest tree [`remove_tree_at`] descends into (each level holds one fd).
const MAX_REMOVE_DEPTH: usize = 64;

/// How many random names [`make_private_dir`] tries before it gives up.
const MAX_NAME_TRIES: usize = 64;

/// The identity of a directory: the device and inode it was created as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirId {
    /// Device number (`st_dev`).
    pub dev: u64,
    /// Inode number (`st_ino`).
    pub ino: u64,
}

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Dir,
    /// A regular file.
    Regular,
    /// A symbolic link (seen only when it is not followed).
    Symlink,
    /// Anything else (FIFO, socket, device).
    Other,
}

impl FileKind {
    fn of_mode(st_mode: u32) -> FileKind {
        let t = st_mode & SFlag::S_IFMT.bits();
        if t == SFlag::S_IFDIR.bits() {
            FileKind::Dir
        } else if t == SFlag::S_IFREG.bits() {
            FileKind::Regular
        } else if t == SFlag::S_IFLNK.bits() {
            FileKind::Symlink
        } else {
            FileKind::Other
        }
    }
}

/// Identity, owner, permissions and kind of a file, as `fstat`/`lstat` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Device and inode.
    pub id: DirId,
    /// Owner uid.
    pub uid: u32,
    /// Permission bits with the set-id and sticky bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Kind.
    pub kind: FileKind,
    /// Hard links to it.
    pub nlink: u64,
}

impl FileMeta {
    fn of(st: &FileStat) -> FileMeta {
        FileMeta {
            id: DirId {
                dev: st.st_dev,
                ino: st.st_ino,
            },
            uid: st.st_uid,
            mode: st.st_mode & 0o7777,
            kind: FileKind::of_mode(st.st_mode),
            nlink: st.st_nlink,
        }
    }

    fn of_metadata(m: &std::fs::Metadata) -> FileMeta {
        FileMeta {
            id: DirId {
                dev: m.dev(),
                ino: m.ino(),
            },
            uid: m.uid(),
            mode: m.mode() & 0o7777,
            kind: FileKind::of_mode(m.mode()),
            nlink: m.nlink(),
        }
    }

    /// Whether it is a directory (a symbolic link is not, whatever it points to).
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }
}

fn owned(fd: std::os::fd::RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open call and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// A name under a held directory is one path component: not empty, no `/` or NUL, not `.` or
/// `..` (EINVAL otherwise).
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    Ok(())
}

/// `openat(dir, name)` with `O_NOFOLLOW | O_CLOEXEC` added, `name` one component.
fn open_at(dir: BorrowedFd, name: &str, flags: OFlag, mode: Mode) -> io::Result<OwnedFd> {
    check_name(name)?;
    let fd = openat(
        Some(dir.as_raw_fd()),
        name,
        flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        mode,
    )?;
    Ok(owned(fd))
}

/// `lstat(path)`: the file itself, a symbolic link not followed.
pub fn lstat(path: &Path) -> io::Result<FileMeta> {
    std::fs::symlink_metadata(path).map(|m| FileMeta::of_metadata(&m))
}

/// The name of user `uid` from the user database, if it has one.
pub fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// The uid and primary gid of user `name` from the user database, if it has one.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    nix::unistd::User::from_name(name)
        .ok()
        .flatten()
        .map(|u| (u.uid.as_raw(), u.gid.as_raw()))
}

/// Opens the directory at `path`, following symbolic links (the user chose that path), for
/// creating private directories in it.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let fd = nix::fcntl::open(
        path,
        OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    Ok(owned(fd))
}

/// Opens directory `name` under `dir` as a path only (`O_PATH`: search permission suffices,
/// as for a path lookup); refuses a symbolic link and anything else that is not a directory.
/// The fd serves `*at` calls and `fstat`, not reading its entries.
pub fn open_path_at(dir: BorrowedFd, name: &str) -> io::Result<OwnedFd> {
    if name == ".." {
        // `..` is never a link; it is no single component `check_name` lets through.
        let fd = openat(
            Some(dir.as_raw_fd()),
            "..",
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        return Ok(owned(fd));
    }
    open_at(dir, name, OFlag::O_PATH | OFlag::O_DIRECTORY, Mode::empty())
}

/// Opens the directory at `path` as a path only (see [`open_path_at`]), following links.
pub fn open_path(path: &Path) -> io::Result<OwnedFd> {
    let fd = nix::fcntl::open(
        path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    Ok(owned(fd))
}

/// Opens directory `name` under `dir`; refuses a symbolic link and anything else that is not
/// a directory (ENOTDIR; ELOOP for a link to a non-directory).
pub fn open_dir_at(dir: BorrowedFd, name: &str) -> io::Result<OwnedFd> {
    open_at(
        dir,
        name,
        OFlag::O_DIRECTORY | OFlag::O_RDONLY,
        Mode::empty(),
    )
}

/// Another descriptor of `dir` itself, with its own offset (for reading its entries).
fn reopen_dir(dir: BorrowedFd) -> io::Result<OwnedFd> {
    let fd = openat(
        Some(dir.as_raw_fd()),
        ".",
        OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    Ok(owned(fd))
}

/// Opens the directory at `path` again, without following a link at its last component, and
/// only if it is the directory `id` owned by this process's effective uid: a directory that was
/// moved away and replaced by a link or another directory is refused.
pub fn open_dir_checked(path: &Path, id: DirId) -> io::Result<OwnedFd> {
    let fd = owned(nix::fcntl::open(
        path,
        OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?);
    let meta = meta(fd.as_fd())?;
    if meta.id != id || meta.uid != super::euid() {
        return Err(SysError::DirReplaced {
            path: path.to_path_buf(),
        }
        .into());
    }
    Ok(fd)
}

/// Owner, mode and identity of an open file.
pub fn meta(fd: BorrowedFd) -> io::Result<FileMeta> {
    Ok(FileMeta::of(&fstat(fd.as_raw_fd())?))
}

/// Owner, mode and identity of entry `name` of `dir`, not following a link (lstat); None when
/// there is no such entry.
pub fn meta_at(dir: BorrowedFd, name: &str) -> io::Result<Option<FileMeta>> {
    check_name(name)?;
    match fstatat(Some(dir.as_raw_fd()), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(FileMeta::of(&st))),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Creates a directory `PREFIX` + 10 random letters and digits under `parent` with mode 0700
/// (`mkdirat` refuses a name that exists; another random name is tried then), opens it with
/// `O_NOFOLLOW`, and checks it is a directory owned by this process's effective uid. Returns
/// its name and fd.
pub fn make_private_dir(parent: BorrowedFd, prefix: &str) -> io::Result<(String, OwnedFd)> {
    for _ in 0..MAX_NAME_TRIES {
        let suffix: String = std::iter::repeat_with(fastrand::alphanumeric)
            .take(10)
            .collect();
        let name = format!("{prefix}{suffix}");
        check_name(&name)?;
        match mkdirat(Some(parent.as_raw_fd()), name.as_str(), Mode::S_IRWXU) {
            Ok(()) => {}
            Err(Errno::EEXIST) => continue,
            Err(e) => return Err(e.into()),
        }
        let fd = open_dir_at(parent, &name)?;
        let m = meta(fd.as_fd())?;
        if !m.is_dir() || m.uid != super::euid() {
            // Someone swapped the new directory for their own between mkdir and open.
            return Err(SysError::NewDirReplaced { name }.into());
        }
        // mkdirat's mode is reduced by the umask; 0700 is what is wanted, whatever it is.
        fchmod(fd.as_raw_fd(), Mode::S_IRWXU)?;
        return Ok((name, fd));
    }
    Err(SysError::NamesTaken {
        prefix: prefix.to_string(),
        tries: MAX_NAME_TRIES,
    }
    .into())
}

/// Creates file `name` in `dir` for writing, mode 0600: refuses an existing entry (EEXIST),
/// a symbolic link included. `flags` are added (e.g. `O_SYNC`).
pub fn create_file_at(dir: BorrowedFd, name: &str, flags: OFlag) -> io::Result<File> {
    let fd = open_at(
        dir,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | flags,
        Mode::S_IRUSR | Mode::S_IWUSR,
    )?;
    Ok(File::from(fd))
}

/// Creates file `name` in `dir` for writing with `mode` (less the umask): refuses an existing
/// entry (EEXIST), a symbolic link included. `flags` are added.
pub fn create_file_mode_at(
    dir: BorrowedFd,
    name: &str,
    flags: OFlag,
    mode: u32,
) -> io::Result<File> {
    let fd = open_at(
        dir,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | flags,
        Mode::from_bits_truncate(mode),
    )?;
    Ok(File::from(fd))
}

/// Opens file `name` of `dir` for reading; refuses a symbolic link (ELOOP). `flags` are added.
pub fn open_file_at(dir: BorrowedFd, name: &str, flags: OFlag) -> io::Result<File> {
    Ok(File::from(open_at(
        dir,
        name,
        OFlag::O_RDONLY | flags,
        Mode::empty(),
    )?))
}

/// Removes entry `name` of `dir` (not a directory); a symbolic link is removed, not followed.
pub fn unlink_at(dir: BorrowedFd, name: &str) -> io::Result<()> {
    check_name(name)?;
    Ok(unlinkat(
        Some(dir.as_raw_fd()),
        name,
        UnlinkatFlags::NoRemoveDir,
    )?)
}

/// Renames `from` to `to`, both in `dir`, replacing `to`.
pub fn rename_at(dir: BorrowedFd, from: &str, to: &str) -> io::Result<()> {
    check_name(from)?;
    check_name(to)?;
    let fd = Some(dir.as_raw_fd());
    Ok(nix::fcntl::renameat(fd, from, fd, to)?)
}

/// The names of `dir`'s entries (without `.` and `..`), sorted.
pub fn names_at(dir: BorrowedFd) -> io::Result<Vec<String>> {
    let mut out: Vec<String> = entries(dir)?.into_iter().map(|(n, _)| n).collect();
    out.sort();
    Ok(out)
}

/// `dir`'s entries but `.` and `..`, with their kinds where the filesystem gives them.
fn entries(dir: BorrowedFd) -> io::Result<Vec<(String, Option<Type>)>> {
    let mut d = Dir::from(reopen_dir(dir)?)?;
    let mut names = Vec::new();
    for e in d.iter() {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name != "." && name != ".." {
            names.push((name, e.file_type()));
        }
    }
    Ok(names)
}

/// Gives the open file `fd` to user `uid` and group `gid` (fchown): the trial directory of a
/// program a worker runs as an unprivileged user.
pub fn chown_fd(fd: BorrowedFd, uid: u32, gid: u32) -> io::Result<()> {
    Ok(nix::unistd::fchown(
        fd.as_raw_fd(),
        Some(nix::unistd::Uid::from_raw(uid)),
        Some(nix::unistd::Gid::from_raw(gid)),
    )?)
}

/// Makes `dir` the working directory of the calling process (fchdir).
pub fn chdir_fd(dir: BorrowedFd) -> io::Result<()> {
    Ok(fchdir(dir.as_raw_fd())?)
}

/// Removes everything in `dir`, depth first, following no symbolic link: subdirectories are
/// opened with `O_NOFOLLOW` under their parent's fd, links are unlinked.
pub fn remove_tree_at(dir: BorrowedFd) -> io::Result<()> {
    remove_tree_depth(dir, 0)
}

fn remove_tree_depth(dir: BorrowedFd, depth: usize) -> io::Result<()> {
    if depth > MAX_REMOVE_DEPTH {
        return Err(SysError::TooDeep {
            depth: MAX_REMOVE_DEPTH,
        }
        .into());
    }
    // A fresh open of "." reads the entries without moving `dir`'s own offset.
    let mut first_error = None;
    for (name, kind) in entries(dir)? {
        let removed = match kind {
            Some(Type::Directory) => remove_subdir(dir, &name, depth),
            _ => match unlink_at(dir, &name) {
                // An entry of unknown type that turns out to be a directory.
                Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {
                    remove_subdir(dir, &name, depth)
                }
                other => other,
            },
        };
        if let Err(e) = removed {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn remove_subdir(dir: BorrowedFd, name: &str, depth: usize) -> io::Result<()> {
    let sub = open_dir_at(dir, name)?;
    remove_tree_depth(sub.as_fd(), depth + 1)?;
    drop(sub);
    Ok(unlinkat(
        Some(dir.as_raw_fd()),
        name,
        UnlinkatFlags::RemoveDir,
    )?)
}

/// Removes directory `name` of `parent` and everything in it, through the already open `dir`,
/// if `name` still is that directory ([`DirId`]); a name that now is something else (moved
/// away and replaced) is left alone, and only the contents of `dir` are removed.
pub fn remove_dir_at(parent: BorrowedFd, name: &str, dir: BorrowedFd) -> io::Result<()> {
    let id = meta(dir)?.id;
    remove_tree_at(dir)?;
    match meta_at(parent, name)? {
        Some(m) if m.is_dir() && m.id == id => Ok(unlinkat(
            Some(parent.as_raw_fd()),
            name,
            UnlinkatFlags::RemoveDir,
        )?),
        _ => Ok(()),
    }
}

/// Bytes available to unprivileged users on the filesystem holding `path` (statvfs); None
/// when the filesystem reports no size at all (procfs, sysfs), so its free space says nothing.
pub fn free_bytes(path: &Path) -> io::Result<Option<u64>> {
    let st = nix::sys::statvfs::statvfs(path)?;
    if st.blocks() == 0 {
        return Ok(None);
    }
    Ok(Some(
        (st.blocks_available() as u64).saturating_mul(st.fragment_size() as u64),
    ))
}

/// A directory held open: opened with `O_DIRECTORY | O_NOFOLLOW`, its files reached through
/// its descriptor by the functions above.
#[derive(Debug)]
pub struct DirFd(OwnedFd);

impl DirFd {
    /// Opens directory `path`; fails (ENOTDIR or ELOOP) when its last component is a symbolic
    /// link or no directory.
    pub fn open(path: &Path) -> io::Result<DirFd> {
        let fd = nix::fcntl::open(
            path,
            OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        Ok(DirFd(owned(fd)))
    }

    /// `fstat` of the directory.
    pub fn meta(&self) -> io::Result<FileMeta> {
        meta(self.0.as_fd())
    }

    /// Sets the directory's permission bits (`fchmod`).
    pub fn chmod(&self, mode: u32) -> io::Result<()> {
        Ok(fchmod(self.0.as_raw_fd(), Mode::from_bits_truncate(mode))?)
    }

    /// Another descriptor of the directory (e.g. to hold an `flock` on it).
    pub fn try_clone(&self) -> io::Result<File> {
        Ok(File::from(self.0.try_clone()?))
    }

    /// Flushes the directory's entries to disk (after a rename).
    pub fn sync(&self) -> io::Result<()> {
        Ok(nix::unistd::fsync(self.0.as_raw_fd())?)
    }

    /// Creates file `name` in the directory for writing with exactly `mode` (whatever the
    /// umask): `O_CREAT | O_EXCL | O_NOFOLLOW`, so an existing file or a symbolic link there
    /// is an error (EEXIST), never followed or truncated.
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        let fd = open_at(
            self.0.as_fd(),
            name,
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL,
            Mode::from_bits_truncate(mode),
        )?;
        fchmod(fd.as_raw_fd(), Mode::from_bits_truncate(mode))?;
        Ok(File::from(fd))
    }

    /// Opens file `name` in the directory for reading without following a symbolic link
    /// (ELOOP) and without blocking on a FIFO; check its [`FileMeta`] before reading.
    pub fn open_read(&self, name: &str) -> io::Result<(File, FileMeta)> {
        let f = open_file_at(self.0.as_fd(), name, OFlag::O_NONBLOCK)?;
        let meta = meta(f.as_fd())?;
        Ok((f, meta))
    }

    /// Renames `from` to `to`, both in this directory, replacing `to`.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        rename_at(self.0.as_fd(), from, to)
    }

    /// Removes the entry `name` (a symbolic link itself, never its target).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        unlink_at(self.0.as_fd(), name)
    }

    /// The names of the directory's entries (without `.` and `..`), sorted.
    pub fn names(&self) -> io::Result<Vec<String>> {
        names_at(self.0.as_fd())
    }
}

impl AsFd for DirFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
#[path = "dir_tests.rs"]
mod tests;
