//! A cell's task groups: the cgroup axes expanded after the others (layouts, weights, limits,
//! idle, CPU sets, partitions; the first varies slowest), each cell's groups with their task
//! counts and settings, checked as the cgroup layer checks a trial, and what the run stage
//! asks of the layer for one trial ([`Cell::trial_spec`]).

use super::{Cell, SpecError};
use crate::cgroups::{CheckedCgroups, Layout, ALL_TASKS};
use crate::Problem;
use schedlab_cgroup::flags::{self, CellAxes, PerGroup};
use schedlab_cgroup::{CpuList, CpuMax, GroupSettings, GroupSpec, Name, TrialSpec};
use schedlab_core::records::TaskKind;
use schedlab_core::workload::WorkloadKind;
use serde::{Deserialize, Serialize};

/// One group of a cell: a CPU cgroup of its own for each trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellGroup {
    /// Its name (the cgroup's directory).
    pub name: Name,
    /// Its tasks: the cell's measured tasks in order, the first group's first.
    pub tasks: u32,
    /// What the layer writes for it.
    pub settings: GroupSettings,
}

/// One combination of the cgroup axes' values.
#[derive(Clone, Copy, Default)]
struct Choice<'a> {
    layout: Option<&'a Layout>,
    weight: Option<&'a PerGroup<schedlab_cgroup::Weight>>,
    max: Option<&'a PerGroup<CpuMax>>,
    idle: Option<&'a PerGroup<bool>>,
    cpuset: Option<&'a PerGroup<CpuList>>,
    partition: bool,
}

