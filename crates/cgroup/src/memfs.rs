//! A cgroup file tree in memory, for tests of the layer (and of its consumers) where a real
//! hierarchy is missing: this machine has no v2 cpu or cpuset controller. A new cgroup gets
//! the files a real one has: v1 children and the v2 base files as recorded on this machine
//! (Linux 6.18, `tests/fixtures/`); the v2 cpu and cpuset files, which no v2 controller here
//! could show, from the kernel's file lists (`cpu_files[]` in kernel/sched/core.c, `dfl_files[]`
//! in kernel/cgroup/cpuset.c, defaults as Documentation/admin-guide/cgroup-v2.rst gives them).
//!
//! It keeps the kernel rules the layer relies on: a directory with tasks or children cannot be
//! removed (EBUSY); v2 controllers must be enabled in the parent's `cgroup.subtree_control`
//! for their files to appear, and a v2 domain cgroup that enables one cannot take processes
//! (no internal processes, EBUSY); v2 `cpu.weight` 1..=10000 (ERANGE), `cpu.max` and v1 CFS
//! ranges (EINVAL); a v1 cpuset without CPUs or nodes takes no task (ENOSPC); a v2 partition is
//! valid only when its ancestors' `cpuset.cpus.exclusive` hold its CPUs. Every write is logged.

use crate::error::errno;
use crate::fs::CgroupFs;
use crate::mountinfo::Version;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod rules;

const V1_CPU: &str = include_str!("../tests/fixtures/v1-cpu-child-6.18.txt");
const V1_CPUACCT: &str = include_str!("../tests/fixtures/v1-cpuacct-child-6.18.txt");
const V1_CPUSET: &str = include_str!("../tests/fixtures/v1-cpuset-child-6.18.txt");
const V2_BASE: &str = include_str!("../tests/fixtures/v2-child-base-6.18.txt");
const V2_CPU: &str = include_str!("../tests/fixtures/v2-child-cpu-from-kernel-source.txt");
const V2_CPUSET: &str = include_str!("../tests/fixtures/v2-child-cpuset-from-kernel-source.txt");

