//! Checks the workloads axis: each entry becomes a typed workload with its size, and a command
//! workload its start orders.

use super::durations::{duration_ns, MAX_DURATION_NS};
use super::{Axes, Orders, Problem, WorkloadSpec};
use schedlab_core::records::{TaskKind, WorkSize};
use schedlab_core::workload::{Workload, WorkloadKind};

/// Most commands whose orders "all" may run (6! = 720 orders).
const MAX_COMMANDS_ALL_ORDERS: usize = 6;

/// Largest I/O block, bytes (64 MiB).
const MAX_IO_BLOCK_BYTES: u64 = 64 * 1024 * 1024;

/// Largest sync-copy input file (`io_bytes`), and most bytes one task's sync-copy I/O may
/// write when its size is a count (`iterations`): 64 GiB. The input is written before every
/// trial, so this also bounds the disk space and time a trial spends on it.
pub const MAX_IO_BYTES: u64 = 64 << 30;

/// Most units of work (`iterations`) a task may be given: 10^15, weeks of the fastest CPU
/// kernel (1.2e8 spin units/s in a debug build here, about 1e9 in a release build), and far
/// below the 2^53 above which the calibrated rate (a float) loses whole units.
pub const MAX_ITERATIONS: u64 = 1_000_000_000_000_000;

/// One entry of the workloads axis, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedWorkload {
    /// What each task does (a command workload: its programs as listed).
    pub workload: Workload,
    /// How much of it per task (a command workload: one run).
    pub size: WorkSize,
    /// The size is the whole trial's work, divided evenly among its tasks (study 003).
    pub split: bool,
    /// Command workloads: the start orders, permutations of the indices of
    /// `workload.commands`; `None` for the other kinds.
    pub orders: Option<Vec<Vec<usize>>>,
}

impl CheckedWorkload {
    /// Workloads this entry becomes: one per start order, else one.
    pub fn variants(&self) -> usize {
        self.orders.as_ref().map_or(1, Vec::len)
    }
}

/// Checks every workload of the axis, in order.
pub(crate) fn check_workloads(
    a: &Axes,
    default_work_ns: u64,
) -> Result<Vec<CheckedWorkload>, Problem> {
    a.workloads
        .iter()
        .enumerate()
        .map(|(i, w)| check_workload(i, w, &a.kind, default_work_ns))
        .collect()
}

/// Checks workload `i` of the axis; `kinds` is the task kind axis (commands need processes).
fn check_workload(
    i: usize,
    w: &WorkloadSpec,
    kinds: &[TaskKind],
    default_work_ns: u64,
) -> Result<CheckedWorkload, Problem> {
    let key = format!("axes.workloads[{i}]");
    let workload = typed_workload(&key, w)?;
    let size = work_size(&key, w, &workload, default_work_ns)?;
    check_size_limits(&key, &workload, size)?;
    if w.kind != WorkloadKind::Command {
        return Ok(CheckedWorkload {
            workload,
            size,
            split: w.split,
            orders: None,
        });
    }
    if kinds.contains(&TaskKind::Thread) {
        return Err(Problem::new(
            "axes.kind",
            "command workloads run as processes (each execs a program)",
        )
        .accepting("[\"process\"]"));
    }
    Ok(CheckedWorkload {
        workload,
        size: WorkSize::Iterations(1),
        split: false,
        orders: Some(command_orders(&key, w)?),
    })
}

/// The workload's parameters, each checked; `key` is the entry's key path.
fn typed_workload(key: &str, w: &WorkloadSpec) -> Result<Workload, Problem> {
    let mut out = Workload {
        kind: w.kind,
        cpu_kernel: w.cpu_kernel,
        io_mode: w.io_mode,
        ..Workload::default()
    };
    if let Some(b) = w.io_block {
        if b == 0 || b > MAX_IO_BLOCK_BYTES {
            return Err(Problem::new(
                format!("{key}.io_block"),
                format!("{b} bytes is not a usable I/O block"),
            )
            .accepting("1..=67108864 (64 MiB)"));
        }
        out.io_block_bytes = b;
    }
    if w.kind == WorkloadKind::Command {
        command_parameters(key, w, &mut out)?;
    }
    let ns = |name: &str, text: &str| duration_ns(&format!("{key}.{name}"), text);
    if let Some(p) = &w.period {
        out.period_ns = ns("period", p)?;
    }
    if let Some(r) = &w.run {
        out.run_ns = ns("run", r)?;
    }
    if let Some(e) = w.io_every {
        if e == 0 {
            return Err(
                Problem::new(format!("{key}.io_every"), "must be at least 1")
                    .accepting("a whole number of 1 or more"),
            );
        }
        out.io_every = e;
    }
    if let Some(b) = w.io_bytes {
        if b == 0 || b > MAX_IO_BYTES {
            return Err(Problem::new(
                format!("{key}.io_bytes"),
                format!("{b} bytes is not a usable input file size"),
            )
            .accepting(format!("1..={MAX_IO_BYTES} (64 GiB)")));
        }
        out.io_input_bytes = b;
    }
    out.validate()
        .map_err(|e| Problem::new(key, e.to_string()))?;
    Ok(out)
}

/// A command workload's programs, start gap and duration.
fn command_parameters(key: &str, w: &WorkloadSpec, out: &mut Workload) -> Result<(), Problem> {
    if w.commands.is_empty() || w.commands.iter().any(|c| c.argv.is_empty()) {
        return Err(Problem::new(
            format!("{key}.commands"),
            "needs at least one command, each with a non-empty argv",
        )
        .accepting("commands = [{ argv = [\"program\", \"arg\"] }]"));
    }
    out.commands = w.commands.clone();
    if let Some(g) = &w.start_gap {
        out.start_gap_ns = duration_ns(&format!("{key}.start_gap"), g)?;
    }
    if let Some(d) = &w.duration {
        out.window_ns = duration_ns(&format!("{key}.duration"), d)?;
    }
    Ok(())
}

