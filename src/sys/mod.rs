//! The only unsafe code of schedlab: raw syscalls (sched_setattr, futex, wait4), shared memory, fork.
//!
//! Everything here is a thin, documented wrapper; callers above this module stay safe Rust.

use std::ffi::CStr;
use std::io;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Scheduling attributes as the kernel's `struct sched_attr` (VER0, 48 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedAttr {
    /// Policy number (`SCHED_OTHER` 0, `FIFO` 1, `RR` 2, `BATCH` 3, `IDLE` 5, `DEADLINE` 6).
    pub policy: u32,
    /// `SCHED_FLAG_*` bits.
    pub flags: u64,
    /// Nice value for the fair classes (-20..19).
    pub nice: i32,
    /// Static RT priority (1..99 for FIFO/RR, 0 otherwise).
    pub priority: u32,
    /// DEADLINE runtime in nanoseconds (or EEVDF slice request under OTHER).
    pub runtime_ns: u64,
    /// DEADLINE relative deadline in nanoseconds.
    pub deadline_ns: u64,
    /// DEADLINE period in nanoseconds.
    pub period_ns: u64,
}

/// `SCHED_FLAG_RESET_ON_FORK`: children of this task start as SCHED_OTHER, nice 0.
pub const FLAG_RESET_ON_FORK: u64 = 0x01;

/// Applies `attr` to the calling thread (`sched_setattr(0, ...)`). Returns the raw errno on refusal.
pub fn sched_setattr(attr: &SchedAttr) -> Result<(), i32> {
    // SAFETY: sched_attr is plain old data; zeroed is a valid value.
    let mut raw: libc::sched_attr = unsafe { std::mem::zeroed() };
    raw.size = std::mem::size_of::<libc::sched_attr>() as u32;
    raw.sched_policy = attr.policy;
    raw.sched_flags = attr.flags;
    raw.sched_nice = attr.nice;
    raw.sched_priority = attr.priority;
    raw.sched_runtime = attr.runtime_ns;
    raw.sched_deadline = attr.deadline_ns;
    raw.sched_period = attr.period_ns;
    // SAFETY: the pointer is valid for the call; pid 0 means the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0,
            &raw as *const libc::sched_attr,
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Reads the calling thread's scheduling attributes back from the kernel.
pub fn sched_getattr() -> Result<SchedAttr, i32> {
    // SAFETY: as above; the kernel fills at most `size` bytes.
    let mut raw: libc::sched_attr = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::sched_attr>() as u32;
    // SAFETY: valid pointer and size; pid 0 is the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut raw as *mut libc::sched_attr,
            size,
            0,
        )
    };
    if rc != 0 {
        return Err(errno());
    }
    Ok(SchedAttr {
        policy: raw.sched_policy,
        flags: raw.sched_flags,
        nice: raw.sched_nice,
        priority: raw.sched_priority,
        runtime_ns: raw.sched_runtime,
        deadline_ns: raw.sched_deadline,
        period_ns: raw.sched_period,
    })
}

/// The calling thread's errno.
pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Symbolic name of an errno value (`EPERM`), for messages.
pub fn errno_name(e: i32) -> &'static str {
    match e {
        libc::EPERM => "EPERM",
        libc::EBUSY => "EBUSY",
        libc::EINVAL => "EINVAL",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::ESRCH => "ESRCH",
        libc::EAGAIN => "EAGAIN",
        _ => "errno",
    }
}

/// CLOCK_MONOTONIC now, in nanoseconds.
#[inline]
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; these clocks always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Kernel thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Process id of the caller.
pub fn getpid() -> i32 {
    // SAFETY: getpid cannot fail.
    unsafe { libc::getpid() }
}

/// A zero-initialised array of `T` in anonymous shared memory, visible to forked children.
///
/// `T` must be valid when all-zero and must only contain atomics or plain integers
/// (the region is shared between processes without any other synchronisation).
pub struct SharedSlice<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> SharedSlice<T> {
    /// Maps `len` zeroed elements with `MAP_SHARED | MAP_ANONYMOUS`.
    pub fn new(len: usize) -> io::Result<Self> {
        let bytes = std::mem::size_of::<T>().max(1) * len.max(1);
        // SAFETY: anonymous mapping, no file; result checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedSlice {
            ptr: ptr as *mut T,
            len,
        })
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping holds `len` zero-initialised `T`s (valid by the type's contract)
        // and lives as long as `self`; only shared references are handed out.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Drop for SharedSlice<T> {
    fn drop(&mut self) {
        let bytes = std::mem::size_of::<T>().max(1) * self.len.max(1);
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, bytes) };
    }
}

