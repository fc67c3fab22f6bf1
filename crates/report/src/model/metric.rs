//! The measured quantities a report summarises and compares, with their names and units.

use serde::Serialize;

/// One measured quantity, summarised per cell and compared across policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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

impl Metric {
    /// Every metric, in the order tables list them.
    pub const ALL: [Metric; 36] = [
        Metric::Makespan,
        Metric::Response,
        Metric::Turnaround,
        Metric::RunSpan,
        Metric::Cpu,
        Metric::Vcsw,
        Metric::Ivcsw,
        Metric::RqWait,
        Metric::TrialCpu,
        Metric::TrialVcsw,
        Metric::TrialIvcsw,
        Metric::MakespanPerTask,
        Metric::CpuPerTask,
        Metric::CswPerTask,
        Metric::JainCpu,
        Metric::EndGroups,
        Metric::MessagesPerS,
        Metric::Rps,
        Metric::RoundTrip,
        Metric::SwitchTime,
        Metric::WakeupP50,
        Metric::WakeupP90,
        Metric::WakeupP99,
        Metric::WakeupP999,
        Metric::RequestP50,
        Metric::RequestP90,
        Metric::RequestP99,
        Metric::RequestP999,
        Metric::MessageP50,
        Metric::MessageP99,
        Metric::Misses,
        Metric::MissPct,
        Metric::SlackP1,
        Metric::SlackP50,
        Metric::SlackP99,
        Metric::LatenessMax,
    ];

