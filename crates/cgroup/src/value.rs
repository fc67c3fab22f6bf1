//! The values a group can be given, checked on construction: CPU weight (with its v1
//! `cpu.shares` conversion), bandwidth limit, CPU lists, group and trial names.

use crate::error::Error;
use crate::invalid::{CpuListFault, Invalid};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// A cgroup v2 CPU weight, 1..=10000 (default 100), as `cpu.weight` takes it.
///
/// On cgroup v1 it is written as `cpu.shares` = round(weight × 1024 / 100), which is the
/// kernel's own mapping: a v2 `cpu.weight` write goes through `sched_weight_from_cgroup()`
/// (kernel/sched/sched.h, Linux 6.8+; inline in `cpu_weight_write_u64()` since 4.15), which
/// computes `DIV_ROUND_CLOSEST_ULL(weight * 1024, CGROUP_WEIGHT_DFL)` and stores the result in
/// the same `tg->shares` that v1's `cpu.shares` sets. So a v1 group with these shares is
/// weighted exactly as a v2 group with this weight. systemd's `cgroup_cpu_weight_to_shares()`
/// (src/core/cgroup.c) truncates instead (`weight * 1024 / 100`), so its shares can be one
/// lower (weight 3: kernel 31, systemd 30). The OCI runtimes' shares-to-weight formula
/// (`1 + (shares - 2) * 9999 / 262142`, runc/crun) is a different, non-inverse mapping and is
/// not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u32")]
pub struct Weight(u32);

/// The smallest `cpu.weight`.
pub const WEIGHT_MIN: u32 = 1;
/// The default `cpu.weight` (a nice-0 task's 1024 in v1 shares).
pub const WEIGHT_DEFAULT: u32 = 100;
/// The largest `cpu.weight`.
pub const WEIGHT_MAX: u32 = 10_000;

impl Weight {
    /// A weight, refused outside 1..=10000.
    pub fn new(value: u64) -> Result<Weight, Error> {
        if (WEIGHT_MIN as u64..=WEIGHT_MAX as u64).contains(&value) {
            Ok(Weight(value as u32))
        } else {
            Err(Error::invalid(
                "cpu weight",
                value.to_string(),
                Invalid::WeightRange,
            ))
        }
    }

    /// The weight.
    pub fn get(self) -> u32 {
        self.0
    }

    /// The v1 `cpu.shares` with the same kernel weight: round(weight × 1024 / 100).
    pub fn v1_shares(self) -> u64 {
        (self.0 as u64 * 1024 + WEIGHT_DEFAULT as u64 / 2) / WEIGHT_DEFAULT as u64
    }

    /// The v2 weight the kernel shows for v1 `shares` (its `sched_weight_to_cgroup()`:
    /// round(shares × 100 / 1024), clamped to 1..=10000).
    pub fn from_v1_shares(shares: u64) -> Weight {
        let w = (shares.saturating_mul(WEIGHT_DEFAULT as u64) + 512) / 1024;
        Weight(w.clamp(WEIGHT_MIN as u64, WEIGHT_MAX as u64) as u32)
    }
}

impl TryFrom<u64> for Weight {
    type Error = Error;
    fn try_from(v: u64) -> Result<Weight, Error> {
        Weight::new(v)
    }
}

impl From<Weight> for u32 {
    fn from(w: Weight) -> u32 {
        w.0
    }
}

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The shortest CFS bandwidth period and smallest quota the kernel accepts, µs
/// (`min_cfs_quota_period`, kernel/sched/core.c).
pub const PERIOD_MIN_US: u64 = 1_000;
/// The longest CFS bandwidth period, µs (`max_cfs_quota_period`).
pub const PERIOD_MAX_US: u64 = 1_000_000;
/// The smallest quota, µs.
pub const QUOTA_MIN_US: u64 = 1_000;
/// The largest quota the kernel accepts, µs (`max_cfs_runtime`: (2^44 - 1) µs).
pub const QUOTA_MAX_US: u64 = (1 << 44) - 1;

/// A CFS bandwidth limit: `quota_us` of CPU time per `period_us` (over all CPUs), or none.
/// v2 `cpu.max` = "QUOTA PERIOD" or "max"; v1 `cpu.cfs_quota_us` (-1 for none) and
/// `cpu.cfs_period_us`. Both end in the kernel's `tg_set_cfs_bandwidth()`, so the mapping is
/// one to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuMax {
    /// No limit (`max`, v1 quota -1).
    Unlimited,
    /// At most `quota_us` per `period_us`.
    Limit {
        /// CPU time per period, µs (≥ 1 ms; above the period for more than one CPU).
        quota_us: u64,
        /// The period, µs (1 ms..=1 s).
        period_us: u64,
    },
}

