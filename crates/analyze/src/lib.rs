//! Pure statistics for scheduling experiments: summaries, hypothesis tests, effect sizes,
//! and [`Comparison`] of named groups (one group of samples per policy).
//!
//! Everything here is unit-agnostic: functions take `f64` samples in whatever unit the
//! caller measured (ns, ms, counts, ...) and report location and spread in that unit.
//! There is no I/O. Degenerate input gives `None`, never NaN or a panic.
//!
//! Trials (rounds) are the replicates. The building blocks for testing on the trial unit:
//! - [`per_trial`] / [`per_trial_by_key`]: per-task values to one value per trial;
//! - [`mann_whitney_u`]: p exact for small samples as scipy's default, a permutation p with
//!   ties, the method named in [`TestResult::method`];
//! - [`mann_whitney_min_p`], [`mann_whitney_trials_needed`] and
//!   [`min_detectable_difference`]: what too few trials could have found;
//! - [`effect_two_sample`]: the Hodges-Lehmann effect with its exact interval;
//! - [`precision()`]: how precisely a cell is known from its trials.
//!
//! These serve the exploratory comparisons; the claims engine below gives verdicts.
//!
//! # Claims engine: declared claims, verdicts, power, adaptive stopping
//!
//! How a caller (claims table, `--until-decided`) uses it, in order:
//! 1. Each declared claim in each cell of its scope: [`test_claim`]`(a, &others, &relation,
//!    level)`. [`Arm`]: one value per trial (e.g. the trial's median over its tasks), with
//!    round ids if the run has rounds (then the signed-rank test on rounds). [`Relation`]:
//!    lower / higher / ratio at least / at most / equal within a margin ([`Amount`]:
//!    relative or absolute). Several `others` must each hold. Gives a [`ClaimTest`]:
//!    `p_family` (what Holm adjusts), `leaning`, and per compared treatment a [`PairTest`]
//!    (n per side, [`RankTest`] and p-value method, one-sided p's, the [`Effect`]: ratio or,
//!    with a value <= 0, difference, Hodges-Lehmann, interval with its achieved coverage).
//!    Trends: [`test_trend`]. A cell whose test cannot run: [`untested`] (p = 1, still in
//!    the family). Bad input: [`ClaimError`], whose message says what to do.
//! 2. All of them together: [`decide_family`]`(&tests, alpha)`: per test a [`FamilyVerdict`]
//!    (the [`Verdict`] word, p, Holm-adjusted p), in input order. Undeclared comparisons:
//!    [`exploratory`] (unadjusted p, labelled [`EXPLORATORY`]). Methods text:
//!    [`claims_methods_text`]. The rules and why they keep the error at alpha: `family.rs`.
//! 3. Inconclusive verdicts: [`claim_power()`]`(a, &others, &relation,
//!    &PowerQuery::new(power_alpha(alpha, m), seed))`: [`Power`] at `smallest_effect` for the
//!    test actually run, [`TrialsNeeded`] for 80%, the smallest reachable p, the detectable
//!    effect. Trends get no power statement.
//! 4. Cell summaries with stated coverage: [`median_ci`] (order statistics; `below_level`
//!    and the achieved coverage where no 95% interval exists, n < 6), [`mean_ci`] (t).
//! 5. Adaptive runs. `--precision`: [`AnytimeStoppingRule`] (whether every cell is precise
//!    enough to stop) and [`sequential_precision`] (for [`precision()`]): a confidence
//!    sequence, finite from 10 trials. `--until-decided`: [`UntilDecided`]; after
//!    each round, `look(rounds)`, then `alpha_at(look)` for both `decide_family` and
//!    `test_claim`'s level (1 - alpha_k), then `decide(rounds, &verdicts)`; report the last
//!    look's verdicts. Both have `methods_text`.
//!
//! Checked against scipy in `tests/fixtures/stats/`; coverage, family-wise error, power
//! and the stopping rules are simulated in the tests beside each file.

#![forbid(unsafe_code)]

