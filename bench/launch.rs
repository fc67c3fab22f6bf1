//! Benchmark of the run engine itself: launch cost against a minimal fork/pthread loop, and the
//! harness's own CPU time as a share of the tasks' CPU time. Run with `cargo bench --bench launch`;
//! results are recorded in bench/README.md.

use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode, TaskPolicy};
use schedlab_core::records::TaskKind;
use schedlab_core::records::TrialStatus;
use schedlab_core::workload::{CpuKernel, Workload};
use schedlab_run::task::TaskPlan;
use schedlab_run::trial::{run_trial, TrialSetup};
use schedlab_sys::SharedSlice;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

const REPEATS: usize = 11;

fn plan(n: usize, units: u64, barrier: bool) -> TaskPlan {
    TaskPlan {
        policies: (0..n)
            .map(|i| {
                TaskPolicy::for_task(
                    PolicyKind::Other,
                    PriorityMode::Same,
                    i,
                    n,
                    None,
                    None,
                    DeadlineParams::default(),
                )
            })
            .collect(),
        workload: Workload {
            cpu_kernel: CpuKernel::Spin,
            ..Workload::default()
        },
        units,
        cpus: None,
        barrier,
        dir: None,
        run_units: 0,
        measured: n,
        antagonist_workload: None,
        antagonist_chunk: 0,
        contended: Vec::new(),
    }
}

/// schedlab, staggered: first creation to the last task's first timestamp (its release plus
/// its response; its setup comes after it), and the host's creation loop alone (first to last
/// release), ns.
fn schedlab_spawn_ns(kind: TaskKind, n: usize) -> (u64, u64) {
    let stop = AtomicBool::new(false);
    let p = plan(n, 1, false);
    let out = run_trial(&TrialSetup {
        kind,
        plan: &p,
        timeout_ns: 60_000_000_000,
        guard: false,
        interrupted: &stop,
        dir: None,
        groups: None,
    })
    .unwrap();
    assert_eq!(out.status, TrialStatus::Ok, "{:?}", out.reason);
    let first = out.tasks.iter().map(|t| t.t_release_ns).min().unwrap();
    let last = out
        .tasks
        .iter()
        .map(|t| t.t_release_ns + t.response_ns.unwrap() as u64)
        .max()
        .unwrap();
    let last_release = out.tasks.iter().map(|t| t.t_release_ns).max().unwrap();
    (last - first, last_release - first)
}

/// schedlab, barrier: release to the last task's start, ns.
fn schedlab_release_ns(kind: TaskKind, n: usize) -> u64 {
    let stop = AtomicBool::new(false);
    let p = plan(n, 1, true);
    let out = run_trial(&TrialSetup {
        kind,
        plan: &p,
        timeout_ns: 60_000_000_000,
        guard: false,
        interrupted: &stop,
        dir: None,
        groups: None,
    })
    .unwrap();
    assert_eq!(out.status, TrialStatus::Ok, "{:?}", out.reason);
    let release = out.tasks[0].t_release_ns;
    out.tasks.iter().map(|t| t.t_start_ns).max().unwrap() - release
}

/// Runs `f` in a fresh fork of this process and returns its result. The bare loops run so,
/// like schedlab's host (a fork of the launcher): a loop run here would leave its traces in
/// this process's image (glibc keeps the stacks of ended threads mapped for reuse), which every
/// later host would inherit and copy at each fork.
fn in_child(f: impl FnOnce() -> u64) -> u64 {
    let result: SharedSlice<AtomicU64> = SharedSlice::new(1).unwrap();
    // The bench is single-threaded here.
    let pid = schedlab_sys::fork().unwrap();
    if pid == 0 {
        result.as_slice()[0].store(f(), SeqCst);
        schedlab_sys::exit_now(0);
    }
    schedlab_sys::wait4(pid, false).unwrap();
    let v = result.as_slice()[0].load(SeqCst);
    assert!(v > 0, "the bare loop's process failed");
    v
}

/// Memory mappings of this process (what a fork copies one by one).
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .map(|m| m.lines().count())
        .unwrap_or(0)
}

/// Minimal fork loop: each child stores a timestamp and exits; first fork to last timestamp, ns.
fn minimal_fork_ns(n: usize) -> u64 {
    let stamps: SharedSlice<AtomicU64> = SharedSlice::new(n).unwrap();
    let t0 = schedlab_sys::now_ns();
    for s in stamps.as_slice() {
        // The bench is single-threaded here; the child only stores and exits.
        if schedlab_sys::fork().unwrap() == 0 {
            s.store(schedlab_sys::now_ns(), SeqCst);
            schedlab_sys::exit_now(0);
        }
    }
    while schedlab_sys::wait4(-1, false)
        .map(|r| r.is_some())
        .unwrap_or(false)
    {}
    stamps
        .as_slice()
        .iter()
        .map(|s| s.load(SeqCst))
        .max()
        .unwrap()
        - t0
}