    /// Position in [`Metric::ALL`] (and in per-cell sample vectors).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The metric whose [`Metric::key`] is `key`.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Stable machine name, used in CSV and file names.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Makespan => "makespan",
            Metric::Response => "response",
            Metric::Turnaround => "turnaround",
            Metric::RunSpan => "run_span",
            Metric::Cpu => "cpu",
            Metric::Vcsw => "vcsw",
            Metric::Ivcsw => "ivcsw",
            Metric::RqWait => "rq_wait",
            Metric::TrialCpu => "trial_cpu",
            Metric::TrialVcsw => "trial_vcsw",
            Metric::TrialIvcsw => "trial_ivcsw",
            Metric::MakespanPerTask => "makespan_per_task",
            Metric::CpuPerTask => "cpu_per_task",
            Metric::CswPerTask => "csw_per_task",
            Metric::JainCpu => "jain_cpu",
            Metric::EndGroups => "end_groups",
            Metric::MessagesPerS => "messages_per_s",
            Metric::Rps => "rps",
            Metric::RoundTrip => "round_trip",
            Metric::SwitchTime => "switch_time",
            Metric::WakeupP50 => "wakeup_p50",
            Metric::WakeupP90 => "wakeup_p90",
            Metric::WakeupP99 => "wakeup_p99",
            Metric::WakeupP999 => "wakeup_p999",
            Metric::RequestP50 => "request_p50",
            Metric::RequestP90 => "request_p90",
            Metric::RequestP99 => "request_p99",
            Metric::RequestP999 => "request_p999",
            Metric::MessageP50 => "message_p50",
            Metric::MessageP99 => "message_p99",
            Metric::Misses => "misses",
            Metric::MissPct => "miss_pct",
            Metric::SlackP1 => "slack_p1",
            Metric::SlackP50 => "slack_p50",
            Metric::SlackP99 => "slack_p99",
            Metric::LatenessMax => "lateness_max",
        }
    }

    /// Short human name, as a table heading.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Makespan => "makespan",
            Metric::Response => "response",
            Metric::Turnaround => "turnaround",
            Metric::RunSpan => "run span",
            Metric::Cpu => "CPU time",
            Metric::Vcsw => "voluntary switches",
            Metric::Ivcsw => "involuntary switches",
            Metric::RqWait => "run-queue wait",
            Metric::TrialCpu => "total CPU time",
            Metric::TrialVcsw => "total voluntary switches",
            Metric::TrialIvcsw => "total involuntary switches",
            Metric::MakespanPerTask => "makespan / tasks",
            Metric::CpuPerTask => "total CPU / tasks",
            Metric::CswPerTask => "switches / tasks",
            Metric::JainCpu => "Jain index of CPU",
            Metric::EndGroups => "end-time groups",
            Metric::MessagesPerS => "messages/s",
            Metric::Rps => "requests/s",
            Metric::RoundTrip => "round trip",
            Metric::SwitchTime => "time per switch",
            Metric::WakeupP50 => "wake-up p50",
            Metric::WakeupP90 => "wake-up p90",
            Metric::WakeupP99 => "wake-up p99",
            Metric::WakeupP999 => "wake-up p99.9",
            Metric::RequestP50 => "request p50",
            Metric::RequestP90 => "request p90",
            Metric::RequestP99 => "request p99",
            Metric::RequestP999 => "request p99.9",
            Metric::MessageP50 => "message p50",
            Metric::MessageP99 => "message p99",
            Metric::Misses => "missed periods",
            Metric::MissPct => "missed share",
            Metric::SlackP1 => "slack p1",
            Metric::SlackP50 => "slack p50",
            Metric::SlackP99 => "slack p99",
            Metric::LatenessMax => "max lateness",
        }
    }

    /// The metric in a sentence: "the lowest median {phrase}".
    pub fn phrase(self) -> &'static str {
        match self {
            Metric::Makespan => "makespan",
            Metric::Response => "per-task response time",
            Metric::Turnaround => "per-task turnaround time",
            Metric::RunSpan => "per-task run span",
            Metric::Cpu => "per-task CPU time",
            Metric::Vcsw => "per-task voluntary switch count",
            Metric::Ivcsw => "per-task involuntary switch count",
            Metric::RqWait => "per-task run-queue wait",
            Metric::TrialCpu => "total CPU time per trial",
            Metric::TrialVcsw => "voluntary switches per trial",
            Metric::TrialIvcsw => "involuntary switches per trial",
            Metric::MakespanPerTask => "makespan per task",
            Metric::CpuPerTask => "CPU time per task",
            Metric::CswPerTask => "context switches per task",
            Metric::JainCpu => "Jain fairness index of CPU time",
            Metric::EndGroups => "number of groups the tasks finish in",
            Metric::MessagesPerS => "messages per second",
            Metric::Rps => "requests per second",
            Metric::RoundTrip => "time per round trip",
            Metric::SwitchTime => "time per context switch",
            Metric::WakeupP50 => "median wake-up latency",
            Metric::WakeupP90 => "90th-percentile wake-up latency",
            Metric::WakeupP99 => "99th-percentile wake-up latency",
            Metric::WakeupP999 => "99.9th-percentile wake-up latency",
            Metric::RequestP50 => "median request latency",
            Metric::RequestP90 => "90th-percentile request latency",
            Metric::RequestP99 => "99th-percentile request latency",
            Metric::RequestP999 => "99.9th-percentile request latency",
            Metric::MessageP50 => "median message latency",
            Metric::MessageP99 => "99th-percentile message latency",
            Metric::Misses => "missed periods per trial",
            Metric::MissPct => "share of missed periods",
            Metric::SlackP1 => "1st-percentile slack",
            Metric::SlackP50 => "median slack",
            Metric::SlackP99 => "99th-percentile slack",
            Metric::LatenessMax => "largest lateness",
        }
    }

    /// Unit of values: "ms" for the times of whole tasks, "us" for latencies and slack, "%"
    /// for shares, "" for counts, rates (their label says "/s") and indices.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Vcsw
            | Metric::Ivcsw
            | Metric::TrialVcsw
            | Metric::TrialIvcsw
            | Metric::CswPerTask
            | Metric::JainCpu
            | Metric::MessagesPerS
            | Metric::Rps
            | Metric::Misses
            | Metric::EndGroups => "",
            Metric::MissPct => "%",
            Metric::RoundTrip
            | Metric::SwitchTime
            | Metric::WakeupP50
            | Metric::WakeupP90
            | Metric::WakeupP99
            | Metric::WakeupP999
            | Metric::RequestP50
            | Metric::RequestP90
            | Metric::RequestP99
            | Metric::RequestP999
            | Metric::MessageP50
            | Metric::MessageP99
            | Metric::SlackP1
            | Metric::SlackP50
            | Metric::SlackP99
            | Metric::LatenessMax => "us",
            _ => "ms",
        }
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
        matches!(
            self,
            Metric::Response
                | Metric::Turnaround
                | Metric::RunSpan
                | Metric::Cpu
                | Metric::Vcsw
                | Metric::Ivcsw
                | Metric::RqWait
        )
    }

    /// "per task" or "per trial".
    pub fn level(self) -> &'static str {
        if self.per_task() {
            "per task"
        } else {
            "per trial"
        }
    }

    /// Smaller is better for every metric but the fairness index, rates and slack.
    pub fn lower_is_better(self) -> bool {
        !matches!(
            self,
            Metric::JainCpu
                | Metric::MessagesPerS
                | Metric::Rps
                | Metric::SlackP1
                | Metric::SlackP50
                | Metric::SlackP99
        )
    }

    /// Whether policies are tested on it. The per-task views of trial totals are left out:
    /// within a group they are the totals divided by one constant, so the tests repeat; so
    /// are the p90 and p99.9 of latencies, which are tabled beside p50 and p99 (tested); end
    /// groups are a claim's metric (study 003), not a finding's.
    pub fn tested(self) -> bool {
        !matches!(
            self,
            Metric::TrialCpu
                | Metric::MakespanPerTask
                | Metric::CpuPerTask
                | Metric::CswPerTask
                | Metric::EndGroups
                | Metric::WakeupP90
                | Metric::WakeupP999
                | Metric::RequestP90
                | Metric::RequestP999
        )
    }

    /// Whether findings on it are written out as sentences (all tested ones are tabled).
    pub fn headline(self) -> bool {
        matches!(
            self,
            Metric::Makespan
                | Metric::Response
                | Metric::Turnaround
                | Metric::Ivcsw
                | Metric::JainCpu
                | Metric::MessagesPerS
                | Metric::Rps
                | Metric::RoundTrip
                | Metric::WakeupP99
                | Metric::RequestP99
                | Metric::MissPct
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_a_distinct_key_and_its_index_is_its_position() {
        let mut keys: Vec<&str> = Metric::ALL.iter().map(|m| m.key()).collect();
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
        }
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Metric::ALL.len());
        assert_eq!(Metric::Makespan.with_unit(), "makespan (ms)");
        assert_eq!(Metric::Ivcsw.with_unit(), "involuntary switches");
        assert_eq!(Metric::WakeupP99.with_unit(), "wake-up p99 (us)");
        assert_eq!(Metric::Rps.with_unit(), "requests/s");
        assert_eq!(Metric::MissPct.with_unit(), "missed share (%)");
        assert!(!Metric::SlackP1.lower_is_better() && Metric::LatenessMax.lower_is_better());
    }
}
