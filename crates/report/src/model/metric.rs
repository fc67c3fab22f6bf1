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
}

impl Metric {
    /// Every metric, in the order tables list them.
    pub const ALL: [Metric; 16] = [
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
        }
    }

    /// Unit of values: "ms" for times, "" for counts and indices.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Vcsw
            | Metric::Ivcsw
            | Metric::TrialVcsw
            | Metric::TrialIvcsw
            | Metric::CswPerTask
            | Metric::JainCpu
            | Metric::EndGroups => "",
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

    /// Smaller is better for every metric but the fairness index.
    pub fn lower_is_better(self) -> bool {
        self != Metric::JainCpu
    }

    /// Whether policies are tested on it. The per-task views of trial totals are left out:
    /// within a group they are the totals divided by one constant, so the tests repeat; end
    /// groups are a claim's metric (study 003), not a finding's.
    pub fn tested(self) -> bool {
        !matches!(
            self,
            Metric::TrialCpu
                | Metric::MakespanPerTask
                | Metric::CpuPerTask
                | Metric::CswPerTask
                | Metric::EndGroups
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
    }
}
