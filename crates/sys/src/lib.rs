//! The OS boundary and the only unsafe code of schedlab: syscalls, shared memory, fork.
//!
//! Every function here is safe to call: each wrapper checks or documents what makes its unsafe
//! part sound, so callers above this crate stay safe Rust (every other crate of schedlab forbids
//! unsafe code). Calls go through `nix` where it has them; raw `libc` is used only for what
//! nix lacks (sched_setattr/getattr, futex, wait4 with rusage, _exit, strsignal) or where nix
//! would allocate at a moment that is measured (execvp).
//!
//! - [`clock`]: CLOCK_MONOTONIC and thread CPU time in ns, absolute sleeps.
//! - [`sched`]: scheduling attributes and CPU affinity.
//! - [`process`]: fork, exec, process groups, signals, ids, privileges.
//! - [`wait`]: reaping children with their rusage, the calling thread's rusage.
//! - [`shm`]: zeroed shared memory for forked children, futex waits.
//! - [`threads`]: many threads on stacks mapped before the first one starts.
//! - [`host`]: uname, rlimits, filesystem type, allocation-free small file reads.
//! - [`error`]: the refusals that are schedlab's own ([`SysError`]), inside `io::Error`.
//! - [`dir`]: directories held open (private ones in shared directories, the state directory)
//!   and the files in them reached through the fd, no links followed.
//! - [`outdir`]: output directories a user names, refused when others may write them, and
//!   files written in them under a temp name and renamed.

pub mod clock;
pub mod dir;
pub mod error;
pub mod host;
pub mod outdir;
pub mod process;
pub mod sched;
pub mod shm;
pub mod threads;
pub mod wait;

pub use clock::{now_ns, process_cpu_ns, sleep_until_ns, thread_cpu_ns};
pub use dir::{lstat, user_ids, user_name, DirFd, FileKind, FileMeta};
pub use error::SysError;
pub use host::{
    is_tmpfs, lock_exclusive, read_small, set_rlimit, soft_rlimit, uname, FileLock, Resource, Uname,
};
pub use outdir::{NotOwnFile, OthersMayWrite, OutDir};
pub use process::{
    become_child_subreaper, detach_terminal_on_hangup, die_with_parent, drop_privileges, egid,
    euid, exit_now, fork, fork_stamped, getpid, gettid, group_alive, ignore_signal, is_root,
    kill_group, parent_is, process_exists, redirect_std_fd, restore_default_signal, setpgid,
    signal_description, signal_ignored, signal_on_parent_death, signal_process,
    terminating_signals, thread_count, ExecArgs, Signal,
};
pub use sched::{
    affinity_of, allowed_cpus, cpu_set, current_cpu, pin_command, sched_getattr, sched_setattr,
    set_affinity, SchedAttr, CPU_SET_CAPACITY, FLAG_RESET_ON_FORK,
};
pub use shm::{futex_wait, futex_wake, PrivatePages, SharedSlice};
pub use threads::{with_threads, Spawner};
pub use wait::{
    exited_in_group_nowait, is_running_child, rusage_thread, wait4, wait_exited_nowait, Reaped,
};

use nix::errno::Errno;

/// The calling thread's errno.
pub fn errno() -> i32 {
    Errno::last_raw()
}

/// Symbolic name of an errno value (`EPERM`), for messages; `errno` for a number that is not
/// one (nix's table of Linux errno names).
pub fn errno_name(e: i32) -> String {
    match Errno::from_raw(e) {
        Errno::UnknownErrno => "errno".to_string(),
        known => format!("{known:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names_are_the_kernel_symbols() {
        // Numbers from the kernel's include/uapi/asm-generic/errno-base.h and errno.h.
        assert_eq!(errno_name(1), "EPERM");
        assert_eq!(errno_name(16), "EBUSY");
        assert_eq!(errno_name(22), "EINVAL");
        assert_eq!(errno_name(38), "ENOSYS");
        assert_eq!(errno_name(95), "EOPNOTSUPP");
        assert_eq!(errno_name(28), "ENOSPC");
        assert_eq!(errno_name(0), "errno");
        assert_eq!(errno_name(99_999), "errno");
    }
}
