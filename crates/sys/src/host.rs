//! Facts about the host and this process's limits: uname, rlimits, the filesystem type of a
//! path, and reading small /proc files without allocating.

use nix::fcntl::{open, OFlag};
use nix::sys::stat::Mode;
use std::ffi::CStr;
use std::io;
use std::path::Path;

pub use nix::sys::resource::Resource;

/// The `uname` fields schedlab records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uname {
    /// Kernel release (`6.8.0-45-generic`).
    pub release: String,
    /// Kernel version string (build number and date).
    pub version: String,
    /// Hardware name (`x86_64`).
    pub machine: String,
    /// Host name.
    pub nodename: String,
}

/// An exclusive advisory lock (`flock`) on an open file, released when dropped.
#[derive(Debug)]
pub struct FileLock(#[allow(dead_code)] nix::fcntl::Flock<std::fs::File>);

/// Takes an exclusive `flock` on `file`, waiting while another process holds it.
pub fn lock_exclusive(file: std::fs::File) -> io::Result<FileLock> {
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map(FileLock)
        .map_err(|(_, e)| io::Error::from(e))
}

/// The kernel's `uname` fields (invalid UTF-8 replaced); None if the call fails.
pub fn uname() -> Option<Uname> {
    let u = nix::sys::utsname::uname().ok()?;
    let text = |s: &std::ffi::OsStr| s.to_string_lossy().into_owned();
    Some(Uname {
        release: text(u.release()),
        version: text(u.version()),
        machine: text(u.machine()),
        nodename: text(u.nodename()),
    })
}

/// Soft limit of `resource`; `None` when unlimited or unreadable.
pub fn soft_rlimit(resource: Resource) -> Option<u64> {
    nix::sys::resource::getrlimit(resource)
        .ok()
        .and_then(|(soft, _)| (soft != libc::RLIM_INFINITY).then_some(soft))
}

/// Sets both limits of `resource` (for RLIMIT_RTTIME: microseconds of CPU an RT task may use
/// without blocking).
pub fn set_rlimit(resource: Resource, soft: u64, hard: u64) -> io::Result<()> {
    nix::sys::resource::setrlimit(resource, soft, hard).map_err(io::Error::from)
}

/// Whether `path` lies on a tmpfs (memory-backed); false if it cannot be examined.
pub fn is_tmpfs(path: &Path) -> bool {
    nix::sys::statfs::statfs(path)
        .is_ok_and(|st| st.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
}

/// Reads a small file into `buf` and returns its text, with plain syscalls and no allocation
/// (for tasks at the end of their measured work); None if it cannot be opened or is not UTF-8.
pub fn read_small<'a>(path: &CStr, buf: &'a mut [u8]) -> Option<&'a str> {
    let fd = open(path, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty()).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match nix::unistd::read(fd, &mut buf[len..]) {
            Ok(n) if n > 0 => len += n,
            _ => break,
        }
    }
    let _ = nix::unistd::close(fd);
    std::str::from_utf8(&buf[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_small_reads_proc_files_without_allocating() {
        let mut buf = [0u8; 256];
        let text = read_small(c"/proc/self/schedstat", &mut buf).unwrap();
        // Three numbers: run time, run-queue wait, timeslices; the run time never goes back
        // in a plain read taken afterwards.
        let first =
            |t: &str| -> Vec<u64> { t.split_whitespace().map(|w| w.parse().unwrap()).collect() };
        let small = first(text);
        assert_eq!(small.len(), 3, "{text}");
        let plain = first(&std::fs::read_to_string("/proc/self/schedstat").unwrap());
        assert!(
            small[0] > 0 && small[0] <= plain[0],
            "{small:?} then {plain:?}"
        );
        assert!(read_small(c"/nonexistent/file", &mut buf).is_none());
    }

    #[test]
    fn read_small_fills_at_most_the_buffer() {
        let mut buf = [0u8; 8];
        let text = read_small(c"/proc/self/status", &mut buf).unwrap();
        assert_eq!(text, "Name:\tsc");
    }

    #[test]
    fn uname_agrees_with_proc() {
        // The same facts, as /proc/sys/kernel publishes them.
        let u = uname().unwrap();
        let read = |f: &str| std::fs::read_to_string(f).unwrap().trim().to_string();
        assert_eq!(u.release, read("/proc/sys/kernel/osrelease"));
        assert_eq!(u.nodename, read("/proc/sys/kernel/hostname"));
        assert_eq!(u.version, read("/proc/sys/kernel/version"));
        assert_eq!(u.machine, std::env::consts::ARCH);
    }

    #[test]
    fn soft_rlimit_agrees_with_proc_limits() {
        // /proc/self/limits prints "Max realtime priority  <soft>  <hard>" (or "unlimited").
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max realtime priority"))
            .unwrap();
        let soft = line["Max realtime priority".len()..]
            .split_whitespace()
            .next()
            .unwrap();
        let expected = if soft == "unlimited" {
            None
        } else {
            Some(soft.parse::<u64>().unwrap())
        };
        assert_eq!(soft_rlimit(Resource::RLIMIT_RTPRIO), expected);
    }

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let first = lock_exclusive(f.reopen().unwrap()).unwrap();
        // A non-blocking try from another open file description fails while it is held.
        let again = nix::fcntl::Flock::lock(
            f.reopen().unwrap(),
            nix::fcntl::FlockArg::LockExclusiveNonblock,
        );
        assert!(again.is_err());
        drop(first);
        assert!(lock_exclusive(f.reopen().unwrap()).is_ok());
    }

    #[test]
    fn tmpfs_is_recognised() {
        if is_tmpfs(Path::new("/dev/shm")) {
            assert!(!is_tmpfs(Path::new("/proc")));
        }
        assert!(!is_tmpfs(Path::new("/nonexistent/path")));
        // /proc/mounts says which mount points are tmpfs.
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
        if let Some(dir) = mounts
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|f| f.len() > 2 && f[2] == "tmpfs" && !f[1].contains('\\'))
            .map(|f| f[1].to_string())
        {
            assert!(is_tmpfs(Path::new(&dir)), "{dir}");
        }
    }
}
