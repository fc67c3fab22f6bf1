//! Tests of the split of outside work by whose it was, on process tables written by hand.

use super::*;
use schedlab_procfs::Proc;

const MS: u64 = 1_000_000;

fn proc(comm: &str, ppid: i32, kthread: bool, start: u64, cpu_ms: u64, children_ms: u64) -> Proc {
    Proc {
        comm: comm.into(),
        ppid,
        kthread,
        start_ticks: start,
        cpu_ns: cpu_ms * MS,
        children_ns: children_ms * MS,
    }
}

fn scan(t_ms: u64, procs: Vec<(i32, Proc)>, irq: [u64; 2]) -> Scan {
    Scan {
        t_ns: t_ms * MS,
        table: ProcTable {
            procs: procs.into_iter().collect(),
        },
        irq_ticks: vec![(0, irq[0]), (1, irq[1])],
    }
}

/// CPUs 0 and 1; the trial runs on CPU 0; this process is pid 100.
fn affinity(pid: i32) -> Option<Vec<usize>> {
    match pid {
        // Per-CPU kworker of CPU 0; an unbound one; a process pinned to CPU 1.
        10 => Some(vec![0]),
        11 => Some(vec![0, 1]),
        30 => Some(vec![1]),
        _ => Some(vec![0, 1]),
    }
}

#[test]
fn outside_work_is_split_into_processes_kernel_threads_and_interrupts() {
    let before = scan(
        0,
        vec![
            (1, proc("init", 0, false, 1, 1000, 5000)),
            (2, proc("kthreadd", 0, true, 1, 10, 0)),
            (10, proc("kworker/0:1", 2, true, 5, 100, 0)),
            (11, proc("kworker/u4:2", 2, true, 6, 200, 0)),
            (20, proc("make", 1, false, 50, 40, 900)),
            (21, proc("cc1", 20, false, 60, 100, 0)),
            (30, proc("pinned", 1, false, 70, 500, 0)),
            (40, proc("old", 1, false, 80, 7, 0)),
            (100, proc("schedlab", 1, false, 90, 3000, 0)),
            (101, proc("launcher", 100, false, 91, 10, 2000)),
            (102, proc("host", 101, false, 95, 1, 0)),
        ],
        [10, 50],
    );
    let after = scan(
        200,
        vec![
            (1, proc("init", 0, false, 1, 1001, 5000)),
            (2, proc("kthreadd", 0, true, 1, 10, 0)),
            // 30 ms on CPU 0; 20 ms of an unbound worker, half of it counted on CPU 0.
            (10, proc("kworker/0:1-ev", 2, true, 5, 130, 0)),
            (11, proc("kworker/u4:2-fl", 2, true, 6, 220, 0)),
            // make ran 5 ms and reaped cc1, which had used 100 ms before and 25 ms more.
            (20, proc("make", 1, false, 50, 45, 1025)),
            // On CPU 1 only: not the trial's.
            (30, proc("pinned", 1, false, 70, 900, 0)),
            // Pid 40 was reused by a process started during the trial: whole, 12 ms.
            (40, proc("new", 1, false, 150, 12, 0)),
            // This process and its descendants are the trial's own.
            (100, proc("schedlab", 1, false, 90, 3300, 0)),
            (101, proc("launcher", 100, false, 91, 11, 2600)),
            (103, proc("task", 101, false, 120, 150, 0)),
        ],
        [13, 80],
    );
    let s = split(&before, &after, &[0], 100, &affinity);
    assert_eq!(s.kthread_ns, 40 * MS, "30 ms + 20 ms x 1/2");
    // init 1 + make 5 + cc1 25 (its 125 ms reaped, less its 100 before) + new 12.
    assert_eq!(s.process_ns, 43 * MS);
    assert_eq!(s.irq_ns, 30 * MS, "3 ticks on CPU 0");
    assert_eq!(s.kernel_ns(), 70 * MS);
    let top: Vec<(&str, i32, f64)> = s
        .top
        .iter()
        .map(|p| (p.comm.as_str(), p.pid, p.cpu_ms))
        .collect();
    assert_eq!(
        top,
        vec![("make", 20, 30.0), ("new", 40, 12.0), ("init", 1, 1.0)]
    );
    // The same tables on both CPUs: the pinned process counts, and the whole unbound worker.
    let both = split(&before, &after, &[0, 1], 100, &affinity);
    assert_eq!(both.process_ns, 443 * MS);
    assert_eq!(both.kthread_ns, 50 * MS);
    assert_eq!(both.irq_ns, 330 * MS);
}

#[test]
fn the_kernel_work_a_trial_caused_is_its_kernel_time_beyond_the_settle_windows_rate() {
    // Settle window: 100 ms with 20 ms of kernel work (0.2 of a CPU).
    let window = Split {
        kthread_ns: 15 * MS,
        irq_ns: 5 * MS,
        ..Split::default()
    };
    let rate = KernelRate::of(&window, 100 * MS);
    assert!((rate.per_ns - 0.2).abs() < 1e-12);
    // A trial of 200 ms with 100 ms of it: 40 ms were the machine's anyway, 60 ms its own.
    let trial = Split {
        kthread_ns: 70 * MS,
        irq_ns: 30 * MS,
        ..Split::default()
    };
    assert_eq!(rate.induced_ns(&trial, 200 * MS), 60 * MS);
    // Less than the rate: nothing induced.
    assert_eq!(rate.induced_ns(&window, 200 * MS), 0);
}

#[test]
fn a_real_scan_finds_kernel_threads_and_leaves_this_process_out() {
    let a = Scan::take();
    let mut x = 0u64;
    for i in 0..30_000_000u64 {
        x = x.wrapping_mul(17).wrapping_add(i);
    }
    std::hint::black_box(x);
    let b = Scan::take();
    assert!(b.t_ns > a.t_ns);
    assert!(b.table.procs.values().any(|p| p.kthread));
    let me = schedlab_sys::getpid();
    let everyone = split(&a, &b, &schedlab_sys::allowed_cpus(), -1, &|_| None);
    let others = split(&a, &b, &schedlab_sys::allowed_cpus(), me, &|_| None);
    // This process burned CPU between the scans: counted only when it is not ours.
    assert!(
        everyone.top.iter().any(|p| p.pid == me),
        "{:?}",
        everyone.top
    );
    assert!(others.top.iter().all(|p| p.pid != me), "{:?}", others.top);
}