// SAFETY: the contents are atomics/plain integers by the type's contract.
unsafe impl<T: Sync> Sync for SharedSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Send for SharedSlice<T> {}

/// Blocks while `*word == expected`, at most `timeout`. Works across processes (shared futex).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAIT (not PRIVATE) so it works on MAP_SHARED.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
        )
    };
}

/// Wakes up to `n` waiters on `word`.
pub fn futex_wake(word: &AtomicU32, n: i32) {
    // SAFETY: valid aligned address; wake has no other preconditions.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) };
}

/// Forks. Returns 0 in the child, the child's pid in the parent.
///
/// # Safety
/// The caller must be single-threaded, or the child must only do async-signal-safe work.
pub unsafe fn fork() -> io::Result<i32> {
    let pid = libc::fork();
    if pid < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(pid)
    }
}

/// Ends the calling process at once, without running destructors or atexit handlers.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and is async-signal-safe.
    unsafe { libc::_exit(code) }
}

/// Asks the kernel to send SIGKILL to the caller when its parent thread dies.
pub fn die_with_parent(parent_pid: i32) {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    // The parent may already be gone between fork and prctl.
    // SAFETY: getppid cannot fail.
    if unsafe { libc::getppid() } != parent_pid {
        exit_now(111);
    }
}

/// Moves process `pid` (0 = caller) into process group `pgid` (0 = its own new group).
pub fn setpgid(pid: i32, pgid: i32) -> io::Result<()> {
    // SAFETY: integer arguments.
    if unsafe { libc::setpgid(pid, pgid) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `sig` to every process of group `pgid`. ESRCH (group already empty) is not an error.
pub fn kill_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: integer arguments; a negative pid addresses the group.
        unsafe { libc::kill(-pgid, sig) };
    }
}

/// Whether any process of group `pgid` still exists (zombies included).
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks existence and permission.
    pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0
}

/// The result of `wait4`.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    /// Pid of the reaped child.
    pub pid: i32,
    /// Raw wait status.
    pub status: i32,
    /// User CPU time of the child, in nanoseconds.
    pub utime_ns: u64,
    /// System CPU time of the child, in nanoseconds.
    pub stime_ns: u64,
    /// Voluntary context switches of the child.
    pub nvcsw: u64,
    /// Involuntary context switches of the child.
    pub nivcsw: u64,
}

/// `wait4(pid, flags)`; `Ok(None)` when WNOHANG finds nothing to reap.
pub fn wait4(pid: i32, nohang: bool) -> io::Result<Option<Reaped>> {
    let mut status = 0;
    // SAFETY: zeroed rusage is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: valid out-pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Ok(None);
        }
        return Ok(Some(Reaped {
            pid: rc,
            status,
            utime_ns: timeval_ns(ru.ru_utime),
            stime_ns: timeval_ns(ru.ru_stime),
            nvcsw: ru.ru_nvcsw as u64,
            nivcsw: ru.ru_nivcsw as u64,
        }));
    }
}

/// Waits for any child to exit and returns its pid, leaving it reapable (`waitid` with
/// WNOWAIT); None when there are no children left.
pub fn wait_exited_nowait() -> io::Result<Option<i32>> {
    waitid_nowait(libc::P_ALL, 0, 0)
}

/// The pid of an exited, not yet reaped child in process group `pgid`, left reapable; None
/// when none has exited yet or there are none.
pub fn exited_in_group_nowait(pgid: i32) -> io::Result<Option<i32>> {
    waitid_nowait(libc::P_PGID, pgid as libc::id_t, libc::WNOHANG)
}

