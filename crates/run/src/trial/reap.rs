//! Reaping a trial's processes: every member of its group, with the counters of each zombie.

use super::super::task::Slot;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

/// Stores the run-queue wait, timeslices and migrations of an exited, unreaped task (its main
/// thread's: the counters of threads and child processes that ended before it are gone).
pub(super) fn read_zombie_counters(pid: i32, slot: &Slot) {
    let read = |f: &str| std::fs::read_to_string(format!("/proc/{pid}/{f}")).ok();
    if let Some(s) = read("schedstat")
        .as_deref()
        .and_then(schedlab_procfs::parse_schedstat)
    {
        slot.run_delay_ns.store(s.run_delay_ns, SeqCst);
        slot.timeslices.store(s.timeslices, SeqCst);
    }
    if let Some(m) = read("sched").and_then(|t| schedlab_procfs::parse_sched(&t).nr_migrations) {
        slot.migrations.store(m, SeqCst);
    }
}

/// Stores a reaped task's rusage (with the children it waited for) and wait status in its slot.
pub(super) fn store_reaped(slots: &[Slot], r: &schedlab_sys::Reaped) {
    if let Some(slot) = slots.iter().find(|s| s.pid.load(SeqCst) == r.pid) {
        store_in(slot, r);
    }
}

/// Stores `r` in `slot` (see [`store_reaped`]).
fn store_in(slot: &Slot, r: &schedlab_sys::Reaped) {
    slot.utime_ns.store(r.utime_ns, SeqCst);
    slot.stime_ns.store(r.stime_ns, SeqCst);
    slot.nvcsw.store(r.nvcsw, SeqCst);
    slot.nivcsw.store(r.nivcsw, SeqCst);
    slot.exit_status.store(r.status, SeqCst);
}

/// Reaps every process left in group `pgid` (the launcher is a child subreaper, so orphaned
/// tasks come back to it) until the group is empty. Tasks reaped here (their host died first,
/// e.g. programs stopped by a window) get their scheduler counters read from the zombie, then
/// their rusage and wait status recorded. Returns the CPU time (user + system, ns) of the other
/// processes reaped here: the tasks' descendants that no task had reaped.
pub(super) fn reap_group(pgid: i32, slots: &[Slot]) -> u64 {
    let give_up = schedlab_sys::now_ns() + 5_000_000_000;
    let mut descendants_ns = 0;
    while schedlab_sys::group_alive(pgid) && schedlab_sys::now_ns() < give_up {
        schedlab_sys::kill_group(pgid, libc::SIGKILL);
        match schedlab_sys::exited_in_group_nowait(pgid) {
            Ok(Some(pid)) => {
                let slot = slots.iter().find(|s| s.pid.load(SeqCst) == pid);
                if let Some(slot) = slot {
                    read_zombie_counters(pid, slot);
                }
                if let Ok(Some(r)) = schedlab_sys::wait4(pid, false) {
                    match slot {
                        Some(slot) => store_in(slot, &r),
                        None => descendants_ns += r.utime_ns + r.stime_ns,
                    }
                }
            }
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    descendants_ns
}
