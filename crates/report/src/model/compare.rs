//! A/B comparison of two runs, in the manner of benchstat: the cells present in both (matched
//! by their axis values) with each side's work, units, kernel and machine, and per metric
//! the medians of the trial values, the effect B against A (Hodges-Lehmann ratio B/A, or
//! the difference B - A where a value is <= 0) with its exact Mann-Whitney interval and its
//! achieved coverage, and an unadjusted Mann-Whitney mark. Cells whose units of work differ are not
//! comparable: the caller refuses them unless asked to go ahead. `render::compare` prints it.

use super::fmt::fmt_ns;
use super::trials::values;
use super::{describe, trial_values, CellKey, Metric, ReportInput};
use schedlab_analyze::{
    effect_two_sample, mann_whitney_min_p, mann_whitney_trials_needed, mann_whitney_u, median,
    Effect, EffectScale, PValueMethod, ALPHA, ALPHAS, CI_LEVEL,
};
use std::collections::HashMap;

/// One metric of one cell in both runs.
#[derive(Debug, Clone)]
pub struct CompareRow {
    /// Label of the cell.
    pub cell: String,
    /// Which metric.
    pub metric: Metric,
    /// Trial values in run A.
    pub n_a: usize,
    /// Trial values in run B.
    pub n_b: usize,
    /// Median of A's trial values, in the metric's unit.
    pub median_a: f64,
    /// Median of B's trial values, in the metric's unit.
    pub median_b: f64,
    /// B against A: the Hodges-Lehmann ratio B/A, or the difference B - A where a trial
    /// value is <= 0 (no ratio of a side that is 0), with the interval of the exact
    /// Mann-Whitney distribution and the coverage it has ([`effect`]).
    pub effect: Option<Effect>,
    /// Mann-Whitney U two-sided p-value of A vs B on the trial values (not adjusted).
    pub p: Option<f64>,
    /// How `p` was computed.
    pub method: Option<PValueMethod>,
    /// The smallest p these trial counts allow.
    pub min_p: Option<f64>,
    /// The cell's work differs between the runs (shown with --allow-different-work).
    pub different_work: bool,
}

impl CompareRow {
    /// "**" for p < 0.01, "*" for p < 0.05, "" otherwise.
    pub fn mark(&self) -> &'static str {
        match self.p {
            Some(p) if p < ALPHAS.1 => "**",
            Some(p) if p < ALPHAS.0 => "*",
            _ => "",
        }
    }

    /// The effect as a ratio B/A, if it is one.
    pub fn ratio(&self) -> Option<f64> {
        self.effect
            .filter(|e| e.scale == EffectScale::Ratio)
            .map(|e| e.estimate)
    }
}

/// Where a run ran, from its environment record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    /// "run 7 \"name\"".
    pub label: String,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// CPU model and count, e.g. "AMD EPYC, 2 CPUs".
    pub machine: Option<String>,
    /// Host name.
    pub host: Option<String>,
}

impl Side {
    fn of(input: &ReportInput) -> Side {
        let env: serde_json::Value = input
            .run
            .env_json
            .as_deref()
            .and_then(|j| serde_json::from_str(j).ok())
            .unwrap_or_default();
        let text = |k: &str| env.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let cpus = env.get("cpu_count").and_then(|v| v.as_u64());
        let machine = match (text("cpu_model"), cpus) {
            (Some(m), Some(n)) => Some(format!("{m}, {n} CPUs")),
            (Some(m), None) => Some(m),
            (None, Some(n)) => Some(format!("{n} CPUs")),
            (None, None) => None,
        };
        Side {
            label: format!("run {} \"{}\"", input.run.run_id, input.run.name),
            kernel: text("kernel_release"),
            machine,
            host: text("hostname"),
        }
    }

    /// "run 1 \"x\": kernel 6.8.0, AMD EPYC, 2 CPUs, host vm".
    pub fn describe(&self) -> String {
        let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        format!(
            "{}: kernel {}, machine {}, host {}",
            self.label,
            or(&self.kernel),
            or(&self.machine),
            or(&self.host)
        )
    }
}

/// Whether a matched cell did the same work in both runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameWork {
    /// Same units of work per task.
    Yes,
    /// Different units of work per task: not comparable.
    No,
    /// A run did not store its units (older database): cannot tell.
    Unknown,
}

/// A cell present in both runs, with the work each side did.
#[derive(Debug, Clone)]
pub struct CellMatch {
    /// Label of the cell.
    pub cell: String,
    /// Requested work per task alone in A, ns (runs sized by time).
    pub work_ns_a: Option<i64>,
    /// The same in B.
    pub work_ns_b: Option<i64>,
    /// Units of work per task in A.
    pub units_a: Option<i64>,
    /// The same in B.
    pub units_b: Option<i64>,
    /// Whether both did the same work.
    pub same: SameWork,
}

