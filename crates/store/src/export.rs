//! Export of stored rows as CSV or JSON, with stable, documented column names.

use super::db::{params, Value};
use crate::error::{Result, StoreError};
use schedlab_core::CoreError;
use std::io::Write;
use std::str::FromStr;

/// Which table to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// One row per task.
    Tasks,
    /// One row per trial.
    Trials,
    /// One row per system-wide sample.
    Samples,
    /// One row per task group (CPU cgroup) of a trial.
    Groups,
}

/// A column exports cannot write.
fn binary(name: &str) -> StoreError {
    StoreError::Internal(format!("unexpected binary column {name}"))
}

impl FromStr for Table {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s {
            "tasks" => Ok(Table::Tasks),
            "trials" => Ok(Table::Trials),
            "samples" => Ok(Table::Samples),
            "groups" => Ok(Table::Groups),
            _ => Err(CoreError::unknown(
                "table",
                s,
                "tasks, trials, samples, groups",
            )),
        }
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects.
    Json,
}

impl FromStr for Format {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s {
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(CoreError::unknown("format", s, "csv, json")),
        }
    }
}

/// The cell columns shared by both tables.
const CELL_COLUMNS: &str = "r.run_id, tr.trial_id, tr.trial_index, tr.round, tr.warmup, c.cell_index, c.policy, c.priorities,
     c.workload, c.kind, c.start, c.tasks, c.cpus, c.units, c.antagonists, c.io_scheduler";

/// Kernel-knob columns, after the older ones of every table: the cell's slice, knobs and BPF
/// scheduler, and the settings read back before the trial (`name=value` separated by spaces).
const KNOB_COLUMNS: &str = "c.slice_ns, c.knobs, c.scx,
     (SELECT string_agg(k.name || '=' || k.read_back, ' ' ORDER BY k.reading_id) FROM knob_readings k WHERE k.trial_id = tr.trial_id) AS knobs_read";

/// SQL of the `tasks` export. Column names are part of the interface: keep them stable; new
/// columns go at the end.
fn tasks_sql() -> String {
    format!(
        "SELECT {CELL_COLUMNS}, t.task_index, t.pid, t.tid, t.policy_in_force, t.nice, t.rt_priority,
                t.response_ns, t.turnaround_ns, t.run_span_ns, t.utime_ns, t.stime_ns, t.nvcsw, t.nivcsw,
                t.run_delay_ns, t.timeslices, t.migrations, t.work_units, t.exit_status,
                t.t_release_ns, t.t_start_ns, t.t_end_ns, t.role, t.lat_count, t.lat_min_ns, t.lat_p50_ns,
                t.lat_p90_ns, t.lat_p99_ns, t.lat_p999_ns, t.lat_max_ns, tr.status, {KNOB_COLUMNS},
                t.slice_getattr_ns, t.slice_proc_ns, t.cpu_ns, t.group_name, c.cgroups, t.workload_role, t.bytes, t.misses,
                t.op_count, t.op_p50_ns, t.op_p99_ns, t.op_max_ns, t.slack_p1_ns, t.slack_p50_ns, t.slack_p99_ns, t.late_max_ns,
                tr.retry, tr.retried
         FROM tasks t JOIN trials tr ON tr.trial_id = t.trial_id JOIN cells c ON c.cell_id = tr.cell_id
              JOIN runs r ON r.run_id = tr.run_id
         WHERE r.run_id = ?1 ORDER BY tr.trial_id, t.task_index"
    )
}

/// SQL of the `samples` export.
fn samples_sql() -> String {
    format!(
        "SELECT {CELL_COLUMNS}, s.t_ns, s.interval_ns, s.r, s.b, s.in_per_s, s.cs_per_s, s.us_pct, s.sy_pct, s.id_pct,
                s.wa_pct, s.st_pct, s.bi_kib_s, s.bo_kib_s, s.psi_cpu_some_pct, s.psi_cpu_full_pct, s.psi_io_some_pct,
                s.psi_io_full_pct, s.psi_mem_some_pct, s.psi_mem_full_pct, s.load1, {KNOB_COLUMNS}, tr.retry, tr.retried
         FROM samples s JOIN trials tr ON tr.trial_id = s.trial_id JOIN cells c ON c.cell_id = tr.cell_id
              JOIN runs r ON r.run_id = tr.run_id
         WHERE r.run_id = ?1 ORDER BY tr.trial_id, s.t_ns"
    )
}

