//! Output files in directories a user names (report trees, export files, database files, the
//! spool), written so that another user who can reach the directory redirects nothing.
//!
//! A directory schedlab writes into is opened once and held ([`OutDir`]), and it is refused
//! when someone else could plant entries in it: owned by a user other than root or the one
//! schedlab runs as, or writable by others (or by a group other than the process's own), the
//! sticky bit notwithstanding: a sticky /tmp stops others from removing schedlab's files, not
//! from planting links at the names schedlab is about to use. The refusal
//! ([`SysError::OpenToOthers`]) says why; callers add which flag picks another directory.
//!
//! Directories are held as path-only fds (`O_PATH`: search permission suffices, as for a path
//! lookup). In a held directory, subdirectories are made with `mkdirat` and opened with
//! `O_NOFOLLOW`,
//! and a file is written to a new temp name (`O_CREAT | O_EXCL | O_NOFOLLOW`) and renamed over
//! its name, so that a link or a file found there is replaced, never followed or truncated. A
//! file that must be created in place (a new database, which other processes find by name) is
//! created with `O_EXCL`, and an existing one is looked at with `lstat` first
//! ([`OutDir::entry`]).

use super::dir::{self, FileKind, FileMeta};
use super::SysError;
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{mkdirat, Mode};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// How many temp names [`OutDir::write_file`] tries.
const MAX_TEMP_TRIES: usize = 16;

/// A directory outputs are written into, checked and held open.
#[derive(Debug)]
pub struct OutDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// `uid 65534 (nobody)`.
fn who(uid: u32) -> String {
    match dir::user_name(uid) {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// Why a file is not one this process may open as its own ([`OutDir::own_file`]); shown after
/// the file's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOwnFile {
    /// A symbolic link.
    #[error("is a symbolic link")]
    Symlink,
    /// A directory, device, pipe or socket.
    #[error("is not a regular file")]
    NotRegular,
    /// Another user's file.
    #[error("is owned by {}, not by {} that runs schedlab", who(*owner), who(*euid))]
    Owner {
        /// Its owner's uid.
        owner: u32,
        /// The effective uid of this process.
        euid: u32,
    },
    /// A file with more than one name.
    #[error("has {links} hard links")]
    HardLinks {
        /// Its link count.
        links: u64,
    },
}

/// Who else may write a directory schedlab would write into ([`SysError::OpenToOthers`]);
/// shown after its path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OthersMayWrite {
    /// It belongs to a user other than root and this process's.
    #[error("is owned by {}", who(*uid))]
    Owner {
        /// Its owner's uid.
        uid: u32,
    },
    /// Others, or a group other than the process's own, may write it.
    #[error(
        "may be written by others (mode {mode:04o}{})",
        if mode & 0o1000 != 0 {
            ", sticky, which keeps others from removing files, not from planting links"
        } else {
            ""
        }
    )]
    Mode {
        /// Its permission bits.
        mode: u32,
    },
    /// A symbolic link on the way lies in a directory others may write, for this reason.
    #[error("is a symbolic link in a directory that {0}")]
    LinkIn(Box<OthersMayWrite>),
}

/// Why others could plant entries in directory `m` (this process runs as `euid`, group
/// `egid`), if they could.
fn open_to_others(m: &FileMeta, gid: u32, euid: u32, egid: u32) -> Option<OthersMayWrite> {
    if m.uid != 0 && m.uid != euid {
        return Some(OthersMayWrite::Owner { uid: m.uid });
    }
    if m.mode & 0o002 != 0 || (m.mode & 0o020 != 0 && gid != egid) {
        return Some(OthersMayWrite::Mode { mode: m.mode });
    }
    None
}

/// Why others could plant entries in the open directory `fd`, if they could.
fn others_may_write(fd: BorrowedFd) -> io::Result<Option<OthersMayWrite>> {
    let m = dir::meta(fd)?;
    let st = nix::sys::stat::fstat(fd.as_raw_fd())?;
    let egid = nix::unistd::getegid().as_raw();
    Ok(open_to_others(&m, st.st_gid, super::euid(), egid))
}

impl OutDir {
    /// Opens the existing directory `path` and checks that nobody else may plant entries in
    /// it. The path is walked a component at a time, each directory opened through the last
    /// one's fd; a symbolic link on the way is followed only where it lies in a directory
    /// nobody else may write (so it was put there by root or this user), never in /tmp.
    pub fn open(path: &Path) -> io::Result<OutDir> {
        let shown = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = walk(None, shown, 0)?;
        OutDir::checked(fd, shown.to_path_buf())
    }

    /// Opens directory `path`, creating it and its missing parents with `mode`, each made
    /// under its held, checked parent and opened without following a link.
    pub fn create_all(path: &Path, mode: u32) -> io::Result<OutDir> {
        match OutDir::open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        let parent = OutDir::create_all(path.parent().unwrap_or(Path::new("")), mode)?;
        parent.subdir(name, mode)
    }

