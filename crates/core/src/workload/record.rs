//! What a task records while it works, besides its counters: up to [`HISTS`] HDR histograms,
//! allocated when its work is prepared (before the measured region; recording never
//! allocates), bytes moved and periods missed; and the summaries made of them afterwards.
//!
//! Slack (rt-app's: the next period's start minus the end of a period's work) is signed, and
//! HDR histograms hold positive values, so it is kept in two: the slack of the periods that
//! made their deadline (> 0) and the lateness of those that missed it (end of work minus the
//! next period's start, ≥ 0; a slack of exactly 0 counts as a miss, as in rt-app, and is
//! recorded as 1 ns). [`slack_quantile`] reads signed quantiles of the two together.

use super::periodic::{self, LatencySummary, MAX_LATENCY_NS};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// How many histograms a task may record.
pub const HISTS: usize = 4;

/// Which histogram: its slot in a task's buffer and its name in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HistKind {
    /// Wake-up latency: periodic (intended to actual wake time), request (the message
    /// thread's wake timestamp to the worker running).
    Wakeup = 0,
    /// Latency of one operation: request (sent to completed), messaging (written to read).
    Op = 1,
    /// Periodic: slack of the periods whose work ended before the next period's start.
    Slack = 2,
    /// Periodic: lateness of the periods that missed (end of work minus next period start).
    Lateness = 3,
}

impl HistKind {
    /// Every kind, in slot order.
    pub const ALL: [HistKind; HISTS] = [
        HistKind::Wakeup,
        HistKind::Op,
        HistKind::Slack,
        HistKind::Lateness,
    ];

    /// The slot of this histogram in a task's buffer.
    pub fn slot(self) -> usize {
        self as usize
    }

    /// The name of the histogram in the store (`histograms.metric`); the operation histogram
    /// is named after what it times (`request_latency_ns`, `message_latency_ns`).
    pub fn metric(self, kind: super::WorkloadKind) -> &'static str {
        match self {
            HistKind::Wakeup => "wakeup_latency_ns",
            HistKind::Op if kind == super::WorkloadKind::Messaging => "message_latency_ns",
            HistKind::Op => "request_latency_ns",
            HistKind::Slack => "slack_ns",
            HistKind::Lateness => "lateness_ns",
        }
    }
}

/// The histograms a workload records (true: that slot has one).
pub fn recorded(w: &super::Workload) -> [bool; HISTS] {
    use super::WorkloadKind as K;
    match w.kind {
        K::Periodic => [true, false, true, true],
        K::Request => [true, true, false, false],
        K::Messaging if w.messaging.is_some_and(|m| m.latency) => [false, true, false, false],
        _ => [false; HISTS],
    }
}

/// A task's recordings: preallocated histograms and counters.
#[derive(Debug, Default)]
pub struct Recorder {
    /// The histograms, by [`HistKind::slot`].
    pub hists: [Option<Histogram<u64>>; HISTS],
    /// Bytes written (senders) or read (receivers).
    pub bytes: u64,
    /// Periods that missed their deadline (periodic); requests dropped because the worker had
    /// [`super::params::REQUEST_QUEUE`] waiting (request in RPS mode).
    pub misses: u64,
}

impl Recorder {
    /// A recorder with the histograms `w` records, allocated now.
    pub fn for_workload(w: &super::Workload) -> Recorder {
        let mut r = Recorder::default();
        for (slot, on) in recorded(w).into_iter().enumerate() {
            if on {
                r.hists[slot] = Some(periodic::new_histogram());
            }
        }
        r
    }

    /// Records `ns` into histogram `kind`, clamped to its range; nothing if it has none.
    /// Never allocates.
    #[inline]
    pub fn record(&mut self, kind: HistKind, ns: u64) {
        if let Some(h) = &mut self.hists[kind.slot()] {
            let _ = h.record(ns.clamp(1, MAX_LATENCY_NS));
        }
    }

    /// Histogram `kind`, if recorded.
    pub fn hist(&self, kind: HistKind) -> Option<&Histogram<u64>> {
        self.hists[kind.slot()].as_ref()
    }
}