/// The rest of a trial's stored columns, after the older ones of the `trials` export: the
/// conditions before it, the interference and its split, the speeds, the re-run flags. With
/// them the export carries every column of the `trials` table (its `io_scheduler`, read back
/// before the trial, as `io_scheduler_read`, beside the cell's `io_scheduler`).
const TRIAL_QUALITY_COLUMNS: &str = "tr.cell_id, tr.load1, tr.busy_pct, tr.steal_pct, tr.psi_cpu_some_pct,
     tr.io_scheduler AS io_scheduler_read, tr.trace_lost_events, tr.host, tr.outside_cpu_ns, tr.outside_share,
     tr.interference_source, tr.disturbed, tr.outside_process_ns, tr.outside_process_share, tr.outside_kthread_ns,
     tr.outside_irq_ns, tr.kernel_cpu_ns, tr.speed_steady, tr.speed_in_trial, tr.speed_in_trial_steady, tr.slowed,
     tr.retry, tr.retried, tr.descendants_cpu_ns";

/// SQL of the `trials` export.
fn trials_sql() -> String {
    format!(
        "SELECT {CELL_COLUMNS}, tr.makespan_ns, tr.status, tr.reason, tr.timeout_ns, tr.harness_cpu_ns, tr.pgid, tr.started_at, {KNOB_COLUMNS},
                tr.speed_before, tr.speed_after, tr.trial_steal_pct, tr.noisy, tr.rt_throttled, c.cgroups,
                tr.ops, tr.ops_per_s, tr.wake_p50_ns, tr.wake_p90_ns, tr.wake_p99_ns, tr.wake_p999_ns, tr.op_p50_ns,
                tr.op_p90_ns, tr.op_p99_ns, tr.op_p999_ns, tr.misses, tr.miss_pct, tr.slack_p1_ns, tr.slack_p50_ns,
                tr.slack_p99_ns, tr.late_max_ns, {TRIAL_QUALITY_COLUMNS}
         FROM trials tr JOIN cells c ON c.cell_id = tr.cell_id JOIN runs r ON r.run_id = tr.run_id
         WHERE r.run_id = ?1 ORDER BY tr.trial_id"
    )
}

/// SQL of the `groups` export: each task group of each trial, its settings and figures.
fn groups_sql() -> String {
    format!(
        "SELECT {CELL_COLUMNS}, g.group_index, g.name AS group_name, g.tasks AS group_tasks, g.weight, g.quota_us,
                g.period_us, g.idle, g.cpus AS group_cpus, g.is_partition, g.rt_runtime_us, g.usage_ns, g.nr_periods,
                g.nr_throttled, g.throttled_ns, g.contended_ns, g.usage_contended_ns, tr.status, c.cgroups,
                tr.retry, tr.retried
         FROM task_groups g JOIN trials tr ON tr.trial_id = g.trial_id JOIN cells c ON c.cell_id = tr.cell_id
              JOIN runs r ON r.run_id = tr.run_id
         WHERE r.run_id = ?1 ORDER BY tr.trial_id, g.group_index"
    )
}

/// Writes `table` of run `run_id` to `out` in `format`; returns the number of rows.
pub fn export(
    store: &super::Store,
    run_id: i64,
    table: Table,
    format: Format,
    out: &mut dyn Write,
) -> Result<usize> {
    let sql = match table {
        Table::Tasks => tasks_sql(),
        Table::Trials => trials_sql(),
        Table::Samples => samples_sql(),
        Table::Groups => groups_sql(),
    };
    let names = store.db.columns(&sql)?;
    let mut count = 0;
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(&names)?;
            let mut rec = Vec::with_capacity(names.len());
            store.db.for_each(&sql, params![run_id], |row| {
                rec.clear();
                for (i, name) in names.iter().enumerate() {
                    rec.push(match row.value(i)? {
                        Value::Null => String::new(),
                        Value::Int(v) => v.to_string(),
                        Value::Real(v) => v.to_string(),
                        Value::Text(t) => t,
                        Value::Blob(_) => return Err(binary(name)),
                    });
                }
                w.write_record(&rec)?;
                count += 1;
                Ok(())
            })?;
            w.flush()?;
        }
        Format::Json => {
            out.write_all(b"[")?;
            store.db.for_each(&sql, params![run_id], |row| {
                let mut obj = serde_json::Map::new();
                for (i, name) in names.iter().enumerate() {
                    let v = match row.value(i)? {
                        Value::Null => serde_json::Value::Null,
                        Value::Int(v) => v.into(),
                        Value::Real(v) => v.into(),
                        Value::Text(t) => t.into(),
                        Value::Blob(_) => return Err(binary(name)),
                    };
                    obj.insert(name.clone(), v);
                }
                if count > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut *out, &obj)?;
                count += 1;
                Ok(())
            })?;
            out.write_all(b"\n]\n")?;
        }
    }
    Ok(count)
}
