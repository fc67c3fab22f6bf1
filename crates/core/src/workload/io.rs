//! I/O work: synchronous block copy (studies 000/002) and /dev/urandom -> /dev/null (study 001).

use crate::CoreError;
use nix::fcntl::OFlag;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What one I/O operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoMode {
    /// Read one block from an input file and write it to the task's output file, both O_SYNC;
    /// the input is rewound at its end.
    #[default]
    SyncCopy,
    /// Read one block from /dev/urandom and write it to /dev/null.
    Urandom,
}

impl IoMode {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::SyncCopy => "sync-copy",
            IoMode::Urandom => "urandom",
        }
    }
}

impl FromStr for IoMode {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sync-copy" | "sync_copy" | "copy" => Ok(IoMode::SyncCopy),
            "urandom" => Ok(IoMode::Urandom),
            _ => Err(CoreError::unknown("io mode", s, "sync-copy, urandom")),
        }
    }
}

/// Name of the shared input file in a trial directory.
pub const INPUT_FILE: &str = "input";

/// Name of task `index`'s output file in a trial directory.
pub fn output_file(index: usize) -> String {
    format!("out-{index}")
}

/// The open files of one task's I/O, prepared before its measured region.
pub struct IoFiles {
    input: File,
    output: File,
    buf: Vec<u8>,
}

impl IoFiles {
    /// Opens the files for `mode`: for `SyncCopy`, the input and task `index`'s output in the
    /// trial directory `dir` (held open; the output is created, never reused, and no link is
    /// followed).
    pub fn open(
        mode: IoMode,
        dir: Option<BorrowedFd>,
        index: usize,
        block_bytes: usize,
    ) -> io::Result<IoFiles> {
        let (input, output) = match (mode, dir) {
            (IoMode::SyncCopy, Some(dir)) => (
                schedlab_sys::dir::open_file_at(dir, INPUT_FILE, OFlag::O_SYNC)?,
                schedlab_sys::dir::create_file_at(dir, &output_file(index), OFlag::O_SYNC)?,
            ),
            (IoMode::SyncCopy, None) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "sync-copy I/O needs a trial directory",
                ))
            }
            (IoMode::Urandom, _) => (
                File::open("/dev/urandom")?,
                OpenOptions::new().write(true).open("/dev/null")?,
            ),
        };
        Ok(IoFiles {
            input,
            output,
            buf: vec![0u8; block_bytes.max(1)],
        })
    }

    /// One I/O operation: read a block, write it out. Rewinds the input at its end.
    #[inline]
    pub fn op(&mut self) -> io::Result<()> {
        let mut n = self.input.read(&mut self.buf)?;
        if n == 0 {
            self.input.seek(SeekFrom::Start(0))?;
            n = self.input.read(&mut self.buf)?;
        }
        self.output
            .write_all(&self.buf[..n.max(1).min(self.buf.len())])
    }
}

/// Where another process finds a trial directory again: its path, and the identity it was
/// created with (a directory moved away and replaced is refused).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialDirRef {
    /// The directory's path (for messages and `SCHEDLAB_TRIAL_DIR`).
    pub path: PathBuf,
    /// Device and inode it was created as.
    pub id: schedlab_sys::dir::DirId,
}

impl TrialDirRef {
    /// Opens the directory, if it still is the one created ([`schedlab_sys::dir::open_dir_checked`]).
    pub fn open(&self) -> io::Result<OwnedFd> {
        schedlab_sys::dir::open_dir_checked(&self.path, self.id)
    }
}

/// The prefix of the trial directories of process `pid`: `schedlab-PID-`.
pub fn dir_prefix(pid: u32) -> String {
    format!("schedlab-{pid}-")
}

/// A per-trial directory for I/O files, removed when dropped.
///
/// Made for shared directories such as /var/tmp: a new directory with a random name
/// (`schedlab-PID-TAG.XXXXXXXXXX`) and mode 0700, held open, every file in it created with
/// `O_EXCL | O_NOFOLLOW` through that fd, and removed through it without following links
/// (see [`schedlab_sys::dir`]).
pub struct TrialDir {
    parent: OwnedFd,
    name: String,
    path: PathBuf,
    fd: OwnedFd,
}

