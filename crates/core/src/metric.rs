//! The measured quantities schedlab summarises and compares: one table ([`Metric::info`])
//! gives each its key, names, unit, level and direction; every list of metrics, keys or
//! labels elsewhere is derived from it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One measured quantity, summarised per cell and compared across policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Last end minus first release of a trial, ms (one value per trial).
    Makespan,
    /// Per task: start minus release, ms.
    Response,
    /// Per task: end minus release, ms.
    Turnaround,
    /// Per task: end minus start, ms.
    RunSpan,
    /// Per task: user + system CPU time, ms.
    Cpu,
    /// Per task: voluntary context switches.
    Vcsw,
    /// Per task: involuntary context switches.
    Ivcsw,
    /// Per task: time spent runnable but waiting on a run queue, ms.
    RqWait,
    /// Per trial: CPU time of all its tasks, ms.
    TrialCpu,
    /// Per trial: voluntary switches of all its tasks.
    TrialVcsw,
    /// Per trial: involuntary switches of all its tasks.
    TrialIvcsw,
    /// Per trial: makespan divided by the task count, ms (study 002's per-process wall time).
    MakespanPerTask,
    /// Per trial: total CPU time divided by the task count, ms.
    CpuPerTask,
    /// Per trial: voluntary + involuntary switches divided by the task count.
    CswPerTask,
    /// Per trial: Jain's fairness index of the tasks' CPU times (1 = equal shares).
    JainCpu,
    /// Per trial: groups of task end times (a gap of more than 10 % of the trial's makespan
    /// between consecutive ends starts a new group; 1 = all finish together; study 003).
    EndGroups,
    /// Per trial, messaging: messages received per second of the makespan (hackbench's time).
    MessagesPerS,
    /// Per trial, request: requests completed per second of the makespan (schbench's RPS).
    Rps,
    /// Per trial, pipe: makespan / round trips, us (perf bench sched pipe's usecs/op).
    RoundTrip,
    /// Per trial, pipe: makespan / context switches of both tasks, us.
    SwitchTime,
    /// Per trial, request and periodic: median wake-up latency of all tasks together, us.
    WakeupP50,
    /// Per trial, request and periodic: 90th percentile of the wake-up latency, us.
    WakeupP90,
    /// Per trial, request and periodic: 99th percentile of the wake-up latency, us.
    WakeupP99,
    /// Per trial, request and periodic: 99.9th percentile of the wake-up latency, us.
    WakeupP999,
    /// Per trial, request: median request latency (sent to completed), us.
    RequestP50,
    /// Per trial, request: 90th percentile of the request latency, us.
    RequestP90,
    /// Per trial, request: 99th percentile of the request latency, us.
    RequestP99,
    /// Per trial, request: 99.9th percentile of the request latency, us.
    RequestP999,
    /// Per trial, messaging with message latency: median message latency, us.
    MessageP50,
    /// Per trial, messaging with message latency: 99th percentile of it, us.
    MessageP99,
    /// Per trial, periodic: missed periods (request: dropped requests).
    Misses,
    /// Per trial, periodic: missed periods, percent of the periods run.
    MissPct,
    /// Per trial, periodic: 1st percentile of the slack (negative: missed), us.
    SlackP1,
    /// Per trial, periodic: median slack, us.
    SlackP50,
    /// Per trial, periodic: 99th percentile of the slack, us.
    SlackP99,
    /// Per trial, periodic: the largest lateness of a missed period, us.
    LatenessMax,
}

/// Whether one sample of a metric is one task or one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// One value per task of every trial.
    Task,
    /// One value per trial.
    Trial,
}

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Smaller values are better (times, switches).
    Lower,
    /// Larger values are better (the fairness index, rates, slack).
    Higher,
}

/// Everything schedlab knows about a metric: one row of [`Metric::TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricInfo {
    /// The metric.
    pub metric: Metric,
    /// Stable machine name, in specs (`precision_metric`), CSV and file names.
    pub key: &'static str,
    /// Short human name, as a table heading.
    pub label: &'static str,
    /// The metric in a sentence: "the lowest median {phrase}".
    pub phrase: &'static str,
    /// Unit of values: "ms" for the times of whole tasks, "us" for latencies and slack, "%"
    /// for shares, "" for counts, rates (their label says "/s") and indices.
    pub unit: &'static str,
    /// One value per task or per trial.
    pub level: Level,
    /// Which way is better.
    pub better: Better,
    /// Whether policies are tested on it. The per-task views of trial totals are not: within
    /// a group they are the totals divided by one constant, so the tests would repeat; so
    /// are the p90 and p99.9 of latencies, which are tabled beside p50 and p99 (tested); end
    /// groups are a claim's metric (study 003), not an exploratory comparison's.
    pub tested: bool,
    /// Whether exploratory comparisons on it are written out as sentences (all tested ones are tabled).
    pub headline: bool,
}

