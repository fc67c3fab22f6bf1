//! Read-side queries: a run, its cells with their rows, warnings and problems, for reports and listings.

use super::db::{params, Db};
use super::Store;
use crate::error::{Result, StoreError};
use schedlab_core::records::RunStatus;
use schedlab_core::workload::WorkloadKind;
use serde::Serialize;

mod run;
use run::run_status;
pub use run::{run_info, RunInfo};

/// A trial that did not end `ok` (timeout or failed), for the warnings.
#[derive(Debug, Clone, Serialize)]
pub struct TrialProblem {
    /// Index of its cell in the run.
    pub cell_index: i64,
    /// Index of the trial in its cell.
    pub trial_index: i64,
    /// timeout or failed.
    pub status: String,
    /// Why, as stored.
    pub reason: Option<String>,
}

/// The stored measurements of one task (ns, counts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskRow {
    /// Trial the task belongs to.
    pub trial_id: i64,
    /// Round of that trial (every cell runs once per round).
    pub round: i64,
    /// Response, ns.
    pub response_ns: Option<i64>,
    /// Turnaround, ns.
    pub turnaround_ns: Option<i64>,
    /// CPU time of the work, ns: the exact `cpu_ns` where stored, else user + system from
    /// rusage (runs stored before it existed).
    pub cpu_ns: i64,
    /// Voluntary switches.
    pub nvcsw: i64,
    /// Involuntary switches.
    pub nivcsw: i64,
    /// Run-queue wait, ns.
    pub run_delay_ns: i64,
    /// End of the measured work, CLOCK_MONOTONIC ns (None: not stored).
    pub t_end_ns: Option<i64>,
}

/// One cell of a run with the rows of its (non-warm-up unless asked) trials.
#[derive(Debug, Clone, Default)]
pub struct CellView {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// Policy name.
    pub policy: String,
    /// Priority mode.
    pub priorities: String,
    /// Workload label.
    pub workload: String,
    /// The workload's family, as stored with its parameters (`workload_json`).
    pub workload_kind: WorkloadKind,
    /// Task kind.
    pub kind: String,
    /// Start mode.
    pub start: String,
    /// Task count.
    pub tasks: i64,
    /// Pinned CPUs.
    pub cpus: Option<String>,
    /// Antagonists sharing the machine.
    pub antagonists: i64,
    /// Block-device I/O scheduler of the cell.
    pub io_scheduler: Option<String>,
    /// Host name of the machine its run ran on, when a report pools several runs (None in a
    /// report of one run).
    pub host: Option<String>,
    /// Kernel release of that machine, likewise.
    pub kernel: Option<String>,
    /// The cell's kernel settings in one line (`slice=0.1ms`, `NAME=VALUE`, `scx=COMMAND`),
    /// None when it has none: for people; the settings one by one are the fields below.
    pub settings: Option<String>,
    /// The EEVDF slice of the measured tasks as labelled (`0.1ms`), None: the kernel's default.
    pub slice: Option<String>,
    /// Each kernel setting of the cell: (name, value), in the stored order.
    pub knobs: Vec<(String, String)>,
    /// The BPF scheduler's command the cell runs under, if any.
    pub scx: Option<String>,
    /// Trials stored per status: (status, count).
    pub statuses: Vec<(String, i64)>,
    /// First reason given for a trial that was not ok.
    pub reason: Option<String>,
    /// Requested work of one task alone, ns, when the size was given as a time.
    pub work_ns: Option<i64>,
    /// Units of work per task (exact, or calibrated from `work_ns`).
    pub units: Option<i64>,
    /// Makespans of the ok trials, ns.
    pub makespans_ns: Vec<i64>,
    /// Round of each ok trial, in the order of `makespans_ns`.
    pub trial_rounds: Vec<i64>,
    /// Id of each ok trial, in the order of `makespans_ns`.
    pub trial_ids: Vec<i64>,
    /// Tasks of the ok trials.
    pub task_rows: Vec<TaskRow>,
    /// The workload's own figures of the ok trials that have them, in trial order.
    pub figures: Vec<super::figures::FigureRow>,
}

