//! Zero-initialised anonymous memory: shared with forked children ([`SharedSlice`]) or private
//! and untouched until written ([`PrivatePages`]); futex waits on shared words.

use bytemuck::{Pod, Zeroable};
use nix::sys::mman::{mmap_anonymous, munmap, MapFlags, ProtFlags};
use std::io;
use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Size of a mapping of `len` elements of `T` (at least one byte), or an error on overflow.
fn mapping_bytes<T>(len: usize) -> io::Result<NonZeroUsize> {
    std::mem::size_of::<T>()
        .max(1)
        .checked_mul(len.max(1))
        .and_then(NonZeroUsize::new)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))
}

/// A zero-initialised array of `T` in anonymous shared memory (`MAP_SHARED | MAP_ANONYMOUS`),
/// visible to children forked after it was made.
///
/// `T: Zeroable` makes the all-zero contents valid; `T: Sync` makes shared references to them
/// safe to use from several threads (and processes), so `T` is in practice atomics and arrays
/// of atomics. Elements are never dropped: the mapping is simply unmapped.
pub struct SharedSlice<T: Zeroable + Sync> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T: Zeroable + Sync> SharedSlice<T> {
    /// Maps `len` zeroed elements.
    pub fn new(len: usize) -> io::Result<Self> {
        // Pages are 4 KiB aligned or more: enough for any type with that alignment or less.
        if std::mem::align_of::<T>() > 4096 {
            return Err(super::SysError::OverAligned.into());
        }
        if len == 0 {
            return Ok(SharedSlice {
                ptr: NonNull::dangling(),
                len,
            });
        }
        let bytes = Self::bytes(len)?;
        // SAFETY: a new anonymous mapping at an address of the kernel's choice: it aliases
        // nothing, and the kernel fills it with zeros.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                bytes,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
            )
        }?;
        Ok(SharedSlice {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Size of the mapping for `len` elements.
    fn bytes(len: usize) -> io::Result<NonZeroUsize> {
        mapping_bytes::<T>(len)
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping holds `len` zero-filled `T`s, valid because T: Zeroable; it is
        // aligned (page-aligned, checked in `new`) and lives as long as `self`; only shared
        // references are handed out, and T: Sync makes sharing them sound. An empty slice's
        // pointer is dangling but aligned and non-null, as an empty slice needs.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable + Sync> Drop for SharedSlice<T> {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        if let Ok(bytes) = Self::bytes(self.len) {
            // SAFETY: unmapping exactly what `new` mapped; no reference into it outlives `self`.
            let _ = unsafe { munmap(self.ptr.cast(), bytes.get()) };
        }
    }
}

// SAFETY: the slice only hands out `&T`, and T: Sync makes those shareable across threads.
unsafe impl<T: Zeroable + Sync> Sync for SharedSlice<T> {}
// SAFETY: as above; moving the owner moves no `T` (elements are never dropped).
unsafe impl<T: Zeroable + Sync> Send for SharedSlice<T> {}

/// A zero-initialised array of `T` in a private anonymous mapping of its own (`MAP_PRIVATE |
/// MAP_ANONYMOUS`), whatever the allocator's state: until a page is written, reading it reads
/// the kernel's shared zero page, and only written pages take memory. Used where that matters
/// to what is measured (the matrix kernel's read-only matrices), so that a calibration thread
/// and a forked task get the same memory, which a heap allocation (`calloc` may hand out a
/// recycled, memset block of real pages, or a fresh mapping) does not promise.
pub struct PrivatePages<T: Pod> {
    ptr: NonNull<T>,
    len: usize,
}

