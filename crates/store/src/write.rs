//! Write side of the store: a run and its cells, one transaction per trial (its rows written
//! in bulk), warnings, calibrations.

use super::db::{params, Db, Value};
use super::query::Runner;
use super::rows;
use super::{now_utc, NewRun, Store};
use crate::error::Result;
use schedlab_core::records::{RunStatus, TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_machine::HostIdentity;
use schedlab_spec::plan::{Cell, PlannedTrial};

/// Columns of a `cells` row.
const CELL_COLUMNS: [&str; 26] = [
    "run_id",
    "cell_index",
    "policy",
    "priorities",
    "workload",
    "workload_json",
    "kind",
    "start",
    "tasks",
    "cpus",
    "nice",
    "rt_priority",
    "dl_runtime_ns",
    "dl_deadline_ns",
    "dl_period_ns",
    "work_ns",
    "units",
    "split",
    "antagonists",
    "antagonist_policy",
    "antagonist_workload",
    "io_scheduler",
    "slice_ns",
    "knobs",
    "scx",
    "cgroups",
];

/// Who a new run is recorded as, and in which state it starts.
#[derive(Debug, Clone, Default)]
pub struct RunIdentity {
    /// The run's UUID; None: a new one.
    pub uuid: Option<String>,
    /// The machine that runs it; None: not known yet (a queued run: its first worker's).
    pub host: Option<HostIdentity>,
    /// Running, or queued for a submitted run.
    pub status: RunStatus,
}

impl Store {
    /// Records a new run of this process on this machine and all its cells in one
    /// transaction; returns the run id.
    pub fn create_run(&mut self, run: &NewRun, cells: &[Cell]) -> Result<i64> {
        let id = RunIdentity {
            uuid: None,
            host: Some(HostIdentity::capture()),
            status: RunStatus::Running,
        };
        self.create_run_as(run, cells, &id)
    }

    /// Records a new run with the given identity and all its cells in one transaction; returns
    /// the run id. A `running` run records this process as its runner.
    pub fn create_run_as(&mut self, run: &NewRun, cells: &[Cell], id: &RunIdentity) -> Result<i64> {
        self.db.transaction(|| self.create_run_rows(run, cells, id))
    }

    /// The rows of a new run, inside the caller's transaction; returns the run id.
    pub(super) fn create_run_rows(
        &self,
        run: &NewRun,
        cells: &[Cell],
        id: &RunIdentity,
    ) -> Result<i64> {
        let NewRun {
            name,
            seed,
            spec_toml,
            argv,
            env_json,
            trials_planned,
        } = *run;
        let me = if id.status == RunStatus::Running {
            Runner::this_process()
        } else {
            Runner::default()
        };
        let uuid = id
            .uuid
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let h = id.host.as_ref();
        let db = &self.db;
        let run_id: i64 = db.query_one(
            "INSERT INTO runs (name, started_at, status, seed, spec_toml, argv, env_json, version, trials_planned,
                               runner_pid, runner_boot_id, runner_start_ticks, uuid, host, machine_id, kernel, cpu_model, git_commit,
                               spec_hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) RETURNING run_id",
            params![name, now_utc(), id.status.name(), seed as i64, spec_toml, argv, env_json,
                    h.map_or(env!("CARGO_PKG_VERSION"), |h| h.version.as_str()), trials_planned as i64,
                    me.pid, me.boot_id, me.start_ticks, uuid, h.map(|h| h.hostname.as_str()),
                    h.and_then(|h| h.machine_id.as_deref()), h.map(|h| h.kernel.as_str()),
                    h.map(|h| h.cpu_model.as_str()), h.and_then(|h| h.git_commit.as_deref()),
                    crate::query::spec_hash(spec_toml)],
            |r| r.get(0),
        )?;
        let rows = cells
            .iter()
            .enumerate()
            .map(|(i, c)| cell_row(run_id, i, c))
            .collect::<Result<Vec<_>>>()?;
        db.insert_rows("cells", &CELL_COLUMNS, &rows)?;
        Ok(run_id)
    }

    /// Records the units of work per task a cell was run with (after calibration).
    pub fn set_cell_units(&self, run_id: i64, cell_index: usize, units: u64) -> Result<()> {
        self.db.execute(
            "UPDATE cells SET units = ?3 WHERE run_id = ?1 AND cell_index = ?2",
            params![run_id, cell_index as i64, units as i64],
        )?;
        Ok(())
    }

    /// Stores one trial and all its tasks in one transaction; returns the trial id. A trial
    /// stored already (same run, cell, trial index and attempt, `meta.retry`) is kept as it is
    /// and its id returned: every attempt is stored once.
    pub fn insert_trial(
        &mut self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<i64> {
        let db = &self.db;
        db.transaction(|| Ok(self.insert_trial_rows(run_id, planned, outcome, meta)?.0))
    }

    /// The rows of one trial, inside the caller's transaction: (trial id, whether it is new).
    pub(super) fn insert_trial_rows(
        &self,
        run_id: i64,
        planned: &PlannedTrial,
        outcome: &TrialOutcome,
        meta: &TrialMeta,
    ) -> Result<(i64, bool)> {
        let db = &self.db;
        let cell_id: i64 = db.query_one(
            "SELECT cell_id FROM cells WHERE run_id = ?1 AND cell_index = ?2",
            params![run_id, planned.cell as i64],
            |r| r.get(0),
        )?;
        let Some(trial_id) = insert_trial_row(db, run_id, cell_id, planned, outcome, meta)? else {
            let existing = db.query_one(
                "SELECT trial_id FROM trials WHERE cell_id = ?1 AND trial_index = ?2 AND retry = ?3",
                params![cell_id, planned.trial_index, meta.retry],
                |r| r.get(0),
            )?;
            return Ok((existing, false));
        };
        let (tasks, hists) = rows::task_rows(trial_id, outcome);
        db.insert_rows("tasks", &rows::TASK_COLUMNS, &tasks)?;
        super::figures::update_trial(db, trial_id, outcome.figures.as_ref())?;
        db.insert_rows(
            "histograms",
            &["trial_id", "task_index", "metric", "hdr_v2"],
            &hists,
        )?;
        db.insert_rows(
            "samples",
            &rows::SAMPLE_COLUMNS,
            &rows::sample_rows(trial_id, outcome),
        )?;
        db.insert_rows(
            "trace_slices",
            &["trial_id", "task_index", "cpu", "start_ns", "end_ns"],
            &rows::slice_rows(trial_id, outcome),
        )?;
        super::knobs::insert_readings(db, trial_id, &meta.knobs)?;
        super::groups::insert_groups(db, trial_id, &outcome.groups)?;
        Ok((trial_id, true))
    }

    /// Marks a resumed run as running again.
    pub fn mark_running(&self, run_id: i64) -> Result<()> {
        let me = Runner::this_process();
        self.db.execute(
            "UPDATE runs SET status = 'running', finished_at = NULL, runner_pid = ?2, runner_boot_id = ?3,
                             runner_start_ticks = ?4 WHERE run_id = ?1",
            params![run_id, me.pid, me.boot_id, me.start_ticks],
        )?;
        Ok(())
    }

    /// (cell_index, trial_index) of every trial stored for a run (any attempt).
    pub fn stored_trials(&self, run_id: i64) -> Result<std::collections::HashSet<(usize, u32)>> {
        let rows = self.db.query(
            "SELECT c.cell_index, t.trial_index FROM trials t JOIN cells c ON c.cell_id = t.cell_id WHERE t.run_id = ?1",
            params![run_id],
            |r| Ok((r.get::<i64>(0)? as usize, r.get::<i64>(1)? as u32)),
        )?;
        Ok(rows.into_iter().collect())
    }

    /// The re-runs run `run_id` still owes: for each (cell, trial index) whose latest stored
    /// attempt was flagged to be run again, the planned trial and the next attempt's number.
    pub fn owed_reruns(&self, run_id: i64) -> Result<Vec<(PlannedTrial, u32)>> {
        self.db.query(
            "SELECT c.cell_index, t.trial_index, t.round, t.warmup, t.retry FROM trials t JOIN cells c ON c.cell_id = t.cell_id
             WHERE t.run_id = ?1 AND t.retried = 1
               AND NOT EXISTS (SELECT 1 FROM trials u WHERE u.cell_id = t.cell_id AND u.trial_index = t.trial_index
                                                        AND u.retry > t.retry)
             ORDER BY t.trial_id",
            params![run_id],
            |r| {
                let planned = PlannedTrial {
                    cell: r.get::<i64>(0)? as usize,
                    trial_index: r.get::<i64>(1)? as u32,
                    round: r.get::<i64>(2)? as u32,
                    warmup: r.get(3)?,
                };
                Ok((planned, r.get::<i64>(4)? as u32 + 1))
            },
        )
    }

    /// (cell_index, units) of every cell of a run.
    pub fn cell_units(&self, run_id: i64) -> Result<Vec<(usize, Option<u64>)>> {
        self.db.query(
            "SELECT cell_index, units FROM cells WHERE run_id = ?1 ORDER BY cell_index",
            params![run_id],
            |r| {
                Ok((
                    r.get::<i64>(0)? as usize,
                    r.get::<Option<i64>>(1)?.map(|u| u as u64),
                ))
            },
        )
    }

    /// Marks a run finished with `status` (done, interrupted, failed).
    pub fn finish_run(&self, run_id: i64, status: RunStatus) -> Result<()> {
        self.db.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE run_id = ?1",
            params![run_id, status.name(), now_utc()],
        )?;
        Ok(())
    }

    /// Stores a warning about a run (or one of its trials): its code, its parameters (JSON,
    /// see [`warning_params`]) and its sentence.
    pub fn add_warning(&self, run_id: i64, trial_id: Option<i64>, warning: &Warning) -> Result<()> {
        self.db.execute(
            "INSERT INTO warnings (run_id, trial_id, code, params, message) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run_id,
                trial_id,
                warning.code(),
                warning_params(warning)?,
                warning.to_string()
            ],
        )?;
        Ok(())
    }

    /// A stored calibration for this workload key, kernel and CPU model.
    pub fn calibration(&self, key: &str, kernel: &str, cpu_model: &str) -> Result<Option<f64>> {
        self.db.query_opt(
            "SELECT units_per_sec FROM calibrations WHERE key = ?1 AND kernel = ?2 AND cpu_model = ?3",
            params![key, kernel, cpu_model],
            |r| r.get(0),
        )
    }

    /// Stores (replacing) a calibration, with the spread of its measurements when known.
    pub fn save_calibration(
        &self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
        spread: Option<f64>,
    ) -> Result<()> {
        self.db.execute(
            "INSERT INTO calibrations (key, kernel, cpu_model, units_per_sec, measured_at, spread) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (key, kernel, cpu_model) DO UPDATE SET units_per_sec = excluded.units_per_sec,
                                                               measured_at = excluded.measured_at, spread = excluded.spread",
            params![key, kernel, cpu_model, units_per_sec, now_utc(), spread],
        )?;
        Ok(())
    }
}