/// A row of the table (kept short so that the table reads as one).
const fn row(
    metric: Metric,
    key: &'static str,
    label: &'static str,
    phrase: &'static str,
    unit: &'static str,
    level: Level,
    flags: (Better, bool, bool),
) -> MetricInfo {
    MetricInfo {
        metric,
        key,
        label,
        phrase,
        unit,
        level,
        better: flags.0,
        tested: flags.1,
        headline: flags.2,
    }
}

use Better::{Higher, Lower};
use Level::{Task, Trial};

/// Number of metrics.
const N: usize = 36;

impl Metric {
    /// Every metric with its key, names, unit, level and (direction, tested, headline), in the
    /// order tables list them, which is the order of the enum.
    #[rustfmt::skip]
    pub const TABLE: [MetricInfo; N] = [
        row(Metric::Makespan, "makespan", "makespan", "makespan", "ms", Trial, (Lower, true, true)),
        row(Metric::Response, "response", "response", "per-task response time", "ms", Task, (Lower, true, true)),
        row(Metric::Turnaround, "turnaround", "turnaround", "per-task turnaround time", "ms", Task, (Lower, true, true)),
        row(Metric::RunSpan, "run_span", "run span", "per-task run span", "ms", Task, (Lower, true, false)),
        row(Metric::Cpu, "cpu", "CPU time", "per-task CPU time", "ms", Task, (Lower, true, false)),
        row(Metric::Vcsw, "vcsw", "voluntary switches", "per-task voluntary switch count", "", Task, (Lower, true, false)),
        row(Metric::Ivcsw, "ivcsw", "involuntary switches", "per-task involuntary switch count", "", Task, (Lower, true, true)),
        row(Metric::RqWait, "rq_wait", "run-queue wait", "per-task run-queue wait", "ms", Task, (Lower, true, false)),
        row(Metric::TrialCpu, "trial_cpu", "total CPU time", "total CPU time per trial", "ms", Trial, (Lower, false, false)),
        row(Metric::TrialVcsw, "trial_vcsw", "total voluntary switches", "voluntary switches per trial", "", Trial, (Lower, true, false)),
        row(Metric::TrialIvcsw, "trial_ivcsw", "total involuntary switches", "involuntary switches per trial", "", Trial, (Lower, true, false)),
        row(Metric::MakespanPerTask, "makespan_per_task", "makespan / tasks", "makespan per task", "ms", Trial, (Lower, false, false)),
        row(Metric::CpuPerTask, "cpu_per_task", "total CPU / tasks", "CPU time per task", "ms", Trial, (Lower, false, false)),
        row(Metric::CswPerTask, "csw_per_task", "switches / tasks", "context switches per task", "", Trial, (Lower, false, false)),
        row(Metric::JainCpu, "jain_cpu", "Jain index of CPU", "Jain fairness index of CPU time", "", Trial, (Higher, true, true)),
        row(Metric::EndGroups, "end_groups", "end-time groups", "number of groups the tasks finish in", "", Trial, (Lower, false, false)),
        row(Metric::MessagesPerS, "messages_per_s", "messages/s", "messages per second", "", Trial, (Higher, true, true)),
        row(Metric::Rps, "rps", "requests/s", "requests per second", "", Trial, (Higher, true, true)),
        row(Metric::RoundTrip, "round_trip", "round trip", "time per round trip", "us", Trial, (Lower, true, true)),
        row(Metric::SwitchTime, "switch_time", "time per switch", "time per context switch", "us", Trial, (Lower, true, false)),
        row(Metric::WakeupP50, "wakeup_p50", "wake-up p50", "median wake-up latency", "us", Trial, (Lower, true, false)),
        row(Metric::WakeupP90, "wakeup_p90", "wake-up p90", "90th-percentile wake-up latency", "us", Trial, (Lower, false, false)),
        row(Metric::WakeupP99, "wakeup_p99", "wake-up p99", "99th-percentile wake-up latency", "us", Trial, (Lower, true, true)),
        row(Metric::WakeupP999, "wakeup_p999", "wake-up p99.9", "99.9th-percentile wake-up latency", "us", Trial, (Lower, false, false)),
        row(Metric::RequestP50, "request_p50", "request p50", "median request latency", "us", Trial, (Lower, true, false)),
        row(Metric::RequestP90, "request_p90", "request p90", "90th-percentile request latency", "us", Trial, (Lower, false, false)),
        row(Metric::RequestP99, "request_p99", "request p99", "99th-percentile request latency", "us", Trial, (Lower, true, true)),
        row(Metric::RequestP999, "request_p999", "request p99.9", "99.9th-percentile request latency", "us", Trial, (Lower, false, false)),
        row(Metric::MessageP50, "message_p50", "message p50", "median message latency", "us", Trial, (Lower, true, false)),
        row(Metric::MessageP99, "message_p99", "message p99", "99th-percentile message latency", "us", Trial, (Lower, true, false)),
        row(Metric::Misses, "misses", "missed periods", "missed periods per trial", "", Trial, (Lower, true, false)),
        row(Metric::MissPct, "miss_pct", "missed share", "share of missed periods", "%", Trial, (Lower, true, true)),
        row(Metric::SlackP1, "slack_p1", "slack p1", "1st-percentile slack", "us", Trial, (Higher, true, false)),
        row(Metric::SlackP50, "slack_p50", "slack p50", "median slack", "us", Trial, (Higher, true, false)),
        row(Metric::SlackP99, "slack_p99", "slack p99", "99th-percentile slack", "us", Trial, (Higher, true, false)),
        row(Metric::LatenessMax, "lateness_max", "max lateness", "largest lateness", "us", Trial, (Lower, true, false)),
    ];

