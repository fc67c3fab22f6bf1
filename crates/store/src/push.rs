//! Copying runs from one store to another (`schedlab push`, the spool), idempotently: a run is
//! known by its UUID and a trial by its run, cell, trial index and attempt (`retry`: a re-run
//! of a contaminated trial shares its index and round), so what the target already has is
//! never copied twice. Rows are copied column by column by name, so every column of the
//! schema travels, whatever its position in either database.
//!
//! The source is untrusted (any file a user hands over): a column name read from it is used
//! only if the target's own table has that column, and is quoted even then. A source with a
//! column the schema does not know is refused, with nothing written: every genuine schedlab
//! file has the current schema's columns (an older one is upgraded in memory when opened), so
//! an unknown column means the file was altered, and a row whose columns cannot all be stored
//! is not copied in part.

use super::db::{params, quote_ident, Db, Value};
use super::Store;
use crate::error::{Context, Result, StoreError};
use std::collections::{HashMap, HashSet};

mod extras;
use extras::{copy_calibrations, copy_warnings};

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushSummary {
    /// Runs the target did not have.
    pub runs_added: usize,
    /// Runs the target had (same UUID), completed with the trials it lacked.
    pub runs_merged: usize,
    /// Trials copied.
    pub trials_added: usize,
    /// Trials the target had already (left as they were).
    pub trials_present: usize,
    /// Runs of the source without a UUID, which cannot be pushed idempotently (left out).
    pub runs_without_uuid: Vec<i64>,
}

/// Which runs to push and what to do with the source afterwards.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// Only these runs (source ids); None: every run.
    pub runs: Option<Vec<i64>>,
    /// Delete from the source what the target holds now (a spool empties itself).
    pub remove_pushed: bool,
}

/// Tables whose rows belong to a trial, copied with it: (table, order of its rows, its own id
/// column, which the target assigns anew).
const TRIAL_TABLES: [(&str, &str, Option<&str>); 6] = [
    ("tasks", "task_index", None),
    ("histograms", "task_index, metric", None),
    ("samples", "t_ns", None),
    ("trace_slices", "start_ns, task_index, cpu", None),
    ("knob_readings", "reading_id", Some("reading_id")),
    ("task_groups", "group_index", None),
];

/// Whether a run stored as `status` has ended (done, interrupted, failed): a pushed run that
/// has finishes a target run that is still open. A status this version does not know has not.
fn finished(status: &str) -> bool {
    use schedlab_core::records::RunStatus as R;
    match status.parse() {
        Ok(R::Done | R::Interrupted | R::Failed) => true,
        Ok(R::Queued | R::Running) | Err(_) => false,
    }
}

/// Every table a push copies rows of.
const COPIED_TABLES: [&str; 10] = [
    "runs",
    "cells",
    "trials",
    "tasks",
    "histograms",
    "samples",
    "trace_slices",
    "knob_readings",
    "task_groups",
    "calibrations",
];

