//! Scheduling attributes (`sched_setattr`/`sched_getattr`, raw: neither libc nor nix wraps
//! them) and CPU affinity (nix's `CpuSet`, bound-checked).

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use std::io;

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
    // SAFETY: sched_attr is plain old data (integers); all-zero is a valid value.
    let mut raw: libc::sched_attr = unsafe { std::mem::zeroed() };
    raw.size = std::mem::size_of::<libc::sched_attr>() as u32;
    raw.sched_policy = attr.policy;
    raw.sched_flags = attr.flags;
    raw.sched_nice = attr.nice;
    raw.sched_priority = attr.priority;
    raw.sched_runtime = attr.runtime_ns;
    raw.sched_deadline = attr.deadline_ns;
    raw.sched_period = attr.period_ns;
    // SAFETY: the pointer is valid for the call and `size` says how much the kernel may read;
    // pid 0 means the calling thread.
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
        Err(super::errno())
    }
}

/// Reads the calling thread's scheduling attributes back from the kernel. Returns the raw
/// errno on failure.
pub fn sched_getattr() -> Result<SchedAttr, i32> {
    // SAFETY: as above.
    let mut raw: libc::sched_attr = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::sched_attr>() as u32;
    // SAFETY: valid out-pointer; the kernel writes at most `size` bytes; pid 0 is the caller.
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
        return Err(super::errno());
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

/// How many CPUs an affinity mask can name (glibc's `cpu_set_t`: CPUs 0..1023).
pub const CPU_SET_CAPACITY: usize = CpuSet::count();

/// The affinity mask of `cpus`; an error naming the CPU and the limit when one is at or above
/// [`CPU_SET_CAPACITY`].
pub fn cpu_set(cpus: &[usize]) -> io::Result<CpuSet> {
    let mut set = CpuSet::new();
    for &c in cpus {
        if set.set(c).is_err() {
            return Err(super::SysError::CpuBeyondMask {
                cpu: c,
                capacity: CPU_SET_CAPACITY,
            }
            .into());
        }
    }
    Ok(set)
}

/// Pins the calling thread to `cpus`. A CPU at or above [`CPU_SET_CAPACITY`] is refused with
/// an `InvalidInput` error that names it; the kernel's refusals keep their errno.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    let set = cpu_set(cpus)?;
    sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from)
}

/// The CPU the calling thread runs on now (glibc's `sched_getcpu`, a vDSO call: no system
/// call, no allocation); 0 if it cannot be read.
#[inline]
pub fn current_cpu() -> usize {
    nix::sched::sched_getcpu().unwrap_or(0)
}

/// The CPUs this process may run on (`[0]` if the mask cannot be read).
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CPU_SET_CAPACITY)
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => vec![0],
    }
}

/// The CPUs process or thread `pid` may run on; None when it cannot be read (it ended).
pub fn affinity_of(pid: i32) -> Option<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(pid)).ok()?;
    Some(
        (0..CPU_SET_CAPACITY)
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// Makes `command`'s child pin itself to `cpus` between fork and exec. The mask is built
/// here, so a CPU out of range is refused now (as in [`cpu_set`]), not in the child.
pub fn pin_command(command: &mut std::process::Command, cpus: &[usize]) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    let set = cpu_set(cpus)?;
    // SAFETY: the hook runs in the forked child before exec; it only makes the
    // sched_setaffinity syscall on a mask copied into the closure (no allocation, no lock),
    // which is async-signal-safe, and touches nothing but the child.
    unsafe {
        command
            .pre_exec(move || sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn setattr_refusal_returns_the_kernels_errno() {
        // Policy 42 does not exist: the kernel answers EINVAL (22).
        let e = std::thread::spawn(|| {
            sched_setattr(&SchedAttr {
                policy: 42,
                ..Default::default()
            })
        })
        .join()
        .unwrap();
        assert_eq!(e, Err(22));
    }

    #[test]
    fn a_cpu_beyond_the_mask_is_refused_with_its_number_and_the_limit() {
        assert_eq!(CPU_SET_CAPACITY, 1024);
        let e = std::thread::spawn(|| set_affinity(&[0, 2000]))
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let msg = e.to_string();
        assert!(
            msg.contains("CPU 2000") && msg.contains("0 to 1023"),
            "{msg}"
        );
        assert!(cpu_set(&[1024]).is_err());
        assert!(cpu_set(&[1023]).is_ok());
        let mut cmd = std::process::Command::new("true");
        assert!(pin_command(&mut cmd, &[5000]).is_err());
    }

    #[test]
    fn affinity_set_in_a_thread_is_what_the_kernel_reports() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let cpu = *allowed.last().unwrap();
        // The kernel's own view: Cpus_allowed_list of this thread in /proc.
        let list = std::thread::spawn(move || {
            set_affinity(&[cpu]).unwrap();
            std::fs::read_to_string("/proc/thread-self/status").unwrap()
        })
        .join()
        .unwrap();
        let line = list
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .unwrap();
        assert_eq!(
            line.split_whitespace().nth(1),
            Some(cpu.to_string().as_str())
        );
    }

    #[test]
    fn a_pinned_command_runs_on_its_cpu() {
        let cpu = *allowed_cpus().last().unwrap();
        let mut cmd = std::process::Command::new("grep");
        cmd.args(["Cpus_allowed_list", "/proc/self/status"]);
        pin_command(&mut cmd, &[cpu]).unwrap();
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.split_whitespace().nth(1),
            Some(cpu.to_string().as_str()),
            "{text}"
        );
    }
}
