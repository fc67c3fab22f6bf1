//! The EEVDF slice probe: whether this kernel keeps a custom slice (Linux 6.12 or later).

use super::probe::errno_name;
use schedlab_sys::SchedAttr;

/// Why a cell cannot have a custom EEVDF slice here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SliceError {
    /// The probe thread could not be started.
    #[error("could not start a thread to probe the EEVDF slice: {0}")]
    NoThread(String),
    /// The kernel accepts the call but does not keep the value (before 6.12).
    #[error(
        "this kernel ({release}) does not keep a custom EEVDF slice: sched_getattr reads back sched_runtime = {got_ns} ns after asking for {asked_ns} ns; custom slices need Linux 6.12 or later (drop the slices axis or use a newer kernel)"
    )]
    Ignored {
        /// Kernel release.
        release: String,
        /// The slice asked for, ns.
        asked_ns: u64,
        /// The slice read back, ns.
        got_ns: u64,
    },
    /// The kernel refuses the call.
    #[error(
        "this kernel ({release}) refuses a custom slice of {asked_ns} ns ({}); custom EEVDF slices need Linux 6.12 or later",
        errno_name(*errno)
    )]
    Refused {
        /// Kernel release.
        release: String,
        /// The slice asked for, ns.
        asked_ns: u64,
        /// The errno of sched_setattr or sched_getattr.
        errno: i32,
    },
    /// The probe thread panicked.
    #[error("the slice probe thread panicked")]
    Panicked,
}

/// Whether this kernel keeps a custom EEVDF slice of `slice_ns` for `policy` (OTHER 0 or
/// BATCH 3): a short-lived thread asks for it with sched_setattr and reads `sched_runtime`
/// back. Kernels before 6.12 accept the call but ignore the value (and read back 0), so the
/// read-back decides. Returns the slice read back, or why the cell cannot have it.
pub fn slice_support(policy: u32, slice_ns: u64) -> Result<u64, SliceError> {
    let probe = std::thread::Builder::new()
        .name("slice-probe".into())
        .spawn(move || {
            let attr = SchedAttr {
                policy,
                nice: schedlab_sys::sched_getattr().map_or(0, |a| a.nice),
                runtime_ns: slice_ns,
                ..Default::default()
            };
            schedlab_sys::sched_setattr(&attr)?;
            schedlab_sys::sched_getattr().map(|a| a.runtime_ns)
        })
        .map_err(|e| SliceError::NoThread(e.to_string()))?;
    let release = super::kernel_release();
    match probe.join() {
        Ok(Ok(got)) if got == slice_ns => Ok(got),
        Ok(Ok(got)) => Err(SliceError::Ignored {
            release,
            asked_ns: slice_ns,
            got_ns: got,
        }),
        Ok(Err(errno)) => Err(SliceError::Refused {
            release,
            asked_ns: slice_ns,
            errno,
        }),
        Err(_) => Err(SliceError::Panicked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_slice_is_kept_and_read_back_on_this_kernel() {
        // Linux 6.12+ keeps it (this machine runs 6.18); older kernels must give a reason.
        match slice_support(0, 300_000) {
            Ok(got) => assert_eq!(got, 300_000),
            Err(e) => assert!(
                matches!(e, SliceError::Ignored { .. } | SliceError::Refused { .. }),
                "{e}"
            ),
        }
        if slice_support(0, 300_000).is_ok() {
            assert_eq!(slice_support(3, 3_000_000), Ok(3_000_000));
        }
    }
}
