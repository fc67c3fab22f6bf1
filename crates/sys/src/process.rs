//! Processes: fork (refused while the process has other threads), exec, process groups,
//! signals, ids and privileges.

use super::clock::now_ns;
use super::SysError;
use nix::sys::prctl;
use nix::sys::signal::{kill, killpg, SigHandler};
use nix::unistd::Pid;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

pub use nix::sys::signal::Signal;

/// Process id of the caller.
pub fn getpid() -> i32 {
    nix::unistd::getpid().as_raw()
}

/// Kernel thread id of the caller.
pub fn gettid() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// Effective user id of the process.
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Effective group id of the process.
pub fn egid() -> u32 {
    nix::unistd::getegid().as_raw()
}

/// Whether the effective uid is 0.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Number of threads of the calling process as the kernel counts them: the link count of
/// `/proc/self/task` is 2 plus the number of threads (`proc_task_getattr`). The directory is
/// opened once per process and thread and then `fstat`ed (0.5 us, where a `stat` of the path,
/// through the /proc/self link, costs 2-3 us: a host checks before each of its forks).
pub fn thread_count() -> io::Result<usize> {
    use std::os::unix::fs::MetadataExt;
    thread_local! {
        /// The pid the directory was opened by, and `/proc/<that pid>/task`. A forked child
        /// inherits the copy of the thread that forked, which names its parent: the pid tells.
        static TASK_DIR: std::cell::RefCell<Option<(i32, std::fs::File)>> =
            const { std::cell::RefCell::new(None) };
    }
    let me = getpid();
    TASK_DIR.with(|dir| {
        let mut dir = dir.borrow_mut();
        let task = match dir.take() {
            Some((pid, d)) if pid == me => d,
            _ => std::fs::File::open("/proc/self/task")?,
        };
        let links = task.metadata()?.nlink();
        *dir = Some((me, task));
        Ok(links.saturating_sub(2) as usize)
    })
}

/// How long [`fork`] waits for other threads to disappear before refusing: a thread that was
/// just joined is still counted by the kernel for a few microseconds after `join` returns.
const THREAD_EXIT_WAIT: Duration = Duration::from_millis(100);

