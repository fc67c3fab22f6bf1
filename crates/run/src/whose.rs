//! Whose work a trial's outside CPU time was: other processes, kernel threads, or interrupts.
//! The process table and the per-CPU interrupt ticks are read at the trial's boundaries
//! (outside the measured region, beside the busy counters of `interference.rs`) and at the
//! start of the settle window, whose kernel work per second is the machine's own rate.
//!
//! - A process is known by its pid and start time (pids are reused; kernel workers rename
//!   themselves). Its CPU time over the trial is the difference of its two readings
//!   (`schedlab_procfs::procs`: ns per live thread, 10 ms for ended threads), plus what its
//!   children that ended during the trial used (its `cutime + cstime`, 10 ms ticks), less
//!   what those children had used before the trial. A process that started during the
//!   trial counts whole. This process and its descendants (launcher, hosts, tasks, the
//!   programs' children: the launcher is their subreaper) are the trial's own and left out.
//! - Kernel threads (PF_KTHREAD) count on the trial's CPUs in proportion to the CPUs they may
//!   run on (a per-CPU kworker wholly on its CPU, an unbound one by share: an estimate).
//! - Other processes allowed on any of the trial's CPUs count whole: an upper bound of their
//!   work there, which `interference.rs` bounds again by the CPUs' own busy time.
//! - Interrupts: hard and soft irq ticks of `/proc/stat` on the trial's CPUs, in USER_HZ
//!   units (10 ms). Without CONFIG_IRQ_TIME_ACCOUNTING (this VM: TICK_CPU_ACCOUNTING, HZ 250)
//!   they are samples at the scheduler tick (4 ms apart), the interrupt's time meanwhile
//!   charged to the task it interrupted; with it, exact time cut to 10 ms. No finer per-CPU
//!   source of interrupt time exists here: `/proc/softirqs` and `/proc/interrupts` count
//!   events, not time, `/proc/pressure/irq` needs CONFIG_IRQ_TIME_ACCOUNTING (and is
//!   system-wide), and `/proc/schedstat` (CONFIG_SCHEDSTATS) is absent. Softirq work that
//!   runs in `ksoftirqd` is a kernel thread's, counted there in ns.
//! - Kernel threads' time is ns-exact: their `schedstat` (CONFIG_SCHED_INFO, here through
//!   TASK_DELAY_ACCT). Their `/proc/PID/stat` times are 10 ms ticks.

use schedlab_core::warning::OutsideProcess;
use schedlab_procfs::{ProcTable, TICK_NS};

/// Most outside processes named in a warning.
pub const TOP: usize = 3;

/// The process table and the interrupt ticks per CPU at one moment.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// CLOCK_MONOTONIC at the reading, ns.
    pub t_ns: u64,
    table: ProcTable,
    /// Hard + soft irq ticks per CPU since boot.
    irq_ticks: Vec<(usize, u64)>,
}

impl Scan {
    /// Reads `/proc` now.
    pub fn take() -> Scan {
        let irq_ticks = super::noise::cpu_ticks()
            .into_iter()
            .map(|(c, t)| (c, t.irq + t.softirq))
            .collect();
        Scan {
            table: ProcTable::scan(std::path::Path::new("/proc")),
            irq_ticks,
            t_ns: schedlab_sys::now_ns(),
        }
    }
}

/// The outside CPU time on a trial's CPUs between two scans, by whose it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    /// Other processes allowed on the trial's CPUs, their whole CPU time, ns (an upper bound).
    pub process_ns: u64,
    /// Kernel threads, their share on the trial's CPUs, ns.
    pub kthread_ns: u64,
    /// Hard and soft interrupts on the trial's CPUs, ns (10 ms ticks).
    pub irq_ns: u64,
    /// The other processes that used the most, most first (at most [`TOP`]).
    pub top: Vec<OutsideProcess>,
}

impl Split {
    /// The kernel's work (kernel threads and interrupts), ns.
    pub fn kernel_ns(&self) -> u64 {
        self.kthread_ns + self.irq_ns
    }
}

