//! Tests across the policies of each group on the trial unit, and the exploratory comparisons
//! drawn from them: every policy against the group's baseline, per tested metric, with the
//! Hodges-Lehmann effect and its exact interval, the unadjusted exact Mann-Whitney p, and
//! what too few trials could not have shown. Nothing here is a verdict: only declared claims
//! (`crate::claims`) get those.

use super::trials::{values, TestUnit};
use super::{Group, Metric};
use schedlab_analyze::{
    cliff_delta, effect_two_sample, mann_whitney_min_p, mann_whitney_trials_needed, mann_whitney_u,
    median, min_detectable_difference, Comparison, Effect, PValueMethod, ALPHA, ALPHAS, CI_LEVEL,
    MDD_POWER,
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

    /// What the unadjusted p says (no verdict): the direction of a p below 0.01 or 0.05, too
    /// few trials to reach 0.05, nothing, or why there is no test.
    pub fn screening(&self) -> Screening {
        let Some(p) = self.p else {
            return Screening::NoTest(if self.n_policy < 2 || self.n_baseline < 2 {
                NoTest::FewTrials
            } else {
                NoTest::AllEqual
            });
        };
        let dir = if self.direction() < 0 {
            Direction::Lower
        } else {
            Direction::Higher
        };
        let result = if self.significant_at_01 {
            Screened::Below01(dir)
        } else if self.significant_at_05 {
            Screened::Below05(dir)
        } else if self.too_few_trials {
            Screened::TooFewTrials
        } else {
            Screened::NotSignificant
        };
        Screening::Tested { p, result }
    }
}

/// Which side of the baseline a policy tends to fall (Cliff's delta; none counts as higher).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Direction {
    /// The policy tends to be lower than the baseline.
    Lower,
    /// The policy tends to be higher, or neither.
    Higher,
}

/// Why a comparison has no test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NoTest {
    /// A side has fewer than 2 trial values.
    FewTrials,
    /// Every trial value is the same.
    AllEqual,
}

/// What an unadjusted p says about a comparison, exploratory (no verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Screened {
    /// p below 0.01 ([`ALPHAS`]`.1`), the policy on this side.
    Below01(Direction),
    /// p below 0.05 ([`ALPHA`]), not below 0.01.
    Below05(Direction),
    /// Not below 0.05, and these trial counts cannot go below it.
    TooFewTrials,
    /// Not below 0.05 though it could have been.
    NotSignificant,
}

/// A comparison's test, or why it has none.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Screening {
    /// No test ran.
    NoTest(NoTest),
    /// The test ran: its unadjusted p and what it says.
    Tested {
        /// Two-sided Mann-Whitney p, unadjusted.
        p: f64,
        /// What it says.
        result: Screened,
    },
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
            ExploratoryComparison {
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
            }
        })
        .collect()
}
