//! A/B comparison of two runs, in the manner of benchstat: the cells present in both (matched
//! by their axis values) with each side's work, units, kernel and machine, and per metric
//! the medians of the trial values, the effect B against A (Hodges-Lehmann ratio B/A, or
//! the difference B - A where a value is <= 0) with its exact Mann-Whitney interval and its
//! achieved coverage, and an unadjusted Mann-Whitney mark. Cells whose units of work differ are not
//! comparable: the caller refuses them unless asked to go ahead. `render::compare` prints it.

use super::iosched::Significance;
use super::trials::values;
use super::{describe, trial_values, CellKey, Metric, ReportInput};
use schedlab_analyze::{
    effect_two_sample, mann_whitney_min_p, mann_whitney_trials_needed, mann_whitney_u, median,
    Effect, EffectScale, PValueMethod, ALPHA, CI_LEVEL,
};
use schedlab_store::Location;
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
    /// How far below the alphas its p-value lies (none without a p-value).
    pub fn significance(&self) -> Significance {
        self.p.map_or(Significance::None, Significance::of)
    }

    /// The effect as a ratio B/A, if it is one.
    pub fn ratio(&self) -> Option<f64> {
        self.effect
            .filter(|e| e.scale == EffectScale::Ratio)
            .map(|e| e.estimate)
    }
}

/// A run of the comparison: its id and name, and its database where the runs come from two.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRef {
    /// The run's id in its store.
    pub run_id: i64,
    /// The run's name.
    pub name: String,
    /// Its store, where A and B come from two (`--db-b`); `None` otherwise.
    pub db: Option<Location>,
}

/// The machine a run ran on, as its environment record has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// Number of CPUs.
    pub cpus: Option<u64>,
}

/// Where a run ran, from its environment record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    /// The run (never with its database).
    pub run: RunRef,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// CPU model and count; `None` where the record has neither.
    pub machine: Option<MachineInfo>,
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
        let machine = MachineInfo {
            cpu_model: text("cpu_model"),
            cpus: env.get("cpu_count").and_then(|v| v.as_u64()),
        };
        Side {
            run: RunRef {
                run_id: input.run.run_id,
                name: input.run.name.clone(),
                db: None,
            },
            kernel: text("kernel_release"),
            machine: (machine.cpu_model.is_some() || machine.cpus.is_some()).then_some(machine),
            host: text("hostname"),
        }
    }
}

/// An environment fact that differs between the two runs, with A's value and B's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Differs<'a> {
    /// The kernel release.
    Kernel(&'a str, &'a str),
    /// The CPU model or count.
    Machine(&'a MachineInfo, &'a MachineInfo),
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
#[derive(Debug, Clone, PartialEq)]
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
    /// Run A (with its database where the runs come from two).
    pub a: RunRef,
    /// Run B (likewise).
    pub b: RunRef,
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

    /// Why the comparison is refused without `--allow-different-work`, if it is: the cells
    /// whose units of work differ.
    pub fn refusal(&self) -> Option<DifferentWork> {
        let cells: Vec<CellMatch> = self.different_work().into_iter().cloned().collect();
        (!cells.is_empty()).then(|| DifferentWork {
            a: self.a.clone(),
            b: self.b.clone(),
            matched: self.cells.len(),
            cells,
        })
    }
}

/// Two runs whose matched cells did different work, so their times are not comparable
/// (refused without `--allow-different-work`; shown by [`crate::ReportError::DifferentWork`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DifferentWork {
    /// Run A.
    pub a: RunRef,
    /// Run B.
    pub b: RunRef,
    /// Cells present in both runs.
    pub matched: usize,
    /// The matched cells whose units of work differ, in A's order.
    pub cells: Vec<CellMatch>,
}

/// The effect of B against A on their trial values at 95%: Hodges-Lehmann ratio B/A with
/// Moses' interval from the exact Mann-Whitney distribution (its achieved coverage below
/// 95% where these trials allow no 95% interval), or the difference B - A where a value is
/// <= 0. `None` when a side has no value.
pub fn effect(a: &[f64], b: &[f64]) -> Option<Effect> {
    effect_two_sample(b, a, CI_LEVEL)
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
        a: side_a.run.clone(),
        b: side_b.run.clone(),
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

    /// The environment facts (kernel, machine) that differ between the sides (both known).
    pub fn differences(&self) -> Vec<Differs<'_>> {
        let (a, b) = (&self.side_a, &self.side_b);
        let kernel = match (&a.kernel, &b.kernel) {
            (Some(x), Some(y)) if x != y => Some(Differs::Kernel(x, y)),
            _ => None,
        };
        let machine = match (&a.machine, &b.machine) {
            (Some(x), Some(y)) if x != y => Some(Differs::Machine(x, y)),
            _ => None,
        };
        kernel.into_iter().chain(machine).collect()
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
        let level = |p| row(p, None).significance();
        assert_eq!(level(Some(0.004)), Significance::Alpha01);
        assert_eq!(level(Some(0.03)), Significance::Alpha05);
        assert_eq!(level(Some(0.2)), Significance::None);
        assert_eq!(level(None), Significance::None);
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
        let side = Side::of(&input);
        assert_eq!((side.run.run_id, side.run.name.as_str()), (3, "x"));
        assert_eq!(side.kernel.as_deref(), Some("6.8.0"));
        assert_eq!(
            side.machine,
            Some(MachineInfo {
                cpu_model: Some("AMD EPYC".into()),
                cpus: Some(2)
            })
        );
        assert_eq!(
            crate::render::compare::describe(&side),
            "run 3 \"x\": kernel 6.8.0, machine AMD EPYC, 2 CPUs, host vm"
        );
        let bare = Side::of(&ReportInput::default());
        assert_eq!((bare.kernel, bare.machine, bare.host), (None, None, None));
        assert_eq!(
            crate::render::compare::describe(&Side::of(&ReportInput::default())),
            "run 0 \"\": kernel unknown, machine unknown, host unknown"
        );
    }

    #[test]
    fn cells_whose_units_differ_are_the_refusal_and_only_they() {
        let cell = |policy: &str, units: Option<i64>| schedlab_store::query::CellView {
            policy: policy.parse().unwrap(),
            units,
            work_ns: Some(20_000_000),
            ..Default::default()
        };
        let input = |cells| ReportInput {
            cells,
            ..Default::default()
        };
        let a = input(vec![cell("fifo", Some(1000)), cell("other", Some(1000))]);
        let b = input(vec![cell("fifo", Some(3000)), cell("other", Some(1000))]);
        let d = compare(&a, &b).refusal().expect("fifo's units differ");
        assert_eq!(d.matched, 2);
        assert_eq!(d.cells.len(), 1);
        assert_eq!(
            (d.cells[0].units_a, d.cells[0].units_b),
            (Some(1000), Some(3000))
        );
        assert_eq!(d.cells[0].same, SameWork::No);
        assert!(compare(&a, &a).refusal().is_none());
        // A side that did not store its units cannot be told apart: no refusal.
        let old = input(vec![cell("fifo", None), cell("other", None)]);
        assert!(compare(&a, &old).refusal().is_none());
    }
}
