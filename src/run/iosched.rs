//! Block-device I/O scheduler: find the device under a directory, switch its scheduler, restore it.
//!
//! The original scheduler is restored when the guard is dropped: at the normal end of a run, on
//! an error (the `?` that ends the run drops it), after Ctrl-C or SIGTERM (the run loop stops and
//! returns). Only SIGKILL can leave a changed scheduler behind.

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
pub fn read(device: &str) -> Result<IoScheds, String> {
    let path = scheduler_path(device);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {}: {e}; name a block device from /sys/block with settings.device",
            path.display()
        )
    })?;
    parse_scheduler(&text).ok_or_else(|| {
        format!(
            "{} has no scheduler in brackets: '{}'",
            path.display(),
            text.trim()
        )
    })
}

/// The whole-disk block device holding `dir` (e.g. `vda` for a partition `vda1`).
pub fn device_for(dir: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot stat {}: {e}", dir.display()))?;
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).map_err(|_| {
        format!(
            "{} is not on a block device (device {major}:{minor}, e.g. tmpfs or overlay); set settings.device to a disk from /sys/block",
            dir.display()
        )
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
        return Err(format!(
            "block device {name} (under {}) has no I/O scheduler file; set settings.device",
            dir.display()
        ));
    }
    Ok(name)
}

/// Holds a device's original scheduler and puts it back when dropped.
#[derive(Debug)]
pub struct IoSchedGuard {
    device: String,
    original: String,
    current: String,
}

impl IoSchedGuard {
    /// Remembers the scheduler now in force on `device`.
    pub fn new(device: &str) -> Result<IoSchedGuard, String> {
        let s = read(device)?;
        Ok(IoSchedGuard {
            device: device.to_string(),
            original: s.current.clone(),
            current: s.current,
        })
    }

    /// The device.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The scheduler in force before schedlab changed anything.
    pub fn original(&self) -> &str {
        &self.original
    }

    /// Switches to `name` and reads it back; the error names the schedulers on offer.
    pub fn set(&mut self, name: &str) -> Result<(), String> {
        if self.current == name {
            return Ok(());
        }
        let offered = read(&self.device)?;
        if !offered.available.iter().any(|a| a == name) {
            return Err(format!(
                "device {} does not offer the I/O scheduler '{name}' (offered: {}); load its module (modprobe) or drop it from io_schedulers",
                self.device,
                offered.available.join(", ")
            ));
        }
        std::fs::write(scheduler_path(&self.device), name).map_err(|e| {
            format!(
                "cannot set the I/O scheduler of {} to {name}: {e} (needs root)",
                self.device
            )
        })?;
        let now = read(&self.device)?.current;
        if now != name {
            return Err(format!(
                "the I/O scheduler of {} reads back as {now} after setting {name}",
                self.device
            ));
        }
        self.current = now;
        Ok(())
    }
}

impl Drop for IoSchedGuard {
    fn drop(&mut self) {
        if self.current != self.original {
            if let Err(e) = std::fs::write(scheduler_path(&self.device), &self.original) {
                eprintln!(
                    "error: could not restore the I/O scheduler of {} to {}: {e}; restore it by hand: echo {} > {}",
                    self.device,
                    self.original,
                    self.original,
                    scheduler_path(&self.device).display()
                );
            }
        }
    }
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
            assert!(e.contains("settings.device"), "{e}");
        }
    }

    #[test]
    fn the_guard_restores_the_original_scheduler() {
        if !crate::sys::is_root() {
            eprintln!("skipping: switching I/O schedulers needs root");
            return;
        }
        let Ok(dev) = device_for(Path::new("/var/tmp")) else {
            eprintln!("skipping: /var/tmp is not on a block device here");
            return;
        };
        let before = read(&dev).unwrap();
        let other = before
            .available
            .iter()
            .find(|a| **a != before.current)
            .cloned();
        {
            let mut g = IoSchedGuard::new(&dev).unwrap();
            if let Some(o) = &other {
                g.set(o).unwrap();
                assert_eq!(read(&dev).unwrap().current, *o);
            }
            let e = g.set("no-such-scheduler").unwrap_err();
            assert!(e.contains("offered"), "{e}");
        }
        assert_eq!(read(&dev).unwrap().current, before.current);
    }
}