/// How much work each task does: `iterations`, else `work`, else (io) `io_bytes` in blocks,
/// else `settings.work`; a periodic workload counts periods.
fn work_size(
    key: &str,
    w: &WorkloadSpec,
    workload: &Workload,
    default_work_ns: u64,
) -> Result<WorkSize, Problem> {
    let size = match (w.iterations, &w.work, w.io_bytes) {
        (Some(0), _, _) => {
            return Err(Problem::new(format!("{key}.iterations"), "must be above 0")
                .accepting("a whole number of 1 or more"))
        }
        (Some(n), Some(d), _) => {
            return Err(Problem::new(
                format!("{key}.iterations"),
                format!(
                    "give either work or iterations, not both (work = \"{d}\", iterations = {n})"
                ),
            ))
        }
        (Some(n), None, _) => WorkSize::Iterations(n),
        (None, Some(d), _) => WorkSize::WorkNs(duration_ns(&format!("{key}.work"), d)?),
        (None, None, Some(b)) if w.kind == WorkloadKind::Io => {
            WorkSize::Iterations(b.div_ceil(workload.io_block_bytes))
        }
        (None, None, _) => WorkSize::WorkNs(default_work_ns),
    };
    // A periodic workload counts periods: its work (a duration) becomes periods of `period`.
    let size = match size {
        WorkSize::WorkNs(ns) if w.kind == WorkloadKind::Periodic => {
            WorkSize::Iterations((ns / workload.period_ns.max(1)).max(1))
        }
        other => other,
    };
    if size != WorkSize::WorkNs(0) {
        return Ok(size);
    }
    let key = if w.work.is_some() {
        format!("{key}.work")
    } else {
        "settings.work".into()
    };
    Err(Problem::new(key, "must be above 0").accepting("a duration above 0 such as \"50ms\""))
}

/// A task's work stays within bounds: at most [`MAX_ITERATIONS`] units, a periodic task's
/// periods within [`MAX_DURATION_NS`], and what one task's sync-copy I/O writes within
/// [`MAX_IO_BYTES`]. (Sizes given as `work` are durations, bounded when parsed.)
fn check_size_limits(key: &str, w: &Workload, size: WorkSize) -> Result<(), Problem> {
    let WorkSize::Iterations(n) = size else {
        return Ok(());
    };
    let key = format!("{key}.iterations");
    if n > MAX_ITERATIONS {
        return Err(
            Problem::new(key, format!("{n} units of work per task is too many"))
                .accepting(format!("1..={MAX_ITERATIONS}, or `work` as a duration")),
        );
    }
    if w.kind == WorkloadKind::Periodic && n.saturating_mul(w.period_ns) > MAX_DURATION_NS {
        return Err(Problem::new(
            key,
            format!(
                "{n} periods of {} ns last longer than a task's work may (168 h)",
                w.period_ns
            ),
        )
        .accepting(format!(
            "1..={} periods of this length",
            MAX_DURATION_NS / w.period_ns.max(1)
        )));
    }
    if let Some(bytes) = w.bytes_written(n).filter(|&b| b > MAX_IO_BYTES) {
        return Err(Problem::new(
            key,
            format!(
                "{n} units of {} would write {bytes} bytes per task",
                w.label()
            ),
        )
        .accepting(format!(
            "at most {MAX_IO_BYTES} bytes (64 GiB) written per task: {} units of {}-byte blocks",
            w.units_for_bytes(MAX_IO_BYTES),
            w.io_block_bytes
        )));
    }
    Ok(())
}

/// The start orders of a command workload, checked; `key` is the workload's key path.
fn command_orders(key: &str, w: &WorkloadSpec) -> Result<Vec<Vec<usize>>, Problem> {
    let n = w.commands.len();
    let key = format!("{key}.orders");
    match &w.orders {
        None => Ok(vec![(0..n).collect()]),
        Some(Orders::All(s)) if s == "all" => {
            if n > MAX_COMMANDS_ALL_ORDERS {
                return Err(Problem::new(
                    key,
                    format!("{n} commands have too many orders to run them all"),
                )
                .accepting("\"all\" for up to 6 commands, or a list of orders"));
            }
            Ok(permutations(n))
        }
        Some(Orders::All(s)) => Err(Problem::new(key, format!("'{s}' is not an order list"))
            .accepting(
                "\"all\" or a list of permutations of the command indices, e.g. [[0, 1], [1, 0]]",
            )),
        Some(Orders::List(list)) => {
            let identity: Vec<usize> = (0..n).collect();
            let is_permutation = |o: &Vec<usize>| {
                let mut sorted = o.clone();
                sorted.sort_unstable();
                sorted == identity
            };
            match list.iter().find(|o| !is_permutation(o)) {
                Some(o) => Err(Problem::new(
                    key,
                    format!("{o:?} is not a permutation of the {n} command indices"),
                )
                .accepting(format!(
                    "every index 0..={} exactly once",
                    n.saturating_sub(1)
                ))),
                None => Ok(list.clone()),
            }
        }
    }
}

/// Every permutation of `0..n`, in lexicographic order.
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for pos in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(pos, n - 1);
            out.push(p);
        }
    }
    out.sort();
    out
}
