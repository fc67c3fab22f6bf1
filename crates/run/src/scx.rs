//! Running cells under a BPF scheduler (sched_ext): start its command, wait until the kernel
//! reports it enabled under the expected ops name, and after the cell stop it and check that
//! the kernel is back on its fair class. The sysfs directory is a parameter, so the state
//! machine is tested against a fake tree.
//!
//! States: fair (no scheduler of ours) -> starting (process spawned, waiting for `state` =
//! `enabled` and `root/ops` = the expected name) -> running -> stopping (SIGTERM to its process
//! group, SIGKILL after the stop timeout, then waiting for `state` = `disabled`) -> fair.
//! A scheduler process is spawned with `std::process::Command` (fork and exec at once, no code
//! of ours in between), in its own process group so that a terminal's Ctrl-C does not reach it.
//! Its output goes to a file in a private directory of the temp directory ([`Log`]).

use crate::error::{KernelError, ScxError};
use nix::fcntl::OFlag;
use schedlab_core::records::ScxCommand;
use schedlab_machine::sched_ext::SchedExt;
use schedlab_sys::dir;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How often the state files are polled.
const POLL: Duration = Duration::from_millis(10);

/// A BPF scheduler of ours, running.
#[derive(Debug)]
struct Running {
    child: Child,
    command: ScxCommand,
    /// Its stdout and stderr.
    log: Log,
}

/// Where a scheduler's output goes. The temp directory is shared (/tmp) and schedlab runs as
/// root, so the file is not put there by a name others can guess: it is created with
/// `O_EXCL | O_NOFOLLOW` in a private directory (random name, mode 0700) held open, and read
/// and removed through that directory's fd, so a link planted anywhere redirects nothing.
#[derive(Debug)]
struct Log {
    parent: OwnedFd,
    name: String,
    dir: OwnedFd,
}

/// The file's name in its private directory.
const LOG_FILE: &str = "output.log";

impl Log {
    /// A new, empty log and the file to write it to.
    fn create() -> std::io::Result<(Log, std::fs::File)> {
        let parent = dir::open_dir(&std::env::temp_dir())?;
        let prefix = format!("schedlab-scx-{}-", std::process::id());
        let (name, fd) = dir::make_private_dir(parent.as_fd(), &prefix)?;
        let log = Log {
            parent,
            name,
            dir: fd,
        };
        let file = dir::create_file_at(log.dir.as_fd(), LOG_FILE, OFlag::empty())?;
        Ok((log, file))
    }

    /// The last `n` non-empty lines of the log, joined with " | ".
    fn last_lines(&self, n: usize) -> Option<String> {
        let mut text = String::new();
        dir::open_file_at(self.dir.as_fd(), LOG_FILE, OFlag::empty())
            .ok()?
            .take(1 << 20)
            .read_to_string(&mut text)
            .ok()?;
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &lines[lines.len().saturating_sub(n)..];
        (!tail.is_empty()).then(|| tail.join(" | "))
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        let _ = dir::remove_dir_at(self.parent.as_fd(), &self.name, self.dir.as_fd());
    }
}

/// The BPF scheduler state machine over one sched_ext directory.
#[derive(Debug)]
pub struct Scx {
    root: PathBuf,
    start_timeout: Duration,
    stop_timeout: Duration,
    running: Option<Running>,
}

impl Scx {
    /// A state machine over `root` (normally `/sys/kernel/sched_ext`).
    pub fn new(root: &Path, start_timeout: Duration, stop_timeout: Duration) -> Scx {
        Scx {
            root: root.to_path_buf(),
            start_timeout,
            stop_timeout,
            running: None,
        }
    }

    /// What the kernel says now.
    pub fn state(&self) -> SchedExt {
        SchedExt::read(&self.root)
    }

    /// The scheduler of ours that runs, if any.
    pub fn running(&self) -> Option<&ScxCommand> {
        self.running.as_ref().map(|r| &r.command)
    }

