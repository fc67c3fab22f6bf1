//! What a trial asks of the layer: its groups and their settings (`TrialSpec`), checked
//! against the machine (`check`: a typed `Unavailable` for a skipped cell; `validate`: an
//! `Error` for a value that can never work), and described in words with every file and value
//! that will be written (`describe`).

use crate::detect::{Capabilities, Controller};
use crate::error::{Error, Unavailable};
use crate::invalid::Invalid;
use crate::mountinfo::Version;
use crate::value::{CpuList, CpuMax, Name, Weight};
use serde::{Deserialize, Serialize};

/// One group's settings; `None` leaves the kernel's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSettings {
    /// CPU weight (v2 `cpu.weight`; v1 `cpu.shares`).
    pub weight: Option<Weight>,
    /// Bandwidth limit (v2 `cpu.max`; v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`).
    pub max: Option<CpuMax>,
    /// Idle group (`cpu.idle`).
    pub idle: Option<bool>,
    /// The CPUs the group's tasks may use (`cpuset.cpus`).
    pub cpus: Option<CpuList>,
    /// The memory nodes (`cpuset.mems`); v1 defaults to all.
    pub mems: Option<CpuList>,
    /// Give the group's CPUs a root domain of their own (needs `cpus`).
    pub partition: bool,
    /// The group will hold FIFO/RR tasks (v1 with RT group scheduling: it gets an RT budget).
    pub rt_tasks: bool,
}

impl GroupSettings {
    fn needs_cpu(&self) -> bool {
        self.weight.is_some() || self.max.is_some() || self.idle.is_some()
    }

    fn needs_cpuset(&self) -> bool {
        self.cpus.is_some() || self.mems.is_some() || self.partition
    }
}

/// A named group of a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSpec {
    /// The group's name (its directory).
    pub name: Name,
    /// Its settings.
    pub settings: GroupSettings,
}

/// A trial's groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialSpec {
    /// The trial's directory name, unique within the process (e.g. `c3-t7`).
    pub label: Name,
    /// The groups, at least one.
    pub groups: Vec<GroupSpec>,
    /// The tasks are threads of one host process (v2 then uses a threaded subtree).
    pub threads: bool,
}

/// Which hierarchies a session must create its parent in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Needs {
    /// The cpu controller (and usage figures).
    pub cpu: bool,
    /// The cpuset controller.
    pub cpuset: bool,
    /// Some group holds FIFO/RR tasks.
    pub rt: bool,
}

impl Needs {
    /// What a run's trials need together.
    pub fn of<'a>(trials: impl IntoIterator<Item = &'a TrialSpec>) -> Needs {
        let mut n = Needs::default();
        for t in trials {
            let m = t.needs();
            n.cpu |= m.cpu;
            n.cpuset |= m.cpuset;
            n.rt |= m.rt;
        }
        n
    }
}

impl TrialSpec {
    /// What this trial needs. Every trial uses the cpu hierarchy when it is there (for the
    /// usage and throttling figures), even without a cpu setting.
    pub fn needs(&self) -> Needs {
        let g = |f: fn(&GroupSettings) -> bool| self.groups.iter().any(|g| f(&g.settings));
        Needs {
            cpu: true,
            cpuset: g(GroupSettings::needs_cpuset),
            rt: g(|s| s.rt_tasks),
        }
    }

    /// The CPUs of all partition groups.
    pub fn partition_cpus(&self) -> CpuList {
        self.groups
            .iter()
            .filter(|g| g.settings.partition)
            .filter_map(|g| g.settings.cpus.as_ref())
            .fold(CpuList::default(), |a, c| a.union(c))
    }

    /// Whether this machine can apply every setting; the reason otherwise (the plan skips the
    /// cell with it). A trial without cpu settings runs without the cpu controller, with no
    /// group figures.
    pub fn check(&self, caps: &Capabilities) -> Result<(), Unavailable> {
        if !caps.root_user {
            return Err(Unavailable::NotRoot);
        }
        let any = |f: &dyn Fn(&GroupSettings) -> bool| self.groups.iter().any(|g| f(&g.settings));
        if any(&GroupSettings::needs_cpu) || any(&|s| s.rt_tasks && caps.rt_group_sched.present) {
            caps.placement(Controller::Cpu)?;
        }
        if any(&|s| s.idle.is_some()) && !caps.idle.present {
            return Err(crate::session::no_idle());
        }
        if any(&GroupSettings::needs_cpuset) {
            let p = caps.placement(Controller::Cpuset)?;
            if any(&|s| s.partition) {
                if !caps.partition.present {
                    return Err(match p.version {
                        Version::V2 => crate::session::no_remote_partition(),
                        Version::V1 => Unavailable::NoFeature {
                            file: "cpuset.sched_load_balance",
                            why: "v1 partitions are made by switching off load balancing in the root cpuset",
                            remedy: "drop --partition",
                        },
                    });
                }
                if self.threads && p.version == Version::V2 {
                    return Err(Unavailable::ThreadedPartition);
                }
            }
        }
        Ok(())
    }