/// The `cells` row of cell `i` of a new run.
fn cell_row(run_id: i64, i: usize, c: &Cell) -> Result<Vec<Value>> {
    let (work_ns, units) = match c.size {
        schedlab_core::records::WorkSize::WorkNs(ns) => (Some(ns as i64), None),
        schedlab_core::records::WorkSize::Iterations(n) => (
            None,
            Some(if c.split {
                n.div_ceil(u64::from(c.tasks)).max(1)
            } else {
                n
            } as i64),
        ),
    };
    Ok(params![
        run_id,
        i as i64,
        c.policy.name(),
        c.priorities.name(),
        c.workload.label(),
        serde_json::to_string(&c.workload)?,
        c.kind.name(),
        c.start.name(),
        c.tasks,
        c.cpus.as_deref().map(schedlab_procfs::format_cpu_list),
        c.nice,
        c.rt_priority,
        c.deadline.runtime_ns as i64,
        c.deadline.deadline_ns as i64,
        c.deadline.period_ns as i64,
        work_ns,
        units,
        c.split,
        c.antagonists,
        (c.antagonists > 0).then(|| c.antagonist_policy.name()),
        (c.antagonists > 0).then(|| c.antagonist_workload.name()),
        c.io_scheduler.as_deref(),
        c.slice_ns.map(|ns| ns as i64),
        (!c.knobs.is_empty()).then(|| c
            .knobs
            .iter()
            .map(schedlab_core::records::KnobSetting::label)
            .collect::<Vec<_>>()
            .join(" ")),
        c.scx.as_ref().map(|x| x.command_line()),
        c.groups_label(),
    ]
    .to_vec())
}

