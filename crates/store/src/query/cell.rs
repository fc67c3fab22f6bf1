//! A run's cells as read for a report: each cell's axes as core's types, its workload with
//! every parameter, its trials counted per status, and the rows of its ok trials.

use super::Store;
use crate::db::{params, Db};
use crate::error::{Result, StoreError};
use schedlab_core::policy::{PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind, TrialStatus};
use schedlab_core::workload::Workload;

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
    /// Policy.
    pub policy: PolicyKind,
    /// Priority mode.
    pub priorities: PriorityMode,
    /// Workload label, for people only: its meaning is [`CellView::work`].
    pub workload: String,
    /// The workload with every parameter, as stored (`workload_json`, read once with the row;
    /// a parameter stored before it existed reads as its default).
    pub work: Workload,
    /// Task kind.
    pub kind: TaskKind,
    /// Start mode.
    pub start: StartMode,
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
    /// Trials per status: (status, count), as stored in the order of the statuses' names;
    /// then any ok trials a report leaves out of its summaries, and why.
    pub statuses: Vec<(Tally, i64)>,
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
    pub figures: Vec<crate::figures::FigureRow>,
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
            policy: c.policy,
            priorities: c.priorities,
            workload: c.workload.label(),
            work: c.workload.clone(),
            kind: c.kind,
            start: c.start,
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

    /// Number of stored trials with `status` (ok: less those left out).
    pub fn count(&self, status: TrialStatus) -> i64 {
        self.statuses
            .iter()
            .find(|(s, _)| *s == Tally::Status(status))
            .map_or(0, |(_, n)| *n)
    }
}

/// What a count of a cell's trials counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    /// The trials stored with this status.
    Status(TrialStatus),
    /// Ok trials a report leaves out of its summaries, for this reason.
    LeftOut(LeftOut),
}

impl Tally {
    /// Its name, as shown after a count ("2 timeout", "1 noisy, left out").
    pub fn name(self) -> &'static str {
        match self {
            Tally::Status(s) => s.name(),
            Tally::LeftOut(why) => why.name(),
        }
    }
}

/// As its name, as the status was stored.
impl serde::Serialize for Tally {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Why a report leaves an ok trial out of its summaries (from the trial's stored quality,
/// [`crate::quality::TrialQuality`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeftOut {
    /// Its reference speed says the machine was noisy (`--exclude-noisy`).
    Noisy,
    /// Outside CPU time disturbed it.
    Disturbed,
    /// It ran slowed down.
    Slowed,
    /// A later attempt of it (a re-run) is summarised instead.
    Rerun,
}

impl LeftOut {
    /// Its name, as shown after a count.
    pub fn name(self) -> &'static str {
        match self {
            LeftOut::Noisy => "noisy, left out",
            LeftOut::Disturbed => "disturbed, left out",
            LeftOut::Slowed => "slowed, left out",
            LeftOut::Rerun => "re-run, left out",
        }
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
                    policy: stored(r.get(2)?, "cells.policy")?,
                    priorities: stored(r.get(3)?, "cells.priorities")?,
                    workload: r.get(4)?,
                    work: stored_workload(&r.get::<String>(17)?)?,
                    kind: stored(r.get(5)?, "cells.kind")?,
                    start: stored(r.get(6)?, "cells.start")?,
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
        view.figures = crate::figures::rows(db, cell_id, warmup)?;
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

/// A value of `column` as the type the store wrote it from (a policy, task kind, start
/// mode, priority mode or trial status by its name); a name this version does not know is
/// [`StoreError::Unknown`], naming the column and the value.
pub(crate) fn stored<T>(value: String, column: &'static str) -> Result<T>
where
    T: std::str::FromStr<Err = schedlab_core::CoreError>,
{
    value
        .parse()
        .map_err(|why| StoreError::Unknown { column, why })
}

/// A stored workload, from its parameters as stored (`workload_json`), never from its label.
/// Its family (`kind`) must be stored; a parameter stored before this version had it (a run
/// stored by an older schedlab) reads as its default ([`Workload::default`]).
pub(crate) fn stored_workload(json: &str) -> Result<Workload> {
    /// The one field a stored workload must have.
    #[derive(serde::Deserialize)]
    struct Family {
        kind: schedlab_core::workload::WorkloadKind,
    }
    type Params = serde_json::Map<String, serde_json::Value>;
    let kind = serde_json::from_str::<Family>(json)?.kind;
    let mut params: Params = serde_json::from_value(serde_json::to_value(Workload::default())?)?;
    params.extend(serde_json::from_str::<Params>(json)?);
    let work: Workload = serde_json::from_value(serde_json::Value::Object(params))?;
    Ok(Workload { kind, ..work })
}

/// Cell `cell_id`'s trials in `view`: their count per status (and the first reason of one not
/// ok), and each ok trial's makespan, round and id.
fn add_trials(db: &Db, cell_id: i64, warmup: bool, view: &mut CellView) -> Result<()> {
    let statuses = db.query(
        "SELECT status, COUNT(*), MIN(reason) FROM trials WHERE cell_id = ?1 AND (warmup = 0 OR ?2) GROUP BY status ORDER BY status",
        params![cell_id, warmup],
        |r| {
            Ok((
                stored::<TrialStatus>(r.get(0)?, "trials.status")?,
                r.get::<i64>(1)?,
                r.get::<Option<String>>(2)?,
            ))
        },
    )?;
    for (status, n, reason) in statuses {
        if status != TrialStatus::Ok && view.reason.is_none() {
            view.reason = reason;
        }
        view.statuses.push((Tally::Status(status), n));
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

#[cfg(test)]
#[path = "cell_tests.rs"]
mod tests;
