//! The kernel's rules for a write to a cgroup file of the in-memory tree, one function per kind
//! of file: task lists, v2 `cgroup.subtree_control` and `cgroup.type`, the cpu controller's
//! files, the cpuset lists and the v2 partition state.

use super::{err, lines, State};
use crate::error::errno;
use crate::mountinfo::Version;
use crate::value::CpuList;
use std::io;
use std::path::Path;

/// A number, or EINVAL as the kernel answers.
fn num(s: &str) -> io::Result<i64> {
    s.parse::<i64>().map_err(|_| err(errno::EINVAL))
}

/// Where a write goes: the cgroup, its mount, and the file's name.
struct Target<'a> {
    dir: &'a Path,
    idx: usize,
    name: &'a str,
    version: Version,
    is_root: bool,
}

impl State {
    /// Write `value` to `path` as the kernel would: refused (with its errno) or stored.
    pub(super) fn write(&mut self, path: &Path, value: &str) -> io::Result<()> {
        let dir = path.parent().ok_or_else(|| err(errno::ENOENT))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let idx = self.mount_of(dir).ok_or_else(|| err(errno::ENOENT))?;
        if !self.files.contains_key(path) {
            return Err(err(errno::ENOENT));
        }
        let v = value.trim();
        let t = Target {
            dir,
            idx,
            name,
            version: self.mounts[idx].version,
            is_root: dir == self.mounts[idx].path,
        };
        let stored = match (t.version, name) {
            (_, "cgroup.procs") | (_, "tasks") | (Version::V2, "cgroup.threads") => {
                self.place(&t, v)?;
                self.log.push(format!("{} <- {v}", path.display()));
                return Ok(());
            }
            (Version::V2, "cgroup.subtree_control") => self.subtree_control(&t, path, v)?,
            (Version::V2, "cgroup.type") => self.threaded(&t, v)?,
            (Version::V2, "cpuset.cpus.partition") => self.partition(&t, v)?,
            (_, "cpuset.cpus" | "cpuset.cpus.exclusive" | "cpuset.mems") => self.cpuset(&t, v)?,
            _ => self.cpu(&t, v)?,
        };
        self.log.push(format!("{} <- {v}", path.display()));
        self.files.insert(path.to_path_buf(), stored);
        Ok(())
    }

    /// A task id written to `cgroup.procs`, `tasks` or `cgroup.threads`: the task joins.
    fn place(&mut self, t: &Target, v: &str) -> io::Result<()> {
        num(v)?;
        let dir = t.dir;
        if t.version == Version::V2 && !t.is_root && t.name == "cgroup.procs" {
            let sub = self.file(&dir.join("cgroup.subtree_control"));
            let ty = self.file(&dir.join("cgroup.type"));
            if !sub.trim().is_empty() && ty.trim() == "domain" {
                return Err(err(errno::EBUSY));
            }
        }
        // A thread moves only within its threaded subtree, whose threaded domain counts too
        // (`cgroup_attach_permissions()`: the same `dom_cgrp`).
        let ty = self.file(&dir.join("cgroup.type"));
        if t.name == "cgroup.threads"
            && !matches!(ty.trim(), "threaded" | "domain threaded")
            && !t.is_root
        {
            return Err(err(errno::EOPNOTSUPP));
        }
        let empty = |f: &str| self.file(&dir.join(f)).trim().is_empty();
        let cpuset = self.files.contains_key(&dir.join("cpuset.cpus"));
        if t.version == Version::V1 && cpuset && (empty("cpuset.cpus") || empty("cpuset.mems")) {
            return Err(err(errno::ENOSPC));
        }
        let id = num(v)? as u32;
        // In its threaded domain a main thread (id = pid) makes the process listed in
        // cgroup.procs again, as the kernel lists processes by their leader.
        let thread = t.version == Version::V2
            && t.name == "cgroup.threads"
            && ty.trim() != "domain threaded";
        self.members
            .insert((t.idx, id), (dir.to_path_buf(), thread));
        Ok(())
    }

