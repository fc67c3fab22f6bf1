//! A trial's own figures, as the peers report theirs: operations and their rate (hackbench's
//! time is the makespan; messages/s, schbench's requests/s, perf pipe's round trips), wake-up
//! and operation latency percentiles over all its measured tasks (their HDR histograms merged),
//! and rt-app's missed periods and slack.

use super::TaskRecord;
use crate::workload::periodic::{self, LatencySummary};
use crate::workload::record::{slack_quantile, HistKind};
use crate::workload::{Role, Workload, WorkloadKind};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The figures of one trial (times in ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialFigures {
    /// Operations: messages received (messaging), requests completed (request), round trips
    /// (pipe), periods run (periodic).
    pub ops: u64,
    /// `ops` per second of the trial's makespan.
    pub ops_per_s: Option<f64>,
    /// Wake-up latency of every measured task together (request, periodic).
    pub wakeup: Option<LatencySummary>,
    /// Operation latency of every measured task together: request latency (request), message
    /// latency (messaging with `latency`).
    pub op: Option<LatencySummary>,
    /// Missed periods (periodic) or dropped requests (request, RPS mode).
    pub misses: u64,
    /// Periodic: missed periods, percent of the periods run.
    pub miss_pct: Option<f64>,
    /// Periodic: slack at p1, p50 and p99 over every period of every task (negative: missed).
    pub slack_ns: Option<[i64; 3]>,
    /// Periodic: the largest lateness of a missed period.
    pub late_max_ns: Option<u64>,
}

/// Merges `hists` into one (None when there are none).
fn merged(hists: impl Iterator<Item = Histogram<u64>>) -> Option<Histogram<u64>> {
    let mut out: Option<Histogram<u64>> = None;
    for h in hists {
        match out.as_mut() {
            Some(m) => {
                let _ = m.add(&h);
            }
            None => out = Some(h),
        }
    }
    out
}

impl TrialFigures {
    /// The figures of a trial of `w` whose measured tasks recorded `tasks`, over
    /// `makespan_ns`; None for workloads without figures of their own.
    pub fn of(
        w: &Workload,
        tasks: &[TaskRecord],
        makespan_ns: Option<u64>,
    ) -> Option<TrialFigures> {
        if !(w.kind.communicates() || w.kind == WorkloadKind::Periodic) {
            return None;
        }
        let measured = || tasks.iter().filter(|t| !t.antagonist);
        let role = |t: &TaskRecord| t.figures.as_ref().and_then(|f| f.role);
        let counts = |t: &TaskRecord| {
            matches!(
                (w.kind, role(t)),
                (WorkloadKind::Periodic, _)
                    | (WorkloadKind::Messaging, Some(Role::Receiver { .. }))
                    | (WorkloadKind::Request, Some(Role::Worker { .. }))
                    | (WorkloadKind::Pipe, Some(Role::Ping))
            )
        };
        let ops: u64 = measured().filter(|t| counts(t)).map(|t| t.work_units).sum();
        let misses: u64 = measured()
            .filter_map(|t| t.figures.as_ref())
            .map(|f| f.misses)
            .sum();
        let hist = |k: HistKind| merged(measured().filter_map(|t| t.figures.as_ref()?.hist(k)));
        let wakeup =
            merged(measured().filter_map(|t| periodic::deserialize(&t.latency.as_ref()?.1)));
        let (slack, late) = (hist(HistKind::Slack), hist(HistKind::Lateness));
        let periodic = w.kind == WorkloadKind::Periodic;
        let slack_ns = slack_quantile(slack.as_ref(), late.as_ref(), 0.5).map(|p50| {
            let q = |q| slack_quantile(slack.as_ref(), late.as_ref(), q).unwrap_or(p50);
            [q(0.01), p50, q(0.99)]
        });
        Some(TrialFigures {
            ops,
            ops_per_s: makespan_ns
                .filter(|&m| m > 0)
                .map(|m| ops as f64 * 1e9 / m as f64),
            wakeup: wakeup.as_ref().and_then(periodic::summarize),
            op: hist(HistKind::Op).as_ref().and_then(periodic::summarize),
            misses,
            miss_pct: (periodic && ops > 0).then(|| misses as f64 * 100.0 / ops as f64),
            slack_ns,
            late_max_ns: late.filter(|h| !h.is_empty()).map(|h| h.max()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TaskFigures;

    fn task(role: Option<Role>, units: u64, hists: Vec<(HistKind, Vec<u64>)>) -> TaskRecord {
        let hists = hists
            .into_iter()
            .map(|(k, values)| {
                let mut h = periodic::new_histogram();
                for v in values {
                    h.record(v).unwrap();
                }
                let bytes = periodic::serialize(&h);
                (k, h, bytes)
            })
            .collect();
        TaskRecord {
            work_units: units,
            figures: Some(TaskFigures::summarize(role, 0, 0, hists)),
            ..TaskRecord::default()
        }
    }

    #[test]
    fn a_request_trial_counts_its_workers_requests_and_merges_their_latencies() {
        let w = Workload {
            kind: WorkloadKind::Request,
            ..Workload::default()
        };
        let worker = |values: Vec<u64>| {
            let n = values.len() as u64;
            let r = Role::Worker {
                messenger: 0,
                index: 0,
            };
            task(Some(r), n, vec![(HistKind::Op, values)])
        };
        let tasks = vec![
            task(Some(Role::Messenger { index: 0 }), 50, vec![]),
            worker((1..=20).map(|v| v * 1000).collect()),
            worker((21..=40).map(|v| v * 1000).collect()),
        ];
        let f = TrialFigures::of(&w, &tasks, Some(2_000_000_000)).unwrap();
        assert_eq!(f.ops, 40, "requests completed, not handed out");
        assert_eq!(f.ops_per_s, Some(20.0));
        let op = f.op.unwrap();
        assert_eq!(op.count, 40);
        // The median of 1..=40 us over both workers is 20 us (HDR: within 1 %).
        assert!((19_800..=20_200).contains(&op.p50_ns), "{}", op.p50_ns);
        assert!(TrialFigures::of(&Workload::default(), &tasks, None).is_none());
    }

    #[test]
    fn periodic_misses_and_slack_come_from_every_task() {
        let w = Workload {
            kind: WorkloadKind::Periodic,
            ..Workload::default()
        };
        let mut a = task(
            None,
            10,
            vec![
                (HistKind::Slack, vec![5_000; 8]),
                (HistKind::Lateness, vec![2_000; 2]),
            ],
        );
        a.figures.as_mut().unwrap().misses = 2;
        let b = task(None, 10, vec![(HistKind::Slack, vec![6_000; 10])]);
        let f = TrialFigures::of(&w, &[a, b], Some(1_000_000)).unwrap();
        assert_eq!((f.ops, f.misses), (20, 2));
        assert_eq!(f.miss_pct, Some(10.0));
        let [p1, p50, p99] = f.slack_ns.unwrap();
        assert!(p1 < 0 && p50 > 0 && p99 >= p50, "{p1} {p50} {p99}");
        assert!(f.late_max_ns.unwrap() >= 2_000);
    }
}
