//! A directory held open without following links, and the files in it reached through its
//! descriptor (`openat`, `renameat`, `unlinkat`), so that no path component can be swapped for a
//! symbolic link between a check and a use.

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Dir,
    /// A regular file.
    Regular,
    /// A symbolic link (seen only by `lstat`).
    Symlink,
    /// Anything else (FIFO, socket, device).
    Other,
}

/// Owner, permissions and kind of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileInfo {
    /// Owner uid.
    pub uid: u32,
    /// Permission bits with set-id and sticky bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Kind.
    pub kind: FileKind,
    /// Hard links to it.
    pub nlink: u64,
}

impl FileInfo {
    fn of(m: &std::fs::Metadata) -> FileInfo {
        let t = m.file_type();
        let kind = if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_dir() {
            FileKind::Dir
        } else if t.is_file() {
            FileKind::Regular
        } else {
            FileKind::Other
        };
        FileInfo {
            uid: m.uid(),
            mode: m.mode() & 0o7777,
            kind,
            nlink: m.nlink(),
        }
    }
}

/// `lstat(path)`: the file itself, a symbolic link not followed.
pub fn lstat(path: &Path) -> io::Result<FileInfo> {
    std::fs::symlink_metadata(path).map(|m| FileInfo::of(&m))
}

/// The name of user `uid` from the user database, if it has one.
pub fn user_name(uid: u32) -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// A directory opened with `O_DIRECTORY | O_NOFOLLOW`.
#[derive(Debug)]
pub struct DirFd(File);

impl DirFd {
    /// Opens directory `path`; fails (ENOTDIR or ELOOP) when its last component is a symbolic
    /// link or no directory.
    pub fn open(path: &Path) -> io::Result<DirFd> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map(DirFd)
    }

    /// `fstat` of the directory.
    pub fn info(&self) -> io::Result<FileInfo> {
        self.0.metadata().map(|m| FileInfo::of(&m))
    }

    /// Sets the directory's permission bits (`fchmod`).
    pub fn chmod(&self, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        self.0
            .set_permissions(std::fs::Permissions::from_mode(mode))
    }

    /// Another descriptor of the directory (e.g. to hold an `flock` on it).
    pub fn try_clone(&self) -> io::Result<File> {
        self.0.try_clone()
    }

    /// Flushes the directory's entries to disk (after a rename).
    pub fn sync(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    fn openat(&self, name: &str, flags: OFlag, mode: u32) -> io::Result<File> {
        check_name(name)?;
        let fd = nix::fcntl::openat(
            Some(self.0.as_raw_fd()),
            name,
            flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )?;
        // SAFETY: openat just returned this descriptor; nothing else owns it.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Creates file `name` in the directory for writing, with `mode`: `O_CREAT | O_EXCL |
    /// O_NOFOLLOW`, so an existing file or a symbolic link there is an error (EEXIST), never
    /// followed or truncated.
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        let f = self.openat(name, OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL, mode)?;
        // The umask may have taken bits away, never added any; set exactly these.
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(f)
    }

    /// Opens file `name` in the directory for reading without following a symbolic link
    /// (ELOOP) and without blocking on a FIFO; check its [`FileInfo`] before reading.
    pub fn open_read(&self, name: &str) -> io::Result<(File, FileInfo)> {
        let f = self.openat(name, OFlag::O_RDONLY | OFlag::O_NONBLOCK, 0)?;
        let info = FileInfo::of(&f.metadata()?);
        Ok((f, info))
    }

    /// Renames `from` to `to`, both in this directory, replacing `to`.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        check_name(from)?;
        check_name(to)?;
        let fd = Some(self.0.as_raw_fd());
        nix::fcntl::renameat(fd, from, fd, to).map_err(io::Error::from)
    }

    /// Removes the entry `name` (a symbolic link itself, never its target).
    pub fn remove(&self, name: &str) -> io::Result<()> {
        check_name(name)?;
        nix::unistd::unlinkat(
            Some(self.0.as_raw_fd()),
            name,
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )
        .map_err(io::Error::from)
    }

    /// The names of the directory's entries (without `.` and `..`), sorted.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let dir = nix::dir::Dir::openat(
            Some(self.0.as_raw_fd()),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut out = Vec::new();
        for e in dir {
            let name = e?.file_name().to_string_lossy().into_owned();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }
}

/// A name is one path component: no `/`, not empty, not `.` or `..`.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_symbolic_link_is_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let inner = d.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        std::os::unix::fs::symlink(&target, inner.join("planted")).unwrap();
        std::os::unix::fs::symlink(&inner, d.path().join("dirlink")).unwrap();
        // The directory itself through a link: refused (ENOTDIR: with O_DIRECTORY the link is
        // seen as what it is, no directory).
        let e = DirFd::open(&d.path().join("dirlink")).unwrap_err();
        assert!(
            matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)),
            "{e}"
        );
        let dir = DirFd::open(&inner).unwrap();
        // Creating over a planted link: EEXIST, the target untouched.
        let e = dir.create_new("planted", 0o600).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        let e = dir.open_read("planted").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        dir.remove("planted").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        // A new file gets exactly the mode asked for, and renames stay in the directory.
        let mut f = dir.create_new("a.tmp", 0o600).unwrap();
        f.write_all(b"x").unwrap();
        dir.rename("a.tmp", "a").unwrap();
        let (_, info) = dir.open_read("a").unwrap();
        assert_eq!(
            (info.kind, info.mode, info.nlink),
            (FileKind::Regular, 0o600, 1)
        );
        assert_eq!(dir.names().unwrap(), ["a"]);
        assert!(dir.create_new("../escape", 0o600).is_err());
        assert_eq!(
            lstat(&d.path().join("dirlink")).unwrap().kind,
            FileKind::Symlink
        );
    }
}
