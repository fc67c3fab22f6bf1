//! The workloads' own figures in a report: each trial's stored figures (`trials.ops` ...) as
//! values of the report's metrics (messages/s, requests/s, round trip, wake-up and request
//! latency percentiles, misses and slack), one per trial, so that they are summarised, tested,
//! compared and usable in claims like every other metric; and the rows of each workload
//! kind's table that `stats` prints (as text by `render::sections`).

use super::{Metric, Report};
use schedlab_core::workload::{Workload, WorkloadKind};
use schedlab_store::figures::FigureRow;
use schedlab_store::query::CellView;

/// The metrics of each workload kind's table, in column order (none: the kind has no figures
/// of its own). One arm per kind: a kind added without its figures does not compile.
pub fn metrics_of(kind: WorkloadKind) -> &'static [Metric] {
    use Metric as M;
    match kind {
        WorkloadKind::Messaging => &[M::Makespan, M::MessagesPerS, M::MessageP50, M::MessageP99],
        WorkloadKind::Request => &[
            M::Rps,
            M::WakeupP50,
            M::WakeupP90,
            M::WakeupP99,
            M::WakeupP999,
            M::RequestP50,
            M::RequestP90,
            M::RequestP99,
            M::RequestP999,
        ],
        WorkloadKind::Pipe => &[M::RoundTrip, M::SwitchTime, M::TrialVcsw, M::TrialIvcsw],
        WorkloadKind::Periodic => &[
            M::MissPct,
            M::Misses,
            M::SlackP1,
            M::SlackP50,
            M::SlackP99,
            M::LatenessMax,
            M::WakeupP50,
            M::WakeupP99,
        ],
        WorkloadKind::Cpu | WorkloadKind::Io | WorkloadKind::Mixed | WorkloadKind::Command => &[],
    }
}

/// One trial's figures as metric values, in each metric's unit.
fn values(kind: WorkloadKind, f: &FigureRow) -> Vec<(Metric, f64)> {
    use Metric as M;
    let us = |ns: Option<i64>| ns.map(|v| v as f64 / 1e3);
    let per = |total: Option<i64>, n: Option<i64>| match (total, n) {
        (Some(t), Some(n)) if n > 0 => Some(t as f64 / n as f64 / 1e3),
        _ => None,
    };
    let wake = [M::WakeupP50, M::WakeupP90, M::WakeupP99, M::WakeupP999];
    let request = [M::RequestP50, M::RequestP90, M::RequestP99, M::RequestP999];
    let mut out: Vec<(Metric, Option<f64>)> = Vec::new();
    match kind {
        WorkloadKind::Messaging => out.extend([
            (M::MessagesPerS, f.ops_per_s),
            (M::MessageP50, us(f.op_ns[0])),
            (M::MessageP99, us(f.op_ns[2])),
        ]),
        WorkloadKind::Request => {
            out.push((M::Rps, f.ops_per_s));
            out.extend(wake.iter().zip(f.wake_ns).map(|(&m, v)| (m, us(v))));
            out.extend(request.iter().zip(f.op_ns).map(|(&m, v)| (m, us(v))));
        }
        WorkloadKind::Pipe => out.extend([
            (M::RoundTrip, per(f.makespan_ns, f.ops)),
            (M::SwitchTime, per(f.makespan_ns, f.switches)),
        ]),
        WorkloadKind::Periodic => {
            let late = match f.misses {
                Some(0) => Some(0.0),
                _ => us(f.late_max_ns),
            };
            out.extend([
                (M::WakeupP50, us(f.wake_ns[0])),
                (M::WakeupP90, us(f.wake_ns[1])),
                (M::WakeupP99, us(f.wake_ns[2])),
                (M::WakeupP999, us(f.wake_ns[3])),
                (M::Misses, f.misses.map(|m| m as f64)),
                (M::MissPct, f.miss_pct),
                (M::SlackP1, us(f.slack_ns[0])),
                (M::SlackP50, us(f.slack_ns[1])),
                (M::SlackP99, us(f.slack_ns[2])),
                (M::LatenessMax, late),
            ]);
        }
        WorkloadKind::Cpu | WorkloadKind::Io | WorkloadKind::Mixed | WorkloadKind::Command => {}
    }
    out.into_iter()
        .filter_map(|(m, v)| Some((m, v.filter(|v| v.is_finite())?)))
        .collect()
}

/// Per ok trial with figures, in trial order: its round and its figures as metric values.
pub fn per_trial(c: &CellView) -> Vec<(i64, Vec<(Metric, f64)>)> {
    c.figures
        .iter()
        .map(|f| (f.round, values(c.work.kind, f)))
        .collect()
}

