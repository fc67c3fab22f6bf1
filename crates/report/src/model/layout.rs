//! How a run's cells are laid out for the report: groups (cells that differ only by policy)
//! and panels (groups that differ only by task count), with their labels.

use super::{tasks_phrase, CellKey, CellReport, Group, Panel, ReportInput};
use schedlab_core::records::{TaskKind, TrialStatus};

/// Which axes other than policy and task count take more than one value in the run.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Varying {
    priorities: bool,
    kind: bool,
    start: bool,
    cpus: bool,
}

impl Varying {
    pub(super) fn of(keys: &[CellKey]) -> Varying {
        let differs =
            |same: &dyn Fn(&CellKey, &CellKey) -> bool| keys.iter().any(|k| !same(k, &keys[0]));
        Varying {
            priorities: differs(&|a, b| a.priorities == b.priorities),
            kind: differs(&|a, b| a.kind == b.kind),
            start: differs(&|a, b| a.start == b.start),
            cpus: differs(&|a, b| {
                a.cpus.as_deref().unwrap_or_default() == b.cpus.as_deref().unwrap_or_default()
            }),
        }
    }

    /// The varying axes of a cell, as ", spread priorities, threads".
    pub(super) fn extras(self, k: &CellKey) -> String {
        let mut out = String::new();
        if self.priorities {
            out += &format!(", {} priorities", k.priorities.name());
        }
        if self.kind {
            match k.kind {
                TaskKind::Thread => out += ", threads",
                TaskKind::Process => out += ", processes",
            }
        }
        if self.start {
            out += &format!(", {} start", k.start.name());
        }
        if self.cpus {
            match &k.cpus {
                Some(c) => out += &format!(", CPUs {c}"),
                None => out += ", unpinned",
            }
        }
        out
    }
}

/// The cells sorted into groups (cells that differ only by policy) and panels (groups that
/// differ only by task count), before any statistic.
pub(super) struct Layout {
    pub(super) cells: Vec<CellReport>,
    pub(super) groups: Vec<Group>,
    pub(super) panels: Vec<Panel>,
}

impl Layout {
    pub(super) fn of(input: &ReportInput, keys: &[CellKey]) -> Layout {
        let varying = Varying::of(keys);
        let mut l = Layout {
            cells: Vec::with_capacity(input.cells.len()),
            groups: Vec::new(),
            panels: Vec::new(),
        };
        let mut group_keys: Vec<CellKey> = Vec::new();
        let mut panel_keys: Vec<CellKey> = Vec::new();
        for (ci, c) in input.cells.iter().enumerate() {
            let key = keys[ci].clone();
            let gkey = CellKey {
                policy: String::new(),
                ..key.clone()
            };
            let pkey = CellKey {
                tasks: 0,
                ..gkey.clone()
            };
            let panel = l.panel_of(&mut panel_keys, pkey, &key, &varying);
            let group = l.group_of(&mut group_keys, gkey, &key, &varying, panel);
            l.groups[group].cells.push(ci);
            l.cells.push(CellReport {
                key,
                work: c.work.clone(),
                group,
                trials_ok: c.count(TrialStatus::Ok),
                trials_total: c.statuses.iter().map(|(_, n)| n).sum(),
                statuses: c.statuses.clone(),
                reason: c.reason.clone(),
                summaries: Vec::new(),
                pooled: Vec::new(),
            });
        }
        for p in &mut l.panels {
            p.groups.sort_by_key(|&g| l.groups[g].tasks);
        }
        l
    }

    /// The panel of `pkey` (new when first seen), with `key`'s policy added to it.
    fn panel_of(
        &mut self,
        panel_keys: &mut Vec<CellKey>,
        pkey: CellKey,
        key: &CellKey,
        varying: &Varying,
    ) -> usize {
        let panel = match panel_keys.iter().position(|k| *k == pkey) {
            Some(p) => p,
            None => {
                panel_keys.push(pkey);
                self.panels.push(Panel {
                    label: format!("{}{}", key.workload, varying.extras(key)),
                    groups: Vec::new(),
                    policies: Vec::new(),
                });
                self.panels.len() - 1
            }
        };
        if !self.panels[panel].policies.contains(&key.policy) {
            self.panels[panel].policies.push(key.policy.clone());
        }
        panel
    }

    /// The group of `gkey` (new when first seen, in `panel`).
    fn group_of(
        &mut self,
        group_keys: &mut Vec<CellKey>,
        gkey: CellKey,
        key: &CellKey,
        varying: &Varying,
        panel: usize,
    ) -> usize {
        if let Some(g) = group_keys.iter().position(|k| *k == gkey) {
            return g;
        }
        group_keys.push(gkey);
        self.groups.push(Group {
            label: format!(
                "{} with {}{}",
                key.workload,
                tasks_phrase(key.tasks),
                varying.extras(key)
            ),
            tasks: key.tasks,
            panel,
            cells: Vec::new(),
            baseline: None,
            tests: Vec::new(),
        });
        self.panels[panel].groups.push(self.groups.len() - 1);
        self.groups.len() - 1
    }
}