/// Minimal thread loop: each thread stores a timestamp; first create to last timestamp, ns.
fn minimal_thread_ns(n: usize) -> u64 {
    let stamps: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let t0 = schedlab_sys::now_ns();
    std::thread::scope(|sc| {
        for s in &stamps {
            sc.spawn(move || s.store(schedlab_sys::now_ns(), SeqCst));
        }
    });
    stamps.iter().map(|s| s.load(SeqCst)).max().unwrap() - t0
}

/// Harness CPU share: (launcher + host CPU) / tasks' CPU, percent; the tasks' median CPU
/// time, ms; and the harness CPU per task, us.
fn harness_pct(kind: TaskKind, n: usize, units: u64) -> (f64, f64, f64) {
    let stop = AtomicBool::new(false);
    let p = plan(n, units, true);
    let out = run_trial(&TrialSetup {
        kind,
        plan: &p,
        timeout_ns: 600_000_000_000,
        guard: false,
        interrupted: &stop,
        dir: None,
        groups: None,
    })
    .unwrap();
    assert_eq!(out.status, TrialStatus::Ok, "{:?}", out.reason);
    let cpu: Vec<f64> = out
        .tasks
        .iter()
        .map(|t| (t.utime_ns + t.stime_ns) as f64)
        .collect();
    let share = 100.0 * out.harness_cpu_ns as f64 / cpu.iter().sum::<f64>();
    let per_task_us = out.harness_cpu_ns as f64 / n as f64 / 1e3;
    (share, median(cpu) / 1e6, per_task_us)
}

/// Spin units that take `ms` of CPU in a task here and now (the speed of this VM drifts by
/// tens of per cent, so a fixed count is not a fixed time): measured on one task.
fn spin_units_for_ms(ms: f64) -> u64 {
    let probe = 50_000_000u64;
    let v: Vec<f64> = (0..3)
        .map(|_| harness_pct(TaskKind::Thread, 1, probe).1)
        .collect();
    (probe as f64 * ms / median(v)) as u64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // Orphans come back to us, as in `schedlab run`.
    schedlab_sys::become_child_subreaper().unwrap();
    let n = 1000;
    println!(
        "launch cost, {n} trivial tasks, median of {REPEATS} (interleaved side by side); this process has {} mappings",
        mappings()
    );
    // SCHEDLAB_BENCH_ONLY=process|thread runs that kind's launch measure alone, =harness the
    // harness shares alone (for perf).
    let only = std::env::var("SCHEDLAB_BENCH_ONLY").ok();
    for kind in [TaskKind::Process, TaskKind::Thread] {
        if only.as_deref().is_some_and(|o| o != kind.name()) {
            continue;
        }
        let (mut ours, mut base, mut rel, mut looped) = (vec![], vec![], vec![], vec![]);
        for _ in 0..REPEATS {
            let (spawn_ns, loop_ns) = schedlab_spawn_ns(kind, n);
            ours.push(spawn_ns as f64 / 1e6);
            looped.push(loop_ns as f64 / 1e6);
            base.push(
                in_child(|| match kind {
                    TaskKind::Process => minimal_fork_ns(n),
                    TaskKind::Thread => minimal_thread_ns(n),
                }) as f64
                    / 1e6,
            );
            rel.push(schedlab_release_ns(kind, n) as f64 / 1e6);
        }
        let (o, b) = (median(ours), median(base));
        println!(
            "  {:<8} staggered creation->last start: schedlab {o:8.2} ms (its creation loop {:.2} ms), minimal loop {b:8.2} ms, ratio {:.2}; barrier release->last start {:.2} ms",
            kind.name(),
            median(looped),
            o / b,
            median(rel)
        );
    }
    if only.as_deref().is_some_and(|o| o != "harness") {
        return;
    }
    println!(
        "harness CPU (launcher + host) as a share of the tasks' CPU, median of 3; this process has {} mappings",
        mappings()
    );
    for (n, ms) in [(10usize, 40.0), (500, 20.0)] {
        let units = spin_units_for_ms(ms);
        for kind in [TaskKind::Process, TaskKind::Thread] {
            let runs: Vec<(f64, f64, f64)> = (0..3).map(|_| harness_pct(kind, n, units)).collect();
            let pick = |f: fn(&(f64, f64, f64)) -> f64| median(runs.iter().map(f).collect());
            let per_task_us = pick(|r| r.2);
            println!(
                "  {n:>3} {:<8} tasks of ~{ms} ms: {:.3} % of the tasks' CPU (their median {:.1} ms); {per_task_us:.0} us per task, i.e. {:.3} % of {ms} ms",
                kind.name(),
                pick(|r| r.0),
                pick(|r| r.1),
                per_task_us / (ms * 10.0)
            );
        }
    }
}