impl CellView {
    /// The axis values cell `index` of a plan will be stored with, before any trial: what
    /// `plan` and the start of `run` read claims' cells from.
    pub fn planned(index: usize, c: &schedlab_spec::plan::Cell) -> CellView {
        let knobs = (!c.knobs.is_empty()).then(|| {
            c.knobs
                .iter()
                .map(schedlab_core::records::KnobSetting::label)
                .collect::<Vec<_>>()
                .join(" ")
        });
        CellView {
            cell_index: index as i64,
            policy: c.policy.name().to_string(),
            priorities: c.priorities.name().to_string(),
            workload: c.workload.label(),
            workload_kind: c.workload.kind,
            kind: c.kind.name().to_string(),
            start: c.start.name().to_string(),
            tasks: i64::from(c.tasks),
            cpus: c.cpus.as_deref().map(schedlab_procfs::format_cpu_list),
            antagonists: i64::from(c.antagonists),
            io_scheduler: c.io_scheduler.clone(),
            settings: settings_label(
                c.slice_ns.map(|ns| ns as i64),
                knobs,
                c.scx.as_ref().map(|x| x.command_line()),
                c.groups_label(),
            ),
            slice: c.slice_ns.map(schedlab_core::records::slice_label),
            knobs: c
                .knobs
                .iter()
                .map(|k| (k.name.clone(), k.value.clone()))
                .collect(),
            scx: c.scx.as_ref().map(|x| x.command_line()),
            ..CellView::default()
        }
    }

    /// Number of stored trials with `status`.
    pub fn count(&self, status: &str) -> i64 {
        self.statuses
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, n)| *n)
    }
}

/// The cells of run `run_id` with their stored rows; warm-up trials only if `warmup`.
pub fn cells(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<CellView>> {
    let db = &store.db;
    let cells = db.query(
        "SELECT cell_id, cell_index, policy, priorities, workload, kind, start, tasks, cpus, antagonists, io_scheduler, work_ns, units,
                slice_ns, knobs, scx, cgroups, workload_json
         FROM cells WHERE run_id = ?1 ORDER BY cell_index",
        params![run_id],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                CellView {
                    cell_index: r.get(1)?,
                    policy: r.get(2)?,
                    priorities: r.get(3)?,
                    workload: r.get(4)?,
                    workload_kind: stored_workload_kind(&r.get::<String>(17)?)?,
                    kind: r.get(5)?,
                    start: r.get(6)?,
                    tasks: r.get(7)?,
                    cpus: r.get(8)?,
                    antagonists: r.get(9)?,
                    io_scheduler: r.get(10)?,
                    work_ns: r.get(11)?,
                    units: r.get(12)?,
                    settings: settings_label(r.get(13)?, r.get(14)?, r.get(15)?, r.get(16)?),
                    slice: r
                        .get::<Option<i64>>(13)?
                        .map(|ns| schedlab_core::records::slice_label(ns as u64)),
                    knobs: stored_knobs(r.get::<Option<String>>(14)?.as_deref()),
                    scx: r.get(15)?,
                    ..CellView::default()
                },
            ))
        },
    )?;
    let mut out = Vec::with_capacity(cells.len());
    for (cell_id, mut view) in cells {
        add_trials(db, cell_id, warmup, &mut view)?;
        view.task_rows = task_rows(db, cell_id, warmup)?;
        view.figures = super::figures::rows(db, cell_id, warmup)?;
        out.push(view);
    }
    Ok(out)
}

/// The kernel settings of a cell as the store keeps them (`KnobSetting::label`s, `name=value`,
/// separated by spaces), one by one; the column is the only record of them, so a value with a
/// space in it reads as its first word.
fn stored_knobs(column: Option<&str>) -> Vec<(String, String)> {
    column
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The family of a stored workload, from its parameters as stored (`workload_json`), never
/// from its label.
fn stored_workload_kind(json: &str) -> Result<WorkloadKind> {
    /// The one field read of the stored parameters.
    #[derive(serde::Deserialize)]
    struct Family {
        kind: WorkloadKind,
    }
    Ok(serde_json::from_str::<Family>(json)?.kind)
}

/// Cell `cell_id`'s trials in `view`: their count per status (and the first reason of one not
/// ok), and each ok trial's makespan, round and id.
fn add_trials(db: &Db, cell_id: i64, warmup: bool, view: &mut CellView) -> Result<()> {
    let statuses = db.query(
        "SELECT status, COUNT(*), MIN(reason) FROM trials WHERE cell_id = ?1 AND (warmup = 0 OR ?2) GROUP BY status ORDER BY status",
        params![cell_id, warmup],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<i64>(1)?,
                r.get::<Option<String>>(2)?,
            ))
        },
    )?;
    for (status, n, reason) in statuses {
        if status != "ok" && view.reason.is_none() {
            view.reason = reason;
        }
        view.statuses.push((status, n));
    }
    let trials: Vec<(i64, i64, i64)> = db.query(
        "SELECT makespan_ns, round, trial_id FROM trials WHERE cell_id = ?1 AND status = 'ok' AND (warmup = 0 OR ?2) ORDER BY trial_id",
        params![cell_id, warmup],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    for (makespan, round, id) in trials {
        view.makespans_ns.push(makespan);
        view.trial_rounds.push(round);
        view.trial_ids.push(id);
    }
    Ok(())
}