/// The columns of the target's tables: the only names a source's rows may use.
struct Known(HashMap<&'static str, HashSet<String>>);

impl Known {
    fn of(dst: &Db) -> Result<Known> {
        let mut map = HashMap::new();
        for table in COPIED_TABLES {
            let names = dst.columns(&format!("SELECT * FROM {table} WHERE 1 = 0"))?;
            map.insert(table, names.into_iter().collect());
        }
        Ok(Known(map))
    }

    /// Refuses `names` (read from the source's `table`) unless the target's table has each.
    fn check(&self, table: &'static str, names: &[String]) -> Result<()> {
        let known = self
            .0
            .get(table)
            .ok_or_else(|| StoreError::Internal(format!("a table push does not know: {table}")))?;
        if let Some(bad) = names.iter().find(|n| !known.contains(n.as_str())) {
            return Err(StoreError::PushRefused {
                table,
                column: bad.clone(),
            });
        }
        Ok(())
    }
}

/// Copies the runs of `src` into `dst`, one transaction per run in `dst`.
pub fn push(src: &Store, dst: &Store, opts: &PushOptions) -> Result<PushSummary> {
    let mut summary = PushSummary::default();
    let known = Known::of(&dst.db)?;
    let runs: Vec<(i64, Option<String>)> =
        src.db
            .query("SELECT run_id, uuid FROM runs ORDER BY run_id", &[], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
    for (run_id, uuid) in runs {
        if opts
            .runs
            .as_ref()
            .is_some_and(|only| !only.contains(&run_id))
        {
            continue;
        }
        let Some(uuid) = uuid else {
            summary.runs_without_uuid.push(run_id);
            continue;
        };
        let copied = dst
            .db
            .transaction(|| push_run(&src.db, &dst.db, &known, run_id, &uuid, &mut summary))
            .with_context(|| format!("cannot push run {run_id} ({uuid}) to {}", dst.location))?;
        if opts.remove_pushed {
            src.db
                .transaction(|| remove_trials(&src.db, run_id, &copied))
                .with_context(|| {
                    format!(
                        "run {run_id} is pushed, but cannot be removed from {}",
                        src.location
                    )
                })?;
        }
    }
    if opts.runs.is_none() {
        copy_calibrations(&src.db, &dst.db, &known)?;
    }
    Ok(summary)
}

/// A row read whole: its column names and values.
struct Rows {
    names: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Rows {
    /// The rows of `sql` (on the source's `table`), whose column names `known` accepts.
    fn read(db: &Db, known: &Known, table: &'static str, sql: &str, p: &[Value]) -> Result<Rows> {
        let names = db.columns(sql)?;
        known.check(table, &names)?;
        let n = names.len();
        let rows = db.query(sql, p, |r| (0..n).map(|i| r.value(i)).collect())?;
        Ok(Rows { names, rows })
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.names
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| StoreError::Internal(format!("no column {name}")))
    }

    /// Column names and rows without column `skip`, with `set` columns replaced.
    fn without(
        &self,
        skip: &str,
        row: &[Value],
        set: &[(&str, Value)],
    ) -> (Vec<String>, Vec<Value>) {
        let mut names = Vec::with_capacity(self.names.len());
        let mut values = Vec::with_capacity(self.names.len());
        for (name, v) in self.names.iter().zip(row) {
            if name == skip {
                continue;
            }
            names.push(name.clone());
            values.push(match set.iter().find(|(n, _)| n == name) {
                Some((_, v)) => v.clone(),
                None => v.clone(),
            });
        }
        (names, values)
    }
}

/// `INSERT INTO table ("name" ...) VALUES (?1 ...) suffix`, for `names` that [`Known`]
/// accepted (quoted all the same).
fn insert_sql(table: &str, names: &[String], suffix: &str) -> String {
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let quoted: Vec<String> = names.iter().map(|n| quote_ident(n)).collect();
    format!(
        "INSERT INTO {table} ({}) VALUES ({}) {suffix}",
        quoted.join(", "),
        marks.join(", ")
    )
}

/// Copies run `run_id` (UUID `uuid`) of `src` into `dst`, inside `dst`'s transaction; returns
/// the source ids of the trials `dst` now has.
fn push_run(
    src: &Db,
    dst: &Db,
    known: &Known,
    run_id: i64,
    uuid: &str,
    summary: &mut PushSummary,
) -> Result<Vec<i64>> {
    let (dst_run, merged) = push_run_row(src, dst, known, run_id, uuid, summary)?;
    let run = RunPair {
        src,
        dst,
        known,
        run_id,
        dst_run,
    };
    let cell_map = push_cells(&run)?;
    let (present, trial_map) = push_trials(&run, &cell_map, summary)?;
    copy_warnings(src, dst, run_id, dst_run, &trial_map, merged)?;
    Ok(present)
}

/// A run being pushed: where from, where to, and its id in each.
struct RunPair<'a> {
    src: &'a Db,
    dst: &'a Db,
    known: &'a Known,
    run_id: i64,
    dst_run: i64,
}

/// The run's own row: added to `dst`, or merged into the run of the same UUID there (whose
/// status becomes the source's when only the source finished); returns the run's id in `dst`
/// and whether `dst` had it already.
fn push_run_row(
    src: &Db,
    dst: &Db,
    known: &Known,
    run_id: i64,
    uuid: &str,
    summary: &mut PushSummary,
) -> Result<(i64, bool)> {
    let run = Rows::read(
        src,
        known,
        "runs",
        "SELECT * FROM runs WHERE run_id = ?1",
        params![run_id],
    )?;
    let Some(run_row) = run.rows.first() else {
        return Err(StoreError::Internal(format!(
            "run {run_id} vanished while being pushed"
        )));
    };
    let existing: Option<(i64, String)> = dst.query_opt(
        "SELECT run_id, status FROM runs WHERE uuid = ?1",
        params![uuid],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let src_status = match &run_row[run.col("status")?] {
        Value::Text(s) => s.clone(),
        _ => String::new(),
    };
    if let Some((id, status)) = existing {
        summary.runs_merged += 1;
        if finished(&src_status) && !finished(&status) {
            let finished = run_row[run.col("finished_at")?].clone();
            dst.execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE run_id = ?1",
                params![id, src_status.as_str(), finished],
            )?;
        }
        return Ok((id, true));
    }
    summary.runs_added += 1;
    // A file of an older schedlab may hold a password in its command line.
    let argv = match &run_row[run.col("argv")?] {
        Value::Text(a) => Value::Text(schedlab_machine::secret::mask_command_line(a)),
        other => other.clone(),
    };
    let (names, values) = run.without("run_id", run_row, &[("argv", argv)]);
    let id = dst.query_one(
        &insert_sql("runs", &names, "RETURNING run_id"),
        &values,
        |r| r.get(0),
    )?;
    Ok((id, false))
}

/// The run's cells in `dst`, by index: those it lacks added, units filled in where it has
/// none; returns source cell id -> (`dst` cell id, cell index).
fn push_cells(run: &RunPair) -> Result<HashMap<i64, (i64, i64)>> {
    let RunPair {
        src,
        dst,
        known,
        run_id,
        dst_run,
    } = *run;
    let cells = Rows::read(
        src,
        known,
        "cells",
        "SELECT * FROM cells WHERE run_id = ?1 ORDER BY cell_index",
        params![run_id],
    )?;
    let mut dst_cells: HashMap<i64, (i64, Option<i64>)> = dst
        .query(
            "SELECT cell_index, cell_id, units FROM cells WHERE run_id = ?1",
            params![dst_run],
            |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))),
        )?
        .into_iter()
        .collect();
    let (ci, cid, cu) = (
        cells.col("cell_index")?,
        cells.col("cell_id")?,
        cells.col("units")?,
    );
    let mut cell_map = HashMap::new();
    for row in &cells.rows {
        let index = i64_of(&row[ci])?;
        let dst_cell = match dst_cells.get(&index) {
            Some(&(id, units)) => {
                if units.is_none() && row[cu] != Value::Null {
                    dst.execute(
                        "UPDATE cells SET units = ?2 WHERE cell_id = ?1",
                        &[Value::Int(id), row[cu].clone()],
                    )?;
                }
                id
            }
            None => {
                let (names, values) =
                    cells.without("cell_id", row, &[("run_id", Value::Int(dst_run))]);
                let id = dst.query_one(
                    &insert_sql("cells", &names, "RETURNING cell_id"),
                    &values,
                    |r| r.get(0),
                )?;
                dst_cells.insert(index, (id, None));
                id
            }
        };
        cell_map.insert(i64_of(&row[cid])?, (dst_cell, index));
    }
    Ok(cell_map)
}