impl<T: Pod> PrivatePages<T> {
    /// Maps `len` zeroed elements.
    pub fn new(len: usize) -> io::Result<Self> {
        if std::mem::align_of::<T>() > 4096 {
            return Err(super::SysError::OverAligned.into());
        }
        let bytes = mapping_bytes::<T>(len)?;
        // SAFETY: a new anonymous mapping at an address of the kernel's choice: it aliases
        // nothing, and the kernel fills it with zeros.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                bytes,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
            )
        }?;
        Ok(PrivatePages {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` zero-filled `T`s (valid: T: Pod), page-aligned, alive as long as
        // `self`; the borrow of `self` rules out a simultaneous `&mut`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The elements, to write.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The mapping's start address, to find it in /proc/self/smaps.
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl<T: Pod> Drop for PrivatePages<T> {
    fn drop(&mut self) {
        if let Ok(bytes) = mapping_bytes::<T>(self.len) {
            // SAFETY: unmapping exactly what `new` mapped; no reference into it outlives
            // `self`.
            let _ = unsafe { munmap(self.ptr.cast(), bytes.get()) };
        }
    }
}

impl<T: Pod> std::fmt::Debug for PrivatePages<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PrivatePages({} x {} B)",
            self.len,
            std::mem::size_of::<T>()
        )
    }
}

// SAFETY: the mapping is owned by this value alone (private, never aliased); moving it to
// another thread moves that ownership, and `&PrivatePages` only reads plain data (T: Pod).
unsafe impl<T: Pod> Send for PrivatePages<T> {}
// SAFETY: as above: shared references only read.
unsafe impl<T: Pod> Sync for PrivatePages<T> {}

/// Blocks while `*word == expected`, at most `timeout`. Works across processes (shared futex).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned u32 for the call; the timeout pointer is null or
    // valid; FUTEX_WAIT (not PRIVATE) so it works on MAP_SHARED memory. nix has no futex.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

    /// The permissions column of this process's mapping that starts at `addr`, from the
    /// kernel's own list (/proc/self/maps), e.g. `rw-s` (the `s`: shared).
    fn mapping_perms(addr: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find(|l| {
                let start = l.split('-').next().unwrap();
                usize::from_str_radix(start, 16).unwrap() == addr
            })
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .unwrap_or_else(|| panic!("no mapping at {addr:#x}"))
    }

    #[test]
    fn shared_slice_is_zeroed_and_a_shared_mapping() {
        let region: SharedSlice<AtomicU64> = SharedSlice::new(1000).unwrap();
        assert_eq!(region.as_slice().len(), 1000);
        assert!(region.as_slice().iter().all(|a| a.load(SeqCst) == 0));
        region.as_slice()[999].store(77, SeqCst);
        assert_eq!(region.as_slice()[999].load(SeqCst), 77);
        // Forked children share it because the kernel maps it shared (the fork itself is
        // tested by the integration tests: this test process has other threads).
        assert_eq!(mapping_perms(region.ptr.as_ptr() as usize), "rw-s");
    }

    #[test]
    fn private_pages_are_zero_and_take_memory_only_where_written() {
        // 64 pages of u64; reading all of them maps the zero page, which is not resident in
        // this mapping's own count; writing 3 pages makes exactly those resident.
        let mut p: PrivatePages<u64> = PrivatePages::new(64 * 512).unwrap();
        assert!(p.as_slice().iter().all(|&v| v == 0));
        assert_eq!(
            schedlab_testkit::resident_kib(p.addr()),
            0,
            "reads took memory"
        );
        for page in [0, 10, 63] {
            p.as_mut_slice()[page * 512 + 7] = 5;
        }
        assert_eq!(schedlab_testkit::resident_kib(p.addr()), 12);
        assert_eq!(p.as_slice().iter().filter(|&&v| v == 5).count(), 3);
        assert!(PrivatePages::<u64>::new(usize::MAX / 4).is_err());
    }

    #[test]
    fn an_empty_slice_is_empty_and_maps_nothing() {
        let region: SharedSlice<AtomicU64> = SharedSlice::new(0).unwrap();
        assert!(region.as_slice().is_empty());
        let addr = region.ptr.as_ptr() as usize;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mapped = maps.lines().any(|l| {
            let mut ends = l.split_whitespace().next().unwrap().split('-');
            let mut bound = || usize::from_str_radix(ends.next().unwrap(), 16).unwrap();
            let (start, end) = (bound(), bound());
            (start..end).contains(&addr)
        });
        assert!(!mapped, "an empty slice has a mapping at {addr:#x}");
    }

    #[test]
    fn an_impossible_size_is_an_error_not_a_panic() {
        assert!(SharedSlice::<AtomicU64>::new(usize::MAX / 4).is_err());
    }

    #[test]
    fn futex_wait_returns_after_its_timeout_and_wake_releases_a_waiter() {
        let word = AtomicU32::new(0);
        let t = crate::now_ns();
        futex_wait(&word, 0, Some(Duration::from_millis(20)));
        assert!(crate::now_ns() - t >= 20_000_000);
        // A changed word returns at once.
        let t = crate::now_ns();
        futex_wait(&word, 1, Some(Duration::from_secs(5)));
        assert!(crate::now_ns() - t < 1_000_000_000);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                while word.load(SeqCst) == 0 {
                    futex_wait(&word, 0, Some(Duration::from_secs(10)));
                }
                crate::now_ns()
            });
            std::thread::sleep(Duration::from_millis(20));
            let woke_at = crate::now_ns();
            word.store(1, SeqCst);
            futex_wake(&word, 1);
            let done = h.join().unwrap();
            assert!(
                done - woke_at < 5_000_000_000,
                "the waiter slept through the wake"
            );
        });
    }
}
