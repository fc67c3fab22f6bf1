//! Parsers for the per-task /proc files: `schedstat`, `sched` and `status` of a task.
//!
//! `schedstat` and `sched` parse a `&str` without allocating: the worker reads its own files into
//! a stack buffer at the end of its measured work.

use serde::{Deserialize, Serialize};

use super::machine::parse_cpu_list;

/// `/proc/PID/task/TID/schedstat`: three integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedStat {
    /// Time spent on the CPU, in nanoseconds.
    pub run_ns: u64,
    /// Time spent runnable but waiting on a run queue, in nanoseconds.
    pub run_delay_ns: u64,
    /// Number of timeslices run on a CPU.
    pub timeslices: u64,
}

/// Parses `/proc/PID/task/TID/schedstat` ("run_ns run_delay_ns timeslices").
pub fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut it = text.split_ascii_whitespace().map(|w| w.parse::<u64>().ok());
    Some(SchedStat {
        run_ns: it.next()??,
        run_delay_ns: it.next()??,
        timeslices: it.next()??,
    })
}

/// The fields schedlab uses from `/proc/PID/task/TID/sched`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedInfo {
    /// Number of migrations between CPUs (`se.nr_migrations`).
    pub nr_migrations: Option<u64>,
    /// Voluntary context switches.
    pub nr_voluntary_switches: Option<u64>,
    /// Involuntary context switches.
    pub nr_involuntary_switches: Option<u64>,
    /// Scheduling policy number in force (0 other, 1 fifo, 2 rr, 3 batch, 5 idle, 6 deadline).
    pub policy: Option<i64>,
    /// Kernel priority (`prio`: 100..139 fair, lower is RT, -1 deadline).
    pub prio: Option<i64>,
    /// EEVDF slice in nanoseconds (`se.slice`).
    pub slice_ns: Option<u64>,
}

/// Parses `/proc/PID/task/TID/sched` ("key : value" lines after a two-line header).
pub fn parse_sched(text: &str) -> SchedInfo {
    let mut info = SchedInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        // ASCII trims: the keys are padded with dozens of spaces, which `str::trim` checks
        // one Unicode char at a time (it showed in profiles of tasks reading this file).
        let value = value.trim_ascii();
        match key.trim_ascii() {
            "se.nr_migrations" => info.nr_migrations = value.parse().ok(),
            "nr_voluntary_switches" => info.nr_voluntary_switches = value.parse().ok(),
            "nr_involuntary_switches" => info.nr_involuntary_switches = value.parse().ok(),
            "policy" => info.policy = value.parse().ok(),
            "prio" => info.prio = value.parse().ok(),
            "se.slice" => info.slice_ns = value.parse().ok(),
            _ => {}
        }
    }
    info
}

/// The fields schedlab uses from `/proc/PID/status`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcStatus {
    /// Voluntary context switches (blocked, yielded) of this task: the main thread for
    /// `/proc/PID/status`, one thread for `/proc/PID/task/TID/status`.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches (preempted) of this task.
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// CPUs the task may run on (`Cpus_allowed_list`).
    pub cpus_allowed_list: Option<Vec<usize>>,
    /// Number of threads.
    pub threads: Option<u64>,
}

/// Parses `/proc/PID/status` ("Key:\tvalue" lines).
pub fn parse_status(text: &str) -> ProcStatus {
    let mut s = ProcStatus::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = value.parse().ok(),
            "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = value.parse().ok(),
            "Cpus_allowed_list" => s.cpus_allowed_list = parse_cpu_list(value).ok(),
            "Threads" => s.threads = value.parse().ok(),
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_reads_three_counters() {
        let s = parse_schedstat("123456 7890 42\n").unwrap();
        assert_eq!(
            s,
            SchedStat {
                run_ns: 123456,
                run_delay_ns: 7890,
                timeslices: 42
            }
        );
    }

    #[test]
    fn schedstat_rejects_short_or_garbled_text() {
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("1 x 3"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn sched_reads_switches_migrations_policy_and_prio() {
        let text = "\
schedlab (5069, #threads: 1)
-------------------------------------------------------------------
se.exec_start                                :       4199829.924385
se.nr_migrations                             :                    3
nr_switches                                  :                   17
nr_voluntary_switches                        :                   12
nr_involuntary_switches                      :                    5
policy                                       :                    1
prio                                         :                    1
se.slice                                     :              1400000
current_node=0, numa_group_id=0
";
        let info = parse_sched(text);
        assert_eq!(info.nr_migrations, Some(3));
        assert_eq!(info.nr_voluntary_switches, Some(12));
        assert_eq!(info.nr_involuntary_switches, Some(5));
        assert_eq!(info.policy, Some(1));
        assert_eq!(info.prio, Some(1));
        assert_eq!(info.slice_ns, Some(1_400_000));
    }

    #[test]
    fn sched_header_with_colon_in_name_is_ignored() {
        let info = parse_sched("a:b (1, #threads: 1)\nprio : 120\n");
        assert_eq!(info.prio, Some(120));
        assert_eq!(info.policy, None);
    }

    #[test]
    fn status_reads_switches_threads_and_allowed_cpus() {
        let text = "Name:\tinit\nThreads:\t11\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n\
                    Mems_allowed_list:\t0\nvoluntary_ctxt_switches:\t338\n\
                    nonvoluntary_ctxt_switches:\t21\n";
        let s = parse_status(text);
        assert_eq!(s.threads, Some(11));
        assert_eq!(s.cpus_allowed_list, Some(vec![0, 1]));
        assert_eq!(s.voluntary_ctxt_switches, Some(338));
        assert_eq!(s.nonvoluntary_ctxt_switches, Some(21));
    }

    #[test]
    fn status_of_a_zombie_lacks_the_fields_and_gives_none() {
        let s = parse_status("Name:\tsleep\nState:\tZ (zombie)\nThreads:\t1\n");
        assert_eq!(s.threads, Some(1));
        assert_eq!(s.voluntary_ctxt_switches, None);
        assert_eq!(s.cpus_allowed_list, None);
    }
}
