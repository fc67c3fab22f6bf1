//! The process table at one moment: each process's CPU time so far (its threads' and the
//! children it reaped), its parent, and whether it is a kernel thread, from `/proc/PID/stat`
//! and the threads' `schedstat`.
//!
//! Resolutions, as the kernel gives them:
//! - a thread's `schedstat` run time is its `sum_exec_runtime` in ns (CONFIG_SCHED_INFO; the
//!   value of a thread running at the moment lags by up to one scheduler tick);
//! - `/proc/PID/stat` `utime + stime` (the whole thread group, its ended threads included) and
//!   `cutime + cstime` (children it reaped) are in USER_HZ ticks, 10 ms: each reading is cut
//!   down to a whole tick.
//!
//! A process's CPU time here is the larger of its live threads' run times summed (ns, but
//! missing threads that ended) and its `utime + stime` (complete, 10 ms): never more than the
//! truth, and at most 10 ms less.

use std::collections::HashMap;
use std::path::Path;

/// `task_struct.flags` bit of a kernel thread (include/linux/sched.h).
pub const PF_KTHREAD: u64 = 0x0020_0000;
/// Nanoseconds per USER_HZ tick (100 Hz on every mainstream architecture).
pub const TICK_NS: u64 = 10_000_000;

/// The fields schedlab uses from `/proc/PID/stat` (times in USER_HZ ticks).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PidStat {
    /// Process id.
    pub pid: i32,
    /// Command name (up to 15 bytes; kernel workers rename themselves).
    pub comm: String,
    /// Parent's process id.
    pub ppid: i32,
    /// `task_struct.flags` (see [`PF_KTHREAD`]).
    pub flags: u64,
    /// User time of the thread group, ticks.
    pub utime: u64,
    /// System time of the thread group, ticks.
    pub stime: u64,
    /// User time of the children it reaped, ticks.
    pub cutime: u64,
    /// System time of the children it reaped, ticks.
    pub cstime: u64,
    /// Threads.
    pub threads: u64,
    /// Start time after boot, in clock ticks: with the pid, the process's identity.
    pub start_ticks: u64,
    /// CPU it last ran on.
    pub processor: Option<usize>,
}

/// Parses `/proc/PID/stat`. The command name sits in parentheses and may itself hold spaces
/// and parentheses, so the fields after it are counted from the last `)`.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    // Field n of proc(5) (from 1) is rest[n - 3].
    let rest: Vec<&str> = text[close + 1..].split_ascii_whitespace().collect();
    let num = |field: usize| -> Option<u64> { rest.get(field - 3)?.parse().ok() };
    Some(PidStat {
        pid,
        comm,
        ppid: rest.get(1)?.parse().ok()?,
        flags: num(9)?,
        utime: num(14)?,
        stime: num(15)?,
        cutime: num(16)?,
        cstime: num(17)?,
        threads: num(20)?,
        start_ticks: num(22)?,
        processor: num(39).map(|c| c as usize),
    })
}

/// One process of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    /// Command name.
    pub comm: String,
    /// Parent's process id.
    pub ppid: i32,
    /// A kernel thread (PF_KTHREAD).
    pub kthread: bool,
    /// Start time after boot, ticks (with the pid, its identity: pids are reused).
    pub start_ticks: u64,
    /// CPU time of the process so far, ns (see the module doc).
    pub cpu_ns: u64,
    /// CPU time of the children it reaped, ns (10 ms resolution).
    pub children_ns: u64,
}

/// Every process at one moment, by pid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcTable {
    /// The processes, by pid.
    pub procs: HashMap<i32, Proc>,
}

impl ProcTable {
    /// Reads every process under `root` (normally `/proc`). A process that ends while it is
    /// read is left out.
    pub fn scan(root: &Path) -> ProcTable {
        let mut procs = HashMap::new();
        let Ok(entries) = std::fs::read_dir(root) else {
            return ProcTable { procs };
        };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let dir = e.path();
            let Some(stat) = std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|t| parse_pid_stat(&t))
            else {
                continue;
            };
            let threads_ns = if stat.threads <= 1 {
                run_ns(&dir.join("schedstat"))
            } else {
                threads_run_ns(&dir.join("task"))
            };
            let ticks_ns = (stat.utime + stat.stime) * TICK_NS;
            procs.insert(
                pid,
                Proc {
                    kthread: stat.flags & PF_KTHREAD != 0,
                    ppid: stat.ppid,
                    start_ticks: stat.start_ticks,
                    cpu_ns: threads_ns.max(ticks_ns),
                    children_ns: (stat.cutime + stat.cstime) * TICK_NS,
                    comm: stat.comm,
                },
            );
        }
        ProcTable { procs }
    }

    /// Whether `pid` is `root` or descends from it (by the parents in this table).
    pub fn descends_from(&self, pid: i32, root: i32) -> bool {
        let mut p = pid;
        for _ in 0..self.procs.len() + 1 {
            if p == root {
                return true;
            }
            match self.procs.get(&p) {
                Some(proc) if proc.ppid != p && proc.ppid > 0 => p = proc.ppid,
                _ => return false,
            }
        }
        false
    }
}