    /// Values that can never work, whatever the machine: duplicate names, an idle group with a
    /// weight, a partition without CPUs or overlapping another group, CPUs not online.
    pub fn validate(&self, online: &CpuList) -> Result<(), Error> {
        if self.groups.is_empty() {
            return Err(Error::invalid("groups", "[]", Invalid::NoGroups));
        }
        for (i, g) in self.groups.iter().enumerate() {
            if self.groups[..i].iter().any(|o| o.name == g.name) {
                return Err(Error::invalid(
                    "group name",
                    g.name.as_str(),
                    Invalid::DuplicateName,
                ));
            }
            let s = &g.settings;
            if s.idle == Some(true) && s.weight.is_some() {
                return Err(Error::invalid(
                    "cpu weight",
                    s.weight.map(|w| w.to_string()).unwrap_or_default(),
                    Invalid::IdleWithWeight {
                        group: g.name.to_string(),
                    },
                ));
            }
            if let Some(c) = &s.cpus {
                if c.is_empty() || !c.is_subset(online) {
                    return Err(Error::invalid(
                        "cpuset",
                        c.to_string(),
                        Invalid::CpusNotUsable {
                            group: g.name.to_string(),
                            online: online.clone(),
                        },
                    ));
                }
            }
            if s.partition && s.cpus.is_none() {
                return Err(Error::invalid(
                    "partition",
                    g.name.as_str(),
                    Invalid::PartitionWithoutCpus,
                ));
            }
        }
        let parts = self.partition_cpus();
        if parts.is_empty() {
            return Ok(());
        }
        if online.difference(&parts).is_empty() {
            return Err(Error::invalid(
                "partition",
                parts.to_string(),
                Invalid::PartitionTakesAll {
                    online: online.clone(),
                },
            ));
        }
        for (i, g) in self.groups.iter().enumerate() {
            let Some(c) = &g.settings.cpus else { continue };
            for o in &self.groups[i + 1..] {
                let Some(oc) = &o.settings.cpus else { continue };
                let shared = c.intersection(oc);
                if (g.settings.partition || o.settings.partition) && !shared.is_empty() {
                    return Err(Error::invalid(
                        "cpuset",
                        shared.to_string(),
                        Invalid::PartitionShared {
                            a: g.name.to_string(),
                            b: o.name.to_string(),
                            shared: shared.clone(),
                        },
                    ));
                }
            }
        }
        Ok(())
    }

    /// One line per group: every file the layer will write, with its value and the conversion.
    pub fn describe(&self, caps: &Capabilities, rt_share_us: Option<u64>) -> Vec<String> {
        let v = |c| caps.placement(c).map(|p| p.version).ok();
        let parts = self.partition_cpus();
        self.groups
            .iter()
            .map(|g| {
                let s = &g.settings;
                let mut items = Vec::new();
                if let Some(w) = s.weight {
                    items.push(match v(Controller::Cpu) {
                        Some(Version::V1) => format!(
                            "cpu.shares {} (weight {w}: round({w} × 1024 / 100), the kernel's sched_weight_from_cgroup)",
                            w.v1_shares()
                        ),
                        _ => format!("cpu.weight {w}"),
                    });
                }
                if let Some(m) = s.max {
                    items.push(match (v(Controller::Cpu), m) {
                        (Some(Version::V1), CpuMax::Unlimited) => "cpu.cfs_quota_us -1 (no limit)".to_string(),
                        (Some(Version::V1), CpuMax::Limit { quota_us, period_us }) => format!(
                            "cpu.cfs_period_us {period_us}, cpu.cfs_quota_us {quota_us} ({m}: {:.2} CPUs)",
                            quota_us as f64 / period_us as f64
                        ),
                        _ => format!("cpu.max \"{}\" ({m})", m.v2_text()),
                    });
                }
                if let Some(i) = s.idle {
                    items.push(format!("cpu.idle {}", i as u8));
                }
                if let Some(c) = &s.cpus {
                    items.push(format!("cpuset.cpus {c}"));
                } else if !parts.is_empty() && v(Controller::Cpuset).is_some() {
                    items.push(format!("cpuset.cpus {} (the CPUs the partitions leave)", caps.online_cpus.difference(&parts)));
                }
                if s.partition {
                    items.push(match v(Controller::Cpuset) {
                        Some(Version::V1) => "a root domain of its own: cpuset.sched_load_balance 0 in the root cpuset and in schedlab's parents while the trial runs".to_string(),
                        _ => "cpuset.cpus.exclusive on its parents and itself, cpuset.cpus.partition root".to_string(),
                    });
                }
                if s.rt_tasks && caps.rt_group_sched.present {
                    if let Some(us) = rt_share_us {
                        let period = caps.rt_root.map_or(1_000_000, |r| r.period_us);
                        items.push(format!(
                            "cpu.rt_runtime_us {us} (RT tasks are throttled at {us} µs per {period} µs on each CPU: an equal share of the RT time the root leaves free)"
                        ));
                    }
                }
                if items.is_empty() {
                    items.push("kernel defaults (figures only)".to_string());
                }
                format!("group {}: {}", g.name, items.join("; "))
            })
            .collect()
    }
}
