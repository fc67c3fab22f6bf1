//! Parsers for the cgroup flags (pure): `--cpu-weight`, `--cpu-max`, `--cpu-idle`,
//! `--cpuset`, and the expansion of one value to every group of a trial.
//!
//! Grammar, the same for every flag: `,` separates the axis's values (one cell each), `:`
//! separates the groups' values within one cell, and `-` leaves a group's setting as the
//! kernel's default. One value without `:` applies to every group.
//!
//! - `--cpu-weight 100:300,100:900` — two cells; group 1 weight 100, group 2 weight 300 (900).
//! - `--cpu-max 50ms/100ms,200ms/100ms,max` — three cells; `QUOTA/PERIOD` with units `us`,
//!   `ms` or `s` (decimals allowed: `0.5ms`), or `max`.
//! - `--cpu-idle 0,1` — two cells; `1` makes the group an idle group (v2/v1 `cpu.idle`).
//! - `--cpuset 1,0:1` — two cells: every group on CPU 1; group 1 on CPU 0 and group 2 on CPU 1.
//!   Since `,` separates cells, CPUs within one list are joined with `+`: `0+2-3` is CPUs 0, 2
//!   and 3 (a spec file takes the kernel's own `0,2-3`).
//! - `--partition` (no value) makes every group that has a `--cpuset` a partition.

use crate::error::Error;
use crate::invalid::Invalid;
use crate::spec::GroupSettings;
use crate::value::{CpuList, CpuMax, Weight};

/// One cell's values, one per group (`None`: the kernel's default), or a single value for all.
pub type PerGroup<T> = Vec<Option<T>>;

/// Split an axis into cells and each cell into groups, parsing each group's value.
pub fn parse_axis<T>(
    what: &'static str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, Error>,
) -> Result<Vec<PerGroup<T>>, Error> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::invalid(what, text, Invalid::NoValues));
    }
    text.split(',')
        .map(|cell| {
            cell.split(':')
                .map(|v| match v.trim() {
                    "-" => Ok(None),
                    "" => Err(Error::invalid(what, text, Invalid::EmptyValue)),
                    v => parse(v).map(Some),
                })
                .collect()
        })
        .collect()
}

/// `--cpu-weight`: weights 1..=10000.
pub fn parse_cpu_weight(text: &str) -> Result<Vec<PerGroup<Weight>>, Error> {
    parse_axis("cpu weight", text, |v| {
        let n = v
            .parse::<u64>()
            .map_err(|_| Error::invalid("cpu weight", v, Invalid::WeightNotNumber))?;
        Weight::new(n)
    })
}

/// `--cpu-max`: `QUOTA/PERIOD` or `max`.
pub fn parse_cpu_max(text: &str) -> Result<Vec<PerGroup<CpuMax>>, Error> {
    parse_axis("cpu.max", text, parse_one_cpu_max)
}

/// One `QUOTA/PERIOD` or `max`.
pub fn parse_one_cpu_max(v: &str) -> Result<CpuMax, Error> {
    if v == "max" {
        return Ok(CpuMax::Unlimited);
    }
    let (q, p) = v
        .split_once('/')
        .ok_or_else(|| Error::invalid("cpu.max", v, Invalid::CpuMaxSyntax))?;
    CpuMax::limit(parse_duration_us(q)?, parse_duration_us(p)?)
}

/// `--cpu-idle`: `0` or `1`.
pub fn parse_cpu_idle(text: &str) -> Result<Vec<PerGroup<bool>>, Error> {
    parse_axis("cpu idle", text, |v| match v {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(Error::invalid("cpu idle", v, Invalid::IdleValue)),
    })
}

/// `--cpuset`: CPU lists, items joined with `+`.
pub fn parse_cpuset(text: &str) -> Result<Vec<PerGroup<CpuList>>, Error> {
    parse_axis("cpuset", text, |v| {
        let l = CpuList::parse_with(v, '+')?;
        if l.is_empty() {
            return Err(Error::invalid("cpuset", v, Invalid::EmptyCpuset));
        }
        Ok(l)
    })
}