/// Ok once this process has a single thread; an error saying how many it has otherwise.
fn ensure_single_threaded() -> io::Result<()> {
    let give_up = now_ns() + THREAD_EXIT_WAIT.as_nanos() as u64;
    loop {
        let n = thread_count().map_err(|source| SysError::ThreadsUnknown { source })?;
        if n <= 1 {
            return Ok(());
        }
        if now_ns() >= give_up {
            return Err(SysError::MultiThreaded { threads: n }.into());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Forks. Returns 0 in the child, the child's pid in the parent.
///
/// Refused with an error while the process has other threads (after waiting up to 100 ms for
/// threads that are exiting): the child of a single-threaded process may run any code.
pub fn fork() -> io::Result<i32> {
    fork_stamped(None)
}

/// Like [`fork`], and stores CLOCK_MONOTONIC now (ns) in `stamp_ns` right before the fork,
/// after the thread check, so that a creation timestamp does not include that check (a `stat`
/// of /proc, about 2 µs).
pub fn fork_stamped(stamp_ns: Option<&AtomicU64>) -> io::Result<i32> {
    ensure_single_threaded()?;
    if let Some(stamp) = stamp_ns {
        stamp.store(now_ns(), SeqCst);
    }
    // SAFETY: the process has exactly one thread (checked above; only this thread could have
    // started another since), so no lock or half-updated state of another thread is copied
    // into the child, and the child may run any code.
    match unsafe { nix::unistd::fork() } {
        Ok(nix::unistd::ForkResult::Child) => Ok(0),
        Ok(nix::unistd::ForkResult::Parent { child }) => Ok(child.as_raw()),
        Err(e) => Err(e.into()),
    }
}

/// Ends the calling process at once, without running destructors or atexit handlers (nix has
/// no `_exit`; `std::process::exit` would flush and run handlers inherited from the parent).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit takes an integer, never returns and is async-signal-safe.
    unsafe { libc::_exit(code) }
}

/// Asks the kernel to send SIGKILL to the caller when its parent thread dies; exits with
/// status 111 at once if the parent (`parent_pid`) is already gone.
pub fn die_with_parent(parent_pid: i32) {
    signal_on_parent_death(parent_pid, Signal::SIGKILL);
}

/// Asks the kernel to send `sig` to the caller when its parent thread dies
/// (PR_SET_PDEATHSIG); exits with status 111 at once if the parent (`parent_pid`) is already
/// gone.
pub fn signal_on_parent_death(parent_pid: i32, sig: Signal) {
    let _ = prctl::set_pdeathsig(sig);
    // The parent may already be gone between fork and prctl.
    if !parent_is(parent_pid) {
        exit_now(111);
    }
}

/// Whether the caller's parent is still `parent_pid` (an orphan is adopted by another).
pub fn parent_is(parent_pid: i32) -> bool {
    nix::unistd::getppid().as_raw() == parent_pid
}

/// The signals whose default action ends the process and that a process can catch without
/// harm, by number: SIGPIPE excepted (a run ignores it, see [`ignore_signal`]), and the
/// signals of faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT), which a
/// handler that returns would only meet again. The real-time signals (SIGRTMIN..SIGRTMAX,
/// those the C library keeps for itself excepted) end a process by default too.
pub fn terminating_signals() -> Vec<i32> {
    let mut out = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ];
    out.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    out
}

/// Makes the caller ignore `sig` (SIG_IGN): for SIGPIPE, a write to a closed pipe then fails
/// with EPIPE instead of ending the process. An ignored signal stays ignored across fork and
/// exec: restore the default ([`restore_default_signal`]) in children that run programs.
pub fn ignore_signal(sig: Signal) -> io::Result<()> {
    // SAFETY: SIG_IGN installs no handler of ours, so no code runs in signal context.
    unsafe { nix::sys::signal::signal(sig, SigHandler::SigIgn) }
        .map(|_| ())
        .map_err(io::Error::from)
}

/// Makes the calling process user `uid` with group `gid` and no other group, for good (real,
/// effective and saved ids alike), with no way back to more through a set-id program
/// (PR_SET_NO_NEW_PRIVS). For a forked, single-threaded child about to exec a program.
pub fn drop_privileges(uid: u32, gid: u32) -> io::Result<()> {
    use nix::unistd::{Gid, Uid};
    let (u, g) = (Uid::from_raw(uid), Gid::from_raw(gid));
    nix::unistd::setgroups(&[g])?;
    nix::unistd::setresgid(g, g, g)?;
    nix::unistd::setresuid(u, u, u)?;
    prctl::set_no_new_privs()?;
    Ok(())
}

/// Makes the caller a child subreaper: orphaned descendants are reparented to it, not to init.
pub fn become_child_subreaper() -> io::Result<()> {
    prctl::set_child_subreaper(true).map_err(io::Error::from)
}

/// Moves process `pid` (0 = caller) into process group `pgid` (0 = its own new group).
pub fn setpgid(pid: i32, pgid: i32) -> io::Result<()> {
    nix::unistd::setpgid(Pid::from_raw(pid), Pid::from_raw(pgid)).map_err(io::Error::from)
}

/// Sends signal number `sig` to every process of group `pgid`. Groups 0 and 1 (the caller's
/// own, init's) are never signalled; an empty group or an unknown signal number is not an error.
pub fn kill_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        if let Ok(sig) = Signal::try_from(sig) {
            let _ = killpg(Pid::from_raw(pgid), sig);
        }
    }
}

/// Sends `sig` to process `pid` (a single process: `pid` > 1); an ended process is not an error.
pub fn signal_process(pid: i32, sig: Signal) {
    if pid > 1 {
        let _ = kill(Pid::from_raw(pid), sig);
    }
}

