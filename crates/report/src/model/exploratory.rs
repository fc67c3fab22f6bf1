//! Tests across the policies of each group on the trial unit, and the exploratory comparisons
//! drawn from them: every policy against the group's baseline, per tested metric, with the
//! Hodges-Lehmann effect and its exact interval, the unadjusted exact Mann-Whitney p, and
//! what too few trials could not have shown. Nothing here is a verdict: only declared claims
//! (`crate::claims`) get those.

use super::fmt::fmt_ratio_bare;
use super::trials::{values, TestUnit};
use super::{fmt_p, fmt_with_unit, Group, Metric};
use schedlab_analyze::{
    cliff_delta, effect_two_sample, mann_whitney_min_p, mann_whitney_trials_needed, mann_whitney_u,
    median, min_detectable_difference, Comparison, Effect, EffectScale, PValueMethod, ALPHA,
    ALPHAS, CI_LEVEL, MDD_POWER,
};
use serde::Serialize;

/// One policy against the baseline of its group, on one metric.
#[derive(Debug, Clone, Serialize)]
pub struct ExploratoryComparison {
    /// Index of the group in [`super::Report::groups`].
    pub group: usize,
    /// Which metric.
    pub metric: Metric,
    /// Policies of the group with data on this metric, the baseline included.
    pub policies: usize,
    /// The baseline policy (treatment label).
    pub baseline: String,
    /// The policy compared with it.
    pub policy: String,
    /// Median of the baseline's trial values, in the metric's unit.
    pub baseline_median: f64,
    /// Median of the policy's trial values, in the metric's unit.
    pub median: f64,
    /// Trial values of the baseline.
    pub n_baseline: usize,
    /// Trial values of the policy.
    pub n_policy: usize,
    /// What one tested value is: a trial, or the median of a trial's tasks.
    pub unit: TestUnit,
    /// The policy against the baseline: the Hodges-Lehmann ratio policy / baseline, or the
    /// difference policy - baseline where a trial value is <= 0 (no ratio where a side is
    /// 0), with the interval that inverts the exact Mann-Whitney test (Moses) and the
    /// coverage it achieves; `None` where a side has no value.
    pub effect: Option<Effect>,
    /// Two-sided Mann-Whitney p of the policy vs the baseline, not adjusted for the other
    /// comparisons (exploratory).
    pub p: Option<f64>,
    /// How `p` was computed (exact, permutation with ties, asymptotic).
    pub method: Option<PValueMethod>,
    /// Cliff's delta of the policy against the baseline (positive: the policy is larger).
    pub cliff_delta: Option<f64>,
    /// Unadjusted p below 0.05 (exploratory: no verdict).
    pub significant_at_05: bool,
    /// Unadjusted p below 0.01 (exploratory: no verdict).
    pub significant_at_01: bool,
    /// The smallest two-sided p these trial counts allow (no ties, no overlap), unadjusted.
    pub min_p: Option<f64>,
    /// The trials cannot reach p below 0.05, whatever the data.
    pub too_few_trials: bool,
    /// Trials per policy with which p below 0.05 becomes possible.
    pub trials_needed: Option<usize>,
    /// Smallest difference of means a two-sided t-test at alpha 0.05 on these trial values
    /// detects with 80% power, in the metric's unit. Not the test the comparison runs (exact
    /// Mann-Whitney): only exported (csv), never stated as its power.
    pub min_detectable: Option<f64>,
    /// One-way ANOVA p-value across the group's policies (trial values).
    pub anova_p: Option<f64>,
    /// Kruskal-Wallis p-value across the group's policies (trial values).
    pub kruskal_p: Option<f64>,
    /// The comparison as one sentence.
    pub sentence: String,
}

impl ExploratoryComparison {
    /// -1 if the policy tends to be lower than the baseline, 1 if higher, 0 if neither.
    pub fn direction(&self) -> i8 {
        match self.cliff_delta {
            Some(d) if d < 0.0 => -1,
            Some(d) if d > 0.0 => 1,
            _ => 0,
        }
    }

    /// Short result for tables (by the unadjusted p): "lower **", "higher *", "n.s.", "too
    /// few", "no test".
    pub fn verdict(&self) -> String {
        let dir = if self.direction() < 0 {
            "lower"
        } else {
            "higher"
        };
        if self.significant_at_01 {
            format!("{dir} **")
        } else if self.significant_at_05 {
            format!("{dir} *")
        } else if self.p.is_none() {
            "no test".into()
        } else if self.too_few_trials {
            "too few".into()
        } else {
            "n.s.".into()
        }
    }
}