/// A duration with a unit (`us`, `ms`, `s`; decimals allowed) in whole microseconds.
pub fn parse_duration_us(text: &str) -> Result<u64, Error> {
    let t = text.trim();
    let bad = || Error::invalid("duration", t, Invalid::DurationSyntax);
    let (num, scale) = if let Some(n) = t.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e6)
    } else {
        return Err(bad());
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let us = v * scale;
    if !(us.is_finite() && (0.0..=1e15).contains(&us)) || (us - us.round()).abs() > 1e-6 {
        return Err(Error::invalid("duration", t, Invalid::DurationFraction));
    }
    Ok(us.round() as u64)
}

/// A duration in µs as the flags write it (`20ms`, `1s`, `250us`).
pub fn format_us(us: u64) -> String {
    if us != 0 && us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us != 0 && us % 1_000 == 0 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{us}us")
    }
}

/// One cell's values for `groups` groups: a single value is repeated, otherwise there must be
/// one per group.
pub fn for_groups<T: Clone>(
    what: &'static str,
    values: &PerGroup<T>,
    groups: usize,
) -> Result<Vec<Option<T>>, Error> {
    match values.len() {
        1 => Ok(vec![values[0].clone(); groups]),
        n if n == groups => Ok(values.clone()),
        n => Err(Error::invalid(
            what,
            format!("{n} values"),
            Invalid::ValueCount { groups },
        )),
    }
}

/// One cell's values of the cgroup axes, as parsed (None: the flag was not given).
#[derive(Debug, Clone, Copy, Default)]
pub struct CellAxes<'a> {
    /// `--cpu-weight`.
    pub weight: Option<&'a PerGroup<Weight>>,
    /// `--cpu-max`.
    pub max: Option<&'a PerGroup<CpuMax>>,
    /// `--cpu-idle`.
    pub idle: Option<&'a PerGroup<bool>>,
    /// `--cpuset`.
    pub cpuset: Option<&'a PerGroup<CpuList>>,
    /// `--partition`: every group with a cpuset becomes a partition.
    pub partition: bool,
}