pub mod claim_level;
pub mod claim_power;
pub mod claim_types;
pub mod claims;
pub mod design;
mod draws;
pub mod effect;
mod exact;
pub mod family;
#[cfg(test)]
mod fixtures;
pub mod gatekeeping;
pub mod hypothesis;
pub mod intervals;
pub mod mann_whitney;
pub mod power;
pub mod precision;
pub mod rank_tests;
pub mod sequential;
pub mod shape;
#[cfg(test)]
mod sim;
pub mod stratified;
pub mod summary;
pub mod trend;
pub mod trials;

pub use claim_level::{every_of, negligible, test_claim_over_cells, CellArms, Scope};
pub use claim_power::{
    claim_power, Power, PowerQuery, TrialsNeeded, POWER_CAP, POWER_REPLICATIONS, POWER_TARGET,
};
pub use claims::{
    test_claim, Amount, Arm, ClaimError, ClaimKind, ClaimTest, Design, Fallback, Leaning, PairTest,
    RankTest, Relation,
};
pub use design::{earliest, look_schedule, ClaimDesign, Earliest};
pub use effect::{
    effect_paired, effect_paired_on, effect_two_sample, effect_two_sample_on, Effect, EffectMethod,
    EffectScale,
};
pub use family::{
    claims_methods_text, decide_family, exploratory, power_alpha, untested, Exploratory,
    FamilyVerdict, Verdict, EXPLORATORY,
};
pub use gatekeeping::{adjusted, decide_claims, interval_levels, ClaimDecision, ClaimMember};
pub use hypothesis::{
    anova_oneway, cliff_delta, cohen_d, holm, kruskal_wallis, welch_t, PValueMethod, TestResult,
};
pub use intervals::{mean_ci, median_ci, MeanCi, MeanCiMethod, MedianCi};
pub use mann_whitney::{
    mann_whitney_min_p, mann_whitney_trials_needed, mann_whitney_u, mann_whitney_u_asymptotic,
};
pub use power::{
    min_detectable_difference, min_detectable_difference_for, MinDetectable, MDD_POWER,
};
pub use precision::{precision, Precision};
pub use rank_tests::{
    jonckheere_one_sided, mann_whitney_one_sided, signed_rank_one_sided, OneSided,
};
pub use sequential::{
    sequence_boundary, sequential_precision, AnytimeStoppingRule, Look, LookSchedule,
    MedianSequence, SequentialPrecision, SEQUENCE_RHO,
};
pub use shape::{ecdf_steps, kde_at, silverman_bandwidth, sorted_finite, tukey_box, TukeyBox};
pub use summary::{
    jain_index, mean, median, percentile, percentile_sorted, quantile_sorted, sample_variance,
    summarize, Summary, CI_LEVEL, MEAN_CI_LABEL, MEDIAN_CI_MIN_N,
};
pub use trend::{test_trend, TrendLevel, TrendTest};
pub use trials::{per_trial, per_trial_by_key, Location};

use serde::Serialize;

/// The significance level: the claims' family (Holm), the exploratory comparisons' marks,
/// the confidence sequences of `--precision` and the minimum detectable difference all use
/// it.
pub const ALPHA: f64 = 0.05;

/// The two levels reported by [`Best`] and marked in tables (`*` below [`ALPHA`], `**`
/// below the second).
pub const ALPHAS: (f64, f64) = (ALPHA, 0.01);

/// Location of one named group in a [`Comparison`], in the unit of its samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupStats {
    /// Group name (e.g. the policy).
    pub name: String,
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (linear interpolation).
    pub median: f64,
}

/// Tests and effect sizes for one pair of groups `a` vs `b` (a before b in input order).
/// Signed values are positive when `a` tends to be larger than `b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairComparison {
    /// Name of the first group.
    pub a: String,
    /// Name of the second group.
    pub b: String,
    /// Welch's t-test of `a` vs `b`.
    pub welch: Option<TestResult>,
    /// Welch p-value after Holm's adjustment over all pairs.
    pub welch_p_holm: Option<f64>,
    /// Mann-Whitney U test; the statistic is U of `a`.
    pub mann_whitney: Option<TestResult>,
    /// Mann-Whitney p-value after Holm's adjustment over all pairs.
    pub mann_whitney_p_holm: Option<f64>,
    /// Cohen's d of `a` vs `b`.
    pub cohen_d: Option<f64>,
    /// Cliff's delta of `a` vs `b`.
    pub cliff_delta: Option<f64>,
}

