//! The channels of a communicating workload, made by the trial's host before it creates the
//! tasks, and each task's [`Links`] to them and to the trial's shared words.
//!
//! messaging: one channel (pipe or socket pair) per receiver; its read end is the receiver's,
//! its write end is shared by every sender of the group. pipe: channel 0 carries the token from
//! the pinger to the ponger, channel 1 back. Threads share one process, so the host makes every
//! channel before the first thread and they all stay open (2·groups·fds descriptors). For
//! processes the host does what hackbench does: it makes a group's channels just before
//! forking the group's first task and closes its own copies after forking the last, so no
//! process ever holds more than one group's descriptors; each child keeps only the ends it uses
//! (a sender none of the read ends), so a task whose peer died gets an error, not a hang.

use schedlab_core::workload::request::{CpuLock, RequestWords};
use schedlab_core::workload::{comm, Ipc, Links, Role, Workload, WorkloadKind};
use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// One channel's ends, each kept while someone here needs it.
type Ends = (Option<OwnedFd>, Option<OwnedFd>);

/// The channels of a trial (empty for workloads that have none).
pub(super) struct Channels<'w> {
    workload: &'w Workload,
    /// Tasks per group: 2·fds (messaging), 2 (pipe), 0 (no channels).
    group_tasks: usize,
    /// Channels per group.
    per_group: usize,
    ipc: Ipc,
    /// The channels of each group that is open here, by group.
    groups: Vec<Option<Vec<Ends>>>,
}

impl<'w> Channels<'w> {
    /// No channel open yet; `measured` tasks.
    pub(super) fn new(workload: &'w Workload, measured: usize) -> Channels<'w> {
        let (group_tasks, per_group, ipc) = match workload.kind {
            WorkloadKind::Messaging => {
                let m = workload.messaging.unwrap_or_default();
                (2 * m.fds as usize, m.fds as usize, m.ipc)
            }
            WorkloadKind::Pipe => (2, 2, Ipc::Pipe),
            _ => (0, 0, Ipc::Pipe),
        };
        let groups = measured.checked_div(group_tasks).unwrap_or(0);
        Channels {
            workload,
            group_tasks,
            per_group,
            ipc,
            groups: (0..groups).map(|_| None).collect(),
        }
    }

    /// The group of task `i`, if it has channels.
    fn group_of(&self, i: usize) -> Option<usize> {
        let g = i.checked_div(self.group_tasks)?;
        (g < self.groups.len()).then_some(g)
    }

    /// Makes the channels of task `i`'s group unless they are open.
    pub(super) fn open_for(&mut self, i: usize) -> io::Result<()> {
        let Some(g) = self.group_of(i) else {
            return Ok(());
        };
        if self.groups[g].is_none() {
            let mut chans = Vec::with_capacity(self.per_group);
            for _ in 0..self.per_group {
                let (r, w) = comm::channel(self.ipc)?;
                chans.push((Some(r), Some(w)));
            }
            self.groups[g] = Some(chans);
        }
        Ok(())
    }

    /// Makes every channel (threads).
    pub(super) fn open_all(&mut self) -> io::Result<()> {
        for g in 0..self.groups.len() {
            self.open_for(g * self.group_tasks)?;
        }
        Ok(())
    }

    /// Closes the host's copies of task `i`'s group once `i` is its last task (processes).
    pub(super) fn close_after(&mut self, i: usize) {
        if let Some(g) = self.group_of(i) {
            if (i + 1) % self.group_tasks == 0 {
                self.groups[g] = None;
            }
        }
    }

    /// In task `i`'s own process: closes every end it does not use.
    pub(super) fn keep_only(&mut self, i: usize) {
        let role = self.workload.role(i);
        let Some(g) = self.group_of(i) else {
            // An antagonist: it uses none.
            self.groups.iter_mut().for_each(|g| *g = None);
            return;
        };
        for (other, chans) in self.groups.iter_mut().enumerate() {
            let Some(chans) = chans else { continue };
            for (j, (r, w)) in chans.iter_mut().enumerate() {
                let (keep_r, keep_w) = match role {
                    _ if other != g => (false, false),
                    Some(Role::Receiver { index, .. }) => (j == index as usize, false),
                    Some(Role::Sender { .. }) => (false, true),
                    Some(Role::Ping) => (j == 1, j == 0),
                    Some(Role::Pong) => (j == 0, j == 1),
                    _ => (false, false),
                };
                if !keep_r {
                    *r = None;
                }
                if !keep_w {
                    *w = None;
                }
            }
        }
    }

    /// What task `i` reaches: its channel ends and the trial's shared words.
    pub(super) fn links<'a>(
        &'a self,
        i: usize,
        words: &'a [RequestWords],
        cpu_locks: &'a [CpuLock],
    ) -> Links<'a> {
        let mut links = Links {
            words,
            cpu_locks,
            ..Links::default()
        };
        let Some(chans) = self.group_of(i).and_then(|g| self.groups[g].as_ref()) else {
            return links;
        };
        let read = |j: usize| chans.get(j).and_then(|c| c.0.as_ref()).map(AsFd::as_fd);
        let write = |j: usize| chans.get(j).and_then(|c| c.1.as_ref()).map(AsFd::as_fd);
        match self.workload.role(i) {
            Some(Role::Receiver { index, .. }) => links.read = read(index as usize),
            Some(Role::Sender { .. }) => {
                links.write = (0..chans.len()).filter_map(write).collect();
            }
            Some(Role::Ping) => {
                links.read = read(1);
                links.write = write(0).into_iter().collect();
            }
            Some(Role::Pong) => {
                links.read = read(0);
                links.write = write(1).into_iter().collect();
            }
            _ => {}
        }
        links
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::MessagingParams;

