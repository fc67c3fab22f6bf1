//! Removal that leaves nothing behind: tasks are moved out to the hierarchy's root first, then
//! the directories are removed bottom-up, retrying on EBUSY for a bounded time (a task that
//! has just exited keeps a v2 group populated until it is reaped). Also the recovery of the
//! next command: `remove_stale` removes every `schedlab-PID-START` tree whose owner is dead,
//! `remove_recorded` the trees named in a restore journal. Neither touches a directory that is
//! not a `schedlab-PID-START` tree directly under a cgroup mount.

use crate::detect::{Capabilities, Controller};
use crate::error::{errno, Error, IoAction, Leftovers, NotOurs};
use crate::fs::CgroupFs;
use crate::mountinfo::Version;
use crate::owner::OwnerId;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long removal retries a busy cgroup.
pub const REMOVE_WAIT: Duration = Duration::from_secs(2);
/// The pause between two tries.
const RETRY_PAUSE: Duration = Duration::from_millis(10);

/// What removing one tree did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Removal {
    /// The tree's top directory.
    pub path: PathBuf,
    /// Directories removed.
    pub dirs_removed: usize,
    /// Tasks (pids or tids) moved out to the hierarchy's root.
    pub tasks_moved: Vec<u32>,
}

/// Remove the cgroup tree at `dir` of the hierarchy mounted at `mount`.
pub(crate) fn remove_tree(
    fs: &dyn CgroupFs,
    version: Version,
    mount: &Path,
    dir: &Path,
    wait: Duration,
) -> Result<Removal, Error> {
    let mut rep = Removal {
        path: dir.to_path_buf(),
        ..Removal::default()
    };
    let deadline = Instant::now() + wait;
    remove_rec(fs, version, mount, dir, deadline, &mut rep)?;
    Ok(rep)
}

fn remove_rec(
    fs: &dyn CgroupFs,
    version: Version,
    mount: &Path,
    dir: &Path,
    deadline: Instant,
    rep: &mut Removal,
) -> Result<(), Error> {
    let subs = match fs.subdirs(dir) {
        Ok(s) => s,
        Err(e) if e.raw_os_error() == Some(errno::ENOENT) => return Ok(()),
        Err(e) => return Err(Error::io(IoAction::List, dir, e)),
    };
    for s in subs {
        remove_rec(fs, version, mount, &dir.join(s), deadline, rep)?;
    }
    let start = Instant::now();
    loop {
        evacuate(fs, version, mount, dir, &mut rep.tasks_moved);
        match fs.rmdir(dir) {
            Ok(()) => {
                rep.dirs_removed += 1;
                return Ok(());
            }
            Err(e) if e.raw_os_error() == Some(errno::ENOENT) => return Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(errno::EBUSY) | Some(errno::ENOTEMPTY)
                ) =>
            {
                if Instant::now() >= deadline {
                    return Err(Error::Busy {
                        path: dir.to_path_buf(),
                        waited_ms: start.elapsed().as_millis() as u64,
                        left: leftovers(fs, version, dir),
                    });
                }
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(e) => return Err(Error::io(IoAction::Remove, dir, e)),
        }
    }
}

