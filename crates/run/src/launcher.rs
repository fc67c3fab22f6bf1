//! The launcher: a small process forked before any thread exists, which forks trial hosts on request.
//!
//! Invariant: **a process forks only while it has one thread.** A child of a multithreaded
//! process inherits locks that other threads held at the fork (the allocator's, stdio's) and can
//! deadlock on its first allocation or print. schedlab's main process has threads (the sampler,
//! calibration), so it never forks a host itself: at start-up, while it is still alone, it forks
//! this launcher, and the launcher — single-threaded for its whole life — forks one host per
//! trial. Hosts fork their tasks before creating any thread. `schedlab_sys::fork` enforces the invariant
//! by refusing to fork from a process with more than one thread.
//!
//! The two processes talk over a socket pair: the main process sends a [`Request`] (what the
//! trial's tasks do, its deadline) and gets the trial's [`TrialOutcome`] back, both as
//! length-prefixed JSON. Signals: Ctrl-C and a closed terminal's SIGHUP reach both (same
//! process group); a SIGTERM or SIGHUP sent to the main process alone is passed on. When the
//! main process dies (PR_SET_PDEATHSIG sends the launcher SIGTERM), the launcher ends the
//! trial in flight and, if its parent died without restoring (SIGKILL, a fault), restores what
//! the journals of dead schedlab processes name, as the next command would, then exits; its
//! host dies with it, and the tasks with their host.

use super::task::TaskPlan;
use super::trial::{self, TrialSetup};
use schedlab_core::policy::{PolicyKind, RT_LAUNCHER};
use schedlab_core::records::{TaskKind, TrialOutcome, TrialStatus};
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// One trial to run, as the launcher receives it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    /// Processes or threads.
    pub kind: TaskKind,
    /// What each task does and with which policy.
    pub plan: TaskPlan,
    /// Deadline of the whole trial, ns from its start.
    pub timeout_ns: u64,
    /// Whether the launcher and host take the RT guard priority (FIFO 99) for this trial.
    pub guard: bool,
    /// The trial's task groups (CPU cgroups), if it has any.
    #[serde(default)]
    pub groups: Option<trial::groups::TrialGroups>,
}

/// The running launcher process, seen from the main process.
pub struct Launcher {
    pid: i32,
    sock: UnixStream,
}

impl Launcher {
    /// Forks the launcher. Call it before the process creates any thread: the fork is refused
    /// otherwise.
    pub fn start() -> io::Result<Launcher> {
        let (ours, theirs) = UnixStream::pair()?;
        let parent = schedlab_sys::getpid();
        let pid = schedlab_sys::fork()?;
        if pid == 0 {
            drop(ours);
            launcher_main(theirs, parent);
        }
        drop(theirs);
        Ok(Launcher { pid, sock: ours })
    }

    /// The launcher's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Runs one trial in a new host and returns its outcome (without samples or trace, which
    /// the main process records). While it waits, `interrupted` (set by the signal handler) is
    /// passed on to the launcher as SIGTERM, so the trial in flight is killed and reported
    /// interrupted.
    pub fn run_trial(
        &mut self,
        req: &Request,
        interrupted: &AtomicBool,
    ) -> io::Result<TrialOutcome> {
        write_frame(&mut self.sock, &serde_json::to_vec(req)?)?;
        self.sock
            .set_read_timeout(Some(Duration::from_millis(100)))?;
        let mut forwarded = false;
        let bytes = loop {
            match read_frame(&mut self.sock) {
                Ok(Some(b)) => break b,
                Ok(None) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the launcher process ended before reporting its trial",
                    ))
                }
                // A timeout, or a signal (a socket with a receive timeout is not restarted).
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    if interrupted.load(SeqCst) && !forwarded {
                        schedlab_sys::signal_process(self.pid, schedlab_sys::Signal::SIGTERM);
                        forwarded = true;
                    }
                }
                Err(e) => return Err(e),
            }
        };
        Ok(serde_json::from_slice(&bytes)?)
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        // Closing our end tells the launcher to exit; then reap it.
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
        let _ = schedlab_sys::wait4(self.pid, false);
    }
}