    fn messaging(groups: u32, fds: u32) -> Workload {
        Workload {
            kind: WorkloadKind::Messaging,
            messaging: Some(MessagingParams {
                groups,
                fds,
                ipc: Ipc::Pipe,
                ..MessagingParams::default()
            }),
            ..Workload::default()
        }
    }

    #[test]
    fn each_task_gets_the_ends_of_its_role_in_its_group() {
        let w = messaging(2, 3);
        let mut c = Channels::new(&w, 12);
        c.open_all().unwrap();
        // Receiver 1 of group 1 (task 7) reads its own channel; sender 2 of group 0 (task 5)
        // writes all three of its group's.
        assert!(c.links(7, &[], &[]).read.is_some());
        assert!(c.links(7, &[], &[]).write.is_empty());
        assert_eq!(c.links(5, &[], &[]).write.len(), 3);
        assert!(c.links(5, &[], &[]).read.is_none());
        // An antagonist gets nothing.
        assert!(c.links(12, &[], &[]).read.is_none());
    }

    #[test]
    fn a_process_holds_one_group_at_a_time_and_keeps_only_its_ends() {
        let w = messaging(2, 2);
        let mut c = Channels::new(&w, 8);
        c.open_for(0).unwrap();
        assert!(c.groups[0].is_some() && c.groups[1].is_none());
        c.close_after(2);
        assert!(
            c.groups[0].is_some(),
            "closed only after the group's last task"
        );
        c.close_after(3);
        assert!(c.groups[0].is_none());
        c.open_for(4).unwrap();
        c.keep_only(5); // receiver 1 of group 1
        let open: Vec<(bool, bool)> = c.groups[1]
            .as_ref()
            .unwrap()
            .iter()
            .map(|(r, w)| (r.is_some(), w.is_some()))
            .collect();
        assert_eq!(open, vec![(false, false), (true, false)]);
    }

    #[test]
    fn pipe_tasks_read_what_the_other_writes() {
        let w = Workload {
            kind: WorkloadKind::Pipe,
            ..Workload::default()
        };
        let mut c = Channels::new(&w, 2);
        c.open_all().unwrap();
        let (ping, pong) = (c.links(0, &[], &[]), c.links(1, &[], &[]));
        std::thread::scope(|s| {
            let p = s.spawn(|| comm::ping_pong(pong.read.unwrap(), pong.write[0], 100, false));
            assert_eq!(
                comm::ping_pong(ping.read.unwrap(), ping.write[0], 100, true),
                100
            );
            assert_eq!(p.join().unwrap(), 100);
        });
    }
}