/// Whether any process of group `pgid` still exists (zombies included).
pub fn group_alive(pgid: i32) -> bool {
    pgid > 1 && killpg(Pid::from_raw(pgid), None).is_ok()
}

/// Whether process `pid` exists (zombies included), including processes this one may not
/// signal (EPERM). A `pid` of 0 or below names no single process and is answered true.
pub fn process_exists(pid: i32) -> bool {
    pid <= 0
        || matches!(
            kill(Pid::from_raw(pid), None),
            Ok(()) | Err(nix::errno::Errno::EPERM)
        )
}

/// Restores the default action of `sig` (SIGPIPE: die quietly; SIGINT/SIGTERM in a child
/// whose parent handles them).
pub fn restore_default_signal(sig: Signal) -> io::Result<()> {
    // SAFETY: SIG_DFL installs no handler of ours, so no code runs in signal context.
    unsafe { nix::sys::signal::signal(sig, SigHandler::SigDfl) }
        .map(|_| ())
        .map_err(io::Error::from)
}

/// Whether `sig` is ignored now (SIG_IGN), as `nohup` leaves SIGHUP for the program it runs.
pub fn signal_ignored(sig: Signal) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction only writes the current one into `old`, a
    // zeroed sigaction of the right size; it is read only when the call succeeded.
    unsafe {
        libc::sigaction(sig as i32, std::ptr::null(), old.as_mut_ptr()) == 0
            && old.assume_init().sa_sigaction == libc::SIG_IGN
    }
}

/// On SIGHUP, points every standard descriptor (0, 1, 2) that is a terminal now at /dev/null,
/// from the signal handler itself: once a terminal hangs up, writing to it fails with EIO, and
/// a failed `eprintln!` panics, so the way out (restoring kernel settings, exit 129) would end
/// in a panic instead. None when no standard descriptor is a terminal. The action is removed
/// with `signal_hook::low_level::unregister`.
pub fn detach_terminal_on_hangup() -> io::Result<Option<signal_hook::SigId>> {
    use std::io::IsTerminal;
    static NULL: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();
    let ttys = [
        io::stdin().is_terminal(),
        io::stdout().is_terminal(),
        io::stderr().is_terminal(),
    ];
    if !ttys.contains(&true) {
        return Ok(None);
    }
    let null = match NULL.get() {
        Some(f) => f,
        None => {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/null")?;
            NULL.get_or_init(|| f)
        }
    };
    let null_fd = null.as_raw_fd();
    // SAFETY: the action only calls dup2, which is async-signal-safe, with descriptors fixed
    // before it is registered (/dev/null stays open for the process's life); it allocates
    // nothing and takes no lock.
    let id = unsafe {
        signal_hook::low_level::register(libc::SIGHUP, move || {
            for (fd, tty) in ttys.iter().enumerate() {
                if *tty {
                    libc::dup2(null_fd, fd as i32);
                }
            }
        })
    }?;
    Ok(Some(id))
}