    /// Every metric, in the order tables list them.
    pub const ALL: [Metric; N] = {
        let mut all = [Metric::Makespan; N];
        let mut i = 0;
        while i < N {
            all[i] = Metric::TABLE[i].metric;
            i += 1;
        }
        all
    };

    /// Every metric's key, in [`Metric::ALL`] order.
    pub const KEYS: [&'static str; N] = {
        let mut keys = [""; N];
        let mut i = 0;
        while i < N {
            keys[i] = Metric::TABLE[i].key;
            i += 1;
        }
        keys
    };

    /// Its row of [`Metric::TABLE`].
    pub const fn info(self) -> &'static MetricInfo {
        &Metric::TABLE[self.row()]
    }

    /// The position of its row in [`Metric::TABLE`]: one arm per metric, so that a metric
    /// added without its row (key, names, unit, level, direction) does not compile; the
    /// rows' order is checked at compile time below.
    const fn row(self) -> usize {
        match self {
            Metric::Makespan => 0,
            Metric::Response => 1,
            Metric::Turnaround => 2,
            Metric::RunSpan => 3,
            Metric::Cpu => 4,
            Metric::Vcsw => 5,
            Metric::Ivcsw => 6,
            Metric::RqWait => 7,
            Metric::TrialCpu => 8,
            Metric::TrialVcsw => 9,
            Metric::TrialIvcsw => 10,
            Metric::MakespanPerTask => 11,
            Metric::CpuPerTask => 12,
            Metric::CswPerTask => 13,
            Metric::JainCpu => 14,
            Metric::EndGroups => 15,
            Metric::MessagesPerS => 16,
            Metric::Rps => 17,
            Metric::RoundTrip => 18,
            Metric::SwitchTime => 19,
            Metric::WakeupP50 => 20,
            Metric::WakeupP90 => 21,
            Metric::WakeupP99 => 22,
            Metric::WakeupP999 => 23,
            Metric::RequestP50 => 24,
            Metric::RequestP90 => 25,
            Metric::RequestP99 => 26,
            Metric::RequestP999 => 27,
            Metric::MessageP50 => 28,
            Metric::MessageP99 => 29,
            Metric::Misses => 30,
            Metric::MissPct => 31,
            Metric::SlackP1 => 32,
            Metric::SlackP50 => 33,
            Metric::SlackP99 => 34,
            Metric::LatenessMax => 35,
        }
    }

    /// Position in [`Metric::ALL`] (and in per-cell sample vectors).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The metric whose [`Metric::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Stable machine name, used in specs, CSV and file names.
    pub fn key(self) -> &'static str {
        self.info().key
    }

    /// Short human name, as a table heading.
    pub fn label(self) -> &'static str {
        self.info().label
    }

    /// The metric in a sentence: "the lowest median {phrase}".
    pub fn phrase(self) -> &'static str {
        self.info().phrase
    }

    /// Unit of values: "ms" for the times of whole tasks, "us" for latencies and slack, "%"
    /// for shares, "" for counts, rates (their label says "/s") and indices.
    pub fn unit(self) -> &'static str {
        self.info().unit
    }

    /// Label with its unit, for axes and headings: "makespan (ms)".
    pub fn with_unit(self) -> String {
        match self.unit() {
            "" => self.label().to_string(),
            u => format!("{} ({u})", self.label()),
        }
    }

    /// Whether one sample is one task (else one trial).
    pub fn per_task(self) -> bool {
        self.info().level == Level::Task
    }

    /// "per task" or "per trial".
    pub fn level(self) -> &'static str {
        match self.info().level {
            Level::Task => "per task",
            Level::Trial => "per trial",
        }
    }

    /// Smaller is better for every metric but the fairness index, rates and slack.
    pub fn lower_is_better(self) -> bool {
        self.info().better == Better::Lower
    }

    /// Whether policies are tested on it (see [`MetricInfo::tested`]).
    pub fn tested(self) -> bool {
        self.info().tested
    }

    /// Whether exploratory comparisons on it are written out as sentences (all tested ones are tabled).
    pub fn headline(self) -> bool {
        self.info().headline
    }
}