/// Every combination of `c`'s axes, the first axis varying slowest.
fn choices(c: &CheckedCgroups) -> Vec<Choice<'_>> {
    fn opt<T>(v: &[T]) -> Vec<Option<&T>> {
        if v.is_empty() {
            vec![None]
        } else {
            v.iter().map(Some).collect()
        }
    }
    let parts = if c.partition.is_empty() {
        vec![false]
    } else {
        c.partition.clone()
    };
    let mut out = Vec::new();
    for layout in opt(&c.layouts) {
        for weight in opt(&c.weight) {
            for max in opt(&c.max) {
                for idle in opt(&c.idle) {
                    for cpuset in opt(&c.cpuset) {
                        for &partition in &parts {
                            out.push(Choice {
                                layout,
                                weight,
                                max,
                                idle,
                                cpuset,
                                partition,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// Each of `cells` once per combination of the cgroup axes, with its groups; the cells as they
/// are when the spec has no cgroup axis.
pub(crate) fn vary_groups(cells: Vec<Cell>, c: &CheckedCgroups) -> Result<Vec<Cell>, SpecError> {
    if !c.any() {
        return Ok(cells);
    }
    let combos = choices(c);
    let online = CpuList::from_cpus(schedlab_sys::allowed_cpus().into_iter().map(|c| c as u32));
    let mut out = Vec::with_capacity(cells.len() * combos.len());
    for cell in cells {
        for choice in &combos {
            let mut varied = cell.clone();
            varied.groups = groups_of(&varied, choice)?;
            varied.tasks = varied.groups.iter().map(|g| g.tasks).sum();
            check_cell(&varied, &online)?;
            out.push(varied);
        }
    }
    Ok(out)
}

/// The groups of `cell` under `choice`: the layout's task counts (or the cell's tasks divided
/// evenly, the first groups taking the remainder) and the settings of each group.
fn groups_of(cell: &Cell, choice: &Choice) -> Result<Vec<CellGroup>, SpecError> {
    let one = [(Name::new(ALL_TASKS).expect("a valid name"), None)];
    let layout: &[(Name, Option<u32>)] = choice.layout.map_or(&one, Vec::as_slice);
    let n = layout.len() as u32;
    let counts: Vec<u32> = match layout.iter().map(|(_, t)| *t).collect::<Option<Vec<u32>>>() {
        Some(fixed) => fixed,
        None => (0..n)
            .map(|i| cell.tasks / n + u32::from(i < cell.tasks % n))
            .collect(),
    };
    let total: u32 = counts.iter().sum();
    if cell.workload.kind == WorkloadKind::Command && total != cell.tasks {
        return Err(Problem::new(
            "axes.groups",
            format!(
                "the groups have {total} tasks, but a command workload has one task per program ({})",
                cell.tasks
            ),
        )
        .into());
    }
    let pinned = cell
        .cpus
        .as_ref()
        .map(|c| vec![Some(CpuList::from_cpus(c.iter().map(|&c| c as u32)))]);
    let cpuset = match (choice.cpuset, choice.partition) {
        (Some(c), _) => Some(c.clone()),
        (None, true) => pinned,
        (None, false) => None,
    };
    let partition = choice.partition && cpuset.iter().flatten().any(Option::is_some);
    let axes = CellAxes {
        weight: choice.weight,
        max: choice.max,
        idle: choice.idle,
        cpuset: cpuset.as_ref(),
        partition,
    };
    let settings = flags::group_settings(&axes, layout.len())
        .map_err(|e| Problem::new("the cgroup axes", format!("cell {}: {e}", cell.label())))?;
    let rt = cell.policy.needs_guard();
    Ok(layout
        .iter()
        .zip(counts)
        .zip(settings)
        .map(|(((name, _), tasks), settings)| CellGroup {
            name: name.clone(),
            tasks,
            settings: GroupSettings {
                rt_tasks: rt,
                ..settings
            },
        })
        .collect())
}

/// The spec keys and flags behind a value the layer refused in a trial of `cell`.
fn keys_of(e: &schedlab_cgroup::Error, cell: &Cell) -> &'static str {
    let schedlab_cgroup::Error::InvalidValue { what, .. } = e else {
        return "the cgroup axes";
    };
    let idle = cell.groups.iter().any(|g| g.settings.idle == Some(true));
    match *what {
        "cpu weight" if idle => "axes.cpu_weight and axes.cpu_idle (--cpu-weight, --cpu-idle)",
        "cpu weight" => "axes.cpu_weight (--cpu-weight)",
        "cpuset" => "axes.cpuset (--cpuset)",
        "partition" => "axes.partition (--partition)",
        _ => "axes.groups (--groups)",
    }
}

/// The layer's checks of a trial of `cell`, and a pinned cell's CPUs within each group's.
fn check_cell(cell: &Cell, online: &CpuList) -> Result<(), SpecError> {
    let Some(spec) = cell.trial_spec("check") else {
        return Ok(());
    };
    spec.validate(online)
        .map_err(|e| Problem::new(keys_of(&e, cell), format!("cell {}: {e}", cell.label())))?;
    if let Some(cpus) = &cell.cpus {
        let pinned = CpuList::from_cpus(cpus.iter().map(|&c| c as u32));
        for g in &cell.groups {
            if let Some(set) = g.settings.cpus.as_ref().filter(|s| !pinned.is_subset(s)) {
                return Err(Problem::new(
                    "axes.cpus (--cpus) and axes.cpuset (--cpuset)",
                    format!(
                        "cell {}: its tasks are pinned to CPUs {pinned}, outside group {}'s cpuset {set}; a task can be pinned only within its cpuset",
                        cell.label(),
                        g.name
                    ),
                )
                .into());
            }
        }
    }
    Ok(())
}

impl Cell {
    /// What the cgroup layer is asked for one trial of this cell, labelled `label` (a
    /// directory name: `c3-t7`); None for a cell without groups.
    pub fn trial_spec(&self, label: &str) -> Option<TrialSpec> {
        if self.groups.is_empty() {
            return None;
        }
        Some(TrialSpec {
            label: Name::new(label).ok()?,
            groups: self
                .groups
                .iter()
                .map(|g| GroupSpec {
                    name: g.name.clone(),
                    settings: g.settings.clone(),
                })
                .collect(),
            threads: self.kind == TaskKind::Thread,
        })
    }

    /// The group of measured task `i` (None: an antagonist, or a cell without groups).
    pub fn group_of(&self, i: usize) -> Option<usize> {
        let mut end = 0usize;
        for (g, group) in self.groups.iter().enumerate() {
            end += group.tasks as usize;
            if i < end {
                return Some(g);
            }
        }
        None
    }

    /// The groups in one line, e.g. `cg[a:1 w=100 | b:3 w=300 max=20ms/100ms]`, or
    /// `cg[4 max=20ms/100ms]` for the one group of all tasks; None without groups.
    pub fn groups_label(&self) -> Option<String> {
        if self.groups.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .groups
            .iter()
            .map(|g| {
                let mut items = if self.groups.len() == 1 && g.name.as_str() == ALL_TASKS {
                    vec![g.tasks.to_string()]
                } else {
                    vec![format!("{}:{}", g.name, g.tasks)]
                };
                items.extend(settings_words(&g.settings));
                items.join(" ")
            })
            .collect();
        Some(format!("cg[{}]", parts.join(" | ")))
    }
}

/// A group's settings as words: `w=100 max=20ms/100ms idle cpus=1 partition`.
fn settings_words(s: &GroupSettings) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = s.weight {
        out.push(format!("w={w}"));
    }
    if let Some(m) = s.max {
        out.push(format!("max={m}"));
    }
    if s.idle == Some(true) {
        out.push("idle".into());
    }
    if let Some(c) = &s.cpus {
        out.push(format!("cpus={c}"));
    }
    if s.partition {
        out.push("partition".into());
    }
    out
}

#[cfg(test)]
#[path = "groups_tests.rs"]
mod tests;
