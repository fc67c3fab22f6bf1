//! Small parsers for the /proc files schedlab reads, one function per file, tested on literal text.
//!
//! Hand-written rather than the `procfs` crate: `/proc/PID/sched` is not parsed by it, and the
//! worker reads its own `schedstat`/`sched` into a stack buffer at the end of its measured work,
//! where a parser over `&str` that allocates nothing is what is needed.

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
        let value = value.trim();
        match key.trim() {
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

/// Parses a CPU list such as `0-3,5` (temporary; replaced by the full parser).
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in text.trim().split(',') {
        let bad =
            || format!("bad CPU list part '{part}' in '{text}'; expected e.g. 0 or 0-1 or 0,2-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                if a > b {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Formats CPUs as a compact list (`0-3,5`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
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
}