    /// The process id of the scheduler of ours that runs, if any.
    pub fn pid(&self) -> Option<i32> {
        self.running.as_ref().map(|r| r.child.id() as i32)
    }

    /// Starts `command` and waits until the kernel reports it enabled; returns the ops name
    /// the kernel shows. `on_spawn` is told the process id as soon as it exists (to journal it).
    pub fn start(
        &mut self,
        command: &ScxCommand,
        on_spawn: &mut dyn FnMut(i32),
    ) -> Result<String, KernelError> {
        Ok(self.start_scx(command, on_spawn)?)
    }

    /// Stops the scheduler of ours (SIGTERM to its group, SIGKILL after the stop timeout) and
    /// waits until the kernel is back on its fair class (`state` = `disabled`).
    pub fn stop(&mut self) -> Result<(), ScxError> {
        self.stop_scx()
    }

    fn start_scx(
        &mut self,
        command: &ScxCommand,
        on_spawn: &mut dyn FnMut(i32),
    ) -> Result<String, ScxError> {
        if self.running.is_some() {
            self.stop_scx()?;
        }
        let before = self.state();
        if before.state != "disabled" {
            return Err(match before.ops {
                Some(ops) if before.state == "enabled" => ScxError::AnotherLoaded { ops },
                _ => ScxError::NotDisabled {
                    state: before.state,
                },
            });
        }
        let (log, out) = Log::create().map_err(|e| ScxError::LogDir {
            dir: std::env::temp_dir(),
            cause: e.into(),
        })?;
        let err = out
            .try_clone()
            .map_err(|e| ScxError::LogFile { cause: e.into() })?;
        let mut cmd = Command::new(&command.argv[0]);
        cmd.args(&command.argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|e| ScxError::Spawn {
            command: command.command_line(),
            cause: e.into(),
        })?;
        on_spawn(child.id() as i32);
        self.running = Some(Running {
            child,
            command: command.clone(),
            log,
        });
        let deadline = Instant::now() + self.start_timeout;
        loop {
            let running = self.running.as_mut().expect("set above");
            if let Ok(Some(status)) = running.child.try_wait() {
                let tail = running.log.last_lines(3);
                self.running = None;
                return Err(ScxError::Exited {
                    command: command.command_line(),
                    status,
                    tail,
                });
            }
            let now = self.state();
            if now.state == "enabled" && now.ops.as_deref().is_some_and(|o| command.matches_ops(o))
            {
                return Ok(now.ops.unwrap_or_default());
            }
            if Instant::now() >= deadline {
                let _ = self.stop();
                return Err(ScxError::NotEnabled {
                    command: command.command_line(),
                    ops: command.ops.clone(),
                    timeout_ms: u64::try_from(self.start_timeout.as_millis()).unwrap_or(u64::MAX),
                    state: now.state,
                    now_ops: now.ops.unwrap_or_default(),
                });
            }
            std::thread::sleep(POLL);
        }
    }

    fn stop_scx(&mut self) -> Result<(), ScxError> {
        let Some(mut running) = self.running.take() else {
            return Ok(());
        };
        let pid = running.child.id() as i32;
        schedlab_sys::kill_group(pid, libc::SIGTERM);
        let deadline = Instant::now() + self.stop_timeout;
        let mut killed = false;
        loop {
            match running.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= deadline && !killed => {
                    schedlab_sys::kill_group(pid, libc::SIGKILL);
                    killed = true;
                }
                Ok(None) => std::thread::sleep(POLL),
            }
        }
        // Helpers it left in its group go too.
        schedlab_sys::kill_group(pid, libc::SIGKILL);
        drop(running.log);
        let deadline = Instant::now() + self.stop_timeout;
        loop {
            let now = self.state();
            if now.state == "disabled" {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(ScxError::StillLoaded {
                    command: running.command.command_line(),
                    state: now.state,
                    ops: now.ops.unwrap_or_default(),
                });
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Scx {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            say_err!("error: {e}");
        }
    }
}

#[cfg(test)]
#[path = "scx_tests.rs"]
mod tests;
