//! The CPU cgroup axes of a spec: task groups (`groups`), and per group `cpu_weight`,
//! `cpu_max`, `cpu_idle`, `cpuset` and `partition`; their serde types and checks.
//!
//! Grammar (the flags' too, see `schedlab_cgroup::flags`): each value of an axis is one cell;
//! within a value `:` separates the groups' values (one value alone applies to every group, `-`
//! leaves a group at the kernel's default). In a spec file a value may be a number
//! (`cpu_weight = [100, "100:300"]`), a boolean (`cpu_idle = [false, true]`) or text; CPU lists
//! take the kernel's syntax there (`cpuset = ["0,2-3:1"]`), on the command line `+` joins their
//! items (`--cpuset 0+2-3:1`), since `,` separates cells.

use super::Problem;
use schedlab_cgroup::flags::{self, PerGroup};
use schedlab_cgroup::{CpuList, CpuMax, Name, Weight};
use serde::{Deserialize, Serialize};

/// The name of the one group of a trial whose spec names no groups.
pub const ALL_TASKS: &str = "all";

/// One group of a layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupDef {
    /// The group's name (its cgroup's directory): 1 to 32 of `a-z`, `0-9`, `_`, `-`.
    pub name: String,
    /// Its task count; without it the cell's tasks (`tasks` axis) are divided evenly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u32>,
}

/// The `groups` key: one layout, or a list of layouts (an axis, one cell each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Groups {
    /// One layout: `[{ name = "a", tasks = 2 }, { name = "b", tasks = 6 }]`.
    One(Vec<GroupDef>),
    /// Several: `[[{ name = "a", tasks = 1 }, ...], [...]]`.
    Many(Vec<Vec<GroupDef>>),
}

impl Groups {
    /// The layouts.
    pub fn layouts(&self) -> Vec<&[GroupDef]> {
        match self {
            Groups::One(l) => vec![l.as_slice()],
            Groups::Many(ls) => ls.iter().map(Vec::as_slice).collect(),
        }
    }

    /// A layout from a `--groups` value: `NAME=TASKS` items joined with `:`, e.g. `a=1:b=3`.
    pub fn parse_layout(text: &str) -> Result<Vec<GroupDef>, LayoutError> {
        text.split(':')
            .map(|item| {
                let (name, tasks) = item.split_once('=').ok_or_else(|| LayoutError::NoTasks {
                    text: text.to_string(),
                })?;
                let tasks = tasks
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| LayoutError::BadCount {
                        text: text.to_string(),
                        tasks: tasks.to_string(),
                    })?;
                Ok(GroupDef {
                    name: name.trim().to_string(),
                    tasks: Some(tasks),
                })
            })
            .collect()
    }
}

/// A `--groups` layout that cannot be read ([`Groups::parse_layout`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// An item without `=`.
    #[error("--groups {text}: write NAME=TASKS for each group, joined with `:`, e.g. a=1:b=3")]
    NoTasks {
        /// The layout given.
        text: String,
    },
    /// A task count that is no number.
    #[error("--groups {text}: {tasks:?} is not a task count")]
    BadCount {
        /// The layout given.
        text: String,
        /// The count as written.
        tasks: String,
    },
}

/// One value of a cgroup axis as written in a spec: a boolean, a number or text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CgroupValue {
    /// `true`/`false` (cpu_idle).
    Bool(bool),
    /// A number (cpu_weight, cpu_idle 0/1, a single CPU).
    Int(i64),
    /// Text in the axis's grammar.
    Text(String),
}

impl CgroupValue {
    /// The value in the flags' grammar.
    fn text(&self) -> String {
        match self {
            CgroupValue::Bool(b) => (if *b { "1" } else { "0" }).to_string(),
            CgroupValue::Int(n) => n.to_string(),
            CgroupValue::Text(t) => t.clone(),
        }
    }
}

/// One layout, checked: each group's name and task count (None: a share of the cell's tasks).
pub type Layout = Vec<(Name, Option<u32>)>;

/// The cgroup axes of a spec, checked; empty lists are axes not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckedCgroups {
    /// Group layouts; empty: no `groups` key (a cell's tasks form one group).
    pub layouts: Vec<Layout>,
    /// `cpu_weight`, one per-group list per cell.
    pub weight: Vec<PerGroup<Weight>>,
    /// `cpu_max`.
    pub max: Vec<PerGroup<CpuMax>>,
    /// `cpu_idle`.
    pub idle: Vec<PerGroup<bool>>,
    /// `cpuset`.
    pub cpuset: Vec<PerGroup<CpuList>>,
    /// `partition`.
    pub partition: Vec<bool>,
}

impl CheckedCgroups {
    /// Whether the spec puts tasks in cgroups at all.
    pub fn any(&self) -> bool {
        !(self.layouts.is_empty()
            && self.weight.is_empty()
            && self.max.is_empty()
            && self.idle.is_empty()
            && self.cpuset.is_empty()
            && self.partition.is_empty())
    }