/// Columns of a trial's own row as [`insert_trial_row`] writes it (the workload's figures are
/// set after it, `figures::update_trial`).
const TRIAL_COLUMNS: [&str; 40] = [
    "run_id",
    "cell_id",
    "trial_index",
    "round",
    "warmup",
    "status",
    "reason",
    "makespan_ns",
    "timeout_ns",
    "harness_cpu_ns",
    "started_at",
    "pgid",
    "load1",
    "busy_pct",
    "steal_pct",
    "psi_cpu_some_pct",
    "io_scheduler",
    "trace_lost_events",
    "host",
    "speed_before",
    "speed_after",
    "trial_steal_pct",
    "noisy",
    "rt_throttled",
    "outside_cpu_ns",
    "outside_share",
    "interference_source",
    "disturbed",
    "outside_process_ns",
    "outside_process_share",
    "outside_kthread_ns",
    "outside_irq_ns",
    "kernel_cpu_ns",
    "speed_steady",
    "speed_in_trial",
    "speed_in_trial_steady",
    "slowed",
    "retry",
    "retried",
    "descendants_cpu_ns",
];

/// The trial's own row in cell `cell_id` of run `run_id`; its id, or None when the cell has
/// that attempt at that trial already.
fn insert_trial_row(
    db: &Db,
    run_id: i64,
    cell_id: i64,
    planned: &PlannedTrial,
    outcome: &TrialOutcome,
    meta: &TrialMeta,
) -> Result<Option<i64>> {
    let marks: Vec<String> = (1..=TRIAL_COLUMNS.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO trials ({}) VALUES ({}) ON CONFLICT (cell_id, trial_index, retry) DO NOTHING RETURNING trial_id",
        TRIAL_COLUMNS.join(", "),
        marks.join(", ")
    );
    let m = meta;
    // NULL for a trial whose interference was not measured.
    let measured = m.outside_process_share.map(|_| m.disturbed);
    let values = params![
        run_id,
        cell_id,
        planned.trial_index,
        planned.round,
        planned.warmup,
        outcome.status.name(),
        outcome.reason.as_deref(),
        outcome.makespan_ns.map(|v| v as i64),
        m.timeout_ns as i64,
        outcome.harness_cpu_ns as i64,
        m.started_at.as_str(),
        outcome.pgid,
        m.load1,
        m.busy_pct,
        m.steal_pct,
        m.psi_cpu_some_pct,
        m.io_scheduler.as_deref(),
        outcome.trace_lost_events.map(|v| v as i64),
        schedlab_machine::host::hostname(),
        m.speed_before,
        m.speed_after,
        m.trial_steal_pct,
        m.noisy,
        m.rt_throttled,
        m.outside_cpu_ns,
        m.outside_share,
        m.interference_source.as_deref(),
        measured,
        m.outside_process_ns,
        m.outside_process_share,
        m.outside_kthread_ns,
        m.outside_irq_ns,
        m.kernel_cpu_ns,
        m.speed_steady,
        m.speed_in_trial,
        m.speed_in_trial_steady,
        m.slowed,
        m.retry,
        m.retried,
        outcome.descendants_cpu_ns as i64,
    ];
    db.query_opt(&sql, values, |r| r.get(0))
}

/// The parameters of `warning` as stored: a JSON object of its fields, without the code (which
/// has a column of its own).
pub fn warning_params(warning: &Warning) -> Result<String> {
    let mut v = serde_json::to_value(warning)?;
    if let Some(o) = v.as_object_mut() {
        o.shift_remove("code");
    }
    Ok(v.to_string())
}
