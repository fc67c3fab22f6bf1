//! `schedlab compare` as terminal tables: the sides, the matched cells with their work, then
//! per metric the medians of both runs, the effect B against A with its CI, the unadjusted p
//! and its mark (all computed in [`crate::model::compare`]).

use super::terminal::terminal_table;
use crate::model::compare::{
    CompareReport, CompareRow, DifferentWork, Differs, MachineInfo, RunRef, SameWork, Side,
};
use crate::model::iosched::Significance;
use crate::model::{Metric, TestUnit};
use crate::render::fmt::{fmt_ns, fmt_ratio};
use crate::render::fmt::{fmt_p, fmt_value, fmt_with_unit};
use crate::render::text_table::Table;
use schedlab_analyze::{Effect, EffectScale};

/// "run 7 \"name\"", and " in DB" after it where the runs come from two databases.
pub fn run_label(r: &RunRef) -> String {
    let label = format!("run {} \"{}\"", r.run_id, r.name);
    match &r.db {
        Some(db) => format!("{label} in {}", db.display()),
        None => label,
    }
}

/// "AMD EPYC, 2 CPUs", "AMD EPYC", "2 CPUs".
fn machine(m: &MachineInfo) -> String {
    match (&m.cpu_model, m.cpus) {
        (Some(model), Some(n)) => format!("{model}, {n} CPUs"),
        (Some(model), None) => model.clone(),
        (None, Some(n)) => format!("{n} CPUs"),
        (None, None) => "unknown".into(),
    }
}

/// "run 1 \"x\": kernel 6.8.0, machine AMD EPYC, 2 CPUs, host vm".
pub fn describe(s: &Side) -> String {
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    format!(
        "{}: kernel {}, machine {}, host {}",
        run_label(&s.run),
        or(&s.kernel),
        s.machine.as_ref().map_or_else(|| "unknown".into(), machine),
        or(&s.host)
    )
}

/// Units of work per task, or "unknown".
pub fn units(u: Option<i64>) -> String {
    u.map_or_else(|| "unknown".into(), |u| u.to_string())
}

/// Work per task as requested, or "sized in units".
pub fn work(w: Option<i64>) -> String {
    w.map_or_else(|| "sized in units".into(), |w| fmt_ns(w as f64))
}

/// Why `compare` refuses runs whose cells did different work: the cells, each side's units
/// and work, and what to do.
pub fn refusal(d: &DifferentWork) -> String {
    let list: Vec<String> = d
        .cells
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
    format!(
        "{} of {} matched cells did different work in {} and {}, so their times are not comparable:\n{}\nRe-run one side with --iterations N (the other's units) to compare the same work, or pass --allow-different-work to compare anyway.",
        d.cells.len(),
        d.matched,
        run_label(&d.a),
        run_label(&d.b),
        list.join("\n")
    )
}

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
        "A: {}\nB: {}\nB/A: Hodges-Lehmann ratio of the trial values (per-task metrics: trial medians), B over A, with its 95% CI from the exact Mann-Whitney distribution (where these trials allow no 95% interval, the coverage it has instead), or, where a trial value is 0 or below, the difference B - A; p (unadjusted): two-sided Mann-Whitney on the trial values, marked < 0.05 *, < 0.01 ** (not adjusted for the number of rows).\n",
        describe(&c.side_a),
        describe(&c.side_b),
    );
    for d in c.differences() {
        let (what, x, y) = match d {
            Differs::Kernel(x, y) => ("kernel", x.to_string(), y.to_string()),
            Differs::Machine(x, y) => ("machine", machine(x), machine(y)),
        };
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
            out += &format!("\nOnly in {}:\n", run_label(which));
            for cell in cells.iter() {
                out += &format!("- {cell}\n");
            }
        }
    }
    out
}

/// The effect B against A: "1.50x", or as a difference where a value is <= 0, "B - A = +3.00
/// ms" (0 / x = 0 with a CI of [0, 0] would say nothing).
fn effect_cell(r: &CompareRow) -> String {
    let Some(e) = &r.effect else {
        return "-".into();
    };
    match e.scale {
        EffectScale::Ratio => fmt_ratio(e.estimate),
        EffectScale::Difference => format!("B - A = {}", signed(e.estimate, r.metric)),
    }
}

/// "+3.00 ms", "-2.00 ms", "0 ms".
fn signed(d: f64, m: Metric) -> String {
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", fmt_with_unit(d.abs(), m))
}

/// The effect's interval, "[1.40x, 1.60x]" or "[-3.00 ms, -1.00 ms]", with the coverage it
/// has where it is no 95% interval: "[0.90x, 1.20x] (71.4% CI)".
fn ci_cell(e: &Effect, m: Metric) -> String {
    let end = |v: f64| match e.scale {
        EffectScale::Ratio => fmt_ratio(v),
        EffectScale::Difference => fmt_with_unit(v, m),
    };
    let mut out = format!("[{}, {}]", end(e.lo), end(e.hi));
    if let Some(name) = crate::render::fmt::ci_shortfall(e) {
        out += &format!(" ({name})");
    }
    out
}

/// One row of a metric's table: cell, trials, medians, effect with its CI, p and mark.
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
        effect_cell(r),
        r.effect.as_ref().map_or("-".into(), |e| ci_cell(e, m)),
        r.p.map_or("-".into(), fmt_p),
        stars(r.significance()).into(),
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
            "cell",
            "n A/B",
            "median A",
            "median B",
            "B/A",
            "95% CI",
            "p (unadjusted)",
            "",
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
    terminal_table(&t)
}

/// The stars of a significance level: "**" below 0.01, "*" below 0.05, else none.
pub fn stars(s: Significance) -> &'static str {
    match s {
        Significance::Alpha01 => "**",
        Significance::Alpha05 => "*",
        Significance::None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: &[f64], b: &[f64]) -> CompareRow {
        CompareRow {
            cell: "cpu".into(),
            metric: Metric::Makespan,
            n_a: a.len(),
            n_b: b.len(),
            median_a: schedlab_analyze::median(a).unwrap(),
            median_b: schedlab_analyze::median(b).unwrap(),
            effect: crate::model::compare::effect(a, b),
            p: None,
            method: None,
            min_p: None,
            different_work: false,
        }
    }

    #[test]
    fn a_side_of_zeros_shows_the_difference_not_a_ratio() {
        // B all 0: the 9 differences 0 - a are -1, -2, -3 (three times each); median -2.
        let b_zero = metric_row(&row(&[1.0, 2.0, 3.0], &[0.0, 0.0, 0.0]));
        assert_eq!(b_zero[4], "B - A = -2.00 ms");
        // 3 vs 3: the widest interval [min, max] of the differences covers 90% (scipy:
        // 1 - 2 / C(6, 3)).
        assert_eq!(b_zero[5], "[-3.00 ms, -1.00 ms] (90.0% CI)");
        assert!(!b_zero[4].contains("0.00x"));
        let ratio = metric_row(&row(&[2.0, 2.0, 2.0], &[3.0, 3.0, 3.0]));
        assert_eq!(ratio[4], fmt_ratio(1.5));
        assert_eq!(ratio[5], "[1.50x, 1.50x] (90.0% CI)");
    }
}
