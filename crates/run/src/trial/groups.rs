//! A trial's task groups inside the launcher and the host. The host places each task by
//! moving itself into the task's group just before it creates the task (which is born there,
//! so nothing runs in the task before its first timestamp) and back to its own cgroups for
//! antagonists and after the last task. The launcher reads every group's figures at the
//! release and when the last measured task has ended; the first measured task to end reads
//! their usage (the contended window, with two groups or more: `task::contended_snapshot`).

use super::super::task::{self, Header, Slot};
use schedlab_cgroup::{CpuStat, TrialFiles};
use schedlab_core::records::{GroupRecord, TrialStatus};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering::SeqCst;

/// What a trial's launcher and host need of its groups.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialGroups {
    /// The groups' files.
    pub files: TrialFiles,
    /// The group of each task of the trial (None: an antagonist, outside the groups).
    pub of_task: Vec<Option<usize>>,
}

/// Where the host is while it creates tasks.
pub(super) struct Placer<'a> {
    groups: &'a TrialGroups,
    /// The group it is in (None: its own cgroups, where it started).
    at: Option<usize>,
    pid: u32,
    /// Why it could not enter the trial (errno): then no task can be placed.
    broken: Option<i32>,
}

impl<'a> Placer<'a> {
    /// The host enters the trial (v2 thread trials); None without groups.
    pub fn start(groups: Option<&'a TrialGroups>) -> Option<Placer<'a>> {
        let groups = groups?;
        let pid = schedlab_sys::getpid() as u32;
        let broken = groups.files.enter(pid).err().map(|e| errno(&e));
        Some(Placer {
            groups,
            at: None,
            pid,
            broken,
        })
    }

    /// Moves the host into task `i`'s group (or home for a task outside the groups) unless it
    /// is there; the errno of a refusal.
    fn before_task(&mut self, i: usize) -> Result<(), i32> {
        if let Some(e) = self.broken {
            return Err(e);
        }
        let want = self.groups.of_task.get(i).copied().flatten();
        if want == self.at {
            return Ok(());
        }
        self.groups
            .files
            .join(want, self.pid)
            .map_err(|e| errno(&e))?;
        self.at = want;
        Ok(())
    }

    /// Back to its own cgroups after the last task (its reaping is not the groups' work).
    pub fn finish(mut self) {
        if self.at.is_some() {
            let _ = self.groups.files.join(None, self.pid);
            self.at = None;
        }
    }
}

/// Places task `i` (slot `slot` of `plan`) before the host creates it: true when it may be
/// created; false when it could not be placed (it is counted as a task that gave up). A
/// staggered host pinned to the cell's CPUs takes them again (a cpuset move resets them).
pub(super) fn place(
    placer: Option<&mut Placer>,
    h: &Header,
    slot: &Slot,
    plan: &task::TaskPlan,
    i: usize,
) -> bool {
    let Some(p) = placer else { return true };
    match p.before_task(i) {
        Ok(()) => {
            if let (false, Some(cpus)) = (plan.barrier, &plan.cpus) {
                let _ = schedlab_sys::set_affinity(cpus);
            }
            true
        }
        Err(e) => {
            task::give_up(h, slot, task::STATE_NOT_PLACED, e, !plan.is_antagonist(i));
            false
        }
    }
}

/// The errno of a layer error (EIO when it has none).
fn errno(e: &schedlab_cgroup::Error) -> i32 {
    match e {
        schedlab_cgroup::Error::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
        _ => libc::EIO,
    }
}

/// The verdict of a trial with a task that could not be placed.
pub(super) fn placement_failure(slots: &[Slot]) -> Option<(TrialStatus, Option<String>)> {
    let (i, s) = slots
        .iter()
        .enumerate()
        .find(|(_, s)| s.state.load(SeqCst) == task::STATE_NOT_PLACED)?;
    let e = s.errno.load(SeqCst) as i32;
    Some((
        TrialStatus::Failed,
        Some(format!(
            "task {i} could not be placed in its task group's cgroup ({}: {}); a real-time host needs cpu.rt_runtime_us in the group (v1), and a pinned task's CPUs must be in its cpuset",
            schedlab_sys::errno_name(e),
            std::io::Error::from_raw_os_error(e)
        )),
    ))
}

/// The groups' figures read by the launcher around the measured period.
pub(super) struct Watch<'a> {
    groups: &'a TrialGroups,
    start: Option<(u64, Vec<CpuStat>)>,
}

impl<'a> Watch<'a> {
    /// A watch of `groups` (None without groups).
    pub fn new(groups: Option<&'a TrialGroups>) -> Option<Watch<'a>> {
        groups.map(|groups| Watch {
            groups,
            start: None,
        })
    }

    /// Reads the figures at the start of the measured period (the release, while every task
    /// waits for it; the host's fork when tasks start staggered).
    pub fn start(&mut self) {
        self.start = self
            .groups
            .files
            .stats()
            .ok()
            .map(|s| (schedlab_sys::now_ns(), s));
    }

    /// Reads them at the end of the measured period: each group's figures over the period,
    /// and its usage over the contended window that the first task to end closed (`h`).
    /// Settings are the main process's to add.
    pub fn finish(self, h: &Header) -> Vec<GroupRecord> {
        let end = self.groups.files.stats().ok();
        let first_at = h.contended_at_ns.load(SeqCst);
        (0..self.groups.files.groups.len())
            .map(|i| {
                let whole = match (&self.start, &end) {
                    (Some((_, a)), Some(b)) => b[i].since(&a[i]),
                    _ => CpuStat::default(),
                };
                let contended = match (&self.start, h.contended_usage.get(i)) {
                    (Some((t0, a)), Some(u)) if first_at > 0 => {
                        let u = u.load(SeqCst).checked_sub(1);
                        let used = u.zip(a[i].usage_ns).map(|(u, a)| u.saturating_sub(a));
                        Some((first_at.saturating_sub(*t0), used))
                    }
                    _ => None,
                };
                GroupRecord {
                    index: i as u32,
                    name: self.groups.files.groups[i].name.clone(),
                    usage_ns: whole.usage_ns,
                    nr_periods: whole.nr_periods,
                    nr_throttled: whole.nr_throttled,
                    throttled_ns: whole.throttled_ns,
                    contended_ns: contended.map(|(ns, _)| ns),
                    usage_contended_ns: contended.and_then(|(_, u)| u),
                    ..GroupRecord::default()
                }
            })
            .collect()
    }
}