/// The measured tasks (no antagonists) of cell `cell_id`'s ok trials, by trial and task.
fn task_rows(db: &Db, cell_id: i64, warmup: bool) -> Result<Vec<TaskRow>> {
    db.query(
        "SELECT t.trial_id, tr.round, t.response_ns, t.turnaround_ns, COALESCE(t.cpu_ns, COALESCE(t.utime_ns,0) + COALESCE(t.stime_ns,0)),
                t.nvcsw, t.nivcsw, t.run_delay_ns, t.t_end_ns
         FROM tasks t JOIN trials tr ON tr.trial_id = t.trial_id
         WHERE tr.cell_id = ?1 AND tr.status = 'ok' AND (tr.warmup = 0 OR ?2) AND t.role = 'task'
         ORDER BY t.trial_id, t.task_index",
        params![cell_id, warmup],
        |r| {
            Ok(TaskRow {
                trial_id: r.get(0)?,
                round: r.get(1)?,
                response_ns: r.get(2)?,
                turnaround_ns: r.get(3)?,
                cpu_ns: r.get(4)?,
                nvcsw: r.get::<Option<i64>>(5)?.unwrap_or(0),
                nivcsw: r.get::<Option<i64>>(6)?.unwrap_or(0),
                run_delay_ns: r.get::<Option<i64>>(7)?.unwrap_or(0),
                t_end_ns: r.get(8)?,
            })
        },
    )
}

/// The kernel settings of a cell in one line, from its stored slice, knobs, BPF scheduler and
/// task groups.
pub(crate) fn settings_label(
    slice_ns: Option<i64>,
    knobs: Option<String>,
    scx: Option<String>,
    cgroups: Option<String>,
) -> Option<String> {
    let parts: Vec<String> = slice_ns
        .map(|ns| format!("slice={}", schedlab_core::records::slice_label(ns as u64)))
        .into_iter()
        .chain(knobs.filter(|k| !k.is_empty()))
        .chain(scx.map(|c| format!("scx={c}")))
        .chain(cgroups.filter(|g| !g.is_empty()))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// One line of `schedlab runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub run_id: i64,
    /// Spec name.
    pub name: String,
    /// Start, UTC.
    pub started_at: String,
    /// Queued, running, done, interrupted or failed.
    pub status: RunStatus,
    /// Number of cells.
    pub cells: i64,
    /// Planned trials stored (their re-runs not counted).
    pub trials_done: i64,
    /// Trials planned.
    pub trials_planned: i64,
    /// Host name of the machine that ran it, if known.
    pub host: Option<String>,
    /// Its kernel release, if known.
    pub kernel: Option<String>,
    /// The run's UUID, if it has one.
    pub uuid: Option<String>,
    /// Hash of its spec as run (seed aside), see [`spec_hash`], as stored with the run.
    pub spec_hash: String,
}

/// Every stored run, oldest first; with `host`, only the runs of that host name.
pub fn runs(store: &Store, host: Option<&str>) -> Result<Vec<RunRow>> {
    let rows = store.db.query(
        "SELECT r.run_id, r.name, r.started_at, r.status, r.trials_planned,
                (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.run_id),
                (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id AND t.retry = 0),
                r.runner_pid, r.runner_boot_id, r.runner_start_ticks, r.host, r.kernel, r.uuid, r.spec_hash
         FROM runs r ORDER BY r.run_id",
        &[],
        |r| {
            let runner = Runner {
                pid: r.get(7)?,
                boot_id: r.get(8)?,
                start_ticks: r.get(9)?,
            };
            Ok(RunRow {
                run_id: r.get(0)?,
                name: r.get(1)?,
                started_at: r.get(2)?,
                status: runner.status(run_status(&r.get::<String>(3)?, 3)?),
                trials_planned: r.get(4)?,
                cells: r.get(5)?,
                trials_done: r.get(6)?,
                host: r.get(10)?,
                kernel: r.get(11)?,
                uuid: r.get(12)?,
                spec_hash: r.get(13)?,
            })
        },
    )?;
    Ok(rows
        .into_iter()
        .filter(|r| host.is_none_or(|h| r.host.as_deref() == Some(h)))
        .collect())
}

