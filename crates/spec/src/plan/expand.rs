//! Expansion of a checked spec: the cartesian product of its axes into cells (the first axis
//! varies slowest), and the seeded order of their trials.

use super::{Cell, PlannedTrial};
use crate::{Checked, CheckedWorkload};
use schedlab_core::records::{KnobSetting, WorkSize};
use schedlab_core::workload::{Workload, WorkloadKind};

/// Every combination of the axes of `c`, in axis order: policies, priorities, workloads (a
/// command workload once per start order), tasks, kind, start, cpus, antagonists, I/O schedulers,
/// slices, knobs, BPF schedulers.
pub(crate) fn cells(c: &Checked) -> Vec<Cell> {
    let workloads: Vec<(Workload, WorkSize, bool)> =
        c.workloads.iter().flat_map(variants).collect();
    let cpus: Vec<Option<Vec<usize>>> = axis_or(&c.cpus, None, |l| Some(l.clone()));
    let antagonists: Vec<u32> = axis_or(&c.antagonists, 0, |&n| n);
    let io_schedulers: Vec<Option<String>> = axis_or(&c.io_schedulers, None, |s| Some(s.clone()));

    let mut cells = vec![template(c)];
    cells = vary(cells, |_| c.policies.clone(), |cell, p| cell.policy = p);
    cells = vary(
        cells,
        |_| c.priorities.clone(),
        |cell, p| cell.priorities = p,
    );
    cells = vary(
        cells,
        |_| workloads.clone(),
        |cell, (workload, size, split)| {
            cell.workload = workload;
            cell.size = size;
            cell.split = split;
        },
    );
    cells = vary(
        cells,
        |cell| task_counts(cell, &c.tasks),
        |cell, n| cell.tasks = n,
    );
    cells = vary(cells, |_| c.kind.clone(), |cell, k| cell.kind = k);
    cells = vary(cells, |_| c.start.clone(), |cell, s| cell.start = s);
    cells = vary(cells, |_| cpus.clone(), |cell, l| cell.cpus = l);
    cells = vary(
        cells,
        |_| antagonists.clone(),
        |cell, n| cell.antagonists = n,
    );
    cells = vary(
        cells,
        |_| io_schedulers.clone(),
        |cell, s| cell.io_scheduler = s,
    );
    vary_knobs(cells, c)
}

/// The kernel-knob axes after the others: slices (fair-policy cells only; every other cell
/// once, with the kernel's slice), each knob in spec order, then the BPF scheduler.
fn vary_knobs(mut cells: Vec<Cell>, c: &Checked) -> Vec<Cell> {
    let slices = |cell: &Cell| {
        if cell.policy.takes_slice() {
            axis_or(&c.slices, None, |&s| s)
        } else {
            vec![None]
        }
    };
    cells = vary(cells, slices, |cell, s| cell.slice_ns = s);
    for knob in &c.knobs {
        cells = vary(
            cells,
            |_| knob.values.clone(),
            |cell, value| {
                cell.knobs.push(KnobSetting {
                    name: knob.name.clone(),
                    path: knob.path.clone(),
                    value,
                })
            },
        );
    }
    let scx = axis_or(&c.scx, None, Clone::clone);
    vary(cells, |_| scx.clone(), |cell, s| cell.scx = s)
}

/// The cell every combination starts from: the settings shared by all cells, and the first
/// value of each axis (each is set again by [`vary`]).
fn template(c: &Checked) -> Cell {
    let first = &c.workloads[0];
    Cell {
        policy: c.policies[0],
        priorities: c.priorities[0],
        workload: first.workload.clone(),
        size: first.size,
        split: first.split,
        tasks: c.tasks[0],
        kind: c.kind[0],
        start: c.start[0],
        cpus: None,
        nice: c.nice,
        rt_priority: c.rt_priority,
        deadline: c.deadline,
        antagonists: 0,
        antagonist_policy: c.antagonist_policy,
        antagonist_workload: c.antagonist_workload,
        io_scheduler: None,
        slice_ns: None,
        knobs: Vec::new(),
        scx: None,
        groups: Vec::new(),
    }
}

/// Each of `cells` once per value of an axis (`values` gives them for the cell), in order:
/// the axes varied before vary slower.
fn vary<T>(
    cells: Vec<Cell>,
    values: impl Fn(&Cell) -> Vec<T>,
    set: impl Fn(&mut Cell, T),
) -> Vec<Cell> {
    let mut out = Vec::with_capacity(cells.len());
    for cell in cells {
        for value in values(&cell) {
            let mut varied = cell.clone();
            set(&mut varied, value);
            out.push(varied);
        }
    }
    out
}

/// The values of an optional axis: `default` alone when it is empty.
fn axis_or<A, T>(axis: &[A], default: T, value: impl Fn(&A) -> T) -> Vec<T> {
    if axis.is_empty() {
        vec![default]
    } else {
        axis.iter().map(value).collect()
    }
}

/// The workloads one entry of the axis becomes: a command workload once per start order (its
/// programs in that order), any other as it is.
fn variants(w: &CheckedWorkload) -> Vec<(Workload, WorkSize, bool)> {
    let Some(orders) = &w.orders else {
        return vec![(w.workload.clone(), w.size, w.split)];
    };
    orders
        .iter()
        .map(|order| {
            let mut workload = w.workload.clone();
            workload.commands = order
                .iter()
                .map(|&k| w.workload.commands[k].clone())
                .collect();
            (workload, w.size, w.split)
        })
        .collect()
}

/// The task counts of `cell`: the tasks axis, except that a command workload has one task per
/// program, whatever the axis says.
fn task_counts(cell: &Cell, tasks: &[u32]) -> Vec<u32> {
    if cell.workload.kind == WorkloadKind::Command {
        vec![cell.workload.commands.len() as u32]
    } else {
        tasks.to_vec()
    }
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