    /// v2 `cgroup.subtree_control`: `+c`/`-c` for controllers the cgroup offers, refused while
    /// it holds tasks (no internal processes).
    fn subtree_control(&mut self, t: &Target, path: &Path, v: &str) -> io::Result<String> {
        let offered = if t.is_root {
            self.mounts[t.idx].controllers.clone()
        } else {
            lines(&self.file(&t.dir.join("cgroup.controllers")))
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        let mut on: Vec<String> = lines(&self.file(path))
            .iter()
            .map(|s| s.to_string())
            .collect();
        for tok in lines(v) {
            let (plus, c) = tok.split_at(1);
            if !offered.iter().any(|o| o == c) {
                return Err(err(errno::ENOENT));
            }
            match plus {
                "+" if !on.iter().any(|o| o == c) => on.push(c.to_string()),
                "-" => on.retain(|o| o != c),
                "+" => {}
                _ => return Err(err(errno::EINVAL)),
            }
        }
        if !t.is_root && self.has_tasks(t.dir) {
            return Err(err(errno::EBUSY));
        }
        Ok(format!("{}\n", on.join(" ")))
    }

    /// v2 `cgroup.type`: only `threaded`; the parent becomes a threaded domain.
    fn threaded(&mut self, t: &Target, v: &str) -> io::Result<String> {
        if v != "threaded" {
            return Err(err(errno::EINVAL));
        }
        if let Some(p) = t.dir.parent() {
            if self.file(&p.join("cgroup.type")).trim() == "domain" {
                self.files
                    .insert(p.join("cgroup.type"), "domain threaded\n".into());
            }
        }
        Ok(format!("{v}\n"))
    }

    /// The cpu controller's files (and v1 `cpuset.sched_load_balance`), with their ranges.
    fn cpu(&mut self, t: &Target, v: &str) -> io::Result<String> {
        let stored = format!("{v}\n");
        match (t.version, t.name) {
            (Version::V2, "cpu.weight") => {
                let w = num(v)?;
                if !(1..=10_000).contains(&w) {
                    return Err(err(errno::ERANGE));
                }
                if self.file(&t.dir.join("cpu.idle")).trim() == "1" {
                    return Err(err(errno::EINVAL));
                }
            }
            (Version::V2, "cpu.max") => {
                let f = lines(v);
                let period = match f.get(1) {
                    Some(p) => num(p)?,
                    None => 100_000,
                };
                if f.is_empty() || f.len() > 2 || !(1_000..=1_000_000).contains(&period) {
                    return Err(err(errno::EINVAL));
                }
                if f[0] != "max" && num(f[0])? < 1_000 {
                    return Err(err(errno::EINVAL));
                }
                return Ok(format!("{} {period}\n", f[0]));
            }
            (_, "cpu.idle") | (Version::V1, "cpuset.sched_load_balance")
                if v != "0" && v != "1" =>
            {
                return Err(err(errno::EINVAL));
            }
            (Version::V1, "cpu.shares") => return Ok(format!("{}\n", num(v)?.clamp(2, 262_144))),
            (Version::V1, "cpu.cfs_quota_us") => {
                let q = num(v)?;
                if q != -1 && q < 1_000 {
                    return Err(err(errno::EINVAL));
                }
            }
            (Version::V1, "cpu.cfs_period_us") if !(1_000..=1_000_000).contains(&num(v)?) => {
                return Err(err(errno::EINVAL));
            }
            _ => {}
        }
        Ok(stored)
    }

    /// `cpuset.cpus`, `cpuset.cpus.exclusive`, `cpuset.mems`: CPU lists; v2 exclusive CPUs
    /// must be among the parent's (unless the parent is the root).
    fn cpuset(&mut self, t: &Target, v: &str) -> io::Result<String> {
        let list = CpuList::parse(v).map_err(|_| err(errno::EINVAL))?;
        let stored = format!("{list}\n");
        let dir = t.dir;
        if t.version == Version::V1 && t.name == "cpuset.cpus" {
            self.files
                .insert(dir.join("cpuset.effective_cpus"), stored.clone());
        }
        if t.version == Version::V2 && t.name == "cpuset.cpus.exclusive" && !list.is_empty() {
            let parent = dir.parent().map(Path::to_path_buf).unwrap_or_default();
            let parent_root = self
                .mount_of(&parent)
                .is_some_and(|i| self.mounts[i].path == parent);
            if !parent_root {
                let pe = CpuList::parse(&self.file(&parent.join("cpuset.cpus.exclusive")))
                    .unwrap_or_default();
                if !list.is_subset(&pe) {
                    return Err(err(errno::EINVAL));
                }
            }
        }
        Ok(stored)
    }

    /// v2 `cpuset.cpus.partition`: `root` is valid only when every ancestor's exclusive CPUs
    /// hold the group's.
    fn partition(&mut self, t: &Target, v: &str) -> io::Result<String> {
        match v {
            "member" => Ok("member\n".into()),
            "root" => {
                let ex = CpuList::parse(&self.file(&t.dir.join("cpuset.cpus.exclusive")))
                    .unwrap_or_default();
                let mut ok = !ex.is_empty();
                let mut a = t.dir.parent().map(Path::to_path_buf);
                while let Some(p) = a {
                    if self.mounts[t.idx].path == p {
                        break;
                    }
                    let pe = CpuList::parse(&self.file(&p.join("cpuset.cpus.exclusive")))
                        .unwrap_or_default();
                    ok &= ex.is_subset(&pe);
                    a = p.parent().map(Path::to_path_buf);
                }
                Ok(if ok {
                    "root\n".into()
                } else {
                    "root invalid (Invalid cpu list in cpuset.cpus.exclusive)\n".into()
                })
            }
            _ => Err(err(errno::EINVAL)),
        }
    }
}
