//! The exploratory comparisons in words, for every output: each comparison as one sentence
//! (its effect with the interval, its unadjusted p and what that p says) and its short result
//! for tables. The numbers and the decisions come from [`crate::model::exploratory`].

use crate::model::exploratory::{Direction, ExploratoryComparison, NoTest, Screened, Screening};
use crate::model::Metric;
use crate::render::fmt::{ci_name, fmt_p, fmt_ratio_bare, fmt_value, fmt_with_unit};
use schedlab_analyze::{Effect, EffectScale, PValueMethod, ALPHAS};

/// The short result for tables (by the unadjusted p): "lower **", "higher *", "n.s.", "too
/// few", "no test".
pub fn verdict(f: &ExploratoryComparison) -> String {
    let dir = |d: Direction| match d {
        Direction::Lower => "lower",
        Direction::Higher => "higher",
    };
    match f.screening() {
        Screening::Tested { result, .. } => match result {
            Screened::Below01(d) => format!("{} **", dir(d)),
            Screened::Below05(d) => format!("{} *", dir(d)),
            Screened::TooFewTrials => "too few".into(),
            Screened::NotSignificant => "n.s.".into(),
        },
        Screening::NoTest(_) => "no test".into(),
    }
}

/// A signed value with the metric's unit: "+12", "-3.00 ms".
fn signed(d: f64, metric: Metric) -> String {
    let sign = if d > 0.0 {
        "+"
    } else if d < 0.0 {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", fmt_with_unit(d.abs(), metric))
}

/// "p (unadjusted) = 0.004" or "p (unadjusted) < 0.001".
fn p_clause(p: f64) -> String {
    match fmt_p(p) {
        s if s.starts_with('<') => format!("p (unadjusted) {s}"),
        s => format!("p (unadjusted) = {s}"),
    }
}

/// The test as a phrase: "exact Mann-Whitney on 6 vs 6 trials".
pub fn test_phrase(f: &ExploratoryComparison) -> String {
    let kind = match f.method {
        Some(PValueMethod::Exact) => "exact Mann-Whitney",
        Some(PValueMethod::Permutation) => "Mann-Whitney with an exact permutation p (ties)",
        Some(PValueMethod::MonteCarlo) => "Mann-Whitney with a Monte Carlo permutation p (ties)",
        Some(PValueMethod::Asymptotic) => "Mann-Whitney (normal approximation)",
        Some(PValueMethod::Parametric) | None => "Mann-Whitney",
    };
    format!(
        "{kind} on {} vs {} {}",
        f.n_policy,
        f.n_baseline,
        f.unit.plural()
    )
}

/// A share of change in %: "12", "4.5", and two significant digits below 1 ("0.31",
/// "0.0042"; at most 6 decimals).
fn fmt_pct(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else if v > 0.0 {
        let decimals = ((-v.log10()).floor() as usize + 2).min(6);
        format!("{v:.decimals$}")
    } else {
        "0".into()
    }
}

/// A ratio as the change it is: "12% lower", "4.5% higher", "0%".
pub(crate) fn change(r: f64) -> String {
    if r < 1.0 {
        format!("{}% lower", fmt_pct((1.0 - r) * 100.0))
    } else if r > 1.0 {
        format!("{}% higher", fmt_pct((r - 1.0) * 100.0))
    } else {
        "0%".into()
    }
}

/// The effect with its interval, in words: "fifo's makespan is 12% lower than other's
/// (medians 20.5 ms vs 23.5 ms) [95% CI 9.0–14% lower]", "15 times other's ... [95% CI
/// 6.38–53 times]" from a ratio of 2 on, or as a difference where a value is <= 0: "fifo's
/// makespan is 45.0 ms lower than other's (medians ...) [90.0% CI 40.0–50.0 ms lower]".
/// `None` without an effect.
pub fn interval_statement(f: &ExploratoryComparison) -> Option<String> {
    let e = f.effect.as_ref()?;
    let b = &f.baseline;
    let medians = format!(
        "(medians {} vs {})",
        fmt_with_unit(f.median, f.metric),
        fmt_with_unit(f.baseline_median, f.metric)
    );
    let ci = ci_name(e);
    let effect = match e.scale {
        EffectScale::Ratio => ratio_words(e, b, &medians, &ci),
        EffectScale::Difference => difference_words(e, f.metric, b, &medians, &ci),
    };
    Some(format!("{}'s {} is {effect}", f.policy, f.metric.phrase()))
}

/// A ratio effect in words (see [`interval_statement`]).
fn ratio_words(e: &Effect, b: &str, medians: &str, ci: &str) -> String {
    let (r, lo, hi) = (e.estimate, e.lo, e.hi);
    if r >= 2.0 {
        return format!(
            "{} times {b}'s {medians} [{ci} {}–{} times]",
            fmt_ratio_bare(r),
            fmt_ratio_bare(lo),
            fmt_ratio_bare(hi)
        );
    }
    let estimate = if r == 1.0 {
        format!("the same as {b}'s")
    } else {
        format!("{} than {b}'s", change(r))
    };
    let range = if hi < 1.0 {
        let (near, far) = ((1.0 - hi) * 100.0, (1.0 - lo) * 100.0);
        format!("{}–{}% lower", fmt_pct(near), fmt_pct(far))
    } else if lo > 1.0 {
        let (near, far) = ((lo - 1.0) * 100.0, (hi - 1.0) * 100.0);
        format!("{}–{}% higher", fmt_pct(near), fmt_pct(far))
    } else {
        format!("{} to {}", change(lo), change(hi))
    };
    format!("{estimate} {medians} [{ci} {range}]")
}

/// A difference effect in words (see [`interval_statement`]).
fn difference_words(e: &Effect, m: Metric, b: &str, medians: &str, ci: &str) -> String {
    let abs = |v: f64| fmt_with_unit(v.abs(), m);
    let estimate = if e.estimate < 0.0 {
        format!("{} lower than {b}'s", abs(e.estimate))
    } else if e.estimate > 0.0 {
        format!("{} higher than {b}'s", abs(e.estimate))
    } else {
        format!("the same as {b}'s")
    };
    let range = if e.hi < 0.0 {
        format!("{}–{} lower", fmt_value_bare(e.hi, m), abs(e.lo))
    } else if e.lo > 0.0 {
        format!("{}–{} higher", fmt_value_bare(e.lo, m), abs(e.hi))
    } else {
        format!("{} to {}", signed(e.lo, m), signed(e.hi, m))
    };
    format!("{estimate} {medians} [{ci} {range}]")
}

/// The size of a value without its unit: "40.0" (the unit follows the range's other end).
fn fmt_value_bare(v: f64, m: Metric) -> String {
    fmt_value(v.abs(), m)
}

/// The comparison as a sentence, e.g. "For cpu:pi with 2 tasks, fifo vs other (baseline):
/// fifo's makespan is 13% lower than other's (medians 20.5 ms vs 23.5 ms) [95% CI 11–14%
/// lower]; lower (better) than the baseline at alpha 0.01 (p (unadjusted) = 0.002; exact
/// Mann-Whitney on 6 vs 6 trials)."
pub fn sentence(label: &str, f: &ExploratoryComparison) -> String {
    let what = interval_statement(f).unwrap_or_else(|| {
        format!(
            "{} {} vs {}",
            f.metric.phrase(),
            fmt_with_unit(f.median, f.metric),
            fmt_with_unit(f.baseline_median, f.metric)
        )
    });
    let head = format!(
        "For {label}, {} vs {} (baseline): {what}",
        f.policy, f.baseline
    );
    let (a05, a01) = ALPHAS;
    let (p, result) = match f.screening() {
        Screening::NoTest(why) => {
            let why = match why {
                NoTest::FewTrials => "no test: a test needs at least 2 trials per policy",
                NoTest::AllEqual => "no test: every trial value is the same",
            };
            return format!("{head}; {why}.");
        }
        Screening::Tested { p, result } => (p, result),
    };
    let test = format!("{}; {}", p_clause(p), test_phrase(f));
    let dir = |d: Direction| match (d, f.metric.lower_is_better()) {
        (Direction::Lower, true) => "lower (better)",
        (Direction::Lower, false) => "lower (worse)",
        (Direction::Higher, true) => "higher (worse)",
        (Direction::Higher, false) => "higher (better)",
    };
    let tail = match result {
        Screened::Below01(d) => format!("{} than the baseline at alpha {a01} ({test})", dir(d)),
        Screened::Below05(d) => format!(
            "{} than the baseline at alpha {a05}, not at {a01} ({test})",
            dir(d)
        ),
        Screened::TooFewTrials => {
            let need = f.trials_needed.map_or(String::new(), |n| {
                format!(", p < {a05} becomes possible (not likely) from {n} per policy")
            });
            format!(
                "too few trials: {} vs {} cannot reach p < {a05}{need} ({test})",
                f.n_policy, f.n_baseline
            )
        }
        Screened::NotSignificant => format!("no significant difference at alpha {a05} ({test})"),
    };
    // No "smallest detectable difference" here: the only one at hand is a t-test's, a test
    // that is never run (issue 18). Claims state power for the test they use (`claims`);
    // the t-test figure stays in csv/exploratory.csv, labelled as such.
    format!("{head}; {tail}.")
}

#[cfg(test)]
#[path = "exploratory_tests.rs"]
mod tests;