    fn checked(fd: OwnedFd, path: PathBuf) -> io::Result<OutDir> {
        if !dir::meta(fd.as_fd())?.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        if let Some(why) = others_may_write(fd.as_fd())? {
            return Err(SysError::OpenToOthers { path, why }.into());
        }
        Ok(OutDir { fd, path })
    }

    /// The directory's path, as named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Directory `name` in this one, made with `mode` if missing, opened without following a
    /// link and checked as [`OutDir::open`] checks.
    pub fn subdir(&self, name: &str, mode: u32) -> io::Result<OutDir> {
        match mkdirat(
            Some(self.fd.as_raw_fd()),
            name,
            Mode::from_bits_truncate(mode),
        ) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let fd = dir::open_path_at(self.fd.as_fd(), name)?;
        OutDir::checked(fd, self.path.join(name))
    }

    /// Entry `name` as `lstat` sees it (a link is not followed); None if there is none.
    pub fn entry(&self, name: &str) -> io::Result<Option<FileMeta>> {
        dir::meta_at(self.fd.as_fd(), name)
    }

    /// Creates file `name` for writing with `mode` (less the umask): `O_CREAT | O_EXCL |
    /// O_NOFOLLOW`, so an existing entry, a link included, is an error (EEXIST).
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        dir::create_file_mode_at(self.fd.as_fd(), name, OFlag::empty(), mode)
    }

    /// Writes file `name` with `mode` (less the umask) through `write`: into a new temp file
    /// beside it, then renamed over `name`, so that whatever was there (a link too) is
    /// replaced, never followed; the temp file is removed when anything fails.
    pub fn write_file(
        &self,
        name: &str,
        mode: u32,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        let (tmp, mut f) = self.temp_file(name, mode)?;
        let written = write(&mut f).and_then(|()| {
            drop(f);
            dir::rename_at(self.fd.as_fd(), &tmp, name)
        });
        if written.is_err() {
            let _ = dir::unlink_at(self.fd.as_fd(), &tmp);
        }
        written
    }

    /// A new temp file `.NAME.RANDOM.tmp` for `name`.
    fn temp_file(&self, name: &str, mode: u32) -> io::Result<(String, File)> {
        for _ in 0..MAX_TEMP_TRIES {
            let suffix: String = std::iter::repeat_with(fastrand::alphanumeric)
                .take(8)
                .collect();
            let tmp = format!(".{name}.{suffix}.tmp");
            match self.create_new(&tmp, mode) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                other => return other.map(|f| (tmp, f)),
            }
        }
        Err(SysError::NamesTaken {
            prefix: format!(".{name}."),
            tries: MAX_TEMP_TRIES,
        }
        .into())
    }

    /// Whether entry `m` is a file this process may open as its own: a regular file (not a
    /// link) of its user with one link; else why not.
    pub fn own_file(m: &FileMeta) -> Result<(), NotOwnFile> {
        match m.kind {
            FileKind::Regular => {}
            FileKind::Symlink => return Err(NotOwnFile::Symlink),
            _ => return Err(NotOwnFile::NotRegular),
        }
        if m.uid != super::euid() {
            return Err(NotOwnFile::Owner {
                owner: m.uid,
                euid: super::euid(),
            });
        }
        if m.nlink != 1 {
            return Err(NotOwnFile::HardLinks { links: m.nlink });
        }
        Ok(())
    }
}

/// Most symbolic links [`walk`] follows in one path, as the kernel's own limit (ELOOP).
const MAX_LINKS: usize = 40;

/// Opens directory `path`, relative to `from` (None: the working directory) unless absolute,
/// a component at a time (see [`OutDir::open`]); `links` counts the links followed so far.
fn walk(from: Option<BorrowedFd>, path: &Path, links: usize) -> io::Result<OwnedFd> {
    use std::path::Component;
    // Path-only fds (O_PATH): a walk needs search permission, as a path lookup does.
    let mut cur = match (path.is_absolute(), from) {
        (true, _) | (false, None) => dir::open_path(if path.is_absolute() {
            Path::new("/")
        } else {
            Path::new(".")
        })?,
        (false, Some(f)) => f.try_clone_to_owned()?,
    };
    let mut shown = PathBuf::new();
    for part in path.components() {
        let name = match part {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
            Component::ParentDir => "..",
            Component::Normal(n) => n
                .to_str()
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?,
        };
        shown.push(name);
        if name == ".." {
            cur = dir::open_path_at(cur.as_fd(), "..")?;
            continue;
        }
        let m = dir::meta_at(cur.as_fd(), name)?
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))?;
        cur = if m.kind == FileKind::Symlink {
            if links >= MAX_LINKS {
                return Err(io::Error::from_raw_os_error(libc::ELOOP));
            }
            if let Some(why) = others_may_write(cur.as_fd())? {
                return Err(SysError::OpenToOthers {
                    path: shown,
                    why: OthersMayWrite::LinkIn(Box::new(why)),
                }
                .into());
            }
            let target = nix::fcntl::readlinkat(Some(cur.as_raw_fd()), name)?;
            walk(Some(cur.as_fd()), Path::new(&target), links + 1)?
        } else {
            dir::open_path_at(cur.as_fd(), name)?
        };
    }
    Ok(cur)
}

