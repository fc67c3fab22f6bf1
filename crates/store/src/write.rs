//! Write side of the store: a run and its cells, one transaction per trial (its rows written
//! in bulk), warnings, calibrations.

use super::db::{params, Db, Value};
use super::query::Runner;
use super::{now_utc, NewRun, Store};
use crate::error::Result;
use schedlab_core::records::{TrialMeta, TrialOutcome};
use schedlab_core::Warning;
use schedlab_machine::HostIdentity;
use schedlab_spec::plan::{Cell, PlannedTrial};

/// Columns of a `tasks` row, in the order [`task_rows`] gives them.
const TASK_COLUMNS: [&str; 51] = [
    "trial_id",
    "task_index",
    "pid",
    "tid",
    "policy_in_force",
    "nice",
    "rt_priority",
    "t_release_ns",
    "t_start_ns",
    "t_end_ns",
    "response_ns",
    "turnaround_ns",
    "run_span_ns",
    "utime_ns",
    "stime_ns",
    "nvcsw",
    "nivcsw",
    "run_delay_ns",
    "timeslices",
    "migrations",
    "work_units",
    "exit_status",
    "role",
    "lat_count",
    "lat_min_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "trace_wakeups",
    "trace_delay_p50_ns",
    "trace_delay_max_ns",
    "trace_preemptions",
    "trace_migrations",
    "trace_unseen_switch_ins",
    "slice_getattr_ns",
    "slice_proc_ns",
    "cpu_ns",
    "group_name",
    "workload_role",
    "bytes",
    "misses",
    "op_count",
    "op_p50_ns",
    "op_p99_ns",
    "op_max_ns",
    "slack_p1_ns",
    "slack_p50_ns",
    "slack_p99_ns",
    "late_max_ns",
];

/// Columns of a `samples` row: its trial and time, then what was measured.
pub(super) const SAMPLE_COLUMNS: [&str; 21] = [
    "trial_id",
    "t_ns",
    "interval_ns",
    "r",
    "b",
    "in_per_s",
    "cs_per_s",
    "us_pct",
    "sy_pct",
    "id_pct",
    "wa_pct",
    "st_pct",
    "bi_kib_s",
    "bo_kib_s",
    "psi_cpu_some_pct",
    "psi_cpu_full_pct",
    "psi_io_some_pct",
    "psi_io_full_pct",
    "psi_mem_some_pct",
    "psi_mem_full_pct",
    "load1",
];

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
    /// `running`, or `queued` for a submitted run.
    pub status: &'static str,
}