/// The tasks in `dir` (v1 `tasks`: every thread; v2 `cgroup.procs`, or `cgroup.threads` in a
/// threaded cgroup).
fn tasks_in(fs: &dyn CgroupFs, version: Version, dir: &Path) -> Vec<u32> {
    let read = |f: &str| fs.read(&dir.join(f)).ok();
    let text = match version {
        Version::V1 => read("tasks"),
        Version::V2 => read("cgroup.procs").or_else(|| read("cgroup.threads")),
    };
    text.unwrap_or_default()
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// Move every task of `dir` to the root of its hierarchy (v1: each thread through `tasks`;
/// v2: each process through `cgroup.procs`, which moves a thread's whole process). A task
/// that exits meanwhile is no error.
fn evacuate(fs: &dyn CgroupFs, version: Version, mount: &Path, dir: &Path, moved: &mut Vec<u32>) {
    let target = match version {
        Version::V1 => mount.join("tasks"),
        Version::V2 => mount.join("cgroup.procs"),
    };
    for t in tasks_in(fs, version, dir) {
        if fs.write(&target, &t.to_string()).is_ok() && !moved.contains(&t) {
            moved.push(t);
        }
    }
}

fn leftovers(fs: &dyn CgroupFs, version: Version, dir: &Path) -> Leftovers {
    Leftovers {
        tasks: tasks_in(fs, version, dir),
        children: fs.subdirs(dir).unwrap_or_default(),
    }
}

/// A leftover tree found by the recovery, and what became of it.
#[derive(Debug)]
pub struct StaleTree {
    /// Its top directory (`MOUNT/schedlab-PID-START`).
    pub path: PathBuf,
    /// The dead process that created it.
    pub owner: OwnerId,
    /// What removal did, or why it failed.
    pub result: Result<Removal, Error>,
}

/// The distinct hierarchies the layer may have used.
fn hierarchies(caps: &Capabilities) -> Vec<(Version, PathBuf)> {
    let mut out: Vec<(Version, PathBuf)> = Vec::new();
    for c in [Controller::Cpu, Controller::Cpuacct, Controller::Cpuset] {
        if let Ok(p) = caps.placement(c) {
            if !out.iter().any(|(_, m)| *m == p.mount) {
                out.push((p.version, p.mount.clone()));
            }
        }
    }
    out
}

/// Remove every `schedlab-PID-START` tree, under the hierarchies of `caps`, whose owner is dead
/// (for the next command's recovery).
pub fn remove_stale(fs: &dyn CgroupFs, caps: &Capabilities) -> Vec<StaleTree> {
    remove_stale_with(fs, caps, &|o| o.alive())
}

/// [`remove_stale`] with a given test of an owner's life.
pub fn remove_stale_with(
    fs: &dyn CgroupFs,
    caps: &Capabilities,
    alive: &dyn Fn(&OwnerId) -> bool,
) -> Vec<StaleTree> {
    let mut out = Vec::new();
    for (version, mount) in hierarchies(caps) {
        for name in fs.subdirs(&mount).unwrap_or_default() {
            let Some(owner) = OwnerId::from_dir_name(&name) else {
                continue;
            };
            if alive(&owner) {
                continue;
            }
            let path = mount.join(&name);
            let result = remove_tree(fs, version, &mount, &path, REMOVE_WAIT);
            out.push(StaleTree {
                path,
                owner,
                result,
            });
        }
    }
    out
}

/// Remove the trees that the paths of a restore journal lie in, if their owner is dead. A path
/// that is not inside a `schedlab-PID-START` directory directly under a cgroup mount of `caps`
/// is refused (`Error::NotOurs`), as is one whose owner still runs; a tree already gone is no
/// error (and not listed).
pub fn remove_recorded(
    fs: &dyn CgroupFs,
    caps: &Capabilities,
    paths: &[PathBuf],
    alive: &dyn Fn(&OwnerId) -> bool,
) -> Vec<Result<StaleTree, Error>> {
    let hier = hierarchies(caps);
    let mut done: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        let found = hier.iter().find_map(|(v, m)| {
            let rest = p.strip_prefix(m).ok()?;
            let first = rest.components().next()?.as_os_str().to_str()?.to_string();
            Some((*v, m.clone(), first))
        });
        let Some((version, mount, first)) = found else {
            out.push(Err(Error::NotOurs {
                path: p.clone(),
                why: NotOurs::NotUnderMount,
            }));
            continue;
        };
        let Some(owner) = OwnerId::from_dir_name(&first) else {
            out.push(Err(Error::NotOurs {
                path: p.clone(),
                why: NotOurs::NotOwnerDir { name: first },
            }));
            continue;
        };
        if alive(&owner) {
            out.push(Err(Error::NotOurs {
                path: p.clone(),
                why: NotOurs::OwnerRuns { pid: owner.pid },
            }));
            continue;
        }
        let top = mount.join(&first);
        if done.contains(&top) || !fs.exists(&top) {
            continue;
        }
        done.push(top.clone());
        let result = remove_tree(fs, version, &mount, &top, REMOVE_WAIT);
        out.push(Ok(StaleTree {
            path: top,
            owner,
            result,
        }));
    }
    out
}