/// The trials `dst` lacks, with their rows, and their queue rows ended; returns the source ids
/// of the trials `dst` now has, and source trial id -> `dst` trial id of those copied.
fn push_trials(
    run: &RunPair,
    cell_map: &HashMap<i64, (i64, i64)>,
    summary: &mut PushSummary,
) -> Result<(Vec<i64>, HashMap<i64, i64>)> {
    let have: HashSet<(i64, i64, i64)> = run
        .dst
        .query(
            "SELECT c.cell_index, t.trial_index, t.retry FROM trials t JOIN cells c ON c.cell_id = t.cell_id WHERE t.run_id = ?1",
            params![run.dst_run],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?
        .into_iter()
        .collect();
    let trials = Rows::read(
        run.src,
        run.known,
        "trials",
        "SELECT * FROM trials WHERE run_id = ?1 ORDER BY trial_id",
        params![run.run_id],
    )?;
    let (tid, tcell, tindex, tstatus, tretry) = (
        trials.col("trial_id")?,
        trials.col("cell_id")?,
        trials.col("trial_index")?,
        trials.col("status")?,
        trials.col("retry")?,
    );
    let mut present = Vec::new();
    let mut trial_map: HashMap<i64, i64> = HashMap::new();
    for row in &trials.rows {
        let src_trial = i64_of(&row[tid])?;
        let (dst_cell, cell_index) = *cell_map.get(&i64_of(&row[tcell])?).ok_or_else(|| {
            StoreError::Internal("a trial of a cell that is not in its run".into())
        })?;
        let (trial_index, retry) = (i64_of(&row[tindex])?, i64_of(&row[tretry])?);
        present.push(src_trial);
        if have.contains(&(cell_index, trial_index, retry)) {
            summary.trials_present += 1;
            continue;
        }
        let (names, values) = trials.without(
            "trial_id",
            row,
            &[
                ("run_id", Value::Int(run.dst_run)),
                ("cell_id", Value::Int(dst_cell)),
            ],
        );
        let new_id: Option<i64> = run.dst.query_opt(
            &insert_sql(
                "trials",
                &names,
                "ON CONFLICT (cell_id, trial_index, retry) DO NOTHING RETURNING trial_id",
            ),
            &values,
            |r| r.get(0),
        )?;
        let Some(new_id) = new_id else {
            summary.trials_present += 1;
            continue;
        };
        summary.trials_added += 1;
        trial_map.insert(src_trial, new_id);
        copy_trial_rows(run, src_trial, new_id)?;
        use schedlab_core::records::TrialStatus as T;
        let state = match &row[tstatus] {
            Value::Text(s) if matches!(s.parse(), Ok(T::Timeout | T::Failed)) => "failed",
            _ => "done",
        };
        run.dst.execute(
            "UPDATE queue SET state = ?4, trial_id = ?5, lease_until_ms = NULL
             WHERE run_id = ?1 AND cell_index = ?2 AND trial_index = ?3 AND retry = ?6 AND state IN ('pending', 'claimed')",
            params![run.dst_run, cell_index, trial_index, state, new_id, retry],
        )?;
    }
    Ok((present, trial_map))
}

/// The rows of source trial `src_trial` in every table of a trial's own ([`TRIAL_TABLES`]),
/// copied to `dst` as trial `new_id`'s (their own ids are given anew).
fn copy_trial_rows(run: &RunPair, src_trial: i64, new_id: i64) -> Result<()> {
    for (table, order, own_id) in TRIAL_TABLES {
        let rows = Rows::read(
            run.src,
            run.known,
            table,
            &format!("SELECT * FROM {table} WHERE trial_id = ?1 ORDER BY {order}"),
            params![src_trial],
        )?;
        let t = rows.col("trial_id")?;
        let keep: Vec<usize> = (0..rows.names.len())
            .filter(|&i| Some(rows.names[i].as_str()) != own_id)
            .collect();
        let names: Vec<&str> = keep.iter().map(|&i| rows.names[i].as_str()).collect();
        let moved: Vec<Vec<Value>> = rows
            .rows
            .into_iter()
            .map(|mut r| {
                r[t] = Value::Int(new_id);
                keep.iter()
                    .map(|&i| std::mem::replace(&mut r[i], Value::Null))
                    .collect()
            })
            .collect();
        run.dst.insert_rows(table, &names, &moved)?;
    }
    Ok(())
}

/// Removes `trials` (source ids) of run `run_id` with their rows, and the run itself once it
/// has no trial left.
fn remove_trials(db: &Db, run_id: i64, trials: &[i64]) -> Result<()> {
    for &t in trials {
        for table in TRIAL_TABLES.iter().map(|t| t.0).chain(["warnings"]) {
            db.execute(
                &format!("DELETE FROM {table} WHERE trial_id = ?1"),
                params![t],
            )?;
        }
        db.execute("DELETE FROM trials WHERE trial_id = ?1", params![t])?;
    }
    let left: i64 = db.query_one(
        "SELECT COUNT(*) FROM trials WHERE run_id = ?1",
        params![run_id],
        |r| r.get(0),
    )?;
    if left == 0 {
        for table in ["warnings", "queue", "cells", "runs"] {
            db.execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1"),
                params![run_id],
            )?;
        }
    }
    Ok(())
}

fn i64_of(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(StoreError::Internal(format!(
            "expected an id, found {other:?}"
        ))),
    }
}

impl Store {
    /// The id of the run with UUID `uuid`, if this store has it.
    pub fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        self.db.query_opt(
            "SELECT run_id FROM runs WHERE uuid = ?1",
            params![uuid],
            |r| r.get(0),
        )
    }

    /// The UUID of run `run_id`.
    pub fn run_uuid(&self, run_id: i64) -> Result<Option<String>> {
        self.db.query_one(
            "SELECT uuid FROM runs WHERE run_id = ?1",
            params![run_id],
            |r| r.get(0),
        )
    }

    /// Number of trials stored, all runs together.
    pub fn trial_count(&self) -> Result<i64> {
        self.db
            .query_one("SELECT COUNT(*) FROM trials", &[], |r| r.get(0))
    }
}
