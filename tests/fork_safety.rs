//! Fork only from a single-threaded process: once the main process has a thread it may not fork,
//! and the launcher (forked before any thread existed) still forks every trial's host.
//!
//! A plain `main` (harness = false): libtest would run this in a process that already has
//! several threads.

use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode, TaskPolicy};
use schedlab_core::records::{TaskKind, TrialStatus};
use schedlab_core::workload::{CpuKernel, Workload};
use schedlab_run::launcher::{Launcher, Request};
use schedlab_run::task::TaskPlan;
use std::sync::atomic::AtomicBool;

/// Two tasks of spin work under OTHER.
fn two_spinning_tasks(kind: TaskKind) -> Request {
    let n = 2;
    Request {
        kind,
        plan: TaskPlan {
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
            units: 1000,
            cpus: None,
            barrier: true,
            dir: None,
            run_units: 0,
            measured: n,
            antagonist_workload: None,
            antagonist_chunk: 0,
            contended: Vec::new(),
        },
        timeout_ns: 30_000_000_000,
        guard: false,
        groups: None,
    }
}

fn main() {
    assert_eq!(
        schedlab_sys::thread_count().unwrap(),
        1,
        "the test starts alone"
    );
    let mut launcher = Launcher::start().expect("a single-threaded process may fork");

    // A thread of the main process, as the sampler or a calibration would be.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let helper = std::thread::spawn(move || rx.recv());
    assert_eq!(schedlab_sys::thread_count().unwrap(), 2);
    let refused = schedlab_sys::fork().expect_err("a process with two threads may not fork");
    assert!(
        matches!(
            schedlab_sys::SysError::of(&refused),
            Some(schedlab_sys::SysError::MultiThreaded { threads: 2 })
        ),
        "refused as a multi-threaded process: {refused}"
    );

    // The launcher is still alone, so it forks the host; the host starts with one thread.
    for kind in [TaskKind::Process, TaskKind::Thread] {
        let o = launcher
            .run_trial(&two_spinning_tasks(kind), &AtomicBool::new(false))
            .expect("the launcher answers");
        assert_eq!(o.status, TrialStatus::Ok, "{kind:?}: {:?}", o.reason);
        assert_eq!(
            o.launcher_threads, 1,
            "{kind:?}: the launcher was alone at the fork"
        );
        assert_eq!(
            o.host_threads, 1,
            "{kind:?}: /proc of the new host shows one thread"
        );
        assert_eq!(o.tasks.len(), 2);
        assert!(o
            .tasks
            .iter()
            .all(|t| t.work_units == 1000 && t.t_end_ns > t.t_start_ns));
        assert!(
            !schedlab_sys::group_alive(o.pgid),
            "{kind:?}: nothing of the trial is left"
        );
    }
    tx.send(()).unwrap();
    helper.join().unwrap().unwrap();
    let pid = launcher.pid();
    drop(launcher);
    assert!(
        !schedlab_sys::process_exists(pid),
        "the launcher ends with its owner"
    );
    println!("fork_safety: ok (the launcher forked both hosts while this process had 2 threads)");
}