impl TrialDir {
    /// Creates `base/schedlab-PID-TAG.RANDOM` and an input file of `input_bytes` pseudo-random
    /// bytes (at least 1), written in chunks of at most 1 MiB; refuses an input larger than
    /// the free space under `base` rather than filling the disk.
    pub fn create(base: &Path, tag: &str, input_bytes: u64) -> io::Result<TrialDir> {
        if let Some(free) = schedlab_sys::dir::free_bytes(base)?.filter(|&free| input_bytes > free)
        {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("an input file of {input_bytes} bytes does not fit in the {free} bytes free under {}", base.display()),
            ));
        }
        let parent = schedlab_sys::dir::open_dir(base)?;
        let prefix = format!("{}{tag}.", dir_prefix(std::process::id()));
        let (name, fd) = schedlab_sys::dir::make_private_dir(parent.as_fd(), &prefix)?;
        let dir = TrialDir {
            path: base.join(&name),
            parent,
            name,
            fd,
        };
        let mut input = schedlab_sys::dir::create_file_at(dir.fd(), INPUT_FILE, OFlag::empty())?;
        let mut chunk = vec![0u8; input_bytes.clamp(1, 1 << 20) as usize];
        let mut left = input_bytes.max(1);
        let mut x: u32 = 0x9E37_79B9;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            for b in chunk[..n].iter_mut() {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                *b = x as u8;
            }
            input.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        Ok(dir)
    }

    /// The directory's path (for messages and programs; files are reached through [`fd`]).
    ///
    /// [`fd`]: TrialDir::fd
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory, held open.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// How another process finds this directory again.
    pub fn reference(&self) -> io::Result<TrialDirRef> {
        Ok(TrialDirRef {
            path: self.path.clone(),
            id: schedlab_sys::dir::meta(self.fd())?.id,
        })
    }

    /// Removes file `name` from the directory.
    pub fn remove_file(&self, name: &str) -> io::Result<()> {
        schedlab_sys::dir::unlink_at(self.fd(), name)
    }
}

impl Drop for TrialDir {
    fn drop(&mut self) {
        let _ = schedlab_sys::dir::remove_dir_at(self.parent.as_fd(), &self.name, self.fd.as_fd());
    }
}

/// Why a directory where other users may rename or remove entries is a poor I/O directory,
/// or None when it is fine: it belongs to another user than root and this process, or it is
/// group- or world-writable without the sticky bit (/var/tmp and /tmp have it). Trial files
/// stay safe there (a private 0700 directory, reached only through its fd), but such users can
/// move or delete trial directories and so make trials fail.
pub fn shared_dir_warning(path: &Path) -> Option<crate::Warning> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let me = schedlab_sys::euid();
    let owner_uid = (md.uid() != 0 && md.uid() != me).then_some(md.uid());
    let open = md.mode() & 0o022 != 0 && md.mode() & 0o1000 == 0;
    (owner_uid.is_some() || open).then(|| crate::Warning::IoDirShared {
        dir: path.display().to_string(),
        owner_uid,
        mode: md.mode() & 0o7777,
    })
}