impl CpuMax {
    /// A limit, checked against the kernel's ranges.
    pub fn limit(quota_us: u64, period_us: u64) -> Result<CpuMax, Error> {
        let value = format!("{quota_us}us/{period_us}us");
        if !(PERIOD_MIN_US..=PERIOD_MAX_US).contains(&period_us) {
            return Err(Error::invalid(
                "cpu.max period",
                value,
                Invalid::PeriodRange,
            ));
        }
        if !(QUOTA_MIN_US..=QUOTA_MAX_US).contains(&quota_us) {
            return Err(Error::invalid(
                "cpu.max quota",
                value,
                Invalid::QuotaTooSmall,
            ));
        }
        Ok(CpuMax::Limit {
            quota_us,
            period_us,
        })
    }

    /// The v2 `cpu.max` text: `QUOTA PERIOD`, or `max` (which keeps the period).
    pub fn v2_text(self) -> String {
        match self {
            CpuMax::Unlimited => "max".to_string(),
            CpuMax::Limit {
                quota_us,
                period_us,
            } => format!("{quota_us} {period_us}"),
        }
    }

    /// The v1 (`cpu.cfs_quota_us`, `cpu.cfs_period_us`) values; the period is None for
    /// unlimited (left as it is).
    pub fn v1_values(self) -> (String, Option<String>) {
        match self {
            CpuMax::Unlimited => ("-1".to_string(), None),
            CpuMax::Limit {
                quota_us,
                period_us,
            } => (quota_us.to_string(), Some(period_us.to_string())),
        }
    }

    /// The limit in CPUs (quota / period), None when unlimited.
    pub fn cpus(self) -> Option<f64> {
        match self {
            CpuMax::Unlimited => None,
            CpuMax::Limit {
                quota_us,
                period_us,
            } => Some(quota_us as f64 / period_us as f64),
        }
    }
}

impl fmt::Display for CpuMax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuMax::Unlimited => write!(f, "max"),
            CpuMax::Limit {
                quota_us,
                period_us,
            } => {
                write!(
                    f,
                    "{}/{}",
                    crate::flags::format_us(*quota_us),
                    crate::flags::format_us(*period_us)
                )
            }
        }
    }
}

/// A set of CPUs (or memory nodes), written in the kernel's list format (`0-3,5`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuList(BTreeSet<u32>);

/// The highest CPU number accepted in a list (the kernel's NR_CPUS is at most 8192).
const CPU_LIMIT: u32 = 8192;

impl CpuList {
    /// Parse the kernel's list format: `0-3,5`, empty for none (as `cpuset.cpus` reads).
    pub fn parse(text: &str) -> Result<CpuList, Error> {
        Self::parse_with(text, ',')
    }

    /// Parse a list whose items are separated by `sep` (the flags use `+`).
    pub(crate) fn parse_with(text: &str, sep: char) -> Result<CpuList, Error> {
        let text = text.trim();
        let bad = |fault: CpuListFault| {
            Error::invalid(
                "CPU list",
                text,
                Invalid::CpuList {
                    fault,
                    separator: sep,
                },
            )
        };
        if text.is_empty() {
            return Ok(CpuList(BTreeSet::new()));
        }
        // A bitset of CPU_LIMIT bits: a list repeating a long range costs no more than one.
        let mut bits = vec![false; CPU_LIMIT as usize];
        for item in text.split(sep) {
            let num = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n < CPU_LIMIT)
                    .ok_or_else(|| bad(CpuListFault::NotCpu(s.to_string())))
            };
            match item.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(bad(CpuListFault::Backwards { from: a, to: b }));
                    }
                    bits[a as usize..=b as usize].fill(true);
                }
                None => {
                    bits[num(item)? as usize] = true;
                }
            }
        }
        Ok(CpuList(
            (0..CPU_LIMIT).filter(|&c| bits[c as usize]).collect(),
        ))
    }

    /// The CPUs in `items`.
    pub fn from_cpus(items: impl IntoIterator<Item = u32>) -> CpuList {
        CpuList(items.into_iter().collect())
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of CPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The CPUs, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().copied()
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuList) -> bool {
        self.0.is_subset(&other.0)
    }

    /// The CPUs in both.
    pub fn intersection(&self, other: &CpuList) -> CpuList {
        CpuList(self.0.intersection(&other.0).copied().collect())
    }

    /// The CPUs of `self` not in `other`.
    pub fn difference(&self, other: &CpuList) -> CpuList {
        CpuList(self.0.difference(&other.0).copied().collect())
    }

    /// The CPUs in either.
    pub fn union(&self, other: &CpuList) -> CpuList {
        CpuList(self.0.union(&other.0).copied().collect())
    }
}

impl fmt::Display for CpuList {
    /// The kernel's list format, ranges merged (`0-3,5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut it = self.0.iter().copied().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl TryFrom<String> for CpuList {
    type Error = Error;
    fn try_from(s: String) -> Result<CpuList, Error> {
        CpuList::parse(&s)
    }
}

impl From<CpuList> for String {
    fn from(c: CpuList) -> String {
        c.to_string()
    }
}

/// The names of cgroup control files without a `.` (cgroup v1), which a directory cannot take.
pub(crate) const CONTROL_FILES: [&str; 3] = ["tasks", "notify_on_release", "release_agent"];

