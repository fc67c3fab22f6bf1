//! The workloads' own figures in a report: each trial's stored figures (`trials.ops` ...) as
//! values of the report's metrics (messages/s, requests/s, round trip, wake-up and request
//! latency percentiles, misses and slack), one per trial, so that they are summarised, tested,
//! compared and usable in claims like every other metric; and the table of each workload
//! kind's figures that `stats` prints.

use super::tables::Table;
use super::{fmt_value, Metric, Report};
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

/// A workload table within 120 columns: without its p90 columns (`stats --all` shows them).
pub fn narrow(t: &Table) -> Table {
    let keep: Vec<usize> = (0..t.header.len())
        .filter(|&i| !t.header[i].ends_with("p90"))
        .collect();
    t.keep(&keep)
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

/// One table per workload (label) of a kind with figures: a row per cell (policy, the
/// parameter behind the task count, the axes that vary), the median over trials of each of
/// the kind's metrics.
pub fn tables(r: &Report) -> Vec<Table> {
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

fn table(r: &Report, kind: WorkloadKind, label: &str) -> Option<Table> {
    let metrics = metrics_of(kind);
    let cells: Vec<usize> = (0..r.cells.len())
        .filter(|&c| r.cells[c].key.workload == label)
        .collect();
    let first = &r.cells[cells[0]];
    let axis = task_axis(&first.work, first.key.tasks).0;
    let mut header: Vec<String> = vec![
        "policy".into(),
        axis.into(),
        "other axes".into(),
        "n".into(),
    ];
    header.extend(metrics.iter().map(|m| short_heading(*m)));
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|&c| {
            let cell = &r.cells[c];
            let mut row = vec![
                cell.key.policy.clone(),
                task_axis(&cell.work, cell.key.tasks).1.to_string(),
                other_axes(&r.groups[cell.group].label, label, cell.key.tasks),
                cell.trials_ok.to_string(),
            ];
            row.extend(metrics.iter().map(|&m| {
                cell.summary(m)
                    .map_or("-".into(), |s| fmt_value(s.summary.median, m))
            }));
            row
        })
        .collect();
    if rows.iter().all(|row| row[4..].iter().all(|v| v == "-")) {
        return None;
    }
    let t = Table {
        title: format!(
            "{label}: the workload's figures, medians over trials (latencies and slack in us)"
        ),
        header,
        rows,
    };
    // Without axes beyond policy and task count, the column says nothing.
    match t.rows.iter().all(|row| row[2] == "-") {
        true => {
            let keep: Vec<usize> = (0..t.header.len()).filter(|&i| i != 2).collect();
            Some(t.keep(&keep))
        }
        false => Some(t),
    }
}

/// The axes of a group label other than its workload and task count ("threads, CPUs 0"), or
/// "-": a group is labelled "{workload} with {N tasks}{, axis}*".
fn other_axes(group: &str, workload: &str, tasks: i64) -> String {
    let prefix = format!("{workload} with {}", super::tasks_phrase(tasks));
    let rest = group.strip_prefix(&prefix).unwrap_or("");
    match rest.trim_start_matches(", ").trim() {
        "" => "-".into(),
        r => r.to_string(),
    }
}

/// A compact column heading: "wake p99", "req p50", "msg/s", "miss %".
fn short_heading(m: Metric) -> String {
    use Metric as M;
    match m {
        M::Makespan => "time (ms)",
        M::MessagesPerS => "msg/s",
        M::MessageP50 => "msg p50",
        M::MessageP99 => "msg p99",
        M::Rps => "req/s",
        M::WakeupP50 => "wake p50",
        M::WakeupP90 => "wake p90",
        M::WakeupP99 => "wake p99",
        M::WakeupP999 => "wake p99.9",
        M::RequestP50 => "req p50",
        M::RequestP90 => "req p90",
        M::RequestP99 => "req p99",
        M::RequestP999 => "req p99.9",
        M::RoundTrip => "us/round trip",
        M::SwitchTime => "us/switch",
        M::TrialVcsw => "vol. switches",
        M::TrialIvcsw => "invol. switches",
        M::MissPct => "miss %",
        M::Misses => "misses",
        M::SlackP1 => "slack p1",
        M::SlackP50 => "slack p50",
        M::SlackP99 => "slack p99",
        M::LatenessMax => "max late",
        other => other.label(),
    }
    .to_string()
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
