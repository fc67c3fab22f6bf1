//! Many threads on stacks mapped before the first is created: [`with_threads`].
//!
//! `std::thread` maps each thread's stack (and a signal stack) when it creates the thread and
//! unmaps them when the thread ends. For a trial's tasks that is work in the middle of the
//! measured period: each map splits the process's mappings under its memory lock, while the
//! tasks already created fault their stacks in under the same lock, and each unmap of a
//! process with several threads sends every CPU a TLB flush. Here the host maps every stack,
//! guard pages included, in one mapping while it is still alone (no other thread to flush or
//! to contend with), touches the top pages that every thread writes at once (its thread
//! control block and first frames), and then each creation is a `clone` and little more.
//! Hand-written: std and the thread crates (`scoped_threadpool`, `crossbeam`) create threads
//! only on stacks of their own.

use nix::sys::mman::{mmap_anonymous, mprotect, munmap, MapFlags, ProtFlags};
use std::ffi::c_void;
use std::io;
use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;

/// Bytes of a page (x86-64 and arm64 with 4 KiB pages; checked against sysconf in `new`).
const PAGE: usize = 4096;

/// The stacks of a [`with_threads`] call: `n` stacks of `stack` bytes, each above a guard page.
struct Stacks {
    base: NonNull<c_void>,
    /// Bytes of the whole mapping.
    len: usize,
    /// Bytes of one stack (a multiple of the page size), without its guard page.
    stack: usize,
    n: usize,
}

impl Stacks {
    /// Maps `n` stacks of at least `stack` bytes, makes the lowest page of each a guard page,
    /// and touches the top `touch` bytes of each.
    fn new(n: usize, stack: usize, touch: usize) -> io::Result<Stacks> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page != PAGE as i64 {
            return Err(io::Error::other(format!(
                "pages of {page} bytes: thread stacks are laid out for {PAGE}"
            )));
        }
        let stack = stack.max(libc::PTHREAD_STACK_MIN).next_multiple_of(PAGE);
        let len = (stack + PAGE)
            .checked_mul(n.max(1))
            .and_then(NonZeroUsize::new)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        // SAFETY: a new private anonymous mapping at an address of the kernel's choice; it
        // aliases nothing.
        let base = unsafe {
            mmap_anonymous(
                None,
                len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE | MapFlags::MAP_STACK,
            )
        }?;
        let stacks = Stacks {
            base,
            len: len.get(),
            stack,
            n,
        };
        for i in 0..n {
            let guard = stacks.guard(i);
            // SAFETY: the guard page lies inside the mapping made above, which nothing uses yet.
            unsafe { mprotect(guard, PAGE, ProtFlags::PROT_NONE) }?;
            let top = stacks.top(i).as_ptr().cast::<u8>();
            for off in (PAGE..=touch.min(stack)).step_by(PAGE) {
                // SAFETY: `top - off` is inside stack i (off <= stack), writable, and no
                // thread runs on it yet.
                unsafe { top.sub(off).write_volatile(0) };
            }
        }
        Ok(stacks)
    }

    /// The guard page below stack `i`.
    fn guard(&self, i: usize) -> NonNull<c_void> {
        // SAFETY: i < n, so the offset stays inside the mapping.
        unsafe { self.base.byte_add(i * (self.stack + PAGE)) }
    }

    /// The lowest address of stack `i` (just above its guard page).
    fn low(&self, i: usize) -> NonNull<c_void> {
        // SAFETY: inside the mapping (see `guard`).
        unsafe { self.guard(i).byte_add(PAGE) }
    }

    /// One past the highest byte of stack `i`.
    fn top(&self, i: usize) -> NonNull<c_void> {
        // SAFETY: at most the end of the mapping.
        unsafe { self.low(i).byte_add(self.stack) }
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped; every thread on these stacks has been
        // joined (see `with_threads`), so nothing runs on them.
        let _ = unsafe { munmap(self.base, self.len) };
    }
}

/// What a thread runs, boxed to cross `pthread_create`, and where it reports a panic.
struct Start<'env> {
    f: Box<dyn FnOnce() + Send + 'env>,
    panicked: Arc<AtomicBool>,
}

