//! Number formatting shared by every text output: values with units, p-values, CIs.

use crate::model::Metric;
use schedlab_analyze::{Effect, EffectScale, Summary};

/// A value with 3-4 significant digits and no exponent: 201, 28.5, 2.85, 0.285.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".into()
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A value of `metric`: whole counts without decimals, Jain's index with 4 decimals (it
/// lives just below 1), everything else as [`fmt_num`].
pub fn fmt_value(v: f64, metric: Metric) -> String {
    if metric == Metric::JainCpu && v.is_finite() {
        format!("{v:.4}")
    } else if metric.unit().is_empty() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

/// A value of `metric` with its unit: "201 ms", "45".
pub fn fmt_with_unit(v: f64, metric: Metric) -> String {
    match metric.unit() {
        "" => fmt_value(v, metric),
        u => format!("{} {u}", fmt_value(v, metric)),
    }
}

/// A p-value for text: "0.004", "< 0.001".
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// An optional p-value for tables, "-" when the test could not be run.
pub fn fmt_opt_p(p: Option<f64>) -> String {
    p.map_or_else(|| "-".into(), fmt_p)
}

/// A CI of `metric` as "[lo, hi]".
pub fn fmt_ci(ci: (f64, f64), metric: Metric) -> String {
    format!("[{}, {}]", fmt_value(ci.0, metric), fmt_value(ci.1, metric))
}

/// A summary's median interval, `[lo, hi]`; below [`schedlab_analyze::MEDIAN_CI_MIN_N`] values, where no 95%
/// interval of the median exists and it is `[min, max]`, followed by its achieved coverage,
/// `[lo, hi] (75% cov.)` (issue 18: an interval says the coverage it has).
pub fn fmt_median_ci(s: &Summary, metric: Metric) -> String {
    let ci = fmt_ci(s.median_ci, metric);
    match median_ci_coverage(s) {
        Some(c) => format!("{ci} ({c} cov.)"),
        None => ci,
    }
}

/// The achieved coverage of a median interval that falls short of 95%, e.g. "75%" (3 values,
/// [min, max]); None at [`schedlab_analyze::MEDIAN_CI_MIN_N`] values or more.
pub fn median_ci_coverage(s: &Summary) -> Option<String> {
    let c = s.median_ci_coverage_below_level()? * 100.0;
    Some(if c.fract() == 0.0 {
        format!("{c:.0}%")
    } else {
        format!("{c}%")
    })
}

/// "0.52 [0.49, 0.55]", "-3.1 ms [-4.0, -2.2]", with the achieved coverage where the interval
/// is not a 95 % one.
pub fn fmt_effect(e: &Effect, metric: Option<Metric>) -> String {
    let (num, unit): (fn(f64) -> String, &str) = match e.scale {
        EffectScale::Ratio => (fmt_ratio_bare, "x"),
        EffectScale::Difference => (fmt_num, metric.map_or("", Metric::unit)),
    };
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let unbounded =
        !e.hi.is_finite() || !e.lo.is_finite() || (e.scale == EffectScale::Ratio && e.lo <= 0.0);
    if unbounded {
        // No boundary is rejected at this level on one side: these trials cannot bound it.
        return format!(
            "{}{unit} [no {}% bound with these trials]",
            num(e.estimate),
            fmt_level_pct(e.level)
        );
    }
    let mut out = format!("{}{unit} [{}, {}]", num(e.estimate), num(e.lo), num(e.hi));
    if let Some(name) = ci_shortfall(e) {
        out += &format!(" ({name})");
    }
    out
}

/// Where an effect's interval is no 95% interval (no interval of its kind reaches 95% with
/// these trials, or another level was asked), its name by the coverage it has: "90.0% CI"
/// (3 vs 3 trials); `None` for a 95% interval.
pub fn ci_shortfall(e: &Effect) -> Option<String> {
    (e.below_level || (e.level - 0.95).abs() > 1e-9)
        .then(|| format!("{}% CI", fmt_level_pct(e.coverage)))
}

/// A coverage (0..1) in percent with the digits that tell it from 100 %: 0.975 as "97.5",
/// 0.99962 as "99.962".
pub fn fmt_level_pct(level: f64) -> String {
    let decimals = ((1.0 - level).max(1e-9).log10().abs().ceil() as usize)
        .saturating_sub(1)
        .clamp(1, 4);
    format!("{:.*}", decimals, level * 100.0)
}

/// What an effect's interval is called: "95% CI", or its [`ci_shortfall`] name.
pub fn ci_name(e: &Effect) -> String {
    ci_shortfall(e).unwrap_or_else(|| format!("{:.0}% CI", e.level * 100.0))
}

/// A duration in ns, printed with a unit that keeps 3-4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// "1.42x"; "133x" for large ratios, "0.012x" for small ones.
pub fn fmt_ratio(r: f64) -> String {
    format!("{}x", fmt_ratio_bare(r))
}

/// A ratio without its "x": "1.42", "133", "0.012".
pub fn fmt_ratio_bare(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 0.1 || r == 0.0 {
        format!("{r:.2}")
    } else {
        fmt_num(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_digits_and_p_values_floor_at_one_in_a_thousand() {
        assert_eq!(fmt_num(201.34), "201");
        assert_eq!(fmt_num(28.46), "28.5");
        assert_eq!(fmt_num(2.846), "2.85");
        assert_eq!(fmt_num(0.2846), "0.285");
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(46.0), "46.0");
        assert_eq!(fmt_value(3.0, Metric::Ivcsw), "3");
        assert_eq!(fmt_value(1.5, Metric::Ivcsw), "1.50");
        assert_eq!(fmt_value(0.99987, Metric::JainCpu), "0.9999");
        assert_eq!(fmt_with_unit(5.0, Metric::Makespan), "5.00 ms");
        assert_eq!(fmt_ci((1.0, 2.5), Metric::Vcsw), "[1, 2.50]");
        assert_eq!(fmt_p(0.0041), "0.004");
        assert_eq!(fmt_p(0.0004), "< 0.001");
        assert_eq!(fmt_opt_p(None), "-");
    }

    #[test]
    fn a_median_interval_short_of_95_percent_says_its_coverage() {
        // [min, max] covers the median unless every value falls on one side of it:
        // 1 - 2 x 0.5^n, by hand: 0.75 at 3 values, 0.9375 at 5; from 6 an interval of 95%
        // or more exists and nothing is added.
        let summary = |n: usize| {
            let v: Vec<f64> = (1..=n).map(|i| i as f64).collect();
            schedlab_analyze::summarize(&v).unwrap()
        };
        assert_eq!(
            fmt_median_ci(&summary(3), Metric::Vcsw),
            "[1, 3] (75% cov.)"
        );
        assert_eq!(median_ci_coverage(&summary(5)).as_deref(), Some("93.75%"));
        assert_eq!(median_ci_coverage(&summary(6)), None);
        assert!(!fmt_median_ci(&summary(8), Metric::Vcsw).contains("cov."));
    }
}
