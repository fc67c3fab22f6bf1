//! The rows of one trial besides its own: its tasks, their histograms, the system-wide
//! samples and the trace's slices, as the store writes them.

use super::db::{params, Value};
use schedlab_core::records::TrialOutcome;

/// Columns of a `tasks` row, in the order [`task_rows`] gives them.
pub(super) const TASK_COLUMNS: [&str; 51] = [
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

/// The traced wake-up delays of a task as a histogram, ns.
fn delay_histogram(delays_ns: &[u64]) -> hdrhistogram::Histogram<u64> {
    use schedlab_core::workload::periodic::{new_histogram, MAX_LATENCY_NS};
    let mut h = new_histogram();
    for &d in delays_ns {
        let _ = h.record(d.clamp(1, MAX_LATENCY_NS));
    }
    h
}

/// The rows of the system-wide samples taken during trial `trial_id`.
pub(super) fn sample_rows(trial_id: i64, outcome: &TrialOutcome) -> Vec<Vec<Value>> {
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
pub(super) fn slice_rows(trial_id: i64, outcome: &TrialOutcome) -> Vec<Vec<Value>> {
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

/// The `tasks` rows of a trial, and its `histograms` rows.
pub(super) fn task_rows(
    trial_id: i64,
    outcome: &TrialOutcome,
) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
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