/// The comparison of two runs.
#[derive(Debug, Clone)]
pub struct CompareReport {
    /// "run 7 \"name\"" of A.
    pub a: String,
    /// "run 9 \"name\"" of B.
    pub b: String,
    /// Where A ran.
    pub side_a: Side,
    /// Where B ran.
    pub side_b: Side,
    /// Every cell in both runs, in A's cell order.
    pub cells: Vec<CellMatch>,
    /// One row per matched cell and metric with data in both runs, by metric then cell.
    pub rows: Vec<CompareRow>,
    /// Cells only in run A.
    pub only_a: Vec<String>,
    /// Cells only in run B.
    pub only_b: Vec<String>,
}

impl CompareReport {
    /// Cells whose units of work differ between the runs.
    pub fn different_work(&self) -> Vec<&CellMatch> {
        self.cells
            .iter()
            .filter(|c| c.same == SameWork::No)
            .collect()
    }

    /// Why the comparison is refused without `--allow-different-work`, if it is.
    pub fn refusal(&self) -> Option<String> {
        let bad = self.different_work();
        if bad.is_empty() {
            return None;
        }
        let list: Vec<String> = bad
            .iter()
            .map(|c| {
                format!(
                    "  {}: {} units per task in A ({}), {} in B ({})",
                    c.cell,
                    units(c.units_a),
                    work(c.work_ns_a),
                    units(c.units_b),
                    work(c.work_ns_b)
                )
            })
            .collect();
        Some(format!(
            "{} of {} matched cells did different work in {} and {}, so their times are not comparable:\n{}\nRe-run one side with --iterations N (the other's units) to compare the same work, or pass --allow-different-work to compare anyway.",
            bad.len(),
            self.cells.len(),
            self.a,
            self.b,
            list.join("\n")
        ))
    }
}

/// The effect of B against A on their trial values at 95%: Hodges-Lehmann ratio B/A with
/// Moses' interval from the exact Mann-Whitney distribution (its achieved coverage below
/// 95% where these trials allow no 95% interval), or the difference B - A where a value is
/// <= 0. `None` when a side has no value.
pub fn effect(a: &[f64], b: &[f64]) -> Option<Effect> {
    effect_two_sample(b, a, CI_LEVEL)
}

/// Units of work per task, or "unknown".
pub fn units(u: Option<i64>) -> String {
    u.map_or_else(|| "unknown".into(), |u| u.to_string())
}

/// Work per task as requested, or "sized in units".
pub fn work(w: Option<i64>) -> String {
    w.map_or_else(|| "sized in units".into(), |w| fmt_ns(w as f64))
}

/// Matches the cells of two runs by axis values and compares every tested metric on the
/// trial values.
pub fn compare(a: &ReportInput, b: &ReportInput) -> CompareReport {
    let keys_a = CellKey::all_of(&a.cells);
    let keys_b = CellKey::all_of(&b.cells);
    let all: Vec<CellKey> = keys_a.iter().chain(&keys_b).cloned().collect();
    let labels: HashMap<&CellKey, String> = all.iter().zip(describe(&all)).collect();
    let in_b: HashMap<&CellKey, usize> = keys_b.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let in_a: HashMap<&CellKey, usize> = keys_a.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut rows = Vec::new();
    let mut matched = Vec::new();
    let mut cells = Vec::new();
    for (ia, k) in keys_a.iter().enumerate() {
        if let Some(&ib) = in_b.get(k) {
            let (ca, cb) = (&a.cells[ia], &b.cells[ib]);
            let same = match (ca.units, cb.units) {
                (Some(x), Some(y)) if x == y => SameWork::Yes,
                (Some(_), Some(_)) => SameWork::No,
                _ => SameWork::Unknown,
            };
            cells.push(CellMatch {
                cell: labels[k].clone(),
                work_ns_a: ca.work_ns,
                work_ns_b: cb.work_ns,
                units_a: ca.units,
                units_b: cb.units,
                same,
            });
            matched.push((
                labels[k].clone(),
                trial_values(ca),
                trial_values(cb),
                same == SameWork::No,
            ));
        }
    }
    for m in Metric::ALL.into_iter().filter(|m| m.tested()) {
        for (label, ta, tb, different_work) in &matched {
            let (xa, xb) = (values(&ta[m.index()]), values(&tb[m.index()]));
            let (Some(median_a), Some(median_b)) = (median(&xa), median(&xb)) else {
                continue;
            };
            let test = mann_whitney_u(&xa, &xb);
            rows.push(CompareRow {
                cell: label.clone(),
                metric: m,
                n_a: xa.len(),
                n_b: xb.len(),
                median_a,
                median_b,
                effect: effect(&xa, &xb),
                p: test.map(|t| t.p_value),
                method: test.map(|t| t.method),
                min_p: mann_whitney_min_p(xa.len(), xb.len()),
                different_work: *different_work,
            });
        }
    }
    let only = |keys: &[CellKey], other: &HashMap<&CellKey, usize>| {
        keys.iter()
            .filter(|k| !other.contains_key(k))
            .map(|k| labels[k].clone())
            .collect()
    };
    let (side_a, side_b) = (Side::of(a), Side::of(b));
    CompareReport {
        a: side_a.label.clone(),
        b: side_b.label.clone(),
        side_a,
        side_b,
        cells,
        rows,
        only_a: only(&keys_a, &in_b),
        only_b: only(&keys_b, &in_a),
    }
}