/// The group with the best median, and whether it beats every other group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    /// Name of the best group.
    pub name: String,
    /// Its median.
    pub median: f64,
    /// Largest Holm-adjusted Mann-Whitney p-value against any other group; `None` if a
    /// test against some group could not be run.
    pub max_p_holm: Option<f64>,
    /// Better than every other group at alpha = 0.05.
    pub better_than_all_at_05: bool,
    /// Better than every other group at alpha = 0.01.
    pub better_than_all_at_01: bool,
}

/// Omnibus tests, pairwise tests with Holm-adjusted p-values, effect sizes and the best
/// group, for named groups of samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Whether smaller values are better (latency) or larger ones (throughput).
    pub lower_is_better: bool,
    /// Per-group location, in input order.
    pub groups: Vec<GroupStats>,
    /// One-way ANOVA across all groups.
    pub anova: Option<TestResult>,
    /// Kruskal-Wallis H-test across all groups.
    pub kruskal_wallis: Option<TestResult>,
    /// Every pair (i < j in input order).
    pub pairs: Vec<PairComparison>,
    /// The best group and its significance.
    pub best: Best,
}

impl Comparison {
    /// Compare named groups, e.g. `&BTreeMap<String, Vec<f64>>` or `[("cfs", &xs[..]), ...]`.
    ///
    /// The best group has the lowest median (highest if `!lower_is_better`); ties go to
    /// the better mean, then to the earlier group. It is "better than all" at alpha when,
    /// against every other group, the Holm-adjusted Mann-Whitney p-value is below alpha
    /// and Cliff's delta points its way. Holm's family is all pairs; a pair whose test
    /// cannot be run (e.g. all values equal) counts in the family with p = 1.
    ///
    /// Returns `None` for fewer than two groups, or a group that is empty or holds a
    /// non-finite value. Groups too small for a test get `None` for that test.
    pub fn new<I, N, S>(groups: I, lower_is_better: bool) -> Option<Comparison>
    where
        I: IntoIterator<Item = (N, S)>,
        N: AsRef<str>,
        S: AsRef<[f64]>,
    {
        let named: Vec<(N, S)> = groups.into_iter().collect();
        if named.len() < 2 {
            return None;
        }
        let samples: Vec<&[f64]> = named.iter().map(|(_, s)| s.as_ref()).collect();
        let mut stats = Vec::with_capacity(named.len());
        for (name, s) in &named {
            let s = s.as_ref();
            if s.iter().any(|x| !x.is_finite()) {
                return None;
            }
            stats.push(GroupStats {
                name: name.as_ref().to_string(),
                n: s.len(),
                mean: mean(s)?,
                median: percentile(s, 50.0)?,
            });
        }
        let pairs = pairwise(&stats, &samples);
        let best = pick_best(&stats, &pairs, lower_is_better);
        Some(Comparison {
            lower_is_better,
            groups: stats,
            anova: anova_oneway(&samples),
            kruskal_wallis: kruskal_wallis(&samples),
            pairs,
            best,
        })
    }
}

/// Index pairs (i, j), i < j, in the order of [`Comparison::pairs`].
fn pair_indices(k: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..k).flat_map(move |i| (i + 1..k).map(move |j| (i, j)))
}

/// All pairs i < j with raw tests and effect sizes, then Holm over each test's family.
fn pairwise(stats: &[GroupStats], samples: &[&[f64]]) -> Vec<PairComparison> {
    let mut pairs: Vec<PairComparison> = pair_indices(samples.len())
        .map(|(i, j)| {
            let (x, y) = (samples[i], samples[j]);
            PairComparison {
                a: stats[i].name.clone(),
                b: stats[j].name.clone(),
                welch: welch_t(x, y),
                welch_p_holm: None,
                mann_whitney: mann_whitney_u(x, y),
                mann_whitney_p_holm: None,
                cohen_d: cohen_d(x, y),
                cliff_delta: cliff_delta(x, y),
            }
        })
        .collect();
    let family = |test: fn(&PairComparison) -> Option<TestResult>| -> Vec<Option<f64>> {
        let raw: Vec<f64> = pairs
            .iter()
            .map(|p| test(p).map_or(1.0, |t| t.p_value))
            .collect();
        let adjusted = holm(&raw);
        pairs
            .iter()
            .zip(adjusted)
            .map(|(p, adj)| test(p).map(|_| adj))
            .collect()
    };
    let welch_holm = family(|p| p.welch);
    let mw_holm = family(|p| p.mann_whitney);
    for ((p, w), m) in pairs.iter_mut().zip(welch_holm).zip(mw_holm) {
        p.welch_p_holm = w;
        p.mann_whitney_p_holm = m;
    }
    pairs
}