/// The parameter that sets a cell's task count, for the tables and figures: (heading,
/// value), from the workload's parameters: messaging's groups (`tasks` over 2 x fds per
/// group), request's workers per message thread (`tasks` over message threads, less the
/// thread); else the task count itself.
pub fn task_axis(work: &Workload, tasks: i64) -> (&'static str, i64) {
    let positive = |n: u32| (n > 0).then_some(i64::from(n));
    match work.kind {
        WorkloadKind::Messaging => match positive(work.messaging.unwrap_or_default().fds) {
            Some(f) => ("groups", tasks / (2 * f)),
            None => ("tasks", tasks),
        },
        WorkloadKind::Request => match positive(work.request.unwrap_or_default().message_threads) {
            Some(m) => ("workers", tasks / m - 1),
            None => ("tasks", tasks),
        },
        WorkloadKind::Cpu
        | WorkloadKind::Io
        | WorkloadKind::Mixed
        | WorkloadKind::Periodic
        | WorkloadKind::Command
        | WorkloadKind::Pipe => ("tasks", tasks),
    }
}

/// One workload (label) of a kind with figures: a row per cell, the medians over trials of
/// the kind's metrics ([`metrics_of`]), in their units.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadTable {
    /// Workload label.
    pub workload: String,
    /// Its kind.
    pub kind: WorkloadKind,
    /// The kind's metrics, in column order.
    pub metrics: &'static [Metric],
    /// One row per cell of the workload, in cell order.
    pub rows: Vec<WorkloadRow>,
}

/// One cell of a [`WorkloadTable`].
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    /// Policy (treatment) name.
    pub policy: String,
    /// Task count.
    pub tasks: i64,
    /// The parameter behind the task count, as the table shows it ([`task_axis`]):
    /// (heading, value).
    pub axis: (&'static str, i64),
    /// The axes of its group other than workload and task count ("threads, CPUs 0"); `None`
    /// without such axes.
    pub other_axes: Option<String>,
    /// Ok trials.
    pub trials: i64,
    /// Per metric of [`WorkloadTable::metrics`]: the median over trials in the metric's
    /// unit; `None` without a finite value.
    pub medians: Vec<Option<f64>>,
}

/// One table per workload (label) of a kind with figures and at least one value, in cell
/// order.
pub fn tables(r: &Report) -> Vec<WorkloadTable> {
    let mut labels: Vec<(WorkloadKind, &str)> = Vec::new();
    for c in &r.cells {
        let l = (c.work.kind, c.key.workload.as_str());
        if !metrics_of(l.0).is_empty() && !labels.contains(&l) {
            labels.push(l);
        }
    }
    labels
        .into_iter()
        .filter_map(|(kind, l)| table(r, kind, l))
        .collect()
}

fn table(r: &Report, kind: WorkloadKind, label: &str) -> Option<WorkloadTable> {
    let metrics = metrics_of(kind);
    let rows: Vec<WorkloadRow> = r
        .cells
        .iter()
        .filter(|c| c.key.workload == label)
        .map(|cell| WorkloadRow {
            policy: cell.key.policy.clone(),
            tasks: cell.key.tasks,
            axis: task_axis(&cell.work, cell.key.tasks),
            other_axes: other_axes(&r.groups[cell.group].label, label, cell.key.tasks),
            trials: cell.trials_ok,
            medians: metrics
                .iter()
                .map(|&m| {
                    cell.summary(m)
                        .map(|s| s.summary.median)
                        .filter(|v| v.is_finite())
                })
                .collect(),
        })
        .collect();
    if rows
        .iter()
        .all(|row| row.medians.iter().all(Option::is_none))
    {
        return None;
    }
    Some(WorkloadTable {
        workload: label.to_string(),
        kind,
        metrics,
        rows,
    })
}