/// The run time in a `schedstat` file, ns (0 if unreadable).
fn run_ns(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| super::parse_schedstat(&t))
        .map_or(0, |s| s.run_ns)
}

/// The run times of every thread under a `task` directory, summed, ns.
fn threads_run_ns(task_dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(task_dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|t| run_ns(&t.path().join("schedstat")))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kworker's line as Linux 6.18 prints it (fields after `)` from proc(5)).
    const KWORKER: &str = "83 (kworker/u8:3-events_unbound) I 2 0 0 0 -1 69238880 0 0 0 0 12 345 6 7 20 0 1 0 150 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

    #[test]
    fn stat_reads_parent_flags_times_threads_start_and_cpu() {
        let s = parse_pid_stat(KWORKER).unwrap();
        assert_eq!(s.pid, 83);
        assert_eq!(s.comm, "kworker/u8:3-events_unbound");
        assert_eq!(s.ppid, 2);
        // 69238880 = 0x4208060: PF_KTHREAD (0x200000) among others.
        assert_eq!(s.flags, 69_238_880);
        assert_ne!(s.flags & PF_KTHREAD, 0);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (12, 345, 6, 7));
        assert_eq!((s.threads, s.start_ticks, s.processor), (1, 150, Some(1)));
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_is_read_whole() {
        let text = KWORKER.replace("kworker/u8:3-events_unbound", "a (b) c");
        let s = parse_pid_stat(&text).unwrap();
        assert_eq!(s.comm, "a (b) c");
        assert_eq!(s.ppid, 2);
        assert_eq!(s.start_ticks, 150);
        assert_eq!(parse_pid_stat("12 (x) S 1 2"), None);
    }

    #[test]
    fn a_table_of_a_fake_proc_takes_the_larger_of_thread_and_tick_time() {
        let root = tempfile::tempdir().unwrap();
        let proc_dir = |pid: &str, stat: &str| {
            let d = root.path().join(pid);
            std::fs::create_dir_all(d.join("task")).unwrap();
            std::fs::write(d.join("stat"), stat).unwrap();
            d
        };
        // A kernel thread: schedstat 3.5 s, ticks 3.57 s (12 + 345 ticks): ticks win here.
        let k = proc_dir("83", KWORKER);
        std::fs::write(k.join("schedstat"), "3500000000 0 9\n").unwrap();
        // A process of 2 threads with 40 ms + 25.5 ms of run time; 6 ticks (60 ms) of stat.
        let user = KWORKER
            .replace("83 (kworker/u8:3-events_unbound) I 2", "900 (cc) R 1")
            .replace(" 69238880 ", " 4194304 ")
            .replace(" 12 345 6 7 20 0 1 ", " 4 2 30 0 20 0 2 ");
        let p = proc_dir("900", &user);
        for (tid, ns) in [("900", 40_000_000u64), ("901", 25_500_000)] {
            std::fs::create_dir_all(p.join("task").join(tid)).unwrap();
            std::fs::write(
                p.join("task").join(tid).join("schedstat"),
                format!("{ns} 0 1"),
            )
            .unwrap();
        }
        std::fs::create_dir_all(root.path().join("self")).unwrap();
        let t = ProcTable::scan(root.path());
        assert_eq!(t.procs.len(), 2);
        let k = &t.procs[&83];
        assert!(k.kthread);
        assert_eq!(k.cpu_ns, 357 * TICK_NS);
        assert_eq!(k.children_ns, 13 * TICK_NS);
        let u = &t.procs[&900];
        assert!(!u.kthread);
        assert_eq!(u.cpu_ns, 65_500_000, "threads' 65.5 ms beat 6 ticks");
        assert_eq!(u.children_ns, 300_000_000);
        assert!(t.descends_from(900, 1), "its parent is pid 1");
        assert!(t.descends_from(900, 900));
        assert!(!t.descends_from(83, 900));
    }

    #[test]
    fn this_process_is_in_the_real_table_with_its_own_cpu_time() {
        // Burn some CPU, then compare with the process's own clock (an independent source).
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let own = schedlab_sys::process_cpu_ns();
        let t = ProcTable::scan(Path::new("/proc"));
        let me = &t.procs[&(std::process::id() as i32)];
        assert!(!me.kthread);
        // The table's figure is at most the truth, and at most a tick below it (plus the
        // scan's own CPU time since the clock was read, which only the later reading has).
        assert!(
            me.cpu_ns <= schedlab_sys::process_cpu_ns(),
            "{} > clock",
            me.cpu_ns
        );
        assert!(
            me.cpu_ns + TICK_NS + 5_000_000 >= own,
            "{} vs {own}",
            me.cpu_ns
        );
        assert!(
            t.procs.values().any(|p| p.kthread),
            "kernel threads are listed"
        );
        assert!(t.descends_from(std::process::id() as i32, 1));
    }
}
