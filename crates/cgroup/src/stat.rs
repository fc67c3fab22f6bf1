//! A group's CPU figures as one typed value: usage and CFS bandwidth throttling, from v2
//! `cpu.stat` (µs) or v1 `cpu.stat` (ns) + `cpuacct.usage` (ns); parsers tested on literal text.

use crate::error::{Error, ParseProblem};
use serde::Serialize;

/// CPU usage and throttling of a group. Times are in ns; v2 reports µs, so there they are
/// multiples of 1000. A field is None when the hierarchy does not report it (e.g. no
/// throttling figures without the cpu controller).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CpuStat {
    /// CPU time used by the group's tasks, ns (v2 `usage_usec`; v1 `cpuacct.usage`).
    pub usage_ns: Option<u64>,
    /// Bandwidth periods in which the group had runnable tasks (`nr_periods`).
    pub nr_periods: Option<u64>,
    /// Periods in which it was throttled (`nr_throttled`).
    pub nr_throttled: Option<u64>,
    /// Time its tasks were throttled, ns (v2 `throttled_usec`; v1 `throttled_time`).
    pub throttled_ns: Option<u64>,
    /// Periods in which it used burst time (`nr_bursts`, Linux 5.14+).
    pub nr_bursts: Option<u64>,
    /// Burst time used, ns (v2 `burst_usec`; v1 `burst_time`).
    pub burst_ns: Option<u64>,
}

fn pairs(file: &str, text: &str) -> Result<Vec<(String, u64)>, Error> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut it = l.split_whitespace();
            match (
                it.next(),
                it.next().and_then(|v| v.parse::<u64>().ok()),
                it.next(),
            ) {
                (Some(k), Some(v), None) => Ok((k.to_string(), v)),
                _ => Err(Error::Parse {
                    file: file.to_string(),
                    detail: ParseProblem::NotKeyValue {
                        line: l.to_string(),
                    },
                }),
            }
        })
        .collect()
}

fn get(p: &[(String, u64)], key: &str) -> Option<u64> {
    p.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
}

impl CpuStat {
    /// Parse a v2 `cpu.stat`.
    pub fn parse_v2(text: &str) -> Result<CpuStat, Error> {
        let p = pairs("cpu.stat", text)?;
        let us = |k: &str| get(&p, k).map(|v| v.saturating_mul(1000));
        Ok(CpuStat {
            usage_ns: us("usage_usec"),
            nr_periods: get(&p, "nr_periods"),
            nr_throttled: get(&p, "nr_throttled"),
            throttled_ns: us("throttled_usec"),
            nr_bursts: get(&p, "nr_bursts"),
            burst_ns: us("burst_usec"),
        })
    }

    /// Parse a v1 `cpu.stat` (throttling) and, if the cpuacct controller is mounted, its
    /// `cpuacct.usage` (one number, ns).
    pub fn parse_v1(cpu_stat: &str, cpuacct_usage: Option<&str>) -> Result<CpuStat, Error> {
        let p = pairs("cpu.stat", cpu_stat)?;
        let usage_ns = match cpuacct_usage {
            Some(t) => Some(t.trim().parse::<u64>().map_err(|_| Error::Parse {
                file: "cpuacct.usage".into(),
                detail: ParseProblem::NotANumber {
                    text: t.to_string(),
                },
            })?),
            None => None,
        };
        Ok(CpuStat {
            usage_ns,
            nr_periods: get(&p, "nr_periods"),
            nr_throttled: get(&p, "nr_throttled"),
            throttled_ns: get(&p, "throttled_time"),
            nr_bursts: get(&p, "nr_bursts"),
            burst_ns: get(&p, "burst_time"),
        })
    }

    /// The change from `before` to `self` (counters only grow; a field missing in either is
    /// None).
    pub fn since(&self, before: &CpuStat) -> CpuStat {
        let d = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        CpuStat {
            usage_ns: d(self.usage_ns, before.usage_ns),
            nr_periods: d(self.nr_periods, before.nr_periods),
            nr_throttled: d(self.nr_throttled, before.nr_throttled),
            throttled_ns: d(self.throttled_ns, before.throttled_ns),
            nr_bursts: d(self.nr_bursts, before.nr_bursts),
            burst_ns: d(self.burst_ns, before.burst_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_as_this_machine_writes_it() {
        // /sys/fs/cgroup/cpu/<group>/cpu.stat and cpuacct.usage on Linux 6.18.
        let stat =
            "nr_periods 12\nnr_throttled 8\nthrottled_time 641233050\nnr_bursts 0\nburst_time 0\n";
        let s = CpuStat::parse_v1(stat, Some("100412345\n")).unwrap();
        assert_eq!(s.usage_ns, Some(100_412_345));
        assert_eq!(s.nr_periods, Some(12));
        assert_eq!(s.nr_throttled, Some(8));
        assert_eq!(s.throttled_ns, Some(641_233_050));
        assert_eq!(s.burst_ns, Some(0));
        assert_eq!(CpuStat::parse_v1(stat, None).unwrap().usage_ns, None);
        assert!(CpuStat::parse_v1(stat, Some("x")).is_err());
    }

    #[test]
    fn v2_in_microseconds() {
        // A v2 group with the cpu controller (Documentation/admin-guide/cgroup-v2.rst).
        let text = "usage_usec 100250\nuser_usec 100000\nsystem_usec 250\n\
                    nr_periods 12\nnr_throttled 8\nthrottled_usec 641233\nnr_bursts 0\nburst_usec 0\n";
        let s = CpuStat::parse_v2(text).unwrap();
        assert_eq!(s.usage_ns, Some(100_250_000));
        assert_eq!(s.throttled_ns, Some(641_233_000));
        assert_eq!(s.nr_throttled, Some(8));
        // Without the cpu controller only the usage is there (this machine's v2 root).
        let root = "usage_usec 1363469911\nuser_usec 1017046126\nsystem_usec 346423785\n\
                    core_sched.force_idle_usec 0\n";
        let s = CpuStat::parse_v2(root).unwrap();
        assert_eq!(s.usage_ns, Some(1_363_469_911_000));
        assert_eq!(s.nr_periods, None);
        assert!(CpuStat::parse_v2("usage_usec\n").is_err());
        assert!(CpuStat::parse_v2("usage_usec 1 2\n").is_err());
    }

    #[test]
    fn differences() {
        let a = CpuStat::parse_v1(
            "nr_periods 2\nnr_throttled 1\nthrottled_time 10\n",
            Some("100"),
        )
        .unwrap();
        let b = CpuStat::parse_v1(
            "nr_periods 7\nnr_throttled 4\nthrottled_time 50\n",
            Some("350"),
        )
        .unwrap();
        let d = b.since(&a);
        assert_eq!(
            (d.usage_ns, d.nr_periods, d.nr_throttled, d.throttled_ns),
            (Some(250), Some(5), Some(3), Some(40))
        );
        assert_eq!(d.nr_bursts, None);
    }
}