/// Every row of the table sits at its metric's position (a compile-time check).
const _: () = {
    let mut i = 0;
    while i < N {
        assert!(
            Metric::TABLE[i].metric.row() == i,
            "Metric::TABLE out of order"
        );
        i += 1;
    }
};

impl fmt::Display for Metric {
    /// The key, as in specs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A key that names no metric, with the keys that do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMetric(pub String);

impl fmt::Display for UnknownMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not a metric (accepted: {})",
            self.0,
            Metric::KEYS.join(", ")
        )
    }
}

impl std::error::Error for UnknownMetric {}

impl FromStr for Metric {
    type Err = UnknownMetric;

    fn from_str(s: &str) -> Result<Metric, UnknownMetric> {
        Metric::from_key(s).ok_or_else(|| UnknownMetric(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_metric_once_in_enum_order_with_distinct_keys() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
            assert_eq!(Metric::TABLE[i].metric, *m);
            assert_eq!(Metric::from_key(m.key()), Some(*m));
        }
        let mut keys = Metric::KEYS.to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Metric::ALL.len());
        assert_eq!(Metric::Makespan.with_unit(), "makespan (ms)");
        assert_eq!(Metric::Ivcsw.with_unit(), "involuntary switches");
        assert_eq!("run_span".parse::<Metric>(), Ok(Metric::RunSpan));
        let e = "speed".parse::<Metric>().unwrap_err().to_string();
        assert!(
            e.contains("'speed' is not a metric") && e.contains("jain_cpu"),
            "{e}"
        );
    }

    #[test]
    fn serde_reads_every_metric_by_its_key() {
        use serde::de::IntoDeserializer;
        for m in Metric::ALL {
            let back: Result<Metric, serde::de::value::Error> =
                Metric::deserialize(m.key().into_deserializer());
            assert_eq!(back, Ok(m));
        }
        let bad: Result<Metric, serde::de::value::Error> =
            Metric::deserialize("speed".into_deserializer());
        assert!(bad.is_err());
    }

    #[test]
    fn directions_levels_and_tests_follow_the_table() {
        assert!(!Metric::JainCpu.lower_is_better() && Metric::Makespan.lower_is_better());
        assert!(Metric::Turnaround.per_task() && !Metric::TrialCpu.per_task());
        assert_eq!(Metric::Cpu.level(), "per task");
        let untested: Vec<&str> = Metric::ALL
            .into_iter()
            .filter(|m| !m.tested())
            .map(Metric::key)
            .collect();
        assert_eq!(
            untested,
            [
                "trial_cpu",
                "makespan_per_task",
                "cpu_per_task",
                "csw_per_task",
                "end_groups",
                "wakeup_p90",
                "wakeup_p999",
                "request_p90",
                "request_p999"
            ]
        );
        assert_eq!(Metric::WakeupP99.with_unit(), "wake-up p99 (us)");
        assert_eq!(Metric::Rps.with_unit(), "requests/s");
        assert_eq!(Metric::MissPct.with_unit(), "missed share (%)");
        assert!(!Metric::SlackP1.lower_is_better() && Metric::LatenessMax.lower_is_better());
    }
}