impl AsFd for OutDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn directories_others_may_write_are_refused_with_the_reason() {
        let meta = |uid, mode| FileMeta {
            id: dir::DirId { dev: 0, ino: 0 },
            uid,
            mode,
            kind: FileKind::Dir,
            nlink: 2,
        };
        assert_eq!(open_to_others(&meta(0, 0o755), 0, 0, 0), None);
        assert_eq!(open_to_others(&meta(1000, 0o775), 1000, 1000, 1000), None);
        let sticky = open_to_others(&meta(0, 0o1777), 0, 0, 0).unwrap();
        assert_eq!(sticky, OthersMayWrite::Mode { mode: 0o1777 });
        assert_eq!(
            sticky.to_string(),
            "may be written by others (mode 1777, sticky, which keeps others from removing files, not from planting links)"
        );
        let group = open_to_others(&meta(0, 0o775), 50, 0, 0).unwrap();
        assert_eq!(group, OthersMayWrite::Mode { mode: 0o775 });
        assert_eq!(group.to_string(), "may be written by others (mode 0775)");
        let owner = open_to_others(&meta(65534, 0o755), 0, 0, 0).unwrap();
        assert_eq!(owner, OthersMayWrite::Owner { uid: 65534 });
        assert_eq!(owner.to_string(), format!("is owned by {}", who(65534)));
        assert!(owner.to_string().starts_with("is owned by uid 65534"));
        let link = OthersMayWrite::LinkIn(Box::new(group));
        assert_eq!(
            link.to_string(),
            "is a symbolic link in a directory that may be written by others (mode 0775)"
        );
        let e = SysError::OpenToOthers {
            path: "/tmp/x".into(),
            why: link,
        };
        assert_eq!(
            e.to_string(),
            "/tmp/x is a symbolic link in a directory that may be written by others (mode 0775), so another user could plant a link or a file at the names schedlab writes; choose a directory only you (or root) can write"
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = OutDir::open(d.path()).unwrap_err();
        assert!(
            matches!(SysError::of(&e), Some(SysError::OpenToOthers { .. })),
            "{e}"
        );
    }

    #[test]
    fn files_replace_what_is_at_their_name_and_trees_are_made_under_held_parents() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let out = OutDir::create_all(&d.path().join("a/b"), 0o755).unwrap();
        assert!(d.path().join("a/b").is_dir());
        std::os::unix::fs::symlink(&victim, d.path().join("a/b/x.txt")).unwrap();
        out.write_file("x.txt", 0o644, |f| f.write_all(b"new"))
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(d.path().join("a/b/x.txt")).unwrap(),
            "new"
        );
        // A failed write leaves neither the file nor its temp file.
        let e = out
            .write_file("y.txt", 0o644, |_| Err(io::Error::other("no")))
            .unwrap_err();
        assert_eq!(e.to_string(), "no");
        let left: Vec<_> = std::fs::read_dir(d.path().join("a/b")).unwrap().collect();
        assert_eq!(left.len(), 1);
        // A link where a subdirectory goes is not followed.
        std::os::unix::fs::symlink(d.path(), d.path().join("a/b/sub")).unwrap();
        assert!(out.subdir("sub", 0o755).is_err());
        let e = out.create_new("x.txt", 0o644).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    }

    #[test]
    fn a_link_is_followed_only_from_a_directory_nobody_else_may_write() {
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let real = d.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink("real", d.path().join("mine")).unwrap();
        let out = OutDir::open(&d.path().join("mine")).unwrap();
        out.write_file("f", 0o644, |f| f.write_all(b"1")).unwrap();
        assert!(real.join("f").exists());
        // The same link in a directory others may write: refused, whatever it leads to.
        let shared = d.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::os::unix::fs::symlink(&real, shared.join("theirs")).unwrap();
        let e = OutDir::open(&shared.join("theirs")).unwrap_err();
        assert!(
            e.to_string().contains("is a symbolic link in a directory"),
            "{e}"
        );
        assert!(OutDir::create_all(&shared.join("theirs/sub"), 0o755).is_err());
        assert!(!real.join("sub").exists());
        // `..` walks up, as a path lookup does.
        let up = OutDir::open(&d.path().join("real/../mine")).unwrap();
        assert_eq!(up.entry("f").unwrap().unwrap().kind, FileKind::Regular);
    }
}
