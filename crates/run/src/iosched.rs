//! Block-device I/O scheduler: find the device under a directory and read its schedulers.
//!
//! Switching and restoring it is one kind of kernel knob ([`super::knobs`]): set before each
//! trial and read back, restored at the end of the run however it ends, and journaled before
//! any change so that the next schedlab command restores it even after a SIGKILL.

use crate::error::{KernelError, SettingError, Unavailable};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The schedulers a device offers and the one in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoScheds {
    /// Every scheduler the device offers.
    pub available: Vec<String>,
    /// The one in force (shown in brackets by the kernel).
    pub current: String,
}

/// Parses `/sys/block/DEV/queue/scheduler`, e.g. `none [mq-deadline] kyber bfq`.
pub fn parse_scheduler(text: &str) -> Option<IoScheds> {
    let mut current = None;
    let mut available = Vec::new();
    for word in text.split_whitespace() {
        let name = word.trim_start_matches('[').trim_end_matches(']');
        if word.starts_with('[') {
            current = Some(name.to_string());
        }
        available.push(name.to_string());
    }
    Some(IoScheds {
        current: current?,
        available,
    })
}

fn scheduler_path(device: &str) -> PathBuf {
    Path::new("/sys/block").join(device).join("queue/scheduler")
}

/// Reads the schedulers of `device` (e.g. `vda`).
pub fn read(device: &str) -> Result<IoScheds, KernelError> {
    let path = scheduler_path(device);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        KernelError::Unavailable(Box::new(Unavailable::SchedulerUnreadable {
            path: path.clone(),
            cause: e.into(),
        }))
    })?;
    parse_scheduler(&text).ok_or_else(|| {
        SettingError::NoCurrentScheduler {
            text: text.trim().to_string(),
            path,
        }
        .into()
    })
}

/// The whole-disk block device holding `dir` (e.g. `vda` for a partition `vda1`).
pub fn device_for(dir: &Path) -> Result<String, KernelError> {
    device_of(dir).map_err(|u| KernelError::Unavailable(Box::new(u)))
}

fn device_of(dir: &Path) -> Result<String, Unavailable> {
    let meta = std::fs::metadata(dir).map_err(|e| Unavailable::Stat {
        dir: dir.to_path_buf(),
        cause: e.into(),
    })?;
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).map_err(|_| Unavailable::NotBlock {
        dir: dir.to_path_buf(),
        major,
        minor,
    })?;
    // A partition's directory sits inside its disk's directory.
    let disk = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    let name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !scheduler_path(&name).exists() {
        return Err(Unavailable::NoSchedulerFile {
            device: name,
            dir: dir.to_path_buf(),
        });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bracketed_scheduler_is_the_current_one() {
        let s = parse_scheduler("none [mq-deadline] kyber bfq \n").unwrap();
        assert_eq!(s.current, "mq-deadline");
        assert_eq!(s.available, vec!["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(parse_scheduler("[none] \n").unwrap().current, "none");
        assert!(parse_scheduler("none kyber").is_none());
    }

    #[test]
    fn a_tmpfs_directory_has_no_block_device() {
        if Path::new("/dev/shm").exists() {
            let e = device_for(Path::new("/dev/shm")).unwrap_err();
            assert!(
                matches!(&e, KernelError::Unavailable(u) if matches!(**u, Unavailable::NotBlock { .. }))
                    && e.to_string().contains("settings.device"),
                "{e}"
            );
        }
    }
}
