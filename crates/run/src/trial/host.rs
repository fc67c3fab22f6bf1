//! The trial's host process: its own process group; creates the tasks, reaps them, exits.

use super::super::task::{self, Header, Slot};
use super::links::Channels;
use super::reap::{read_zombie_counters, store_reaped};
use super::recorded::hist_chunk;
use super::{groups, TrialMemory, TrialSetup};
use schedlab_core::policy::{self, PolicyKind};
use schedlab_core::records::TaskKind;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

/// Exit status of a host that could not make its tasks' channels (too many open files, ...).
const EXIT_CHANNELS: i32 = 4;

/// Reaps the next task. For commands (exec'd programs that cannot record their own end), the
/// host records it: the end time, and the main thread's run-queue wait, timeslices and
/// migrations read from /proc while the program is a zombie; then it counts the task out.
fn reap_next(
    h: &Header,
    slots: &[Slot],
    commands: bool,
) -> std::io::Result<Option<schedlab_sys::Reaped>> {
    if !commands {
        return schedlab_sys::wait4(-1, false);
    }
    let Some(pid) = schedlab_sys::wait_exited_nowait()? else {
        return Ok(None);
    };
    let t_end = schedlab_sys::now_ns();
    if let Some(slot) = slots.iter().find(|s| s.pid.load(SeqCst) == pid) {
        read_zombie_counters(pid, slot);
        let state = slot.state.load(SeqCst);
        if state == task::STATE_NEW || state == task::STATE_READY {
            slot.t_end_ns.store(t_end, SeqCst);
            slot.work_units.store(1, SeqCst);
            slot.state.store(task::STATE_DONE, SeqCst);
            task::count_out(h);
        }
    }
    schedlab_sys::wait4(pid, false)
}

/// The host process: its own process group; creates the tasks, reaps them, exits.
pub(super) fn host_main(setup: &TrialSetup, mem: &TrialMemory, launcher: i32) -> ! {
    become_host(setup, mem.hdr, launcher);
    let channels = Channels::new(&setup.plan.workload, setup.plan.measured);
    // Each task is born in its task group: the host moves into it first.
    let placer = groups::Placer::start(setup.groups);
    match setup.kind {
        TaskKind::Process => fork_tasks(setup, mem, channels, placer),
        TaskKind::Thread => spawn_threads(setup, mem, channels, placer),
    }
    let (ut, st, _, _) = schedlab_sys::rusage_thread();
    mem.hdr.host_cpu_ns.store(ut + st, SeqCst);
    schedlab_sys::exit_now(0)
}

/// The host's own settings: its thread count recorded, its process group, death with the
/// launcher, default signals, the guard priority, the staggered spawner's policy and affinity
/// (which its tasks inherit), and the RT time limit.
fn become_host(setup: &TrialSetup, h: &Header, launcher: i32) {
    h.host_threads
        .store(schedlab_sys::thread_count().unwrap_or(0) as u32, SeqCst);
    let _ = schedlab_sys::setpgid(0, 0);
    schedlab_sys::die_with_parent(launcher);
    // The launcher handles Ctrl-C, SIGTERM and SIGHUP; the host dies with it or by SIGKILL.
    let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGINT);
    let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGTERM);
    // The launcher ignores SIGPIPE; tasks and the programs they run get the default.
    let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGPIPE);
    if !schedlab_sys::signal_ignored(schedlab_sys::Signal::SIGHUP) {
        let _ = schedlab_sys::restore_default_signal(schedlab_sys::Signal::SIGHUP);
    }
    let plan = setup.plan;
    if setup.guard {
        // Above every RT worker, so creation and reaping are never starved; children reset.
        let _ = schedlab_sys::sched_setattr(&schedlab_sys::SchedAttr {
            policy: PolicyKind::Fifo.number(),
            priority: policy::RT_LAUNCHER,
            flags: schedlab_sys::FLAG_RESET_ON_FORK,
            ..Default::default()
        });
    }
    if !plan.barrier {
        // Staggered, as the studies did: the spawner runs at the cell's policy (at the level of
        // its highest task) and the tasks inherit it through fork/clone, so a task waits for its
        // first run under its own policy and that wait counts in its response. DEADLINE tasks
        // cannot be forked from, so the spawner keeps the guard for them.
        if let Some(top) = plan
            .policies
            .first()
            .filter(|p| p.kind != PolicyKind::Deadline)
        {
            if top.apply().is_ok() {
                h.spawner_policy.store(1, SeqCst);
            }
        }
        // Tasks are born on their CPUs, as they inherit the spawner's affinity.
        if let Some(cpus) = &plan.cpus {
            let _ = schedlab_sys::set_affinity(cpus);
        }
    }
    if plan.policies.iter().any(|p| p.kind.needs_guard()) {
        let us = setup.timeout_ns / 1000;
        let _ = schedlab_sys::set_rlimit(schedlab_sys::Resource::RLIMIT_RTTIME, us, us);
    }
}

