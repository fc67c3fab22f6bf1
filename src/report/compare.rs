//! A/B comparison of two runs, in the manner of benchstat: the cells present in both (matched
//! by their axis values), and per metric the ratio B/A of the medians with a seeded 95%
//! bootstrap CI of that ratio and a Mann-Whitney significance mark.

use super::model::findings::fmt_ratio;
use super::model::tables::Table;
use super::model::{cell_samples, describe, fmt_p, fmt_value, CellKey, Metric, ReportInput};
use super::terminal::terminal_table;
use crate::analyze::{mann_whitney_u, median_ratio_ci, percentile};
use std::collections::HashMap;

/// Bootstrap resamples per ratio CI.
pub const RESAMPLES: usize = 2000;

/// One metric of one cell in both runs.
#[derive(Debug, Clone)]
pub struct CompareRow {
    /// Label of the cell.
    pub cell: String,
    /// Which metric.
    pub metric: Metric,
    /// Samples in run A.
    pub n_a: usize,
    /// Samples in run B.
    pub n_b: usize,
    /// Median in run A, in the metric's unit.
    pub median_a: f64,
    /// Median in run B, in the metric's unit.
    pub median_b: f64,
    /// Median B / median A; `None` when A's median is 0.
    pub ratio: Option<f64>,
    /// 95% bootstrap CI of the ratio.
    pub ratio_ci: Option<(f64, f64)>,
    /// Mann-Whitney U two-sided p-value of A vs B (not adjusted).
    pub p: Option<f64>,
}

impl CompareRow {
    /// "**" for p < 0.01, "*" for p < 0.05, "" otherwise.
    pub fn mark(&self) -> &'static str {
        match self.p {
            Some(p) if p < 0.01 => "**",
            Some(p) if p < 0.05 => "*",
            _ => "",
        }
    }
}

/// The comparison of two runs.
#[derive(Debug, Clone)]
pub struct CompareReport {
    /// "run 7 \"name\"" of A.
    pub a: String,
    /// "run 9 \"name\"" of B.
    pub b: String,
    /// Seed of every bootstrap (run A's seed).
    pub seed: u64,
    /// One row per matched cell and metric with data in both runs, by metric then cell.
    pub rows: Vec<CompareRow>,
    /// Cells only in run A.
    pub only_a: Vec<String>,
    /// Cells only in run B.
    pub only_b: Vec<String>,
}

/// 95% percentile-bootstrap CI of median(b) / median(a), resampling each run's values
/// ([`median_ratio_ci`] with [`RESAMPLES`] resamples). `None` when A's median is 0.
pub fn ratio_ci(a: &[f64], b: &[f64], seed: u64) -> Option<(f64, f64)> {
    median_ratio_ci(a, b, seed, RESAMPLES).map(|r| (r.lo, r.hi))
}

