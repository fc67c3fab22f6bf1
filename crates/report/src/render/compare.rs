//! `schedlab compare` as terminal tables: the sides, the matched cells with their work, then
//! per metric the medians of both runs, the ratio B/A with its CI and mark (all computed in
//! [`crate::model::compare`]).

use super::terminal::terminal_table;
use crate::model::compare::{units, work, CompareReport, CompareRow, SameWork, RESAMPLES};
use crate::model::findings::{fmt_ratio, AllZero};
use crate::model::tables::Table;
use crate::model::{fmt_p, fmt_value, fmt_with_unit, Metric, TestUnit};

/// The matched cells with each side's work and units.
fn cells_table(c: &CompareReport) -> Table {
    Table {
        title:
            "\nMatched cells: work per task (as requested) and units of work per task in each run"
                .into(),
        header: [
            "cell",
            "work A",
            "work B",
            "units A",
            "units B",
            "same work",
        ]
        .map(String::from)
        .to_vec(),
        rows: c
            .cells
            .iter()
            .map(|m| {
                vec![
                    m.cell.clone(),
                    work(m.work_ns_a),
                    work(m.work_ns_b),
                    units(m.units_a),
                    units(m.units_b),
                    match m.same {
                        SameWork::Yes => "yes",
                        SameWork::No => "NO (units differ)",
                        SameWork::Unknown => "unknown",
                    }
                    .into(),
                ]
            })
            .collect(),
    }
}

/// The comparison as terminal tables: the sides, the matched cells, then one table per metric.
pub fn render(c: &CompareReport) -> String {
    let mut out = format!(
        "A: {}\nB: {}\nB/A: ratio of the medians of the trial values (per-task metrics: trial medians) with its 95% bootstrap CI resampling each run's trials ({RESAMPLES} resamples, seed {}), or, where a side's trial values are all 0, no ratio but the difference B - A; marks: Mann-Whitney p on the trial values < 0.05 *, < 0.01 ** (not adjusted for the number of rows).\n",
        c.side_a.describe(),
        c.side_b.describe(),
        c.seed
    );
    for (what, x, y) in c.differences() {
        out += &format!("The runs differ in {what} ({x} vs {y}).\n");
    }
    if !c.cells.is_empty() {
        out += &terminal_table(&cells_table(c));
        if !c.different_work().is_empty() {
            out += "Cells marked NO did different work (--allow-different-work): their ratios compare different amounts of work.\n";
        }
    }
    if c.rows.is_empty() {
        out += "\nNo cell with data is in both runs: cells match by policy, priorities, workload, tasks, kind, start and CPUs.\n";
    }
    if let Some(r) = c.too_few_trials() {
        out += &format!(
            "\nRows with as few trials as {} vs {} cannot reach p < 0.05 (exact Mann-Whitney needs at least {} trials per run); their marks stay empty whatever the difference.\n",
            r.n_a,
            r.n_b,
            CompareReport::trials_needed()
        );
    }
    for m in Metric::ALL {
        out += &metric_section(c, m);
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

/// The ratio B/A; where a side's trial values are all 0, the difference B - A instead
/// ("B - A = +3.00 ms (A all 0)"): 0 / x = 0 with a CI of [0, 0] says nothing.
fn ratio_or_difference(r: &CompareRow) -> String {
    let who = match r.all_zero {
        AllZero::Neither => return r.ratio.map_or("-".into(), fmt_ratio),
        AllZero::Baseline => "A all 0",
        AllZero::Policy => "B all 0",
        AllZero::Both => "both all 0",
    };
    let d = r.median_b - r.median_a;
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        ""
    };
    format!("B - A = {sign}{} ({who})", fmt_with_unit(d.abs(), r.metric))
}

/// One row of a metric's table: cell, trials, medians, ratio with its CI, p and mark.
fn metric_row(r: &CompareRow) -> Vec<String> {
    let m = r.metric;
    vec![
        format!(
            "{}{}",
            r.cell,
            if r.different_work { " (≠ work)" } else { "" }
        ),
        format!("{}/{}", r.n_a, r.n_b),
        fmt_value(r.median_a, m),
        fmt_value(r.median_b, m),
        ratio_or_difference(r),
        r.ratio_ci.map_or("-".into(), |(lo, hi)| {
            format!(
                "[{}, {}]{}",
                fmt_ratio(lo),
                fmt_ratio(hi),
                if r.one_sided_ci() { " †" } else { "" }
            )
        }),
        r.p.map_or("-".into(), fmt_p),
        r.mark().into(),
    ]
}

/// The table of metric `m` (with the geometric mean of its ratios over several cells) and
/// its footnote; empty when no cell has it in both runs.
fn metric_section(c: &CompareReport, m: Metric) -> String {
    let rows = c.rows_of(m);
    if rows.is_empty() {
        return String::new();
    }
    let unit = TestUnit::of(m).plural();
    let mut t = Table {
        title: format!("\n{}, {} (n: {unit})", m.with_unit(), m.level()),
        header: [
            "cell", "n A/B", "median A", "median B", "B/A", "95% CI", "p", "",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows.iter().map(|r| metric_row(r)).collect(),
    };
    if let Some(g) = c.geomean(m) {
        let mut row = vec![String::new(); 8];
        row[0] = "geomean".into();
        row[4] = g.map_or("-".into(), fmt_ratio);
        t.rows.push(row);
    }
    let mut out = terminal_table(&t);
    if rows.iter().any(|r| r.one_sided_ci()) {
        out += "† One side has a single trial: the CI reflects only the other side's spread.\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(median_a: f64, median_b: f64, all_zero: AllZero) -> CompareRow {
        CompareRow {
            cell: "cpu".into(),
            metric: Metric::Makespan,
            n_a: 3,
            n_b: 3,
            median_a,
            median_b,
            ratio: (all_zero == AllZero::Neither).then(|| median_b / median_a),
            ratio_ci: None,
            all_zero,
            p: None,
            method: None,
            min_p: None,
            different_work: false,
        }
    }

    #[test]
    fn a_side_of_all_zeros_shows_the_difference_not_a_ratio() {
        let b_zero = ratio_or_difference(&row(2.0, 0.0, AllZero::Policy));
        assert_eq!(b_zero, "B - A = -2.00 ms (B all 0)");
        let a_zero = ratio_or_difference(&row(0.0, 3.0, AllZero::Baseline));
        assert!(a_zero.starts_with("B - A = +3.00 ms (A all 0)"));
        assert_eq!(
            ratio_or_difference(&row(0.0, 0.0, AllZero::Both)),
            "B - A = 0 ms (both all 0)"
        );
        assert_eq!(
            ratio_or_difference(&row(2.0, 3.0, AllZero::Neither)),
            fmt_ratio(1.5)
        );
        assert!(!metric_row(&row(2.0, 0.0, AllZero::Policy))[4].contains("0.00x"));
    }

    #[test]
    fn compare_gives_no_ratio_where_a_side_is_all_zeros() {
        assert_eq!(
            crate::model::compare::ratio_ci(&[2.0, 3.0], &[0.0, 0.0], 1),
            None
        );
    }
}