    /// How many cells the cgroup axes multiply the others by.
    pub fn cell_factor(&self) -> u64 {
        [
            self.layouts.len(),
            self.weight.len(),
            self.max.len(),
            self.idle.len(),
            self.cpuset.len(),
            self.partition.len(),
        ]
        .iter()
        .fold(1u64, |n, &l| n.saturating_mul(l.max(1) as u64))
    }

    /// Whether every layout fixes its task counts (then the cells' task counts come from it).
    pub fn fixed_tasks(&self) -> bool {
        !self.layouts.is_empty()
            && self
                .layouts
                .iter()
                .all(|l| l.iter().all(|(_, t)| t.is_some()))
    }
}

/// The cgroup keys of the `axes` table.
#[derive(Clone, Copy)]
pub struct CgroupAxes<'a> {
    /// `groups`.
    pub groups: Option<&'a Groups>,
    /// `cpu_weight`.
    pub cpu_weight: &'a [CgroupValue],
    /// `cpu_max`.
    pub cpu_max: &'a [CgroupValue],
    /// `cpu_idle`.
    pub cpu_idle: &'a [CgroupValue],
    /// `cpuset`.
    pub cpuset: &'a [CgroupValue],
    /// `partition`.
    pub partition: &'a [bool],
    /// The task counts of the `tasks` axis.
    pub tasks: &'a [u32],
    /// Whether the `cpus` axis pins the cells (a partition can take its CPUs).
    pub pinned: bool,
}

/// Checks the cgroup axes.
pub fn check_cgroups(a: &CgroupAxes) -> Result<CheckedCgroups, Problem> {
    let layouts = match a.groups {
        Some(g) => check_layouts(g, a.tasks)?,
        None => Vec::new(),
    };
    let counts: Vec<usize> = if layouts.is_empty() {
        vec![1]
    } else {
        layouts.iter().map(Vec::len).collect()
    };
    let c = CheckedCgroups {
        weight: axis("cpu_weight", a.cpu_weight, &counts, flags::parse_cpu_weight)?,
        max: axis("cpu_max", a.cpu_max, &counts, flags::parse_cpu_max)?,
        idle: axis("cpu_idle", a.cpu_idle, &counts, flags::parse_cpu_idle)?,
        cpuset: axis("cpuset", a.cpuset, &counts, |t| {
            flags::parse_cpuset(&t.replace(',', "+"))
        })?,
        partition: a.partition.to_vec(),
        layouts,
    };
    let cpus = !c.cpuset.is_empty() || a.pinned;
    if c.partition.contains(&true) && !cpus {
        return Err(Problem::new(
            "axes.partition",
            "a partition gives a group's CPUs a root domain of their own, and no group has CPUs",
        )
        .accepting(
            "a cpuset axis (--cpuset), or a cpus axis (--cpus) whose CPUs the groups take",
        ));
    }
    Ok(c)
}

/// Checks the layouts of `groups`: names, task counts.
fn check_layouts(g: &Groups, tasks: &[u32]) -> Result<Vec<Layout>, Problem> {
    let many = matches!(g, Groups::Many(_));
    let mut out = Vec::new();
    for (li, layout) in g.layouts().into_iter().enumerate() {
        let key = |rest: &str| {
            if many {
                format!("axes.groups[{li}]{rest}")
            } else {
                format!("axes.groups{rest}")
            }
        };
        if layout.is_empty() {
            return Err(Problem::new(key(""), "a layout needs at least one group")
                .accepting("[{ name = \"a\", tasks = 1 }, { name = \"b\", tasks = 3 }]"));
        }
        let mut checked: Layout = Vec::new();
        for (gi, d) in layout.iter().enumerate() {
            let name = Name::new(&d.name)
                .map_err(|e| Problem::new(key(&format!("[{gi}].name")), e.to_string()))?;
            if checked.iter().any(|(n, _)| *n == name) {
                return Err(Problem::new(
                    key(&format!("[{gi}].name")),
                    format!("two groups are called {name}"),
                ));
            }
            if let Some(t) = d.tasks.filter(|t| !(1..=100_000).contains(t)) {
                return Err(Problem::new(
                    key(&format!("[{gi}].tasks")),
                    format!("{t} is not a usable task count"),
                )
                .accepting("1..=100000"));
            }
            checked.push((name, d.tasks));
        }
        let fixed = checked.iter().filter(|(_, t)| t.is_some()).count();
        if fixed != 0 && fixed != checked.len() {
            return Err(Problem::new(
                key(""),
                "give every group its tasks, or none (then the cell's tasks are divided evenly)",
            ));
        }
        if fixed == 0 {
            if let Some(&t) = tasks.iter().find(|&&t| (t as usize) < checked.len()) {
                return Err(Problem::new(
                    "axes.tasks",
                    format!("{t} tasks cannot fill {} groups", checked.len()),
                )
                .accepting(format!("at least {} tasks", checked.len())));
            }
        } else if tasks.len() > 1 {
            return Err(Problem::new(
                "axes.tasks",
                "the groups give their task counts, so the tasks axis is not used; give it one value or none",
            ));
        }
        out.push(checked);
    }
    Ok(out)
}