/// Matches the cells of two runs by axis values and compares every tested metric.
pub fn compare(a: &ReportInput, b: &ReportInput) -> CompareReport {
    let seed = a.run.seed;
    let keys_a = CellKey::all_of(&a.cells);
    let keys_b = CellKey::all_of(&b.cells);
    let all: Vec<CellKey> = keys_a.iter().chain(&keys_b).cloned().collect();
    let labels: HashMap<&CellKey, String> = all.iter().zip(describe(&all)).collect();
    let in_b: HashMap<&CellKey, usize> = keys_b.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let in_a: HashMap<&CellKey, usize> = keys_a.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut rows = Vec::new();
    let mut matched = Vec::new();
    for (ia, k) in keys_a.iter().enumerate() {
        if let Some(&ib) = in_b.get(k) {
            matched.push((
                labels[k].clone(),
                cell_samples(&a.cells[ia]),
                cell_samples(&b.cells[ib]),
            ));
        }
    }
    for m in Metric::ALL.into_iter().filter(|m| m.tested()) {
        for (label, sa, sb) in &matched {
            let (xa, xb) = (&sa[m.index()], &sb[m.index()]);
            let (Some(median_a), Some(median_b)) = (percentile(xa, 50.0), percentile(xb, 50.0))
            else {
                continue;
            };
            rows.push(CompareRow {
                cell: label.clone(),
                metric: m,
                n_a: xa.len(),
                n_b: xb.len(),
                median_a,
                median_b,
                ratio: (median_a != 0.0).then(|| median_b / median_a),
                ratio_ci: ratio_ci(xa, xb, seed),
                p: mann_whitney_u(xa, xb).map(|t| t.p_value),
            });
        }
    }
    let only = |keys: &[CellKey], other: &HashMap<&CellKey, usize>| {
        keys.iter()
            .filter(|k| !other.contains_key(k))
            .map(|k| labels[k].clone())
            .collect()
    };
    CompareReport {
        a: format!("run {} \"{}\"", a.run.run_id, a.run.name),
        b: format!("run {} \"{}\"", b.run.run_id, b.run.name),
        seed,
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

/// The comparison as terminal tables, one per metric.
pub fn render(c: &CompareReport) -> String {
    let mut out = format!(
        "A: {}\nB: {}\nB/A: ratio of medians with its 95% bootstrap CI ({RESAMPLES} resamples, seed {}); marks: Mann-Whitney p < 0.05 *, < 0.01 ** (not adjusted for the number of rows).\n",
        c.a, c.b, c.seed
    );
    if c.rows.is_empty() {
        out += "\nNo cell with data is in both runs: cells match by policy, priorities, workload, tasks, kind, start and CPUs.\n";
    }
    for m in Metric::ALL {
        let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| r.metric == m).collect();
        if rows.is_empty() {
            continue;
        }
        let mut t = Table {
            title: format!("\n{}, {}", m.with_unit(), m.level()),
            header: [
                "cell", "n A/B", "median A", "median B", "B/A", "95% CI", "p", "",
            ]
            .map(String::from)
            .to_vec(),
            rows: rows
                .iter()
                .map(|r| {
                    vec![
                        r.cell.clone(),
                        format!("{}/{}", r.n_a, r.n_b),
                        fmt_value(r.median_a, m),
                        fmt_value(r.median_b, m),
                        r.ratio.map_or("-".into(), fmt_ratio),
                        r.ratio_ci.map_or("-".into(), |(lo, hi)| {
                            format!("[{}, {}]", fmt_ratio(lo), fmt_ratio(hi))
                        }),
                        r.p.map_or("-".into(), fmt_p),
                        r.mark().into(),
                    ]
                })
                .collect(),
        };
        if rows.len() > 1 {
            let g = geomean(rows.iter().filter_map(|r| r.ratio));
            t.rows.push(vec![
                "geomean".into(),
                String::new(),
                String::new(),
                String::new(),
                g.map_or("-".into(), fmt_ratio),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }
        out += &terminal_table(&t);
    }
    for (which, cells) in [(&c.a, &c.only_a), (&c.b, &c.only_b)] {
        if !cells.is_empty() {
            out += &format!("\nOnly in {which}:\n");
            for cell in cells.iter() {
                out += &format!("- {cell}\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_ci_brackets_the_true_ratio_of_two_shifted_samples() {
        let a: Vec<f64> = (0..50).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.5).collect();
        let (lo, hi) = ratio_ci(&a, &b, 7).expect("ci");
        assert!(lo < 1.5 && 1.5 < hi, "[{lo}, {hi}]");
        assert!(hi - lo < 0.4, "[{lo}, {hi}]");
        assert_eq!(ratio_ci(&a, &b, 7), Some((lo, hi)), "seeded: repeatable");
    }

    #[test]
    fn large_samples_use_the_fast_median_draw_and_still_bracket_the_ratio() {
        let a: Vec<f64> = (0..20_001).map(|i| (i % 997) as f64 + 1.0).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 0.8).collect();
        let (lo, hi) = ratio_ci(&a, &b, 1).expect("ci");
        assert!(lo <= 0.8 && 0.8 <= hi, "[{lo}, {hi}]");
        assert!(hi - lo < 0.05, "[{lo}, {hi}]");
    }

    #[test]
    fn marks_follow_the_p_value_and_geomean_ignores_undefined_ratios() {
        let row = |p| CompareRow {
            cell: String::new(),
            metric: Metric::Makespan,
            n_a: 1,
            n_b: 1,
            median_a: 1.0,
            median_b: 1.0,
            ratio: None,
            ratio_ci: None,
            p,
        };
        assert_eq!(row(Some(0.004)).mark(), "**");
        assert_eq!(row(Some(0.03)).mark(), "*");
        assert_eq!(row(Some(0.2)).mark(), "");
        assert_eq!(row(None).mark(), "");
        let g = geomean([2.0, 0.5, f64::NAN, 0.0].into_iter()).expect("two usable ratios");
        assert!((g - 1.0).abs() < 1e-12);
    }
}