/// Forks one process per task (the host is single-threaded), then reaps them all.
fn fork_tasks(
    setup: &TrialSetup,
    mem: &TrialMemory,
    mut channels: Channels,
    mut placer: Option<groups::Placer>,
) {
    let (h, slots, plan) = (mem.hdr, mem.slots, setup.plan);
    let me = schedlab_sys::getpid();
    let commands = plan.workload.kind == schedlab_core::workload::WorkloadKind::Command;
    for (i, slot) in slots.iter().enumerate() {
        if !plan.barrier && i > 0 && plan.workload.start_gap_ns > 0 {
            std::thread::sleep(Duration::from_nanos(plan.workload.start_gap_ns));
        }
        if !groups::place(placer.as_mut(), h, slot, plan, i) {
            continue;
        }
        if channels.open_for(i).is_err() {
            schedlab_sys::exit_now(EXIT_CHANNELS);
        }
        // The host is single-threaded. Staggered: the release is stamped just before
        // the fork (after fork's thread check).
        match schedlab_sys::fork_stamped((!plan.barrier).then_some(&slot.t_release_ns)) {
            Ok(0) => {
                schedlab_sys::die_with_parent(me);
                channels.keep_only(i);
                let links = channels.links(i, mem.words, mem.cpu_locks);
                let hist = hist_chunk(mem.hists, i);
                task::task_main(h, slot, hist, plan, setup.dir, i, links);
                schedlab_sys::exit_now(0);
            }
            Ok(pid) => slot.pid.store(pid, SeqCst),
            Err(_) => schedlab_sys::exit_now(3),
        }
        channels.close_after(i);
    }
    if let Some(p) = placer {
        p.finish();
    }
    while let Ok(Some(r)) = reap_next(h, slots, commands) {
        store_reaped(slots, &r);
    }
}

/// Bytes of a task thread's stack (a task's frames need a few KiB; command tasks are processes).
const TASK_STACK_BYTES: usize = 256 * 1024;

/// Bytes at the top of each task thread's stack put in memory before the first task starts:
/// what every thread writes at once (its thread control block, thread-locals and first
/// frames), so that staggered tasks do not fault them in while others are measured.
const TASK_STACK_TOUCH_BYTES: usize = 16 * 1024;

/// Starts one thread per task and waits for them all. Their stacks are mapped before the first
/// one starts (`schedlab_sys::with_threads`), so creating a thread maps nothing.
fn spawn_threads(
    setup: &TrialSetup,
    mem: &TrialMemory,
    mut channels: Channels,
    mut placer: Option<groups::Placer>,
) {
    let (h, slots, hists, plan) = (mem.hdr, mem.slots, mem.hists, setup.plan);
    if channels.open_all().is_err() {
        schedlab_sys::exit_now(EXIT_CHANNELS);
    }
    let channels = &channels;
    let made =
        schedlab_sys::with_threads(slots.len(), TASK_STACK_BYTES, TASK_STACK_TOUCH_BYTES, |s| {
            for (i, slot) in slots.iter().enumerate() {
                if !groups::place(placer.as_mut(), h, slot, plan, i) {
                    continue;
                }
                if !plan.barrier {
                    slot.t_release_ns.store(schedlab_sys::now_ns(), SeqCst);
                }
                let links = channels.links(i, mem.words, mem.cpu_locks);
                let run = move || {
                    let hist = hist_chunk(hists, i);
                    task::task_main(h, slot, hist, plan, setup.dir, i, links)
                };
                if s.spawn(run).is_err() {
                    schedlab_sys::exit_now(3);
                }
            }
            if let Some(p) = placer {
                p.finish();
            }
        });
    if made.is_err() {
        schedlab_sys::exit_now(3);
    }
}
