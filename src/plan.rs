//! Expands a spec into cells and an ordered list of trials (seeded rounds, warm-ups first).

use crate::policy::{DeadlineParams, PolicyKind, PriorityMode};
use crate::records::{StartMode, TaskKind, WorkSize};
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// One combination of axis values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Scheduling class.
    pub policy: PolicyKind,
    /// Priority mode.
    pub priorities: PriorityMode,
    /// What each task does.
    pub workload: Workload,
    /// How much of it.
    pub size: WorkSize,
    /// The size is the whole trial's work, divided evenly among its tasks (study 003).
    pub split: bool,
    /// Number of tasks.
    pub tasks: u32,
    /// Processes or threads.
    pub kind: TaskKind,
    /// Barrier or staggered start.
    pub start: StartMode,
    /// CPUs every task is pinned to (None: not pinned).
    pub cpus: Option<Vec<usize>>,
    /// Nice override for every task.
    pub nice: Option<i32>,
    /// RT priority override for every task.
    pub rt_priority: Option<u32>,
    /// DEADLINE parameters.
    pub deadline: DeadlineParams,
    /// Number of antagonists sharing the machine with the measured tasks.
    pub antagonists: u32,
    /// Policy of the antagonists.
    pub antagonist_policy: PolicyKind,
    /// What the antagonists run (cpu or io).
    pub antagonist_workload: crate::workload::WorkloadKind,
    /// Block-device I/O scheduler set for the cell (None: left as it is).
    pub io_scheduler: Option<String>,
}

impl Cell {
    /// A one-line description, e.g. `fifo/same cpu:pi x10 process barrier cpus=0`.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{}/{} {} x{} {} {}",
            self.policy,
            self.priorities.name(),
            self.workload.label(),
            self.tasks,
            self.kind.name(),
            self.start.name()
        );
        if self.split {
            s.push_str(" split");
        }
        if self.antagonists > 0 {
            s.push_str(&format!(
                " +{} {} antagonists ({})",
                self.antagonists,
                self.antagonist_workload.name(),
                self.antagonist_policy
            ));
        }
        if let Some(io) = &self.io_scheduler {
            s.push_str(&format!(" io={io}"));
        }
        if let Some(c) = &self.cpus {
            s.push_str(&format!(" cpus={}", crate::procfs::format_cpu_list(c)));
        }
        s
    }
}

/// One trial to run: which cell, its index within the cell, its round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTrial {
    /// Index into `Plan::cells`.
    pub cell: usize,
    /// Index of the trial within its cell (warm-ups first).
    pub trial_index: u32,
    /// Round number; every round runs each cell once.
    pub round: u32,
    /// A warm-up trial: stored, flagged, excluded from analysis by default.
    pub warmup: bool,
}

/// Cells and the order their trials run in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The cells, in axis order.
    pub cells: Vec<Cell>,
    /// The trials, in run order.
    pub trials: Vec<PlannedTrial>,
    /// Seed of the shuffle.
    pub seed: u64,
}

/// Orders `warmup + trials` trials of each of `cells` cells into rounds; within a round the
/// cells are shuffled with `seed`, so slow drift of the machine spreads over all cells.
pub fn order(cells: usize, trials: u32, warmup: u32, seed: u64) -> Vec<PlannedTrial> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::with_capacity(cells * (trials + warmup) as usize);
    for round in 0..trials + warmup {
        let mut idx: Vec<usize> = (0..cells).collect();
        rng.shuffle(&mut idx);
        for cell in idx {
            out.push(PlannedTrial {
                cell,
                trial_index: round,
                round,
                warmup: round < warmup,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_runs_once_per_round_and_warmups_come_first() {
        let t = order(5, 3, 1, 42);
        assert_eq!(t.len(), 20);
        for round in 0..4 {
            let mut cells: Vec<usize> = t
                .iter()
                .filter(|p| p.round == round)
                .map(|p| p.cell)
                .collect();
            cells.sort();
            assert_eq!(cells, vec![0, 1, 2, 3, 4]);
        }
        assert!(t[..5].iter().all(|p| p.warmup));
        assert!(t[5..].iter().all(|p| !p.warmup));
    }

    #[test]
    fn the_order_depends_on_the_seed_only() {
        assert_eq!(order(8, 4, 0, 7), order(8, 4, 0, 7));
        assert_ne!(order(8, 4, 0, 7), order(8, 4, 0, 8));
    }

    #[test]
    fn axis_names_parse_and_reject_with_the_accepted_values() {
        assert_eq!("thread".parse::<TaskKind>().unwrap(), TaskKind::Thread);
        assert_eq!(
            "staggered".parse::<StartMode>().unwrap(),
            StartMode::Staggered
        );
        assert!("fiber"
            .parse::<TaskKind>()
            .unwrap_err()
            .contains("process, thread"));
        assert!("now"
            .parse::<StartMode>()
            .unwrap_err()
            .contains("barrier, staggered"));
    }
}