/// The signed slack at quantile `q` (0..=1) of every period recorded in `slack` (positive
/// slacks) and `lateness` (periods that missed: slack = -lateness), ns; None with no periods.
///
/// The periods sorted by slack put the misses first, the latest first, so rank r (1-based,
/// r = max(1, ceil(q·n))) falls among the misses when r ≤ misses: there it is the r-th largest
/// lateness, negated; else the (r - misses)-th smallest positive slack. Each is read with HDR's
/// own quantile, so the value is the histogram's (≤ 1 % error).
pub fn slack_quantile(
    slack: Option<&Histogram<u64>>,
    lateness: Option<&Histogram<u64>>,
    q: f64,
) -> Option<i64> {
    let misses = lateness.map_or(0, Histogram::len);
    let made = slack.map_or(0, Histogram::len);
    let n = misses + made;
    if n == 0 {
        return None;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    if rank <= misses {
        let h = lateness?;
        // The rank-th largest = the (misses - rank + 1)-th smallest.
        let from_low = misses - rank + 1;
        Some(-(h.value_at_quantile(from_low as f64 / misses as f64) as i64))
    } else {
        let h = slack?;
        Some(h.value_at_quantile((rank - misses) as f64 / made as f64) as i64)
    }
}

/// What a task of a communicating or periodic workload recorded, summarised, with the raw
/// histograms (HdrHistogram V2) for the store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskFigures {
    /// Its role (messaging, request, pipe).
    pub role: Option<super::params::Role>,
    /// Bytes written (senders) or read (receivers).
    pub bytes: u64,
    /// Missed periods (periodic) or dropped requests (request, RPS mode).
    pub misses: u64,
    /// Operation latency: request latency or message latency.
    pub op: Option<LatencySummary>,
    /// Slack at p1, p50 and p99, ns (periodic; negative for a miss).
    pub slack_ns: Option<[i64; 3]>,
    /// Largest lateness of a missed period, ns (periodic; None without misses).
    pub late_max_ns: Option<u64>,
    /// Serialised histograms other than the wake-up latency: (kind, HdrHistogram V2 bytes).
    pub hists: Vec<(HistKind, Vec<u8>)>,
}

impl TaskFigures {
    /// The figures of one task from its role, counters and histograms (deserialised ones,
    /// with their bytes).
    pub fn summarize(
        role: Option<super::params::Role>,
        bytes: u64,
        misses: u64,
        hists: Vec<(HistKind, Histogram<u64>, Vec<u8>)>,
    ) -> TaskFigures {
        let find = |k: HistKind| hists.iter().find(|(h, ..)| *h == k).map(|(_, h, _)| h);
        let (slack, late) = (find(HistKind::Slack), find(HistKind::Lateness));
        let slack_ns = slack_quantile(slack, late, 0.5).map(|p50| {
            [
                slack_quantile(slack, late, 0.01).unwrap_or(p50),
                p50,
                slack_quantile(slack, late, 0.99).unwrap_or(p50),
            ]
        });
        TaskFigures {
            role,
            bytes,
            misses,
            op: find(HistKind::Op).and_then(periodic::summarize),
            slack_ns,
            late_max_ns: late.filter(|h| !h.is_empty()).map(Histogram::max),
            hists: hists.into_iter().map(|(k, _, b)| (k, b)).collect(),
        }
    }

    /// The raw histogram `kind`, deserialised.
    pub fn hist(&self, kind: HistKind) -> Option<Histogram<u64>> {
        self.hists
            .iter()
            .find(|(k, _)| *k == kind)
            .and_then(|(_, b)| periodic::deserialize(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: sort the signed slacks, take rank max(1, ceil(q·n)).
    fn sorted_quantile(values: &[i64], q: f64) -> i64 {
        let mut v = values.to_vec();
        v.sort_unstable();
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1]
    }

    #[test]
    fn signed_slack_quantiles_match_a_sorted_list() {
        // 30 misses (lateness 1..=30 us) and 70 periods with slack 1..=70 us.
        let values: Vec<i64> = (1..=30)
            .map(|l| -l * 1000)
            .chain((1..=70).map(|s| s * 1000))
            .collect();
        let mut slack = periodic::new_histogram();
        let mut late = periodic::new_histogram();
        for &v in &values {
            match v > 0 {
                true => slack.record(v as u64).unwrap(),
                false => late.record((-v) as u64).unwrap(),
            }
        }
        for q in [0.0, 0.01, 0.1, 0.29, 0.3, 0.31, 0.5, 0.99, 1.0] {
            let want = sorted_quantile(&values, q);
            let got = slack_quantile(Some(&slack), Some(&late), q).unwrap();
            assert!(
                (got - want).abs() <= want.abs() / 100 + 1,
                "q {q}: {got} vs {want}"
            );
        }
        assert_eq!(slack_quantile(None, None, 0.5), None);
        // Only misses: every quantile is negative.
        assert!(slack_quantile(None, Some(&late), 0.99).unwrap() < 0);
    }

    #[test]
    fn a_recorder_has_the_histograms_of_its_workload() {
        let w = super::super::Workload {
            kind: super::super::WorkloadKind::Periodic,
            ..Default::default()
        };
        let mut r = Recorder::for_workload(&w);
        r.record(HistKind::Wakeup, 5_000);
        r.record(HistKind::Op, 5_000);
        assert_eq!(r.hist(HistKind::Wakeup).unwrap().len(), 1);
        assert!(r.hist(HistKind::Op).is_none());
        assert!(r.hist(HistKind::Slack).is_some());
        assert_eq!(
            HistKind::Op.metric(super::super::WorkloadKind::Messaging),
            "message_latency_ns"
        );
    }
}