fn waitid_nowait(idtype: libc::idtype_t, id: libc::id_t, flags: i32) -> io::Result<Option<i32>> {
    loop {
        // SAFETY: siginfo_t is plain data; zeroed is valid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        let rc =
            unsafe { libc::waitid(idtype, id, &mut info, libc::WEXITED | libc::WNOWAIT | flags) };
        if rc == 0 {
            // SAFETY: waitid filled `info` for an exited child (si_pid 0 under WNOHANG: none).
            let pid = unsafe { info.si_pid() };
            return Ok((pid > 0).then_some(pid));
        }
        match io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::EINTR) => continue,
            e if e.raw_os_error() == Some(libc::ECHILD) => return Ok(None),
            e => return Err(e),
        }
    }
}

/// CPU and switch counters of the calling thread (`RUSAGE_THREAD`): (utime_ns, stime_ns, nvcsw, nivcsw).
pub fn rusage_thread() -> (u64, u64, u64, u64) {
    // SAFETY: zeroed rusage is valid; RUSAGE_THREAD is Linux-specific and always present.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (
        timeval_ns(ru.ru_utime),
        timeval_ns(ru.ru_stime),
        ru.ru_nvcsw as u64,
        ru.ru_nivcsw as u64,
    )
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

/// Sets both limits of a resource (`RLIMIT_*`).
pub fn set_rlimit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: valid pointer.
    if unsafe { libc::setrlimit(resource, &lim) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Reads (soft, hard) of a resource limit.
pub fn get_rlimit(resource: libc::__rlimit_resource_t) -> (u64, u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(resource, &mut lim) };
    (lim.rlim_cur, lim.rlim_max)
}

/// Pins the calling thread to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: CPU_SET on a valid set; out-of-range indices are ignored by the macro's bounds.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: valid pointer and size; pid 0 = calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Reads a small file into `buf` with raw syscalls (no allocation) and returns its text.
pub fn read_small<'a>(path: &CStr, buf: &'a mut [u8]) -> Option<&'a str> {
    // SAFETY: NUL-terminated path; flags are constants.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    let mut len = 0;
    while len < buf.len() {
        // SAFETY: writing into the unfilled tail of `buf`.
        let n = unsafe {
            libc::read(
                fd,
                buf[len..].as_mut_ptr() as *mut libc::c_void,
                buf.len() - len,
            )
        };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    std::str::from_utf8(&buf[..len]).ok()
}

/// A program and its arguments, prepared (allocated) ahead of the moment they are exec'd.
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
        errno()
    }
}

/// Whether the effective uid is 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Number of CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: zeroed set is valid; the kernel fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return vec![0];
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: index within the set's size.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        assert!(a > 0);
    }

    #[test]
    fn getattr_reads_the_fair_policy_of_a_fresh_thread() {
        let attr = std::thread::spawn(sched_getattr).join().unwrap().unwrap();
        // Tests may run under any policy, but a thread created by the test harness is fair or batch.
        assert!(attr.policy == 0 || attr.policy == 3 || attr.policy == 5);
    }

    #[test]
    fn setattr_changes_nice_and_reads_it_back() {
        let got = std::thread::spawn(|| {
            sched_setattr(&SchedAttr {
                policy: 0,
                nice: 5,
                ..Default::default()
            })
            .unwrap();
            sched_getattr().unwrap().nice
        })
        .join()
        .unwrap();
        assert_eq!(got, 5);
    }

    #[test]
    fn shared_slice_is_zeroed_and_shared_with_a_forked_child() {
        use std::sync::atomic::{AtomicU64, Ordering};
        let region: SharedSlice<AtomicU64> = SharedSlice::new(4).unwrap();
        assert!(region
            .as_slice()
            .iter()
            .all(|a| a.load(Ordering::SeqCst) == 0));
        // SAFETY: the child only stores to an atomic and exits.
        let pid = unsafe { fork() }.unwrap();
        if pid == 0 {
            region.as_slice()[2].store(77, Ordering::SeqCst);
            exit_now(0);
        }
        let reaped = wait4(pid, false).unwrap().unwrap();
        assert_eq!(reaped.pid, pid);
        assert_eq!(region.as_slice()[2].load(Ordering::SeqCst), 77);
    }

    #[test]
    fn read_small_reads_proc_files_without_allocating() {
        let mut buf = [0u8; 256];
        let text = read_small(c"/proc/self/schedstat", &mut buf).unwrap();
        assert!(crate::procfs::parse_schedstat(text).is_some());
        assert!(read_small(c"/nonexistent/file", &mut buf).is_none());
    }
}