/// The settings of each of `groups` groups for one cell (`rt_tasks` is the plan's to set).
pub fn group_settings(axes: &CellAxes<'_>, groups: usize) -> Result<Vec<GroupSettings>, Error> {
    fn each<T: Clone>(
        what: &'static str,
        v: Option<&PerGroup<T>>,
        n: usize,
    ) -> Result<Vec<Option<T>>, Error> {
        v.map_or_else(|| Ok(vec![None; n]), |v| for_groups(what, v, n))
    }
    let weight = each("cpu weight", axes.weight, groups)?;
    let max = each("cpu.max", axes.max, groups)?;
    let idle = each("cpu idle", axes.idle, groups)?;
    let cpus = each("cpuset", axes.cpuset, groups)?;
    if axes.partition && cpus.iter().all(Option::is_none) {
        return Err(Error::invalid(
            "partition",
            "--partition",
            Invalid::PartitionFlagWithoutCpus,
        ));
    }
    Ok((0..groups)
        .map(|i| GroupSettings {
            weight: weight[i],
            max: max[i],
            idle: idle[i],
            partition: axes.partition && cpus[i].is_some(),
            cpus: cpus[i].clone(),
            ..GroupSettings::default()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(n: u64) -> Option<Weight> {
        Some(Weight::new(n).unwrap())
    }

    #[test]
    fn weights() {
        assert_eq!(
            parse_cpu_weight("100,300").unwrap(),
            vec![vec![w(100)], vec![w(300)]]
        );
        assert_eq!(
            parse_cpu_weight("100:300,-:900").unwrap(),
            vec![vec![w(100), w(300)], vec![None, w(900)]]
        );
        for bad in ["", "0", "10001", "1.5", "100,", "100::3", "abc"] {
            assert!(parse_cpu_weight(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cpu_max_values() {
        let v = parse_cpu_max("50ms/100ms,200ms/100ms,max").unwrap();
        assert_eq!(
            v,
            vec![
                vec![Some(CpuMax::limit(50_000, 100_000).unwrap())],
                vec![Some(CpuMax::limit(200_000, 100_000).unwrap())],
                vec![Some(CpuMax::Unlimited)],
            ]
        );
        assert_eq!(
            parse_cpu_max("0.5ms/1ms").unwrap_err().code(),
            "cgroup.invalid-value",
            "0.5 ms is below the 1 ms quota minimum"
        );
        assert_eq!(
            parse_cpu_max("1.5ms/10ms").unwrap()[0][0],
            Some(CpuMax::limit(1_500, 10_000).unwrap())
        );
        for bad in [
            "20/100",
            "20ms",
            "20ms/2s",
            "20ms/0.5ms",
            "max/100ms",
            "20ms/100ms/1",
            "-1ms/10ms",
        ] {
            assert!(parse_cpu_max(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_us("250us").unwrap(), 250);
        assert_eq!(parse_duration_us("20ms").unwrap(), 20_000);
        assert_eq!(parse_duration_us("0.5s").unwrap(), 500_000);
        assert_eq!(parse_duration_us("1s").unwrap(), 1_000_000);
        for bad in ["", "ms", "1", "1.0001ms", "1e3us", "1 h", "0.5us"] {
            assert!(parse_duration_us(bad).is_err(), "{bad:?}");
        }
        for us in [250, 20_000, 1_000_000, 1_500] {
            assert_eq!(parse_duration_us(&format_us(us)).unwrap(), us);
        }
    }

    #[test]
    fn idle_and_cpusets() {
        assert_eq!(
            parse_cpu_idle("0,1").unwrap(),
            vec![vec![Some(false)], vec![Some(true)]]
        );
        assert!(parse_cpu_idle("2").is_err());
        let c = parse_cpuset("1,0:1,0+2-3").unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0][0].as_ref().unwrap().to_string(), "1");
        assert_eq!(c[1].len(), 2);
        assert_eq!(c[2][0].as_ref().unwrap().to_string(), "0,2-3");
        assert!(parse_cpuset("1-").is_err());
    }

    #[test]
    fn a_cells_settings_per_group() {
        let w = parse_cpu_weight("100:300").unwrap();
        let c = parse_cpuset("-:1").unwrap();
        let m = parse_cpu_max("20ms/100ms").unwrap();
        let axes = CellAxes {
            weight: Some(&w[0]),
            max: Some(&m[0]),
            cpuset: Some(&c[0]),
            partition: true,
            ..CellAxes::default()
        };
        let g = group_settings(&axes, 2).unwrap();
        assert_eq!(g[0].weight.unwrap().get(), 100);
        assert_eq!(g[1].weight.unwrap().get(), 300);
        assert_eq!(g[0].max, g[1].max, "one limit for both");
        assert_eq!(
            (g[0].partition, g[1].partition),
            (false, true),
            "only the group with a cpuset"
        );
        assert_eq!(g[1].cpus.as_ref().unwrap().to_string(), "1");
        assert!(
            group_settings(&axes, 3).is_err(),
            "two weights for three groups"
        );
        let lone = CellAxes {
            partition: true,
            ..CellAxes::default()
        };
        assert!(group_settings(&lone, 1)
            .unwrap_err()
            .to_string()
            .contains("give --cpuset"));
        assert_eq!(
            group_settings(&CellAxes::default(), 2).unwrap(),
            vec![GroupSettings::default(); 2]
        );
    }

    #[test]
    fn one_value_for_all_or_one_each() {
        let one = vec![w(300)];
        assert_eq!(for_groups("cpu weight", &one, 3).unwrap(), vec![w(300); 3]);
        let two = vec![w(100), w(300)];
        assert_eq!(for_groups("cpu weight", &two, 2).unwrap(), two);
        assert!(for_groups("cpu weight", &two, 3).is_err());
    }
}