/// The axes of a group label other than its workload and task count ("threads, CPUs 0"), or
/// `None`: a group is labelled "{workload} with {N tasks}{, axis}*".
fn other_axes(group: &str, workload: &str, tasks: i64) -> Option<String> {
    let prefix = format!("{workload} with {}", super::tasks_phrase(tasks));
    let rest = group.strip_prefix(&prefix).unwrap_or("");
    match rest.trim_start_matches(", ").trim() {
        "" => None,
        r => Some(r.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(kind: WorkloadKind) -> Workload {
        Workload {
            kind,
            ..Workload::default()
        }
    }

    #[test]
    fn the_task_count_gives_back_groups_and_workers_from_the_parameters() {
        use schedlab_core::workload::{MessagingParams, RequestParams};
        let messaging = Workload {
            messaging: Some(MessagingParams {
                fds: 20,
                ..MessagingParams::default()
            }),
            ..workload(WorkloadKind::Messaging)
        };
        // 160 tasks of 20 senders and 20 receivers per group: 4 groups.
        assert_eq!(task_axis(&messaging, 160), ("groups", 4));
        let request = Workload {
            request: Some(RequestParams {
                message_threads: 2,
                ..RequestParams::default()
            }),
            ..workload(WorkloadKind::Request)
        };
        // 10 tasks of 2 message threads: 5 per thread, the thread and 4 workers.
        assert_eq!(task_axis(&request, 10), ("workers", 4));
        assert_eq!(task_axis(&workload(WorkloadKind::Pipe), 2), ("tasks", 2));
        assert_eq!(
            task_axis(&workload(WorkloadKind::Periodic), 3),
            ("tasks", 3)
        );
    }

    fn pipe_cell(policy: &str, makespans_ms: &[i64]) -> CellView {
        let figures = makespans_ms
            .iter()
            .enumerate()
            .map(|(i, ms)| FigureRow {
                trial_id: i as i64 + 1,
                round: i as i64 + 1,
                makespan_ns: Some(ms * 1_000_000),
                ops: Some(1000),
                switches: Some(4000),
                ..FigureRow::default()
            })
            .collect();
        CellView {
            policy: policy.parse().unwrap(),
            workload: "pipe".into(),
            work: workload(WorkloadKind::Pipe),
            tasks: 2,
            statuses: vec![(
                schedlab_store::query::Tally::Status(schedlab_core::records::TrialStatus::Ok),
                makespans_ms.len() as i64,
            )],
            figures,
            ..CellView::default()
        }
    }

    #[test]
    fn a_workload_table_holds_each_cells_medians_in_their_units() {
        let r = super::super::report::build(&super::super::ReportInput {
            cells: vec![
                pipe_cell("other", &[2, 3, 7]),
                pipe_cell("fifo", &[4, 4, 5]),
            ],
            ..Default::default()
        });
        let t = tables(&r);
        assert_eq!(t.len(), 1);
        let t = &t[0];
        assert_eq!((t.workload.as_str(), t.kind), ("pipe", WorkloadKind::Pipe));
        assert_eq!(t.metrics, metrics_of(WorkloadKind::Pipe));
        // other: round trips of 2, 3, 7 us (ms / 1000 round trips), median 3 us; switches
        // a quarter of that, median 0.75 us; no task rows, so no switch counts.
        let other = &t.rows[0];
        assert_eq!(
            (other.policy.as_str(), other.tasks, other.trials),
            ("other", 2, 3)
        );
        assert_eq!(other.other_axes, None);
        assert_eq!(other.medians, vec![Some(3.0), Some(0.75), None, None]);
        assert_eq!(t.rows[1].medians[..2], [Some(4.0), Some(1.0)]);
        let cpu = super::super::report::build(&super::super::ReportInput {
            cells: vec![CellView {
                work: workload(WorkloadKind::Cpu),
                ..pipe_cell("other", &[2])
            }],
            ..Default::default()
        });
        assert!(
            tables(&cpu).is_empty(),
            "a kind without figures has no table"
        );
    }

    #[test]
    fn other_axes_are_what_the_group_label_adds_to_workload_and_tasks() {
        assert_eq!(other_axes("pipe with 2 tasks", "pipe", 2), None);
        assert_eq!(
            other_axes("pipe with 2 tasks, threads, CPUs 0", "pipe", 2).as_deref(),
            Some("threads, CPUs 0")
        );
    }

    #[test]
    fn no_message_thread_or_fd_counts_tasks() {
        use schedlab_core::workload::{MessagingParams, RequestParams};
        let messaging = Workload {
            messaging: Some(MessagingParams {
                fds: 0,
                ..MessagingParams::default()
            }),
            ..workload(WorkloadKind::Messaging)
        };
        assert_eq!(task_axis(&messaging, 8), ("tasks", 8));
        let request = Workload {
            request: Some(RequestParams {
                message_threads: 0,
                ..RequestParams::default()
            }),
            ..workload(WorkloadKind::Request)
        };
        assert_eq!(task_axis(&request, 8), ("tasks", 8));
    }

    #[test]
    fn a_trials_figures_become_metric_values_in_their_units() {
        let f = FigureRow {
            makespan_ns: Some(2_000_000),
            ops: Some(1000),
            ops_per_s: Some(5e5),
            switches: Some(4000),
            ..FigureRow::default()
        };
        let v = values(WorkloadKind::Pipe, &f);
        assert_eq!(v, vec![(Metric::RoundTrip, 2.0), (Metric::SwitchTime, 0.5)]);
        let p = FigureRow {
            misses: Some(0),
            miss_pct: Some(0.0),
            slack_ns: [Some(-5_000), Some(400_000), Some(450_000)],
            ..FigureRow::default()
        };
        let v = values(WorkloadKind::Periodic, &p);
        assert!(v.contains(&(Metric::SlackP1, -5.0)));
        assert!(
            v.contains(&(Metric::LatenessMax, 0.0)),
            "no miss: lateness 0"
        );
        assert!(values(WorkloadKind::Cpu, &p).is_empty());
    }
}