/// The C library's description of signal number `sig` ("Killed" for 9), as `strsignal` gives it.
pub fn signal_description(sig: i32) -> String {
    // SAFETY: strsignal accepts any number and returns a NUL-terminated string, static or in a
    // thread-local buffer valid until this thread calls it again; it is copied at once.
    unsafe {
        let p = libc::strsignal(sig);
        if p.is_null() {
            return format!("signal {sig}");
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Makes `src` the process's standard input (0), output (1) or error (2) with `dup2`; any
/// other `std_fd` is refused with EBADF.
pub fn redirect_std_fd(src: BorrowedFd<'_>, std_fd: i32) -> io::Result<()> {
    if !(0..=2).contains(&std_fd) {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    nix::unistd::dup2(src.as_raw_fd(), std_fd)
        .map(|_| ())
        .map_err(io::Error::from)
}

/// A program and its arguments, prepared (allocated) ahead of the moment they are exec'd.
///
/// Raw `execvp` rather than nix's, which builds its pointer array (allocates) at the call,
/// inside a task's measured start.
pub struct ExecArgs {
    args: Vec<std::ffi::CString>,
    ptrs: Vec<*const libc::c_char>,
}

impl ExecArgs {
    /// Prepares `argv` (the program is looked up in PATH); None for an empty argv or a NUL byte.
    pub fn new(argv: &[String]) -> Option<ExecArgs> {
        let args: Vec<std::ffi::CString> = argv
            .iter()
            .map(|a| std::ffi::CString::new(a.as_bytes()).ok())
            .collect::<Option<_>>()?;
        if args.is_empty() {
            return None;
        }
        let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Some(ExecArgs { args, ptrs })
    }

    /// Replaces the calling process with the program; returns the errno only if that failed.
    pub fn exec(&self) -> i32 {
        // SAFETY: the pointers point into `self.args`, alive for the call; the array is
        // NULL-terminated.
        unsafe { libc::execvp(self.args[0].as_ptr(), self.ptrs.as_ptr()) };
        super::errno()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_is_refused_while_other_threads_run() {
        // A thread that stays alive until the fork attempt is over.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv());
        let n = thread_count().unwrap();
        assert!(n >= 2, "{n}");
        let stamp = AtomicU64::new(0);
        let e = fork_stamped(Some(&stamp)).unwrap_err();
        tx.send(()).unwrap();
        let _ = t.join();
        assert!(
            matches!(SysError::of(&e), Some(SysError::MultiThreaded { threads }) if *threads >= 2),
            "{e}"
        );
        assert_eq!(stamp.load(SeqCst), 0, "stamped although no fork happened");
    }

    #[test]
    fn thread_count_sees_a_running_thread_as_proc_status_does() {
        // The kernel's other account of the same number: Threads: in /proc/self/status.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || rx.recv());
        let ours = thread_count().unwrap();
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let theirs: usize = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        tx.send(()).unwrap();
        let _ = t.join();
        // Other tests may start or end threads between the two readings.
        assert!(ours >= 2 && theirs >= 2, "{ours} {theirs}");
    }

    #[test]
    fn every_signal_that_ends_a_process_by_default_is_listed_but_faults_and_pipe() {
        let caught = terminating_signals();
        for sig in [
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGALRM,
            libc::SIGRTMIN(),
        ] {
            assert!(caught.contains(&sig), "{sig}");
        }
        for sig in [
            libc::SIGPIPE,
            libc::SIGSEGV,
            libc::SIGKILL,
            libc::SIGCHLD,
            libc::SIGABRT,
        ] {
            assert!(!caught.contains(&sig), "{sig}");
        }
        assert!(caught.len() >= 14 + 30, "{}", caught.len());
    }

    #[test]
    fn signal_descriptions_are_the_c_librarys() {
        assert_eq!(signal_description(9), "Killed");
        assert_eq!(signal_description(15), "Terminated");
    }

    #[test]
    fn process_exists_for_this_process_and_not_for_an_unused_pid() {
        assert!(process_exists(getpid()));
        // pid_max is at most 4194304 (PID_MAX_LIMIT): a pid above it never exists.
        assert!(!process_exists(4_194_305));
        assert!(!group_alive(4_194_305));
        assert!(!group_alive(1) && !group_alive(0));
    }

    #[test]
    fn redirect_refuses_anything_but_the_standard_streams() {
        use std::os::fd::AsFd;
        let f = std::fs::File::open("/dev/null").unwrap();
        let e = redirect_std_fd(f.as_fd(), 7).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }

    #[test]
    fn exec_args_refuse_empty_and_nul() {
        assert!(ExecArgs::new(&[]).is_none());
        assert!(ExecArgs::new(&["a\0b".to_string()]).is_none());
        assert!(ExecArgs::new(&["true".to_string()]).is_some());
    }
}