/// A name of a group or trial directory: 1..=32 of `a-z 0-9 _ -`, starting with a letter or
/// digit, and none of [`CONTROL_FILES`] (so it can be neither a cgroup file nor one of the
/// layer's own `_` directories).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Name(String);

impl Name {
    /// A name, checked.
    pub fn new(text: &str) -> Result<Name, Error> {
        let ok = !text.is_empty()
            && text.len() <= 32
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
            && text.as_bytes()[0].is_ascii_alphanumeric();
        if ok && CONTROL_FILES.contains(&text) {
            return Err(Error::invalid(
                "group name",
                text,
                Invalid::ControlFileName {
                    name: text.to_string(),
                },
            ));
        }
        if ok {
            Ok(Name(text.to_string()))
        } else {
            Err(Error::invalid("group name", text, Invalid::NameSyntax))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Name {
    type Error = Error;
    fn try_from(s: String) -> Result<Name, Error> {
        Name::new(&s)
    }
}

impl From<Name> for String {
    fn from(n: Name) -> String {
        n.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_range_and_kernel_rounding() {
        assert!(Weight::new(0).is_err());
        assert!(Weight::new(10_001).is_err());
        // Hand computation of round(w * 1024 / 100): 1 -> 10.24 -> 10; 3 -> 30.72 -> 31;
        // 100 -> 1024; 300 -> 3072; 10000 -> 102400; 50 -> 512.
        let cases = [
            (1, 10),
            (3, 31),
            (50, 512),
            (100, 1024),
            (300, 3072),
            (10_000, 102_400),
        ];
        for (w, shares) in cases {
            assert_eq!(Weight::new(w).unwrap().v1_shares(), shares, "weight {w}");
        }
        // The kernel's round trip preserves every weight (its comment in sched.h says so).
        for w in 1..=10_000 {
            let weight = Weight::new(w).unwrap();
            assert_eq!(Weight::from_v1_shares(weight.v1_shares()), weight);
        }
        assert_eq!(
            Weight::from_v1_shares(2).get(),
            1,
            "v1's minimum clamps to 1"
        );
        assert_eq!(Weight::from_v1_shares(262_144).get(), 10_000);
    }

    #[test]
    fn cpu_max_ranges_and_texts() {
        assert!(CpuMax::limit(999, 100_000).is_err());
        assert!(CpuMax::limit(1_000, 999).is_err());
        assert!(CpuMax::limit(1_000, 1_000_001).is_err());
        let m = CpuMax::limit(20_000, 100_000).unwrap();
        assert_eq!(m.v2_text(), "20000 100000");
        assert_eq!(
            m.v1_values(),
            ("20000".to_string(), Some("100000".to_string()))
        );
        assert_eq!(m.cpus(), Some(0.2));
        assert_eq!(m.to_string(), "20ms/100ms");
        assert_eq!(CpuMax::Unlimited.v2_text(), "max");
        assert_eq!(CpuMax::Unlimited.v1_values(), ("-1".to_string(), None));
        let two = CpuMax::limit(200_000, 100_000).unwrap();
        assert_eq!(two.cpus(), Some(2.0));
    }

    #[test]
    fn cpu_lists() {
        let l = CpuList::parse("0-3,5, 7-7").unwrap();
        assert_eq!(l.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 5, 7]);
        assert_eq!(l.to_string(), "0-3,5,7");
        assert_eq!(CpuList::parse("").unwrap().to_string(), "");
        assert_eq!(CpuList::parse("1\n").unwrap().to_string(), "1");
        assert!(CpuList::parse("3-1").is_err());
        assert!(CpuList::parse("a").is_err());
        assert!(CpuList::parse("1,,2").is_err());
        assert!(CpuList::parse("9000").is_err());
        let a = CpuList::parse("0-3").unwrap();
        let b = CpuList::parse("2-5").unwrap();
        assert_eq!(a.intersection(&b).to_string(), "2-3");
        assert_eq!(a.difference(&b).to_string(), "0-1");
        assert_eq!(a.union(&b).to_string(), "0-5");
        assert!(CpuList::parse("1").unwrap().is_subset(&a));
        assert_eq!(
            CpuList::parse_with("0+2-3", '+').unwrap().to_string(),
            "0,2-3"
        );
    }

    #[test]
    fn names() {
        for ok in ["a", "web-1", "t3_7", "0"] {
            assert!(Name::new(ok).is_ok(), "{ok}");
        }
        for bad in ["", "_rest", "A", "cpu.max", "../x", "a/b", &"x".repeat(33)] {
            assert!(Name::new(bad).is_err(), "{bad}");
        }
        for control in ["tasks", "notify_on_release", "release_agent"] {
            let e = Name::new(control).unwrap_err().to_string();
            assert!(e.contains("control file"), "{e}");
        }
        assert!(Name::new("tasks2").is_ok());
    }

    #[test]
    fn a_list_repeating_the_whole_range_costs_one_range() {
        let list = vec!["0-8191"; 20_000].join(",");
        assert_eq!(CpuList::parse(&list).unwrap().len(), 8192);
    }
}