/// One axis: each value parsed as one cell (a value holding `,`-separated cells is refused:
/// in a spec file each cell is its own list entry) with one value for all groups or one per
/// group of every layout.
fn axis<T>(
    name: &str,
    values: &[CgroupValue],
    groups: &[usize],
    parse: impl Fn(&str) -> Result<Vec<PerGroup<T>>, schedlab_cgroup::Error>,
) -> Result<Vec<PerGroup<T>>, Problem> {
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let key = format!("axes.{name}[{i}]");
        let text = v.text();
        let mut cells = parse(&text).map_err(|e| Problem::new(key.as_str(), e.to_string()))?;
        if cells.len() != 1 {
            return Err(Problem::new(
                key,
                format!("{text:?} holds several cells; give each cell its own entry"),
            ));
        }
        let cell = cells.remove(0);
        if let Some(n) = groups.iter().find(|&&n| cell.len() != 1 && cell.len() != n) {
            return Err(
                Problem::new(key, format!("{} values for {n} groups", cell.len()))
                    .accepting("one value for every group, or one per group separated by `:`"),
            );
        }
        out.push(cell);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes<'a>(groups: Option<&'a Groups>, weight: &'a [CgroupValue]) -> CgroupAxes<'a> {
        CgroupAxes {
            groups,
            cpu_weight: weight,
            cpu_max: &[],
            cpu_idle: &[],
            cpuset: &[],
            partition: &[],
            tasks: &[4],
            pinned: false,
        }
    }

    fn def(name: &str, tasks: Option<u32>) -> GroupDef {
        GroupDef {
            name: name.into(),
            tasks,
        }
    }

    #[test]
    fn values_per_cell_and_group() {
        let g = Groups::One(vec![def("a", Some(1)), def("b", Some(3))]);
        let w = [CgroupValue::Int(100), CgroupValue::Text("100:300".into())];
        let c = check_cgroups(&axes(Some(&g), &w)).unwrap();
        assert_eq!(c.weight.len(), 2);
        assert_eq!(c.weight[0].len(), 1, "one value for both groups");
        assert_eq!(c.weight[1][1].unwrap().get(), 300);
        assert!(c.fixed_tasks() && c.any());
        assert_eq!(c.cell_factor(), 2);
        let bad = [CgroupValue::Text("1:2:3".into())];
        let e = check_cgroups(&axes(Some(&g), &bad)).unwrap_err();
        assert_eq!(e.key, "axes.cpu_weight[0]");
        assert!(e.message.contains("3 values for 2 groups"), "{e}");
        let several = [CgroupValue::Text("100,300".into())];
        assert!(check_cgroups(&axes(None, &several)).is_err());
    }

    #[test]
    fn layouts_are_checked() {
        let dup = Groups::One(vec![def("a", Some(1)), def("a", Some(1))]);
        assert_eq!(
            check_cgroups(&axes(Some(&dup), &[])).unwrap_err().key,
            "axes.groups[1].name"
        );
        let mixed = Groups::Many(vec![vec![def("a", Some(1)), def("b", None)]]);
        assert_eq!(
            check_cgroups(&axes(Some(&mixed), &[])).unwrap_err().key,
            "axes.groups[0]"
        );
        let bad = Groups::One(vec![def("../x", Some(1))]);
        assert!(check_cgroups(&axes(Some(&bad), &[])).is_err());
        let five = Groups::One((0..5).map(|i| def(&format!("g{i}"), None)).collect());
        assert_eq!(
            check_cgroups(&axes(Some(&five), &[])).unwrap_err().key,
            "axes.tasks",
            "4 tasks cannot fill 5 groups"
        );
        assert_eq!(
            Groups::parse_layout("a=1:b=3").unwrap(),
            vec![def("a", Some(1)), def("b", Some(3))]
        );
        assert_eq!(
            Groups::parse_layout("a:b"),
            Err(LayoutError::NoTasks { text: "a:b".into() })
        );
        assert_eq!(
            Groups::parse_layout("a=x").unwrap_err().to_string(),
            "--groups a=x: \"x\" is not a task count"
        );
    }

    #[test]
    fn cpusets_take_the_kernel_syntax_and_partitions_need_cpus() {
        let sets = [CgroupValue::Text("0,2-3:1".into()), CgroupValue::Int(1)];
        let a = CgroupAxes {
            cpuset: &sets,
            ..axes(None, &[])
        };
        let g = Groups::One(vec![def("a", Some(1)), def("b", Some(1))]);
        let c = check_cgroups(&CgroupAxes {
            groups: Some(&g),
            ..a
        })
        .unwrap();
        assert_eq!(c.cpuset[0][0].as_ref().unwrap().to_string(), "0,2-3");
        assert_eq!(c.cpuset[1][0].as_ref().unwrap().to_string(), "1");
        let part = [true];
        let lone = CgroupAxes {
            partition: &part,
            ..axes(None, &[])
        };
        assert_eq!(check_cgroups(&lone).unwrap_err().key, "axes.partition");
        assert!(check_cgroups(&CgroupAxes {
            pinned: true,
            ..lone
        })
        .is_ok());
    }
}
