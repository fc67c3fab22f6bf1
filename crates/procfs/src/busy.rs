//! How busy each CPU has been, from the most exact counter the kernel offers: parsers of
//! `/proc/schedstat` (per-CPU run time, ns; CONFIG_SCHEDSTATS), cgroup v1
//! `cpuacct.usage_percpu` (per-CPU task time, ns), cgroup v2 `cpu.stat` (`usage_usec`, all
//! CPUs together, µs) and the busy ticks of `/proc/stat` (per CPU, USER_HZ ticks). Tested on
//! literal text; the run's interference measurement (`crates/run/src/interference.rs`)
//! chooses among them.

/// `/proc/schedstat` (version 15 and later): per `cpuN` line, its rq_cpu_time, the 7th field
/// after the name: "sum of all time spent running by tasks on this processor", ns.
pub fn parse_schedstat_cpus(text: &str) -> Vec<(usize, u64)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let cpu: usize = words.next()?.strip_prefix("cpu")?.parse().ok()?;
            let run_ns: u64 = words.nth(6)?.parse().ok()?;
            Some((cpu, run_ns))
        })
        .collect()
}

/// cgroup v1 `cpuacct.usage_percpu`: one ns counter per possible CPU, in CPU order.
pub fn parse_usage_percpu(text: &str) -> Vec<(usize, u64)> {
    text.split_whitespace()
        .map_while(|w| w.parse::<u64>().ok())
        .enumerate()
        .collect()
}

/// cgroup v2 `cpu.stat`: `usage_usec`, the CPU time of every task below the group, µs.
pub fn parse_cpu_stat_usage_usec(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        (key == "usage_usec").then(|| value.trim().parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_each_cpus_run_time() {
        // Version 15 layout (Linux 4.x-6.x): cpuN then 9 numbers; domain lines are skipped.
        let text = "version 15\ntimestamp 4295938532\ncpu0 0 0 1211 455 684 274 9876543210 123456 756\ndomain0 3 0 0 0 0 0 0 0 0\ncpu1 0 0 99 5 6 7 42 8 9\n";
        assert_eq!(
            parse_schedstat_cpus(text),
            vec![(0, 9_876_543_210), (1, 42)]
        );
        assert!(parse_schedstat_cpus("version 15\n").is_empty());
    }

    #[test]
    fn cpuacct_lists_one_counter_per_cpu_and_cgroup2_sums_them() {
        assert_eq!(
            parse_usage_percpu("4922644079637 5120832605785 \n"),
            vec![(0, 4_922_644_079_637), (1, 5_120_832_605_785)]
        );
        let stat = "usage_usec 12021580533\nuser_usec 9841724162\nsystem_usec 2179856370\n";
        assert_eq!(parse_cpu_stat_usage_usec(stat), Some(12_021_580_533));
        assert_eq!(parse_cpu_stat_usage_usec("user_usec 5\n"), None);
    }
}