/// The threads' entry point: runs the closure, catching a panic (which must not unwind into
/// C) and recording it for [`with_threads`].
extern "C" fn start(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` is the `Box<Start>` that `Spawner::spawn` leaked for this thread alone.
    let start = unsafe { Box::from_raw(arg.cast::<Start<'static>>()) };
    let Start { f, panicked } = *start;
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        panicked.store(true, SeqCst);
    }
    std::ptr::null_mut()
}

/// Creates threads on the stacks of one [`with_threads`] call.
pub struct Spawner<'env> {
    stacks: Stacks,
    threads: Vec<libc::pthread_t>,
    panicked: Arc<AtomicBool>,
    /// The closures' borrows, which must outlive the threads.
    env: std::marker::PhantomData<&'env ()>,
}

impl<'env> Spawner<'env> {
    /// Starts `f` in a new thread on the next free stack. Fails with `EAGAIN` when every stack
    /// is taken, or with pthread_create's error.
    pub fn spawn(&mut self, f: impl FnOnce() + Send + 'env) -> io::Result<()> {
        let i = self.threads.len();
        if i >= self.stacks.n {
            return Err(io::Error::from_raw_os_error(libc::EAGAIN));
        }
        let arg = Box::into_raw(Box::new(Start {
            f: Box::new(f),
            panicked: self.panicked.clone(),
        }));
        // SAFETY: the attribute is initialised before use and destroyed after; the stack is
        // stack i of the mapping, used by no other thread (each index is handed out once),
        // and outlives the thread (joined before the mapping is unmapped). The closure may
        // borrow for 'env: `with_threads` joins the thread before it returns, and 'env
        // outlives that call.
        let err = unsafe {
            let mut attr = std::mem::zeroed::<libc::pthread_attr_t>();
            libc::pthread_attr_init(&mut attr);
            let mut err = libc::pthread_attr_setstack(
                &mut attr,
                self.stacks.low(i).as_ptr(),
                self.stacks.stack,
            );
            let mut thread: libc::pthread_t = 0;
            if err == 0 {
                err = libc::pthread_create(&mut thread, &attr, start, arg.cast());
            }
            libc::pthread_attr_destroy(&mut attr);
            if err == 0 {
                self.threads.push(thread);
            } else {
                // The thread was not created: the box is still ours.
                drop(Box::from_raw(arg));
            }
            err
        };
        match err {
            0 => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    /// Joins every thread created so far.
    fn join_all(&mut self) {
        for t in self.threads.drain(..) {
            // SAFETY: `t` is a joinable thread created by `spawn` and joined only here, once.
            unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
        }
    }
}

impl Drop for Spawner<'_> {
    fn drop(&mut self) {
        // Also when `body` panicked: no thread may outlive its stack or what it borrows.
        self.join_all();
    }
}

/// Runs `body` with a [`Spawner`] of up to `n` threads, each on a stack of `stack_bytes`
/// (with a guard page below it) mapped before `body` starts, the top `touch_bytes` of each
/// already in memory. Returns when `body` has returned and every thread it started has ended,
/// like `std::thread::scope`; a panic in a thread is raised again here.
pub fn with_threads<'env, R>(
    n: usize,
    stack_bytes: usize,
    touch_bytes: usize,
    body: impl FnOnce(&mut Spawner<'env>) -> R,
) -> io::Result<R> {
    let panicked = Arc::new(AtomicBool::new(false));
    let r = {
        let mut spawner = Spawner {
            stacks: Stacks::new(n, stack_bytes, touch_bytes)?,
            threads: Vec::with_capacity(n),
            panicked: panicked.clone(),
            env: std::marker::PhantomData,
        };
        body(&mut spawner)
        // The spawner drops here: every thread is joined.
    };
    if panicked.load(SeqCst) {
        panic!("a thread started by with_threads panicked");
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_thread_runs_on_its_own_stack_and_is_joined_before_the_call_returns() {
        let n = 64;
        let seen: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        let tids: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        with_threads(n, 64 * 1024, 16 * 1024, |s| {
            for i in 0..n {
                let (seen, tids) = (&seen[i], &tids[i]);
                s.spawn(move || {
                    let local = 0u8;
                    seen.store(&local as *const u8 as u64, SeqCst);
                    tids.store(crate::gettid() as u64, SeqCst);
                })
                .unwrap();
            }
            // One more than there are stacks is refused.
            let e = s.spawn(|| {}).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EAGAIN));
        })
        .unwrap();
        let mut addrs: Vec<u64> = seen.iter().map(|a| a.load(SeqCst)).collect();
        assert!(addrs.iter().all(|&a| a != 0), "every thread ran");
        addrs.sort();
        // Each thread's locals lie on a different stack: at least a stack's size apart.
        for w in addrs.windows(2) {
            assert!(w[1] - w[0] >= 64 * 1024, "{:#x} {:#x}", w[0], w[1]);
        }
        let mut t: Vec<u64> = tids.iter().map(|a| a.load(SeqCst)).collect();
        t.sort();
        t.dedup();
        assert_eq!(t.len(), n, "every task ran in a thread of its own");
        assert!(!t.contains(&(crate::gettid() as u64)));
    }

    #[test]
    fn a_panic_in_a_thread_is_raised_in_the_caller_after_every_thread_ended() {
        let done = AtomicU64::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_threads(2, 64 * 1024, 0, |s| {
                s.spawn(|| panic!("on purpose")).unwrap();
                s.spawn(|| {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    done.store(1, SeqCst);
                })
                .unwrap();
            })
        }));
        assert!(r.is_err(), "the panic reached the caller");
        assert_eq!(done.load(SeqCst), 1, "the other thread had ended");
    }

    #[test]
    fn a_stack_too_large_for_memory_is_an_error_not_a_crash() {
        let e = with_threads(usize::MAX / 2, 1 << 20, 0, |_| ()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOMEM));
    }
}