/// Choose the best group and check it against every other (see [`Comparison::new`]).
fn pick_best(stats: &[GroupStats], pairs: &[PairComparison], lower_is_better: bool) -> Best {
    // Orient so that "smaller key is better" in both directions.
    let sign = if lower_is_better { 1.0 } else { -1.0 };
    let mut best = 0;
    for (i, g) in stats.iter().enumerate().skip(1) {
        let (m, b) = (sign * g.median, sign * stats[best].median);
        if m < b || (m == b && sign * g.mean < sign * stats[best].mean) {
            best = i;
        }
    }
    let mut max_p: Option<f64> = Some(0.0);
    let mut favourable = true;
    // By index, not name, so that duplicate names cannot confuse the pairing.
    for ((i, j), p) in pair_indices(stats.len()).zip(pairs) {
        if i != best && j != best {
            continue;
        }
        // Cliff's delta of the best group against the other one.
        let delta = p.cliff_delta.map(|d| if i == best { d } else { -d });
        favourable &= delta.is_some_and(|d| sign * d < 0.0);
        max_p = match (max_p, p.mann_whitney_p_holm) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    let beats = |alpha: f64| favourable && max_p.is_some_and(|p| p < alpha);
    Best {
        name: stats[best].name.clone(),
        median: stats[best].median,
        max_p_holm: max_p,
        better_than_all_at_05: beats(ALPHAS.0),
        better_than_all_at_01: beats(ALPHAS.1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// `n` values spread evenly around `centre` (deterministic, no ties).
    fn around(centre: f64, spread: f64, n: usize) -> Vec<f64> {
        let mut rng = fastrand::Rng::with_seed(centre.to_bits() ^ n as u64);
        (0..n)
            .map(|_| centre + spread * (rng.f64() - 0.5))
            .collect()
    }

    #[test]
    fn a_clearly_faster_policy_is_best_and_significant_at_both_levels() {
        let mut groups = BTreeMap::new();
        groups.insert("cfs".to_string(), around(10.0, 2.0, 30));
        groups.insert("fifo".to_string(), around(5.0, 2.0, 30));
        groups.insert("rr".to_string(), around(10.5, 2.0, 30));
        let c = Comparison::new(&groups, true).expect("three usable groups");
        assert_eq!(c.best.name, "fifo");
        assert!(
            c.best.better_than_all_at_05 && c.best.better_than_all_at_01,
            "{:?}",
            c.best
        );
        assert_eq!(c.pairs.len(), 3);
        assert!(c.anova.expect("anova").p_value < 1e-6);
        assert!(c.kruskal_wallis.expect("kruskal").p_value < 1e-6);
        let cfs_fifo = &c.pairs[0];
        assert_eq!((cfs_fifo.a.as_str(), cfs_fifo.b.as_str()), ("cfs", "fifo"));
        assert!(cfs_fifo.cliff_delta.expect("delta") > 0.9);
        assert!(cfs_fifo.cohen_d.expect("d") > 2.0);
    }

    #[test]
    fn with_higher_is_better_the_largest_median_wins() {
        let groups = [
            ("low", around(1.0, 1.0, 20)),
            ("high", around(3.0, 1.0, 20)),
        ];
        let c = Comparison::new(groups, false).expect("two usable groups");
        assert_eq!(c.best.name, "high");
        assert!(c.best.better_than_all_at_01);
        let c = Comparison::new([("low", &[1.0, 2.0][..]), ("high", &[3.0, 4.0][..])], true)
            .expect("two usable groups");
        assert_eq!(c.best.name, "low");
    }

    #[test]
    fn overlapping_groups_have_a_best_that_is_not_significant() {
        let a = around(10.0, 4.0, 25);
        let b: Vec<f64> = a.iter().map(|x| x + 0.05).collect();
        let c = Comparison::new([("a", &a), ("b", &b)], true).expect("two usable groups");
        assert_eq!(c.best.name, "a");
        assert!(c.best.max_p_holm.expect("test ran") > 0.5);
        assert!(!c.best.better_than_all_at_05 && !c.best.better_than_all_at_01);
    }

    #[test]
    fn significance_at_005_but_not_001_is_reported_separately() {
        // Mann-Whitney p between 0.01 and 0.05 for these two small samples.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let b = [4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5];
        let p = mann_whitney_u(&a, &b).expect("u").p_value;
        assert!(0.01 < p && p < 0.05, "fixture drifted: p = {p}");
        let c = Comparison::new([("a", &a[..]), ("b", &b[..])], true).expect("usable");
        assert!(c.best.better_than_all_at_05);
        assert!(!c.best.better_than_all_at_01);
    }

    #[test]
    fn a_lower_median_with_significantly_larger_values_is_not_called_better() {
        // a: median 0 but 45% of its values are 10; b: median 6 with 45% at -1.
        // Most pairs have a > b, significantly so, although a's median is lower.
        let a: Vec<f64> = [0.0; 55].into_iter().chain([10.0; 45]).collect();
        let b: Vec<f64> = [-1.0; 45].into_iter().chain([6.0; 55]).collect();
        let c = Comparison::new([("a", &a), ("b", &b)], true).expect("usable");
        assert_eq!(c.best.name, "a");
        assert!(c.best.max_p_holm.expect("test ran") < 0.01);
        assert!(c.pairs[0].cliff_delta.expect("delta") > 0.0);
        assert!(!c.best.better_than_all_at_05);
    }

    #[test]
    fn pairwise_p_values_are_holm_adjusted_over_all_pairs() {
        let groups = [
            ("a", around(0.0, 1.0, 12)),
            ("b", around(0.6, 1.0, 12)),
            ("c", around(1.0, 1.0, 12)),
            ("d", around(0.3, 1.0, 12)),
        ];
        let c = Comparison::new(groups.clone(), true).expect("usable");
        assert_eq!(c.pairs.len(), 6);
        let raw: Vec<f64> = c
            .pairs
            .iter()
            .map(|p| p.mann_whitney.expect("u").p_value)
            .collect();
        let adjusted: Vec<f64> = c
            .pairs
            .iter()
            .map(|p| p.mann_whitney_p_holm.expect("adj"))
            .collect();
        assert_eq!(adjusted, holm(&raw));
        let smallest = raw.iter().cloned().fold(f64::INFINITY, f64::min);
        let smallest_adj = adjusted.iter().cloned().fold(f64::INFINITY, f64::min);
        assert_eq!(smallest_adj, (6.0 * smallest).min(1.0));
        let welch_raw: Vec<f64> = c
            .pairs
            .iter()
            .map(|p| p.welch.expect("t").p_value)
            .collect();
        let welch_adj: Vec<f64> = c
            .pairs
            .iter()
            .map(|p| p.welch_p_holm.expect("adj"))
            .collect();
        assert_eq!(welch_adj, holm(&welch_raw));
    }

    #[test]
    fn holm_adjusted_pair_p_values_match_the_scipy_reference() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/stats/reference.json"
        );
        let text = std::fs::read_to_string(path).expect("reference.json is readable");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        for name in ["poisson_counts", "large_lognormal", "separated"] {
            let ds = &doc["datasets"][name];
            let groups: Vec<(String, Vec<f64>)> = ds["groups"]
                .as_array()
                .expect("groups")
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let xs = g
                        .as_array()
                        .expect("array")
                        .iter()
                        .map(|x| x.as_f64().expect("number"));
                    (format!("g{i}"), xs.collect())
                })
                .collect();
            let c = Comparison::new(groups, true).expect("usable");
            let want = ds["pairs"].as_array().expect("pairs");
            assert_eq!(c.pairs.len(), want.len());
            for (got, want) in c.pairs.iter().zip(want) {
                for (g, w) in [
                    (
                        got.mann_whitney_p_holm,
                        &want["mannwhitneyu"]["pvalue_holm"],
                    ),
                    (got.welch_p_holm, &want["welch"]["pvalue_holm"]),
                ] {
                    let (g, w) = (g.expect("test ran"), w.as_f64().expect("number"));
                    assert!((g - w).abs() <= 1e-7 * w, "{name}: {g:e} vs {w:e}");
                }
            }
        }
    }

    #[test]
    fn a_pair_without_a_test_still_counts_in_the_holm_family_as_p_one() {
        let flat = vec![2.0, 2.0, 2.0];
        let high = vec![5.0, 6.0, 7.0, 8.0, 9.0];
        let c = Comparison::new([("a", &flat), ("b", &flat), ("c", &high)], true).expect("usable");
        assert_eq!(c.pairs[0].mann_whitney, None);
        assert_eq!(c.pairs[0].mann_whitney_p_holm, None);
        let raw: Vec<f64> = c.pairs[1..]
            .iter()
            .map(|p| p.mann_whitney.expect("u").p_value)
            .collect();
        let expected = holm(&[1.0, raw[0], raw[1]]);
        assert_eq!(c.pairs[1].mann_whitney_p_holm, Some(expected[1]));
        assert_eq!(c.pairs[2].mann_whitney_p_holm, Some(expected[2]));
        assert_ne!(expected[1], holm(&raw)[0], "m = 3, not 2");
    }

    #[test]
    fn too_few_or_unusable_groups_give_no_comparison() {
        let one: [(&str, Vec<f64>); 1] = [("only", vec![1.0, 2.0])];
        assert!(Comparison::new(one, true).is_none());
        assert!(Comparison::new([("a", vec![1.0]), ("b", vec![])], true).is_none());
        assert!(
            Comparison::new([("a", vec![1.0, f64::NAN]), ("b", vec![2.0, 3.0])], true).is_none()
        );
    }

    #[test]
    fn constant_groups_yield_missing_tests_and_no_significance() {
        let c = Comparison::new([("a", vec![2.0, 2.0, 2.0]), ("b", vec![2.0, 2.0])], true)
            .expect("groups are non-empty");
        assert_eq!((c.anova, c.kruskal_wallis), (None, None));
        let pair = &c.pairs[0];
        assert_eq!(
            (pair.welch, pair.mann_whitney, pair.cohen_d),
            (None, None, None)
        );
        assert_eq!(pair.mann_whitney_p_holm, None);
        assert_eq!(pair.cliff_delta, Some(0.0));
        assert_eq!(c.best.name, "a");
        assert_eq!(c.best.max_p_holm, None);
        assert!(!c.best.better_than_all_at_05);
    }

    #[test]
    fn duplicate_names_do_not_confuse_the_best_groups_pairs() {
        let fast = around(1.0, 0.5, 20);
        let slow = around(5.0, 0.5, 20);
        let c = Comparison::new([("x", &slow), ("x", &fast), ("y", &slow)], true).expect("usable");
        assert_eq!(c.best.median, c.groups[1].median);
        assert!(c.best.better_than_all_at_01, "{:?}", c.best);
    }

    #[test]
    fn comparison_serializes_to_json_with_nulls_for_missing_tests() {
        let c = Comparison::new([("a", vec![1.0, 1.0]), ("b", vec![1.0, 3.0, 5.0])], true)
            .expect("usable");
        let json = serde_json::to_value(&c).expect("serializable");
        assert_eq!(json["best"]["name"], "a");
        assert_eq!(json["groups"][1]["n"], 3);
        assert!(json["pairs"][0]["welch"]["p_value"].is_number());
        assert!(json["anova"]["df"].is_array());
        assert!(json["pairs"][0]["cohen_d"].is_number());
        let flat =
            Comparison::new([("a", vec![1.0, 1.0]), ("b", vec![1.0, 1.0])], true).expect("usable");
        let json = serde_json::to_value(&flat).expect("serializable");
        assert!(json["kruskal_wallis"].is_null());
        assert!(json["pairs"][0]["mann_whitney_p_holm"].is_null());
    }

    #[test]
    fn reexports_reach_every_part_of_the_module() {
        let s = summarize(&[1.0, 2.0, 3.0]).expect("summary");
        assert_eq!(s.median, 2.0);
        assert_eq!(percentile_sorted(&[1.0, 2.0], 50.0), Some(1.5));
        assert_eq!(jain_index(&[1.0, 1.0]), Some(1.0));
        assert_eq!(CI_LEVEL, 0.95);
    }
}