/// The launcher's life: one trial per request until the main process closes the socket.
fn launcher_main(mut sock: UnixStream, parent: i32) -> ! {
    // Told of the main process's death by SIGTERM (the trial in flight is ended, then the
    // socket's end is seen); a reply to a dead process fails with EPIPE instead of SIGPIPE.
    schedlab_sys::signal_on_parent_death(parent, schedlab_sys::Signal::SIGTERM);
    let _ = schedlab_sys::ignore_signal(schedlab_sys::Signal::SIGPIPE);
    // Tasks orphaned by a dying host come back here, so every trial is reaped completely.
    let _ = schedlab_sys::become_child_subreaper();
    let interrupted = Arc::new(AtomicBool::new(false));
    // A closed terminal sends SIGHUP to the whole foreground group, the launcher too (unless
    // schedlab runs under nohup, which ignores it).
    let hangup =
        (!schedlab_sys::signal_ignored(schedlab_sys::Signal::SIGHUP)).then_some(libc::SIGHUP);
    for sig in [libc::SIGINT, libc::SIGTERM].into_iter().chain(hangup) {
        // Registering a flag creates no thread.
        if signal_hook::flag::register(sig, interrupted.clone()).is_err() {
            schedlab_sys::exit_now(2);
        }
    }
    loop {
        let req: Request = match read_frame(&mut sock) {
            Ok(Some(b)) => match serde_json::from_slice(&b) {
                Ok(r) => r,
                Err(_) => schedlab_sys::exit_now(3),
            },
            // Ctrl-C while idle: the main process sends no more trials, or closes the socket.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            _ => end(parent, 0),
        };
        // The trial directory, found again by path: the very one the main process created
        // (not a link or a directory put in its place); the tasks reach their files through it.
        let outcome = match req.plan.dir.as_ref().map(|d| (d, d.open())) {
            Some((d, Err(e))) => Ok(TrialOutcome::not_run(
                TrialStatus::Failed,
                format!("the trial directory {}: {e}", d.path.display()),
            )),
            Some((_, Ok(fd))) => run_request(&req, Some(fd.as_fd()), &interrupted),
            None => run_request(&req, None, &interrupted),
        };
        let reply = match outcome {
            Ok(o) => serde_json::to_vec(&o),
            Err(e) => serde_json::to_vec(&TrialOutcome::not_run(
                TrialStatus::Failed,
                format!("the trial's host could not be started: {e}"),
            )),
        };
        match reply {
            Ok(bytes) if write_frame(&mut sock, &bytes).is_ok() => {}
            _ => end(parent, 4),
        }
    }
}

/// Ends the launcher with `code`. If the main process (`parent`) died, it could not restore
/// what it changed: the journals of dead owners are obeyed now (its own among them), as the
/// next schedlab command would, and its cgroups removed.
fn end(parent: i32, code: i32) -> ! {
    if !schedlab_sys::parent_is(parent) {
        // Until it is gone in all but name (a zombie), its journal is a live owner's.
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while schedlab_machine::process_start_ticks(parent).is_some()
            && std::time::Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        super::journal::recover_at_startup();
    }
    schedlab_sys::exit_now(code)
}

/// Runs the trial of `req`, with the launcher's guard priority while it runs if it asks for it.
fn run_request(
    req: &Request,
    dir: Option<BorrowedFd>,
    interrupted: &AtomicBool,
) -> io::Result<TrialOutcome> {
    let guard = req.guard && take_guard();
    let outcome = trial::run_trial(&TrialSetup {
        kind: req.kind,
        plan: &req.plan,
        timeout_ns: req.timeout_ns,
        guard,
        interrupted,
        dir,
        groups: req.groups.as_ref(),
    });
    if guard {
        let _ = schedlab_sys::sched_setattr(&schedlab_sys::SchedAttr::default());
    }
    outcome
}

/// Puts the launcher above every RT worker (FIFO 99) where permitted, so that the deadline and
/// Ctrl-C are handled while RT tasks spin; its children start reset to OTHER.
fn take_guard() -> bool {
    schedlab_sys::sched_setattr(&schedlab_sys::SchedAttr {
        policy: PolicyKind::Fifo.number(),
        priority: RT_LAUNCHER,
        flags: schedlab_sys::FLAG_RESET_ON_FORK,
        ..Default::default()
    })
    .is_ok()
}

/// Writes one frame: the length as 8 bytes little-endian, then the bytes.
fn write_frame(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    w.write_all(&(bytes.len() as u64).to_le_bytes())?;
    w.write_all(bytes)?;
    w.flush()
}

/// Reads one frame; None at a clean end of stream (before any byte of a frame).
fn read_frame(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 8];
    let mut got = 0;
    while got < len.len() {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if got > 0 && e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if got > 0
                    && matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) => {}
            Err(e) => return Err(e),
        }
    }
    let mut buf = vec![0u8; u64::from_le_bytes(len) as usize];
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_a_clean_end_is_not_an_error() {
        let mut buf = Vec::new();
        write_frame(&mut buf, b"{\"a\":1}").unwrap();
        write_frame(&mut buf, b"").unwrap();
        assert_eq!(buf.len(), 8 + 7 + 8);
        let mut r = &buf[..];
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"{\"a\":1}");
        assert_eq!(read_frame(&mut r).unwrap().unwrap(), b"");
        assert!(read_frame(&mut r).unwrap().is_none());
        let mut cut = &buf[..10];
        read_frame(&mut cut).unwrap_err();
    }
}