/// Parse a `== name\ncontent` listing.
fn listing(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("== ") {
            out.push((name.to_string(), String::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
            last.1.push('\n');
        }
    }
    out
}

#[derive(Debug, Clone)]
struct Mount {
    path: PathBuf,
    version: Version,
    /// v1: the controllers on it; v2: those the root offers.
    controllers: Vec<String>,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<PathBuf, String>,
    dirs: BTreeMap<PathBuf, usize>,
    /// (mount index, task id) -> (its cgroup, placed as a thread).
    members: BTreeMap<(usize, u32), (PathBuf, bool)>,
    mounts: Vec<Mount>,
    log: Vec<String>,
    /// File names new cgroups do not get (a kernel without them).
    omit: Vec<String>,
}

/// An in-memory cgroup file system.
#[derive(Debug, Default)]
pub struct MemFs {
    state: Mutex<State>,
}

fn err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl MemFs {
    /// An empty tree.
    pub fn new() -> MemFs {
        MemFs::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Put a plain file (e.g. `/proc/self/status`).
    pub fn put(&self, path: impl AsRef<Path>, content: &str) {
        self.lock()
            .files
            .insert(path.as_ref().to_path_buf(), content.to_string());
    }

    /// A v1 hierarchy with `controllers`, its root holding the files of a child plus the
    /// root's own values (`cpuset.cpus` = `cpus`, RT 950000/1000000 µs).
    pub fn mount_v1(&self, mount: impl AsRef<Path>, controllers: &[&str], cpus: &str) {
        let mount = mount.as_ref().to_path_buf();
        let mut st = self.lock();
        let idx = st.mounts.len();
        st.mounts.push(Mount {
            path: mount.clone(),
            version: Version::V1,
            controllers: controllers.iter().map(|c| c.to_string()).collect(),
        });
        st.dirs.insert(mount.clone(), idx);
        add_files(&mut st, &mount, idx);
        let f = |n: &str| mount.join(n);
        if controllers.contains(&"cpu") {
            st.files.insert(f("cpu.rt_runtime_us"), "950000\n".into());
        }
        if controllers.contains(&"cpuset") {
            for n in ["cpuset.cpus", "cpuset.effective_cpus"] {
                st.files.insert(f(n), format!("{cpus}\n"));
            }
            for n in ["cpuset.mems", "cpuset.effective_mems"] {
                st.files.insert(f(n), "0\n".into());
            }
            st.files.insert(f("cpuset.cpu_exclusive"), "1\n".into());
        }
    }

    /// The v2 hierarchy, offering `controllers`, with `enabled` in the root's subtree_control.
    pub fn mount_v2(
        &self,
        mount: impl AsRef<Path>,
        controllers: &[&str],
        enabled: &[&str],
        cpus: &str,
    ) {
        let mount = mount.as_ref().to_path_buf();
        let mut st = self.lock();
        let idx = st.mounts.len();
        st.mounts.push(Mount {
            path: mount.clone(),
            version: Version::V2,
            controllers: controllers.iter().map(|c| c.to_string()).collect(),
        });
        st.dirs.insert(mount.clone(), idx);
        let f = |n: &str| mount.join(n);
        st.files.insert(
            f("cgroup.controllers"),
            format!("{}\n", controllers.join(" ")),
        );
        st.files.insert(
            f("cgroup.subtree_control"),
            format!("{}\n", enabled.join(" ")),
        );
        st.files.insert(f("cgroup.procs"), String::new());
        st.files.insert(f("cgroup.threads"), String::new());
        st.files.insert(
            f("cpu.stat"),
            "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnice_usec 0\n".into(),
        );
        if controllers.contains(&"cpuset") {
            st.files
                .insert(f("cpuset.cpus.effective"), format!("{cpus}\n"));
            st.files.insert(f("cpuset.mems.effective"), "0\n".into());
        }
    }

    /// Put task `pid` in the root of every hierarchy.
    pub fn add_task(&self, pid: u32) {
        let mut st = self.lock();
        let roots: Vec<(usize, PathBuf)> = st
            .mounts
            .iter()
            .enumerate()
            .map(|(i, m)| (i, m.path.clone()))
            .collect();
        for (i, r) in roots {
            st.members.insert((i, pid), (r, false));
        }
    }

    /// New cgroups will not have a file called `name` (an older kernel).
    pub fn omit(&self, name: &str) {
        self.lock().omit.push(name.to_string());
    }

    /// Every write so far, as `PATH <- VALUE`.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }

    /// A file's content (None if absent).
    pub fn get(&self, path: impl AsRef<Path>) -> Option<String> {
        self.read(path.as_ref()).ok()
    }

    /// The directories below `path` (itself excluded).
    pub fn dirs_below(&self, path: impl AsRef<Path>) -> Vec<PathBuf> {
        let p = path.as_ref();
        self.lock()
            .dirs
            .keys()
            .filter(|d| d.starts_with(p) && *d != p)
            .cloned()
            .collect()
    }
}

/// Add the files of a new cgroup at `dir` of mount `idx`.
fn add_files(st: &mut State, dir: &Path, idx: usize) {
    let m = st.mounts[idx].clone();
    let mut texts: Vec<&str> = Vec::new();
    let mut base = "";
    let mut controllers = None;
    match m.version {
        Version::V1 => {
            for c in &m.controllers {
                texts.push(match c.as_str() {
                    "cpu" => V1_CPU,
                    "cpuacct" => V1_CPUACCT,
                    "cpuset" => V1_CPUSET,
                    _ => "",
                });
            }
        }
        Version::V2 => {
            base = V2_BASE;
            let parent = dir.parent().map(|p| p.join("cgroup.subtree_control"));
            let enabled = parent
                .and_then(|p| st.files.get(&p).cloned())
                .unwrap_or_default();
            for c in enabled.split_whitespace() {
                texts.push(match c {
                    "cpu" => V2_CPU,
                    "cpuset" => V2_CPUSET,
                    _ => "",
                });
            }
            controllers = Some(format!("{}\n", enabled.trim()));
        }
    }
    for (name, content) in listing(base) {
        st.files.insert(dir.join(name), content);
    }
    for t in texts {
        for (name, content) in listing(t) {
            st.files.insert(dir.join(name), content);
        }
    }
    if let Some(c) = controllers {
        st.files.insert(dir.join("cgroup.controllers"), c);
    }
    let omit = st.omit.clone();
    st.files.retain(|p, _| {
        p.parent() != Some(dir)
            || !p
                .file_name()
                .is_some_and(|n| omit.iter().any(|o| n == o.as_str()))
    });
    // A new v2 cpuset inherits its parent's effective CPUs and nodes.
    if let Some(parent) = dir.parent() {
        for f in ["cpuset.cpus.effective", "cpuset.mems.effective"] {
            if st.files.contains_key(&dir.join(f)) {
                let p = st.files.get(&parent.join(f)).cloned().unwrap_or_default();
                st.files.insert(dir.join(f), p);
            }
        }
    }
    if m.version == Version::V2 {
        let stat = dir.join("cpu.stat");
        let has_cpu = st.files.contains_key(&dir.join("cpu.weight"));
        let base = "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnice_usec 0\n";
        let extra = "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\nnr_bursts 0\nburst_usec 0\n";
        st.files.insert(
            stat,
            if has_cpu {
                format!("{base}{extra}")
            } else {
                base.to_string()
            },
        );
    }
}

fn lines(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

impl State {
    fn mount_of(&self, p: &Path) -> Option<usize> {
        self.dirs.get(p).copied()
    }

    fn file(&self, p: &Path) -> String {
        self.files.get(p).cloned().unwrap_or_default()
    }

    fn has_tasks(&self, dir: &Path) -> bool {
        self.members.values().any(|(d, _)| d == dir)
    }

    /// The task list file `name` of `dir`: v1 `tasks`/`cgroup.procs` and v2 `cgroup.threads`
    /// list every task; v2 `cgroup.procs` those placed as processes.
    fn task_list(&self, dir: &Path, name: &str) -> Option<String> {
        let idx = self.mount_of(dir)?;
        let v2 = self.mounts[idx].version == Version::V2;
        let all = match name {
            "tasks" if !v2 => true,
            "cgroup.procs" => !v2,
            "cgroup.threads" => true,
            _ => return None,
        };
        Some(
            self.members
                .iter()
                .filter(|((i, _), (d, thread))| *i == idx && d == dir && (all || !thread))
                .map(|((_, id), _)| format!("{id}\n"))
                .collect(),
        )
    }
}

impl CgroupFs for MemFs {
    fn read(&self, path: &Path) -> io::Result<String> {
        let st = self.lock();
        let dir = path.parent().unwrap_or(path);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "cgroup.procs" && st.file(&dir.join("cgroup.type")).trim() == "threaded" {
            return Err(err(errno::EOPNOTSUPP));
        }
        if st.files.contains_key(path) {
            if let Some(list) = st.task_list(dir, name) {
                return Ok(list);
            }
        }
        st.files
            .get(path)
            .cloned()
            .ok_or_else(|| err(errno::ENOENT))
    }

    fn write(&self, path: &Path, value: &str) -> io::Result<()> {
        self.lock().write(path, value)
    }

    fn mkdir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.lock();
        if st.dirs.contains_key(path) || st.files.contains_key(path) {
            return Err(err(errno::EEXIST));
        }
        let idx = path
            .parent()
            .and_then(|p| st.mount_of(p))
            .ok_or_else(|| err(errno::ENOENT))?;
        st.dirs.insert(path.to_path_buf(), idx);
        add_files(&mut st, path, idx);
        st.log.push(format!("mkdir {}", path.display()));
        Ok(())
    }

    fn rmdir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.lock();
        if !st.dirs.contains_key(path) {
            return Err(err(errno::ENOENT));
        }
        if st.mounts.iter().any(|m| m.path == path) {
            return Err(err(errno::EBUSY));
        }
        let has_child = st.dirs.keys().any(|d| d.parent() == Some(path));
        if has_child || st.has_tasks(path) {
            return Err(err(errno::EBUSY));
        }
        st.dirs.remove(path);
        st.files.retain(|p, _| p.parent() != Some(path));
        st.log.push(format!("rmdir {}", path.display()));
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.lock();
        st.dirs.contains_key(path) || st.files.contains_key(path)
    }

    fn subdirs(&self, path: &Path) -> io::Result<Vec<String>> {
        let st = self.lock();
        if !st.dirs.contains_key(path) {
            return Err(err(errno::ENOENT));
        }
        Ok(st
            .dirs
            .keys()
            .filter(|d| d.parent() == Some(path))
            .filter_map(|d| d.file_name().and_then(|n| n.to_str()).map(str::to_string))
            .collect())
    }
}