impl Store {
    /// Records a new run of this process on this machine and all its cells in one
    /// transaction; returns the run id.
    pub fn create_run(&mut self, run: &NewRun, cells: &[Cell]) -> Result<i64> {
        let id = RunIdentity {
            uuid: None,
            host: Some(HostIdentity::capture()),
            status: "running",
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
        let me = if id.status == "running" {
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
                               runner_pid, runner_boot_id, runner_start_ticks, uuid, host, machine_id, kernel, cpu_model, git_commit)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) RETURNING run_id",
            params![name, now_utc(), id.status, seed as i64, spec_toml, argv, env_json,
                    h.map_or(env!("CARGO_PKG_VERSION"), |h| h.version.as_str()), trials_planned as i64,
                    me.pid, me.boot_id, me.start_ticks, uuid, h.map(|h| h.hostname.as_str()),
                    h.and_then(|h| h.machine_id.as_deref()), h.map(|h| h.kernel.as_str()),
                    h.map(|h| h.cpu_model.as_str()), h.and_then(|h| h.git_commit.as_deref())],
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
    /// stored already (same run, cell and trial index) is kept as it is and its id returned:
    /// every trial is stored once.
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
                "SELECT trial_id FROM trials WHERE cell_id = ?1 AND trial_index = ?2",
                params![cell_id, planned.trial_index],
                |r| r.get(0),
            )?;
            return Ok((existing, false));
        };
        let (tasks, hists) = task_rows(trial_id, outcome);
        db.insert_rows("tasks", &TASK_COLUMNS, &tasks)?;
        super::figures::update_trial(db, trial_id, outcome.figures.as_ref())?;
        db.insert_rows(
            "histograms",
            &["trial_id", "task_index", "metric", "hdr_v2"],
            &hists,
        )?;
        db.insert_rows("samples", &SAMPLE_COLUMNS, &sample_rows(trial_id, outcome))?;
        db.insert_rows(
            "trace_slices",
            &["trial_id", "task_index", "cpu", "start_ns", "end_ns"],
            &slice_rows(trial_id, outcome),
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

    /// (cell_index, trial_index) of every trial stored for a run.
    pub fn stored_trials(&self, run_id: i64) -> Result<std::collections::HashSet<(usize, u32)>> {
        let rows = self.db.query(
            "SELECT c.cell_index, t.trial_index FROM trials t JOIN cells c ON c.cell_id = t.cell_id WHERE t.run_id = ?1",
            params![run_id],
            |r| Ok((r.get::<i64>(0)? as usize, r.get::<i64>(1)? as u32)),
        )?;
        Ok(rows.into_iter().collect())
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
    pub fn finish_run(&self, run_id: i64, status: &str) -> Result<()> {
        self.db.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE run_id = ?1",
            params![run_id, status, now_utc()],
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

    /// Stores (replacing) a calibration.
    pub fn save_calibration(
        &self,
        key: &str,
        kernel: &str,
        cpu_model: &str,
        units_per_sec: f64,
    ) -> Result<()> {
        self.db.execute(
            "INSERT INTO calibrations (key, kernel, cpu_model, units_per_sec, measured_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (key, kernel, cpu_model) DO UPDATE SET units_per_sec = excluded.units_per_sec, measured_at = excluded.measured_at",
            params![key, kernel, cpu_model, units_per_sec, now_utc()],
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

/// The `tasks` rows of a trial, and its `histograms` rows.
/// The traced wake-up delays of a task as a histogram, ns.
fn delay_histogram(delays_ns: &[u64]) -> hdrhistogram::Histogram<u64> {
    use schedlab_core::workload::periodic::{new_histogram, MAX_LATENCY_NS};
    let mut h = new_histogram();
    for &d in delays_ns {
        let _ = h.record(d.clamp(1, MAX_LATENCY_NS));
    }
    h
}

/// The trial's own row in cell `cell_id` of run `run_id`; its id, or None when the cell has
/// that trial already.
fn insert_trial_row(
    db: &Db,
    run_id: i64,
    cell_id: i64,
    planned: &PlannedTrial,
    outcome: &TrialOutcome,
    meta: &TrialMeta,
) -> Result<Option<i64>> {
    db.query_opt(
        "INSERT INTO trials (run_id, cell_id, trial_index, round, warmup, status, reason, makespan_ns, timeout_ns, harness_cpu_ns,
                             started_at, pgid, load1, busy_pct, steal_pct, psi_cpu_some_pct, io_scheduler, trace_lost_events, host,
                             speed_before, speed_after, trial_steal_pct, noisy, rt_throttled,
                             outside_cpu_ns, outside_share, interference_source, disturbed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24,
                 ?25, ?26, ?27, ?28)
         ON CONFLICT (cell_id, trial_index) DO NOTHING RETURNING trial_id",
        params![
            run_id,
            cell_id,
            planned.trial_index,
            planned.round,
            planned.warmup,
            outcome.status.name(),
            outcome.reason.as_deref(),
            outcome.makespan_ns.map(|v| v as i64),
            meta.timeout_ns as i64,
            outcome.harness_cpu_ns as i64,
            meta.started_at.as_str(),
            outcome.pgid,
            meta.load1,
            meta.busy_pct,
            meta.steal_pct,
            meta.psi_cpu_some_pct,
            meta.io_scheduler.as_deref(),
            outcome.trace_lost_events.map(|v| v as i64),
            schedlab_machine::host::hostname(),
            meta.speed_before,
            meta.speed_after,
            meta.trial_steal_pct,
            meta.noisy,
            meta.rt_throttled,
            meta.outside_cpu_ns,
            meta.outside_share,
            meta.interference_source.as_deref(),
            meta.outside_share.map(|_| meta.disturbed),
        ],
        |r| r.get(0),
    )
}

/// The rows of the system-wide samples taken during trial `trial_id`.
fn sample_rows(trial_id: i64, outcome: &TrialOutcome) -> Vec<Vec<Value>> {
    outcome
        .samples
        .iter()
        .map(|s| {
            let p = s.psi_pct;
            params![
                trial_id,
                s.t_ns as i64,
                s.interval_ns as i64,
                s.r as i64,
                s.b as i64,
                s.in_per_s,
                s.cs_per_s,
                s.us_pct,
                s.sy_pct,
                s.id_pct,
                s.wa_pct,
                s.st_pct,
                s.bi_kib_s,
                s.bo_kib_s,
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                p[5],
                s.load1,
            ]
            .to_vec()
        })
        .collect()
}

/// The rows of the trace's slices of trial `trial_id` (task index, CPU, start and end).
fn slice_rows(trial_id: i64, outcome: &TrialOutcome) -> Vec<Vec<Value>> {
    outcome
        .trace_slices
        .iter()
        .map(|(i, sl)| {
            params![
                trial_id,
                *i as i64,
                sl.cpu as i64,
                sl.start_ns as i64,
                sl.end_ns as i64
            ]
            .to_vec()
        })
        .collect()
}

fn task_rows(trial_id: i64, outcome: &TrialOutcome) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
    let nz = |v: u64| (v != 0).then_some(v as i64);
    let mut tasks = Vec::with_capacity(outcome.tasks.len());
    let mut hists = Vec::new();
    for t in &outcome.tasks {
        let lat = t.latency.as_ref().map(|(s, _)| s);
        let tr = t.trace.as_ref();
        let delay_stats = tr.map(|t| delay_histogram(&t.wakeup_delays_ns));
        tasks.push(
            params![
                trial_id,
                t.task_index,
                t.pid,
                t.tid,
                t.policy.map(|p| p.name()),
                t.nice,
                t.rt_priority,
                nz(t.t_release_ns),
                nz(t.t_start_ns),
                nz(t.t_end_ns),
                t.response_ns,
                t.turnaround_ns,
                t.run_span_ns,
                t.utime_ns as i64,
                t.stime_ns as i64,
                t.nvcsw as i64,
                t.nivcsw as i64,
                t.run_delay_ns as i64,
                t.timeslices as i64,
                t.migrations as i64,
                t.work_units as i64,
                t.exit_status,
                if t.antagonist { "antagonist" } else { "task" },
                lat.map(|l| l.count as i64),
                lat.map(|l| l.min_ns as i64),
                lat.map(|l| l.p50_ns as i64),
                lat.map(|l| l.p90_ns as i64),
                lat.map(|l| l.p99_ns as i64),
                lat.map(|l| l.p999_ns as i64),
                lat.map(|l| l.max_ns as i64),
                tr.map(|t| t.wakeup_delays_ns.len() as i64),
                tr.and_then(|t| delay_stats
                    .as_ref()
                    .map(|h| h.value_at_quantile(0.5) as i64)
                    .filter(|_| !t.wakeup_delays_ns.is_empty())),
                tr.and_then(|t| t.wakeup_delays_ns.iter().max().map(|&v| v as i64)),
                tr.map(|t| t.preemptions as i64),
                tr.map(|t| t.migrations as i64),
                tr.map(|t| t.unseen_switch_ins as i64),
                t.slice_getattr_ns.map(|v| v as i64),
                t.slice_proc_ns.map(|v| v as i64),
                t.cpu_ns.map(|v| v as i64),
                t.group.as_deref(),
            ]
            .iter()
            .cloned()
            .chain(super::figures::task_values(t))
            .collect(),
        );
        if let Some(h) = &delay_stats {
            hists.push(
                params![
                    trial_id,
                    t.task_index,
                    "trace_wakeup_delay_ns",
                    schedlab_core::workload::periodic::serialize(h)
                ]
                .to_vec(),
            );
        }
        if let Some((_, bytes)) = &t.latency {
            hists.push(params![trial_id, t.task_index, "wakeup_latency_ns", bytes].to_vec());
        }
        hists.extend(super::figures::task_histograms(trial_id, t));
    }
    (tasks, hists)
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