/// Whether `path` lies on a tmpfs (memory-backed, so O_SYNC does not reach a disk).
pub fn is_tmpfs(path: &Path) -> bool {
    schedlab_sys::is_tmpfs(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_copy_writes_blocks_and_rewinds_the_input() {
        let base = tempfile::tempdir().unwrap();
        let dir = TrialDir::create(base.path(), "t", 3000).unwrap();
        let mut f = IoFiles::open(IoMode::SyncCopy, Some(dir.fd()), 0, 1024).unwrap();
        for _ in 0..5 {
            f.op().unwrap();
        }
        // 1024 + 1024 + 952, then rewound: 1024 + 1024.
        let len = std::fs::metadata(dir.path().join("out-0")).unwrap().len();
        assert_eq!(len, 1024 * 4 + 952);
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists(), "the trial directory is removed on drop");
    }

    #[test]
    fn an_input_larger_than_the_free_space_is_refused_before_writing() {
        let base = tempfile::tempdir().unwrap();
        let e = TrialDir::create(base.path(), "t", u64::MAX).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull, "{e}");
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_input_is_written_in_chunks_with_the_same_bytes() {
        let base = tempfile::tempdir().unwrap();
        let n = (1 << 20) * 2 + 5;
        let dir = TrialDir::create(base.path(), "t", n).unwrap();
        let data = std::fs::read(dir.path().join(INPUT_FILE)).unwrap();
        assert_eq!(data.len() as u64, n);
        // The xorshift32 sequence from its seed, by hand: one stream across the chunks.
        let mut x: u32 = 0x9E37_79B9;
        let expected: Vec<u8> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert!(
            data == expected,
            "the input differs from the xorshift stream"
        );
    }

    #[test]
    fn a_trial_directory_is_private_and_named_after_its_process() {
        let base = tempfile::tempdir().unwrap();
        let dir = TrialDir::create(base.path(), "r1-t2", 10).unwrap();
        let name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let prefix = format!("schedlab-{}-r1-t2.", std::process::id());
        assert!(name.starts_with(&prefix), "{name}");
        let md = std::fs::symlink_metadata(dir.path()).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert!(md.is_dir());
        assert_eq!(md.mode() & 0o7777, 0o700, "mode {:o}", md.mode());
        let input = std::fs::metadata(dir.path().join(INPUT_FILE)).unwrap();
        assert_eq!(input.mode() & 0o777, 0o600);
    }

    #[test]
    fn an_existing_path_is_never_reused() {
        let base = tempfile::tempdir().unwrap();
        let victim = base.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        // The name the next directory would get, from a seeded generator; plant it first, as
        // a directory full of links and as a link.
        fastrand::seed(7);
        let first = TrialDir::create(base.path(), "calibration", 10).unwrap();
        let taken = first.path().to_path_buf();
        drop(first);
        std::fs::create_dir(&taken).unwrap();
        std::os::unix::fs::symlink(&victim, taken.join(INPUT_FILE)).unwrap();
        std::os::unix::fs::symlink(&victim, taken.join("out-0")).unwrap();
        fastrand::seed(7);
        let dir = TrialDir::create(base.path(), "calibration", 4096).unwrap();
        assert_ne!(dir.path(), taken, "the existing directory was reused");
        IoFiles::open(IoMode::SyncCopy, Some(dir.fd()), 0, 512)
            .unwrap()
            .op()
            .unwrap();
        drop(dir);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(
            taken.join("out-0").is_symlink(),
            "someone else's files are left alone"
        );
    }

    #[test]
    fn files_in_a_trial_directory_refuse_a_planted_link() {
        let base = tempfile::tempdir().unwrap();
        let victim = base.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let dir = TrialDir::create(base.path(), "t", 100).unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("out-3")).unwrap();
        let e = IoFiles::open(IoMode::SyncCopy, Some(dir.fd()), 3, 64)
            .err()
            .unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        std::fs::remove_file(dir.path().join(INPUT_FILE)).unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(INPUT_FILE)).unwrap();
        let e = IoFiles::open(IoMode::SyncCopy, Some(dir.fd()), 0, 64)
            .err()
            .unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        drop(dir);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn a_trial_directory_moved_and_replaced_by_a_link_redirects_no_write() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let dir = TrialDir::create(base.path(), "t", 100).unwrap();
        let found = dir.reference().unwrap();
        let moved = base.path().join("moved");
        std::fs::rename(dir.path(), &moved).unwrap();
        std::os::unix::fs::symlink(&target, dir.path()).unwrap();
        // The task side: by fd, the files land in the moved directory.
        IoFiles::open(IoMode::SyncCopy, Some(dir.fd()), 0, 64)
            .unwrap()
            .op()
            .unwrap();
        assert!(moved.join("out-0").exists());
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
        // Another process looking for it by path refuses the link.
        assert!(found.open().is_err());
        let link = dir.path().to_path_buf();
        drop(dir);
        assert!(link.is_symlink(), "the planted link is not ours to remove");
        assert_eq!(std::fs::read_dir(&moved).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }

    #[test]
    fn urandom_mode_needs_no_files() {
        let mut f = IoFiles::open(IoMode::Urandom, None, 0, 256).unwrap();
        f.op().unwrap();
        assert!(IoFiles::open(IoMode::SyncCopy, None, 0, 256).is_err());
    }

    #[test]
    fn an_io_dir_others_may_rename_in_is_named() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let set = |mode: u32| {
            std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(0o700);
        assert_eq!(shared_dir_warning(base.path()), None);
        set(0o1777);
        assert_eq!(
            shared_dir_warning(base.path()),
            None,
            "sticky, like /var/tmp"
        );
        assert_eq!(shared_dir_warning(Path::new("/var/tmp")), None);
        set(0o777);
        let w = shared_dir_warning(base.path()).unwrap().to_string();
        assert!(w.contains("without the sticky bit (mode 0777)"), "{w}");
        set(0o770);
        assert!(shared_dir_warning(base.path()).is_some(), "group-writable");
        set(0o700);
        if schedlab_sys::is_root()
            && std::os::unix::fs::chown(base.path(), Some(65534), None).is_ok()
        {
            let w = shared_dir_warning(base.path()).unwrap();
            assert_eq!(w.code(), "io_dir_shared");
            assert!(w.to_string().contains("belongs to uid 65534"), "{w}");
        }
    }

    #[test]
    fn dev_shm_is_detected_as_tmpfs() {
        if Path::new("/dev/shm").exists() {
            assert!(is_tmpfs(Path::new("/dev/shm")));
        }
        assert!(!is_tmpfs(Path::new("/proc")));
    }
}