/// Geometric mean of the positive ratios, if any.
fn geomean(ratios: impl Iterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = ratios
        .filter(|r| *r > 0.0 && r.is_finite())
        .map(f64::ln)
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

impl CompareReport {
    /// The rows of metric `m`, in cell order.
    pub fn rows_of(&self, m: Metric) -> Vec<&CompareRow> {
        self.rows.iter().filter(|r| r.metric == m).collect()
    }

    /// Geometric mean of the ratios of metric `m` over its cells, when it has more than one
    /// row (`Some(None)`: no positive ratio).
    pub fn geomean(&self, m: Metric) -> Option<Option<f64>> {
        let rows = self.rows_of(m);
        (rows.len() > 1).then(|| geomean(rows.iter().filter_map(|r| r.ratio())))
    }

    /// Trials per run with which exact Mann-Whitney can reach p < 0.05.
    pub fn trials_needed() -> usize {
        mann_whitney_trials_needed(ALPHA).unwrap_or(4)
    }

    /// The first row whose trial counts cannot reach p < 0.05, if any.
    pub fn too_few_trials(&self) -> Option<&CompareRow> {
        self.rows
            .iter()
            .find(|r| r.min_p.is_some_and(|p| p >= ALPHA))
    }

    /// The environment facts (kernel, machine) that differ between the sides, as (what, A, B).
    pub fn differences(&self) -> Vec<(&'static str, &str, &str)> {
        [
            ("kernel", &self.side_a.kernel, &self.side_b.kernel),
            ("machine", &self.side_a.machine, &self.side_b.machine),
        ]
        .into_iter()
        .filter_map(|(what, x, y)| match (x, y) {
            (Some(x), Some(y)) if x != y => Some((what, x.as_str(), y.as_str())),
            _ => None,
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effect_brackets_the_true_ratio_of_two_scaled_samples() {
        let a: Vec<f64> = (0..50).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.5).collect();
        let e = effect(&a, &b).expect("effect");
        assert_eq!(e.scale, EffectScale::Ratio);
        assert!(e.lo < 1.5 && 1.5 < e.hi, "{e:?}");
        assert!(e.hi - e.lo < 0.4, "{e:?}");
        // A side of zeros: the difference B - A, not a ratio of 0.
        let d = effect(&[2.0, 3.0], &[0.0, 0.0]).expect("effect");
        assert_eq!((d.scale, d.estimate), (EffectScale::Difference, -2.5));
    }

    fn row(p: Option<f64>, ratio: Option<f64>) -> CompareRow {
        CompareRow {
            cell: String::new(),
            metric: Metric::Makespan,
            n_a: 6,
            n_b: 6,
            median_a: 1.0,
            median_b: 1.0,
            effect: ratio.and_then(|r| effect(&[1.0, 1.1], &[r, r * 1.1])),
            p,
            method: None,
            min_p: None,
            different_work: false,
        }
    }

    #[test]
    fn marks_follow_the_p_value_and_geomean_ignores_undefined_ratios() {
        assert_eq!(row(Some(0.004), None).mark(), "**");
        assert_eq!(row(Some(0.03), None).mark(), "*");
        assert_eq!(row(Some(0.2), None).mark(), "");
        assert_eq!(row(None, None).mark(), "");
        let r = row(None, Some(2.0)).ratio().expect("a ratio");
        assert!((r - 2.0).abs() < 1e-12, "{r}");
        let g = geomean([2.0, 0.5, f64::NAN, 0.0].into_iter()).expect("two usable ratios");
        assert!((g - 1.0).abs() < 1e-12);
    }

    #[test]
    fn sides_come_from_the_environment_record() {
        let input = ReportInput {
            run: {
                let mut run = schedlab_store::query::RunInfo::default();
                run.run_id = 3;
                run.name = "x".into();
                run.env_json = Some(
                    r#"{"kernel_release":"6.8.0","cpu_model":"AMD EPYC","cpu_count":2,"hostname":"vm"}"#
                        .into(),
                );
                run
            },
            ..Default::default()
        };
        assert_eq!(
            Side::of(&input).describe(),
            "run 3 \"x\": kernel 6.8.0, machine AMD EPYC, 2 CPUs, host vm"
        );
        let bare = ReportInput::default();
        assert_eq!(
            Side::of(&bare).describe(),
            "run 0 \"\": kernel unknown, machine unknown, host unknown"
        );
    }
}