/// The hash of a stored spec as run, seed aside (see `Spec::hash_as_run`).
pub use schedlab_spec::as_run::spec_hash;

/// The ids of the runs whose spec hash starts with `prefix` (at least 4 hex digits, any
/// case), oldest first: selected in SQL by the hash stored with each run.
pub fn runs_of_spec(store: &Store, prefix: &str) -> Result<Vec<i64>> {
    if prefix.len() < 4 {
        return Err(StoreError::ShortSpecHash);
    }
    let prefix = prefix.to_ascii_lowercase();
    // A hash is lowercase hex digits: a prefix with anything else starts none (and so no
    // wildcard of LIKE ever reaches the pattern).
    if !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Vec::new());
    }
    store.db.query(
        "SELECT run_id FROM runs WHERE spec_hash LIKE ?1 ORDER BY run_id",
        params![format!("{prefix}%")],
        |r| r.get(0),
    )
}

/// A stored warning: its code ([`schedlab_core::warning::Warning::code`]; None when stored
/// before schema 6) and its sentence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredWarning {
    /// The stable code of its kind, if stored.
    pub code: Option<String>,
    /// The sentence, as shown.
    pub message: String,
}

/// The warnings stored for a run with their codes, in order.
pub fn coded_warnings(store: &Store, run_id: i64) -> Result<Vec<StoredWarning>> {
    store.db.query(
        "SELECT code, message FROM warnings WHERE run_id = ?1 ORDER BY warning_id",
        params![run_id],
        |r| {
            Ok(StoredWarning {
                code: r.get(0)?,
                message: r.get(1)?,
            })
        },
    )
}

/// The warnings stored for a run, in order.
pub fn warnings(store: &Store, run_id: i64) -> Result<Vec<String>> {
    store.db.query(
        "SELECT message FROM warnings WHERE run_id = ?1 ORDER BY warning_id",
        params![run_id],
        |r| r.get(0),
    )
}

/// The trials of run `run_id` that timed out or failed; warm-up trials only if `warmup`.
pub fn problems(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<TrialProblem>> {
    store.db.query(
        "SELECT c.cell_index, t.trial_index, t.status, t.reason FROM trials t JOIN cells c ON c.cell_id = t.cell_id
         WHERE t.run_id = ?1 AND t.status IN ('timeout', 'failed') AND (t.warmup = 0 OR ?2)
         ORDER BY c.cell_index, t.trial_index",
        params![run_id, warmup],
        |r| {
            Ok(TrialProblem {
                cell_index: r.get(0)?,
                trial_index: r.get(1)?,
                status: r.get(2)?,
                reason: r.get(3)?,
            })
        },
    )
}

/// The process that ran (or runs) a run, as stored when it started.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// Its pid.
    pub pid: Option<i64>,
    /// The kernel's boot id when it started (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22), which tells a
    /// reused pid from the runner.
    pub start_ticks: Option<i64>,
}

impl Runner {
    /// The calling process, as a runner.
    pub fn this_process() -> Runner {
        let pid = std::process::id() as i32;
        Runner {
            pid: Some(i64::from(pid)),
            boot_id: schedlab_machine::boot_id(),
            start_ticks: schedlab_machine::process_start_ticks(pid).map(|t| t as i64),
        }
    }

    /// The status to show for a run stored as `stored`: a run stored as `running` whose runner
    /// is gone (another boot, or no process with its pid and start time) was `interrupted`.
    pub fn status(&self, stored: RunStatus) -> RunStatus {
        if stored == RunStatus::Running && !self.alive() {
            RunStatus::Interrupted
        } else {
            stored
        }
    }

    /// Whether the runner still exists.
    pub fn alive(&self) -> bool {
        let (Some(pid), Some(boot)) = (self.pid, self.boot_id.as_deref()) else {
            // Stored without a runner record: nothing to tell, trust the stored status.
            return true;
        };
        if schedlab_machine::boot_id().as_deref() != Some(boot) {
            return false;
        }
        match schedlab_machine::process_start_ticks(pid as i32) {
            Some(ticks) => self.start_ticks.is_none_or(|t| t == ticks as i64),
            None => false,
        }
    }
}