/// Compares the policies of a group on `metric`'s trial values (all pairs, for the pairwise
/// table); `None` unless two or more have data.
pub fn compare_metric(
    g: &Group,
    metric: Metric,
    policies: &[String],
    trial_values: &[Vec<Vec<(i64, f64)>>],
) -> Option<Comparison> {
    let named: Vec<(&str, Vec<f64>)> = g
        .cells
        .iter()
        .map(|&c| {
            (
                policies[c].as_str(),
                values(&trial_values[c][metric.index()]),
            )
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    Comparison::new(named, metric.lower_is_better())
}

/// The exploratory comparisons of group `gi` on `metric`: every other policy with data
/// against the baseline cell, each with its own unadjusted p. Empty when the baseline has no
/// data or no other policy has.
pub fn against_baseline(
    gi: usize,
    g: &Group,
    metric: Metric,
    policies: &[String],
    trial_values: &[Vec<Vec<(i64, f64)>>],
) -> Vec<ExploratoryComparison> {
    let Some(base_cell) = g.baseline else {
        return Vec::new();
    };
    let base = values(&trial_values[base_cell][metric.index()]);
    let others: Vec<(usize, Vec<f64>)> = g
        .cells
        .iter()
        .filter(|&&c| c != base_cell)
        .map(|&c| (c, values(&trial_values[c][metric.index()])))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if base.is_empty() || others.is_empty() {
        return Vec::new();
    }
    let overall = g.tests.iter().find(|(m, _)| *m == metric).map(|(_, c)| c);
    let base_median = median(&base).unwrap_or(f64::NAN);
    others
        .iter()
        .map(|(c, v)| {
            let t = mann_whitney_u(v, &base);
            let p = t.map(|t| t.p_value);
            let min_p = mann_whitney_min_p(base.len(), v.len());
            let mut f = ExploratoryComparison {
                group: gi,
                metric,
                policies: others.len() + 1,
                baseline: policies[base_cell].clone(),
                policy: policies[*c].clone(),
                baseline_median: base_median,
                median: median(v).unwrap_or(f64::NAN),
                n_baseline: base.len(),
                n_policy: v.len(),
                unit: TestUnit::of(metric),
                effect: effect_two_sample(v, &base, CI_LEVEL),
                p,
                method: t.map(|t| t.method),
                cliff_delta: cliff_delta(v, &base),
                significant_at_05: p.is_some_and(|p| p < ALPHA),
                significant_at_01: p.is_some_and(|p| p < ALPHAS.1),
                min_p,
                too_few_trials: min_p.is_none_or(|p| p >= ALPHA),
                trials_needed: mann_whitney_trials_needed(ALPHA),
                min_detectable: min_detectable_difference(&base, v, ALPHA, MDD_POWER)
                    .map(|d| d.difference),
                anova_p: overall.and_then(|c| c.anova.map(|t| t.p_value)),
                kruskal_p: overall.and_then(|c| c.kruskal_wallis.map(|t| t.p_value)),
                sentence: String::new(),
            };
            f.sentence = sentence(&g.label, &f);
            f
        })
        .collect()
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
        _ => "Mann-Whitney",
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
fn change(r: f64) -> String {
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
    let ci = super::fmt::ci_name(e);
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
    super::fmt_value(v.abs(), m)
}

/// The comparison as a sentence, e.g. "For cpu:pi with 2 tasks, fifo vs other (baseline):
/// fifo's makespan is 13% lower than other's (medians 20.5 ms vs 23.5 ms) [95% CI 11–14%
/// lower]; lower (better) than the baseline at alpha 0.01 (p (unadjusted) = 0.002; exact
/// Mann-Whitney on 6 vs 6 trials)."
fn sentence(label: &str, f: &ExploratoryComparison) -> String {
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
    let Some(p) = f.p else {
        let why = if f.n_policy < 2 || f.n_baseline < 2 {
            "no test: a test needs at least 2 trials per policy"
        } else {
            "no test: every trial value is the same"
        };
        return format!("{head}; {why}.");
    };
    let test = format!("{}; {}", p_clause(p), test_phrase(f));
    let (a05, a01) = ALPHAS;
    let dir = match (f.direction() < 0, f.metric.lower_is_better()) {
        (true, true) => "lower (better)",
        (true, false) => "lower (worse)",
        (false, true) => "higher (worse)",
        (false, false) => "higher (better)",
    };
    let tail = if f.significant_at_01 {
        format!("{dir} than the baseline at alpha {a01} ({test})")
    } else if f.significant_at_05 {
        format!("{dir} than the baseline at alpha {a05}, not at {a01} ({test})")
    } else if f.too_few_trials {
        let need = f.trials_needed.map_or(String::new(), |n| {
            format!(", p < {a05} becomes possible (not likely) from {n} per policy")
        });
        format!(
            "too few trials: {} vs {} cannot reach p < {a05}{need} ({test})",
            f.n_policy, f.n_baseline
        )
    } else {
        format!("no significant difference at alpha {a05} ({test})")
    };
    // No "smallest detectable difference" here: the only one at hand is a t-test's, a test
    // that is never run (issue 18). Claims state power for the test they use (`claims`);
    // the t-test figure stays in csv/exploratory.csv, labelled as such.
    format!("{head}; {tail}.")
}

#[cfg(test)]
#[path = "exploratory_tests.rs"]
mod tests;