/// What `before` to `after` shows on `cpus`, leaving out process `me` and its descendants;
/// `affinity` gives the CPUs a pid may use (None: unknown, counted as the trial's).
pub fn split(
    before: &Scan,
    after: &Scan,
    cpus: &[usize],
    me: i32,
    affinity: &dyn Fn(i32) -> Option<Vec<usize>>,
) -> Split {
    let ours = |pid: i32| after.table.descends_from(pid, me) || before.table.descends_from(pid, me);
    // Per process: (its own CPU time over the trial, its reaped children's).
    let mut used: std::collections::HashMap<i32, (u64, u64)> = std::collections::HashMap::new();
    for (&pid, a) in &after.table.procs {
        if ours(pid) {
            continue;
        }
        let delta = match before.table.procs.get(&pid) {
            Some(b) if b.start_ticks == a.start_ticks => (
                a.cpu_ns.saturating_sub(b.cpu_ns),
                a.children_ns.saturating_sub(b.children_ns),
            ),
            _ => (a.cpu_ns, a.children_ns),
        };
        used.insert(pid, delta);
    }
    // A child that ended during the trial lands in its parent's children time whole: take off
    // what it had used before the trial.
    for (&pid, b) in &before.table.procs {
        let ended = after
            .table
            .procs
            .get(&pid)
            .is_none_or(|a| a.start_ticks != b.start_ticks);
        if let (true, Some(u)) = (ended, used.get_mut(&b.ppid)) {
            u.1 = u.1.saturating_sub(b.cpu_ns + b.children_ns);
        }
    }
    let mut out = Split::default();
    let mut procs: Vec<OutsideProcess> = Vec::new();
    for (pid, (cpu, children)) in used {
        let ns = cpu + children;
        let Some(a) = after.table.procs.get(&pid).filter(|_| ns > 0) else {
            continue;
        };
        let allowed = affinity(pid);
        let on = allowed.as_ref().map_or(cpus.len(), |l| {
            l.iter().filter(|c| cpus.contains(c)).count()
        });
        if a.kthread {
            let of = allowed.as_ref().map_or(cpus.len(), Vec::len).max(1);
            out.kthread_ns += (ns as u128 * on as u128 / of as u128) as u64;
        } else if on > 0 {
            out.process_ns += ns;
            procs.push(OutsideProcess {
                comm: a.comm.clone(),
                pid,
                cpu_ms: ns as f64 / 1e6,
            });
        }
    }
    procs.sort_by(|x, y| y.cpu_ms.total_cmp(&x.cpu_ms).then(x.pid.cmp(&y.pid)));
    procs.truncate(TOP);
    out.top = procs;
    out.irq_ns = irq_ticks_on(&after.irq_ticks, cpus)
        .saturating_sub(irq_ticks_on(&before.irq_ticks, cpus))
        * TICK_NS;
    out
}

/// The irq ticks of `cpus` summed.
fn irq_ticks_on(ticks: &[(usize, u64)], cpus: &[usize]) -> u64 {
    ticks
        .iter()
        .filter(|(c, _)| cpus.contains(c))
        .map(|(_, t)| t)
        .sum()
}

/// The machine's own kernel work on a trial's CPUs per ns of wall time (kernel threads and
/// interrupts in the settle window before it), and the trial's share of it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KernelRate {
    /// Kernel CPU ns per wall ns in the settle window.
    pub per_ns: f64,
}

impl KernelRate {
    /// The rate of `window` (a split over the settle window) lasting `wall_ns`.
    pub fn of(window: &Split, wall_ns: u64) -> KernelRate {
        KernelRate {
            per_ns: window.kernel_ns() as f64 / wall_ns.max(1) as f64,
        }
    }

    /// The kernel work a trial of `wall_ns` with `trial` outside it caused, ns: its kernel
    /// threads' and interrupts' time less what the settle window's rate gives for as long.
    pub fn induced_ns(&self, trial: &Split, wall_ns: u64) -> u64 {
        let baseline = (self.per_ns * wall_ns as f64).round() as u64;
        trial.kernel_ns().saturating_sub(baseline)
    }
}

#[cfg(test)]
#[path = "whose_tests.rs"]
mod tests;
