//! The file operations the layer does on cgroup file systems, behind a trait so that the same
//! code runs against the real `/sys/fs/cgroup` ([`RealFs`]) and a recorded tree
//! ([`crate::memfs::MemFs`]).
//!
//! Paths come from `/proc/self/mountinfo` (the kernel's own mount points) joined with names the
//! layer checked ([`crate::value::Name`]); a cgroup file system has no symbolic links, so no
//! path below a mount point can lead elsewhere.

use std::fmt::Debug;
use std::io::{self, Write};
use std::path::Path;

/// What the layer needs from a cgroup file system.
pub trait CgroupFs: Debug + Send + Sync {
    /// A file's content.
    fn read(&self, path: &Path) -> io::Result<String>;
    /// Write `value` to a file in one `write()` (cgroup files take one value per write).
    fn write(&self, path: &Path, value: &str) -> io::Result<()>;
    /// Create a directory; fails with `AlreadyExists` if it exists.
    fn mkdir(&self, path: &Path) -> io::Result<()>;
    /// Remove an (empty) cgroup directory.
    fn rmdir(&self, path: &Path) -> io::Result<()>;
    /// Whether a file or directory exists.
    fn exists(&self, path: &Path) -> bool;
    /// The names of the sub-directories (child cgroups) of a directory.
    fn subdirs(&self, path: &Path) -> io::Result<Vec<String>>;
}

/// The machine's real file systems.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl CgroupFs for RealFs {
    fn read(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn write(&self, path: &Path, value: &str) -> io::Result<()> {
        let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
        // One write() call: the kernel parses each write as one value.
        let n = f.write(value.as_bytes())?;
        if n != value.len() {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short write to a cgroup file",
            ));
        }
        Ok(())
    }

    fn mkdir(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir(path)
    }

    fn rmdir(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_dir(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.symlink_metadata().is_ok()
    }

    fn subdirs(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(path)? {
            let e = e?;
            if e.file_type()?.is_dir() {
                out.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        out.sort();
        Ok(out)
    }
}
