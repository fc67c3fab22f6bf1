//! I/O work: synchronous block copy (studies 000/002) and /dev/urandom -> /dev/null (study 001).

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sync-copy" | "sync_copy" | "copy" => Ok(IoMode::SyncCopy),
            "urandom" => Ok(IoMode::Urandom),
            _ => Err(format!(
                "unknown io mode '{s}'; accepted: sync-copy, urandom"
            )),
        }
    }
}

/// The open files of one task's I/O, prepared before its measured region.
pub struct IoFiles {
    input: File,
    output: File,
    buf: Vec<u8>,
}

impl IoFiles {
    /// Opens the files for `mode` (input and output paths are used by `SyncCopy` only).
    pub fn open(
        mode: IoMode,
        input: &Path,
        output: &Path,
        block_bytes: usize,
    ) -> io::Result<IoFiles> {
        let (input, output) = match mode {
            IoMode::SyncCopy => (
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_SYNC)
                    .open(input)?,
                OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(libc::O_SYNC)
                    .open(output)?,
            ),
            IoMode::Urandom => (
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

/// A per-trial directory for I/O files, removed when dropped.
pub struct TrialDir {
    path: PathBuf,
}

impl TrialDir {
    /// Creates `base/schedlab-PID-TAG` and an input file of `input_bytes` pseudo-random bytes.
    pub fn create(base: &Path, tag: &str, input_bytes: u64) -> io::Result<TrialDir> {
        let path = base.join(format!("schedlab-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        let dir = TrialDir { path };
        let mut data = vec![0u8; input_bytes.max(1) as usize];
        let mut x: u32 = 0x9E37_79B9;
        for b in data.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        std::fs::write(dir.input(), data)?;
        Ok(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The shared input file.
    pub fn input(&self) -> PathBuf {
        self.path.join("input")
    }

    /// The output file of task `index`.
    pub fn output(&self, index: usize) -> PathBuf {
        self.path.join(format!("out-{index}"))
    }
}

impl Drop for TrialDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Whether `path` lies on a tmpfs (memory-backed, so O_SYNC does not reach a disk).
pub fn is_tmpfs(path: &Path) -> bool {
    crate::sys::is_tmpfs(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_copy_writes_blocks_and_rewinds_the_input() {
        let base = tempfile::tempdir().unwrap();
        let dir = TrialDir::create(base.path(), "t", 3000).unwrap();
        let mut f = IoFiles::open(IoMode::SyncCopy, &dir.input(), &dir.output(0), 1024).unwrap();
        for _ in 0..5 {
            f.op().unwrap();
        }
        // 1024 + 1024 + 952, then rewound: 1024 + 1024.
        let len = std::fs::metadata(dir.output(0)).unwrap().len();
        assert_eq!(len, 1024 * 4 + 952);
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists(), "the trial directory is removed on drop");
    }

    #[test]
    fn urandom_mode_needs_no_files() {
        let mut f = IoFiles::open(IoMode::Urandom, Path::new("/x"), Path::new("/y"), 256).unwrap();
        f.op().unwrap();
    }

    #[test]
    fn dev_shm_is_detected_as_tmpfs() {
        if Path::new("/dev/shm").exists() {
            assert!(is_tmpfs(Path::new("/dev/shm")));
        }
        assert!(!is_tmpfs(Path::new("/proc")));
    }
}
