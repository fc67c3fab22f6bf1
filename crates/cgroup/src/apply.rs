//! Writing one group's settings (cpu and cpuset controllers, v1 or v2), and the v1 check that
//! no other load-balanced cpuset would merge with a partition.

use crate::error::{Error, IoAction};
use crate::fs::CgroupFs;
use crate::mountinfo::Version;
use crate::session::{no_idle, write, write_feature};
use crate::spec::GroupSettings;
use crate::value::CpuList;
use std::path::{Path, PathBuf};

/// The trial's settings of the cpu controller for one group.
pub(crate) fn apply_cpu(
    fs: &dyn CgroupFs,
    version: Version,
    dir: &Path,
    s: &GroupSettings,
    rt_share_us: Option<u64>,
) -> Result<(), Error> {
    if let Some(w) = s.weight {
        match version {
            Version::V2 => write(fs, &dir.join("cpu.weight"), &w.to_string())?,
            Version::V1 => write(fs, &dir.join("cpu.shares"), &w.v1_shares().to_string())?,
        }
    }
    if let Some(m) = s.max {
        match version {
            Version::V2 => write(fs, &dir.join("cpu.max"), &m.v2_text())?,
            Version::V1 => {
                let (quota, period) = m.v1_values();
                if let Some(p) = period {
                    write(fs, &dir.join("cpu.cfs_period_us"), &p)?;
                }
                write(fs, &dir.join("cpu.cfs_quota_us"), &quota)?;
            }
        }
    }
    if let Some(i) = s.idle {
        write_feature(
            fs,
            &dir.join("cpu.idle"),
            if i { "1" } else { "0" },
            no_idle(),
        )?;
    }
    if let (Version::V1, true, Some(us)) = (version, s.rt_tasks, rt_share_us) {
        write(fs, &dir.join("cpu.rt_runtime_us"), &us.to_string())?;
    }
    Ok(())
}

/// The trial's settings of the cpuset controller for one group.
pub(crate) fn apply_cpuset(
    fs: &dyn CgroupFs,
    version: Version,
    dir: &Path,
    cpus: Option<&CpuList>,
    mems: Option<&CpuList>,
    all_mems: &CpuList,
    partition: bool,
) -> Result<(), Error> {
    match version {
        Version::V1 => {
            // A v1 cpuset starts with no CPUs and no nodes: both must be set before a task can
            // join (ENOSPC otherwise).
            let all = fs
                .read(&dir.parent().unwrap_or(dir).join("cpuset.cpus"))
                .map_err(|e| Error::io(IoAction::Read, dir, e))?;
            let cpus = cpus.map_or_else(|| all.trim().to_string(), |c| c.to_string());
            write(fs, &dir.join("cpuset.cpus"), &cpus)?;
            write(
                fs,
                &dir.join("cpuset.mems"),
                &mems.unwrap_or(all_mems).to_string(),
            )?;
        }
        Version::V2 => {
            if let Some(c) = cpus {
                if partition {
                    write(fs, &dir.join("cpuset.cpus.exclusive"), &c.to_string())?;
                }
                write(fs, &dir.join("cpuset.cpus"), &c.to_string())?;
            }
            if let Some(m) = mems {
                write(fs, &dir.join("cpuset.mems"), &m.to_string())?;
            }
            if partition {
                let f = dir.join("cpuset.cpus.partition");
                write(fs, &f, "root")?;
                let state = fs.read(&f).map_err(|e| Error::io(IoAction::Read, &f, e))?;
                if state.trim() != "root" {
                    return Err(Error::PartitionInvalid {
                        path: dir.to_path_buf(),
                        state: state.trim().to_string(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// cgroup v1: a load-balanced cpuset outside `ours` whose CPUs overlap `parts` (the kernel
/// would merge it with the partition into one root domain), following the kernel's walk in
/// `generate_sched_domains()`: a balanced cpuset covers its subtree, an unbalanced one is
/// descended into.
pub(crate) fn v1_blocker(
    fs: &dyn CgroupFs,
    mount: &Path,
    ours: &Path,
    parts: &CpuList,
) -> Option<(PathBuf, CpuList)> {
    fn walk(
        fs: &dyn CgroupFs,
        dir: &Path,
        ours: &Path,
        parts: &CpuList,
        depth: u32,
    ) -> Option<(PathBuf, CpuList)> {
        for name in fs.subdirs(dir).ok()? {
            let d = dir.join(name);
            if d == ours || depth > 32 {
                continue;
            }
            let balanced = fs
                .read(&d.join("cpuset.sched_load_balance"))
                .is_ok_and(|s| s.trim() == "1");
            let cpus = fs
                .read(&d.join("cpuset.effective_cpus"))
                .ok()
                .and_then(|s| CpuList::parse(&s).ok())
                .unwrap_or_default();
            if balanced && !cpus.is_empty() {
                let shared = cpus.intersection(parts);
                if !shared.is_empty() {
                    return Some((d, shared));
                }
            } else if let Some(b) = walk(fs, &d, ours, parts, depth + 1) {
                return Some(b);
            }
        }
        None
    }
    walk(fs, mount, ours, parts, 0)
}
