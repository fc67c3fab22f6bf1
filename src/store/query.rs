//! Read-side queries: the stored rows of a run grouped by cell, for summaries and reports.

use anyhow::Result;
use rusqlite::{params, Connection};

/// The stored measurements of one task (ns, counts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskRow {
    /// Trial the task belongs to.
    pub trial_id: i64,
    /// Response, ns.
    pub response_ns: Option<i64>,
    /// Turnaround, ns.
    pub turnaround_ns: Option<i64>,
    /// User + system CPU, ns.
    pub cpu_ns: i64,
    /// Voluntary switches.
    pub nvcsw: i64,
    /// Involuntary switches.
    pub nivcsw: i64,
    /// Run-queue wait, ns.
    pub run_delay_ns: i64,
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
    /// Trials stored per status: (status, count).
    pub statuses: Vec<(String, i64)>,
    /// First reason given for a trial that was not ok.
    pub reason: Option<String>,
    /// Makespans of the ok trials, ns.
    pub makespans_ns: Vec<i64>,
    /// Tasks of the ok trials.
    pub task_rows: Vec<TaskRow>,
}

impl CellView {
    /// Number of stored trials with `status`.
    pub fn count(&self, status: &str) -> i64 {
        self.statuses
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, n)| *n)
    }
}

/// The cells of run `run_id` with their stored rows; warm-up trials only if `warmup`.
pub fn cells(conn: &Connection, run_id: i64, warmup: bool) -> Result<Vec<CellView>> {
    let mut out = Vec::new();
    let mut st = conn.prepare(
        "SELECT cell_id, cell_index, policy, priorities, workload, kind, start, tasks, cpus, antagonists, io_scheduler
         FROM cells WHERE run_id = ?1 ORDER BY cell_index",
    )?;
    let rows = st.query_map([run_id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            CellView {
                cell_index: r.get(1)?,
                policy: r.get(2)?,
                priorities: r.get(3)?,
                workload: r.get(4)?,
                kind: r.get(5)?,
                start: r.get(6)?,
                tasks: r.get(7)?,
                cpus: r.get(8)?,
                antagonists: r.get(9)?,
                io_scheduler: r.get(10)?,
                ..CellView::default()
            },
        ))
    })?;
    let mut statuses = conn.prepare(
        "SELECT status, COUNT(*), MIN(reason) FROM trials WHERE cell_id = ?1 AND (warmup = 0 OR ?2) GROUP BY status ORDER BY status",
    )?;
    let mut makespans = conn.prepare(
        "SELECT makespan_ns FROM trials WHERE cell_id = ?1 AND status = 'ok' AND (warmup = 0 OR ?2) ORDER BY trial_id",
    )?;
    let mut tasks = conn.prepare(
        "SELECT t.trial_id, t.response_ns, t.turnaround_ns, COALESCE(t.utime_ns,0) + COALESCE(t.stime_ns,0), t.nvcsw, t.nivcsw, t.run_delay_ns
         FROM tasks t JOIN trials tr ON tr.trial_id = t.trial_id
         WHERE tr.cell_id = ?1 AND tr.status = 'ok' AND (tr.warmup = 0 OR ?2) AND t.role = 'task'
         ORDER BY t.trial_id, t.task_index",
    )?;
    for row in rows {
        let (cell_id, mut view) = row?;
        for s in statuses.query_map(params![cell_id, warmup], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })? {
            let (status, n, reason) = s?;
            if status != "ok" && view.reason.is_none() {
                view.reason = reason;
            }
            view.statuses.push((status, n));
        }
        view.makespans_ns = makespans
            .query_map(params![cell_id, warmup], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        view.task_rows = tasks
            .query_map(params![cell_id, warmup], |r| {
                Ok(TaskRow {
                    trial_id: r.get(0)?,
                    response_ns: r.get(1)?,
                    turnaround_ns: r.get(2)?,
                    cpu_ns: r.get(3)?,
                    nvcsw: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                    nivcsw: r.get::<_, Option<i64>>(5)?.unwrap_or(0),
                    run_delay_ns: r.get::<_, Option<i64>>(6)?.unwrap_or(0),
                })
            })?
            .collect::<Result<_, _>>()?;
        out.push(view);
    }
    Ok(out)
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
    /// running, done, interrupted or failed.
    pub status: String,
    /// Number of cells.
    pub cells: i64,
    /// Trials stored.
    pub trials_done: i64,
    /// Trials planned.
    pub trials_planned: i64,
}

/// Every stored run, oldest first.
pub fn runs(conn: &Connection) -> Result<Vec<RunRow>> {
    let mut st = conn.prepare(
        "SELECT r.run_id, r.name, r.started_at, r.status, r.trials_planned,
                (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.run_id),
                (SELECT COUNT(*) FROM trials t WHERE t.run_id = r.run_id)
         FROM runs r ORDER BY r.run_id",
    )?;
    let rows = st.query_map([], |r| {
        Ok(RunRow {
            run_id: r.get(0)?,
            name: r.get(1)?,
            started_at: r.get(2)?,
            status: r.get(3)?,
            trials_planned: r.get(4)?,
            cells: r.get(5)?,
            trials_done: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The warnings stored for a run, in order.
pub fn warnings(conn: &Connection, run_id: i64) -> Result<Vec<String>> {
    let mut st = conn.prepare("SELECT message FROM warnings WHERE run_id = ?1 ORDER BY rowid")?;
    let rows = st.query_map([run_id], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
