//! Hypothesis tests and effect sizes for comparing groups of samples (e.g. one group per policy).
//!
//! Functions are unit-agnostic over `f64` samples; effect sizes are unitless. Every test
//! returns `None` on degenerate input instead of NaN or a panic: fewer than two groups,
//! a group with fewer than two values, a non-finite value, or no variance to test with.
//!
//! statrs 0.18 provides the reference distributions (F, Student's t, chi-squared, normal)
//! but none of these tests (its `stats_tests` has only Fisher's exact test), so the test
//! statistics, ranking, Holm's adjustment and the effect sizes are hand-written here,
//! following scipy.stats, and checked against scipy's answers in
//! `tests/fixtures/stats/reference.json` (written by `make_fixtures.py` beside it).
//! The Mann-Whitney U test is in `mann_whitney.rs` (re-exported here).

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, FisherSnedecor, StudentsT};

use super::summary::{mean, sample_variance};

pub use super::mann_whitney::{mann_whitney_u, mann_whitney_u_asymptotic};

/// How a test's p-value was obtained, for the report's methods section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PValueMethod {
    /// From the test's reference distribution under its model's assumptions (F for ANOVA,
    /// Student's t for Welch): exact when the data are normal.
    Parametric,
    /// A large-sample approximation (chi-squared for Kruskal-Wallis; the normal
    /// approximation with tie and continuity corrections for Mann-Whitney).
    Asymptotic,
    /// The exact null distribution of the statistic (Mann-Whitney U without ties).
    Exact,
    /// The exact permutation distribution: every relabeling of the data counted.
    Permutation,
    /// Seeded random relabelings (Monte Carlo permutation test), p = (hits + 1) / (R + 1).
    MonteCarlo,
}

impl PValueMethod {
    /// A short phrase naming the method, e.g. "exact distribution of U".
    pub fn label(self) -> &'static str {
        match self {
            PValueMethod::Parametric => "parametric reference distribution",
            PValueMethod::Asymptotic => "large-sample approximation",
            PValueMethod::Exact => "exact null distribution",
            PValueMethod::Permutation => "exact permutation distribution",
            PValueMethod::MonteCarlo => "Monte Carlo permutation",
        }
    }
}

/// Outcome of a hypothesis test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TestResult {
    /// The test statistic: F (ANOVA), H (Kruskal-Wallis), t (Welch), or U of the
    /// first sample (Mann-Whitney).
    pub statistic: f64,
    /// Two-sided p-value, in 0..=1.
    pub p_value: f64,
    /// Degrees of freedom: (between, within) for ANOVA, (k - 1, 0) for Kruskal-Wallis,
    /// (Welch-Satterthwaite df, 0) for Welch, (0, 0) for Mann-Whitney.
    pub df: (f64, f64),
    /// How `p_value` was obtained.
    pub method: PValueMethod,
}

/// True when there are at least two groups, each with at least two values, all finite.
pub(super) fn usable(groups: &[&[f64]]) -> bool {
    groups.len() >= 2
        && groups
            .iter()
            .all(|g| g.len() >= 2 && g.iter().all(|x| x.is_finite()))
}

/// Keep a p-value computed as a tail probability inside 0..=1 (and NaN out).
pub(super) fn clamp_p(p: f64) -> Option<f64> {
    if p.is_nan() {
        None
    } else {
        Some(p.clamp(0.0, 1.0))
    }
}

/// One-way ANOVA F-test that all groups share one mean (as `scipy.stats.f_oneway`).
///
/// `None` if degenerate, including when every group has zero variance (F would be
/// infinite or undefined).
pub fn anova_oneway(groups: &[&[f64]]) -> Option<TestResult> {
    // Hand-written: statrs 0.18 has the F distribution but no ANOVA.
    if !usable(groups) {
        return None;
    }
    let k = groups.len();
    let total_n: usize = groups.iter().map(|g| g.len()).sum();
    let grand = groups.iter().flat_map(|g| g.iter()).sum::<f64>() / total_n as f64;
    let mut ss_between = 0.0;
    let mut ss_within = 0.0;
    for g in groups {
        let m = mean(g)?;
        ss_between += g.len() as f64 * (m - grand) * (m - grand);
        ss_within += g.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    }
    if ss_within <= 0.0 {
        return None;
    }
    let df_between = (k - 1) as f64;
    let df_within = (total_n - k) as f64;
    let f = (ss_between / df_between) / (ss_within / df_within);
    let dist = FisherSnedecor::new(df_between, df_within).ok()?;
    Some(TestResult {
        statistic: f,
        p_value: clamp_p(dist.sf(f))?,
        df: (df_between, df_within),
        method: PValueMethod::Parametric,
    })
}

/// Average ranks (1-based; ties share the mean of their positions) of the values of all
/// groups pooled, in pooled order, plus Σ(t³ - t) over the sizes t of tied blocks.
pub(super) fn pooled_ranks(groups: &[&[f64]]) -> (Vec<f64>, f64) {
    // Hand-written: statrs 0.18 has no ranking (scipy.stats.rankdata, method "average").
    let pooled: Vec<f64> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_unstable_by(|&a, &b| pooled[a].total_cmp(&pooled[b]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && pooled[order[end]] == pooled[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) share the rank of their midpoint, 1-based.
        let rank = (start + end + 1) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }
    (ranks, tie_term)
}

/// Kruskal-Wallis H-test that all groups come from one distribution, with the tie
/// correction and the chi-squared approximation (as `scipy.stats.kruskal`).
///
/// `None` if degenerate, including when all values are equal.
pub fn kruskal_wallis(groups: &[&[f64]]) -> Option<TestResult> {
    // Hand-written: statrs 0.18 has the chi-squared distribution but no Kruskal-Wallis.
    if !usable(groups) {
        return None;
    }
    let (ranks, tie_term) = pooled_ranks(groups);
    let n = ranks.len() as f64;
    let correction = 1.0 - tie_term / (n * n * n - n);
    if correction <= 0.0 {
        return None;
    }
    let mut offset = 0;
    let mut sum = 0.0;
    for g in groups {
        let r: f64 = ranks[offset..offset + g.len()].iter().sum();
        sum += r * r / g.len() as f64;
        offset += g.len();
    }
    let h = (12.0 / (n * (n + 1.0)) * sum - 3.0 * (n + 1.0)) / correction;
    let df = (groups.len() - 1) as f64;
    let dist = ChiSquared::new(df).ok()?;
    Some(TestResult {
        statistic: h,
        p_value: clamp_p(dist.sf(h))?,
        df: (df, 0.0),
        method: PValueMethod::Asymptotic,
    })
}

/// Welch's two-sided t-test of equal means without assuming equal variances (as
/// `scipy.stats.ttest_ind(x, y, equal_var=False)`); t is positive when `x` has the
/// larger mean.
///
/// `None` if degenerate, including when both samples have zero variance.
pub fn welch_t(x: &[f64], y: &[f64]) -> Option<TestResult> {
    // Hand-written: statrs 0.18 has Student's t but no t-tests.
    if !usable(&[x, y]) {
        return None;
    }
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    let a = sample_variance(x)? / n1;
    let b = sample_variance(y)? / n2;
    if a + b <= 0.0 {
        return None;
    }
    let t = (mean(x)? - mean(y)?) / (a + b).sqrt();
    let df = (a + b) * (a + b) / (a * a / (n1 - 1.0) + b * b / (n2 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(TestResult {
        statistic: t,
        p_value: clamp_p(2.0 * dist.sf(t.abs()))?,
        df: (df, 0.0),
        method: PValueMethod::Parametric,
    })
}

/// Holm's step-down adjustment of p-values for multiple comparisons, returned in input
/// order: the i-th smallest of m is multiplied by (m - i) (i from 0), then a running
/// maximum keeps the order of the adjusted values, and they are capped at 1.
///
/// A NaN p-value is treated as 1 (never significant); values are clamped into 0..=1.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    // Hand-written: statrs 0.18 has no multiple-comparison adjustments.
    let m = p_values.len();
    let clean: Vec<f64> = p_values
        .iter()
        .map(|p| if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) })
        .collect();
    let mut order: Vec<usize> = (0..m).collect();
    // Stable sort: equal p-values keep input order, as numpy's stable argsort does.
    order.sort_by(|&a, &b| clean[a].total_cmp(&clean[b]));
    let mut adjusted = vec![0.0; m];
    let mut running_max: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running_max = running_max.max((m - rank) as f64 * clean[i]);
        adjusted[i] = running_max.min(1.0);
    }
    adjusted
}

/// Cohen's d: difference of means over the pooled standard deviation (sample variances
/// with n - 1). Positive when `x` has the larger mean.
///
/// `None` if either sample has fewer than two values, a non-finite value, or the pooled
/// standard deviation is zero.
pub fn cohen_d(x: &[f64], y: &[f64]) -> Option<f64> {
    // Hand-written: statrs 0.18 has no effect sizes.
    if !usable(&[x, y]) {
        return None;
    }
    let (n1, n2) = (x.len() as f64, y.len() as f64);
    let pooled =
        ((n1 - 1.0) * sample_variance(x)? + (n2 - 1.0) * sample_variance(y)?) / (n1 + n2 - 2.0);
    if pooled <= 0.0 {
        return None;
    }
    Some((mean(x)? - mean(y)?) / pooled.sqrt())
}

/// Cliff's delta: P(X > Y) - P(X < Y) over all pairs, in -1..=1. Positive when `x`
/// tends to be larger. O((n + m) log m): `y` is sorted and each x is located by
/// binary search.
///
/// `None` if either sample is empty or contains NaN.
pub fn cliff_delta(x: &[f64], y: &[f64]) -> Option<f64> {
    // Hand-written: statrs 0.18 has no effect sizes.
    if x.is_empty() || y.is_empty() || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    let mut sorted = y.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let mut greater: u64 = 0;
    let mut less: u64 = 0;
    for &v in x {
        let below = sorted.partition_point(|&w| w < v);
        let at_or_below = sorted.partition_point(|&w| w <= v);
        greater += below as u64;
        less += (sorted.len() - at_or_below) as u64;
    }
    let pairs = x.len() as f64 * y.len() as f64;
    Some((greater as f64 - less as f64) / pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const REFERENCE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/stats/reference.json"
    );

    /// Each reference dataset as (name, groups, scipy's results).
    fn datasets() -> Vec<(String, Vec<Vec<f64>>, Value)> {
        let text = std::fs::read_to_string(REFERENCE).expect("reference.json is readable");
        let doc: Value = serde_json::from_str(&text).expect("reference.json is valid JSON");
        let sets = doc["datasets"].as_object().expect("datasets").clone();
        let out: Vec<_> = sets
            .into_iter()
            .map(|(name, ds)| {
                let groups = ds["groups"]
                    .as_array()
                    .expect("groups")
                    .iter()
                    .map(floats)
                    .collect();
                (name, groups, ds)
            })
            .collect();
        assert!(out.len() >= 5, "reference.json has too few datasets");
        out
    }

    fn floats(v: &Value) -> Vec<f64> {
        v.as_array()
            .expect("array")
            .iter()
            .map(|x| x.as_f64().expect("number"))
            .collect()
    }

    fn num(v: &Value) -> f64 {
        v.as_f64().expect("number")
    }

    /// Relative tolerance; an exact zero must be matched within `rel` absolutely.
    fn assert_close(actual: f64, expected: f64, rel: f64, what: &str) {
        let tol = rel * expected.abs().max(f64::MIN_POSITIVE);
        let ok = (actual - expected).abs() <= tol || (expected == 0.0 && actual.abs() <= rel);
        assert!(ok, "{what}: got {actual:e}, scipy says {expected:e}");
    }

    const STAT: f64 = 1e-9;
    const P: f64 = 1e-7;

    fn refs(groups: &[Vec<f64>]) -> Vec<&[f64]> {
        groups.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn anova_matches_scipy_f_oneway_on_every_reference_dataset() {
        for (name, groups, ds) in datasets() {
            let r = anova_oneway(&refs(&groups)).expect("groups have variance");
            let want = &ds["f_oneway"];
            assert_close(r.statistic, num(&want["statistic"]), STAT, &name);
            assert_close(r.p_value, num(&want["pvalue"]), P, &name);
            assert_eq!(r.df.0, num(&want["df"][0]), "{name}");
            assert_eq!(r.df.1, num(&want["df"][1]), "{name}");
        }
    }

    #[test]
    fn kruskal_wallis_with_tie_correction_matches_scipy_kruskal() {
        for (name, groups, ds) in datasets() {
            let r = kruskal_wallis(&refs(&groups)).expect("values are not all equal");
            let want = &ds["kruskal"];
            assert_close(r.statistic, num(&want["statistic"]), STAT, &name);
            assert_close(r.p_value, num(&want["pvalue"]), P, &name);
            assert_eq!(r.df, (num(&want["df"]), 0.0), "{name}");
        }
    }

    /// The methods note's claim about Kruskal-Wallis's chi-squared p with few trials: too
    /// small (anti-conservative) for two groups, too large (conservative) for three or more.
    /// References: scipy.stats.kruskal([1,2,3], [4,5,6]).pvalue = 0.049534613435626915
    /// (scipy.stats.mannwhitneyu's exact p is 0.1) and scipy.stats.kruskal([1,2,3], [4,5,6],
    /// [7,8,9]).pvalue = 0.02732372244729252 (scipy 1.17.1); the exact permutation p of the
    /// latter is enumerated here: 6 of the 1680 splits into three groups of 3 are as extreme.
    #[test]
    fn kruskal_wallis_chi_squared_is_anti_conservative_for_two_groups_conservative_for_three() {
        let two = kruskal_wallis(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]]).expect("h");
        assert_close(two.p_value, 0.049534613435626915, P, "two groups");
        let exact_two = crate::mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).expect("u");
        assert_close(exact_two.p_value, 0.1, P, "exact Mann-Whitney");
        assert!(two.p_value < exact_two.p_value);

        let three = kruskal_wallis(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], &[7.0, 8.0, 9.0]]);
        let three = three.expect("h");
        assert_close(three.p_value, 0.02732372244729252, P, "three groups");
        let (mut extreme, mut splits) = (0u32, 0u32);
        for mask in 0u32..3u32.pow(9) {
            let label = |i: u32| (mask / 3u32.pow(i)) % 3;
            let mut groups = vec![Vec::new(); 3];
            for i in 0..9 {
                groups[label(i) as usize].push(f64::from(i + 1));
            }
            if groups.iter().any(|g| g.len() != 3) {
                continue;
            }
            splits += 1;
            let h = kruskal_wallis(&refs(&groups)).expect("h").statistic;
            extreme += u32::from(h >= three.statistic - 1e-9);
        }
        assert_eq!((extreme, splits), (6, 1680));
        let exact_three = f64::from(extreme) / f64::from(splits);
        assert!(
            three.p_value > 5.0 * exact_three,
            "{} vs {exact_three}",
            three.p_value
        );
    }

    /// Calls `check(name, x, y, scipy's pair record)` for every reference pair.
    fn for_each_pair(mut check: impl FnMut(&str, &[f64], &[f64], &Value)) {
        let mut count = 0;
        for (name, groups, ds) in datasets() {
            for pair in ds["pairs"].as_array().expect("pairs") {
                let i = pair["i"].as_u64().expect("i") as usize;
                let j = pair["j"].as_u64().expect("j") as usize;
                let label = format!("{name} ({i}, {j})");
                check(&label, &groups[i], &groups[j], pair);
                count += 1;
            }
        }
        assert!(count >= 10, "only {count} reference pairs");
    }

    #[test]
    fn welch_t_matches_scipy_on_unequal_variances_and_every_other_pair() {
        for_each_pair(|label, x, y, pair| {
            let r = welch_t(x, y).expect("samples have variance");
            let want = &pair["welch"];
            assert_close(r.statistic, num(&want["statistic"]), STAT, label);
            assert_close(r.p_value, num(&want["pvalue"]), P, label);
            assert_close(r.df.0, num(&want["df"]), STAT, label);
        });
    }

    #[test]
    fn mann_whitney_matches_scipy_asymptotic_with_continuity_including_ties() {
        for_each_pair(|label, x, y, pair| {
            let r = mann_whitney_u_asymptotic(x, y).expect("values are not all equal");
            let want = &pair["mannwhitneyu"];
            assert_close(r.statistic, num(&want["statistic"]), STAT, label);
            assert_close(r.p_value, num(&want["pvalue"]), P, label);
        });
    }

    #[test]
    fn cohen_d_and_cliff_delta_match_the_numpy_formulas() {
        for_each_pair(|label, x, y, pair| {
            let d = cohen_d(x, y).expect("pooled sd is positive");
            assert_close(d, num(&pair["cohen_d"]), STAT, label);
            let delta = cliff_delta(x, y).expect("non-empty samples");
            assert_close(delta, num(&pair["cliff_delta"]), STAT, label);
        });
    }

    #[test]
    fn holm_of_scipy_p_values_matches_the_reference_adjustment() {
        for (name, _, ds) in datasets() {
            let pairs = ds["pairs"].as_array().expect("pairs");
            for test in ["welch", "mannwhitneyu"] {
                let raw: Vec<f64> = pairs.iter().map(|p| num(&p[test]["pvalue"])).collect();
                let want: Vec<f64> = pairs.iter().map(|p| num(&p[test]["pvalue_holm"])).collect();
                for (got, want) in holm(&raw).iter().zip(&want) {
                    assert_close(*got, *want, 1e-12, &format!("{name} {test}"));
                }
            }
        }
    }

    #[test]
    fn holm_matches_hand_cases_with_ties_caps_and_running_maximum() {
        let text = std::fs::read_to_string(REFERENCE).expect("reference.json is readable");
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let cases = doc["holm"].as_array().expect("holm cases");
        assert!(cases.len() >= 4);
        for case in cases {
            let got = holm(&floats(&case["p"]));
            let want = floats(&case["holm"]);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert_close(*g, *w, 1e-12, &format!("{case}"));
            }
        }
    }

    #[test]
    fn holm_never_lowers_a_p_value_and_treats_nan_as_one() {
        let p = [0.03, f64::NAN, 0.001, 0.2];
        let adj = holm(&p);
        assert_eq!(adj[1], 1.0);
        assert_eq!(adj[2], 0.004);
        assert!(adj.iter().zip(&p).all(|(a, raw)| raw.is_nan() || a >= raw));
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn degenerate_inputs_give_none_instead_of_nan_or_panic() {
        let two: &[f64] = &[1.0, 2.0];
        let one: &[f64] = &[1.0];
        let flat: &[f64] = &[3.0, 3.0, 3.0];
        let nan: &[f64] = &[1.0, f64::NAN];
        assert_eq!(anova_oneway(&[two]), None, "one group");
        assert_eq!(anova_oneway(&[two, one]), None, "group of one");
        assert_eq!(anova_oneway(&[flat, flat]), None, "no variance");
        assert_eq!(
            anova_oneway(&[flat, &[4.0, 4.0]]),
            None,
            "no within variance"
        );
        assert_eq!(anova_oneway(&[two, nan]), None, "NaN");
        assert_eq!(kruskal_wallis(&[]), None, "no groups");
        assert_eq!(kruskal_wallis(&[flat, flat]), None, "all tied");
        assert_eq!(kruskal_wallis(&[two, one]), None, "group of one");
        assert_eq!(welch_t(flat, flat), None);
        assert_eq!(welch_t(two, one), None);
        assert_eq!(welch_t(&[], two), None);
        assert_eq!(mann_whitney_u(flat, flat), None);
        assert_eq!(mann_whitney_u(one, two), None);
        assert_eq!(cohen_d(flat, flat), None);
        assert_eq!(cohen_d(two, nan), None);
        assert_eq!(cliff_delta(&[], two), None);
        assert_eq!(cliff_delta(two, nan), None);
    }

    #[test]
    fn perfectly_separated_constant_groups_still_get_rank_tests() {
        let low: &[f64] = &[1.0, 1.0, 1.0, 1.0];
        let high: &[f64] = &[2.0, 2.0, 2.0, 2.0];
        let u = mann_whitney_u(low, high).expect("two distinct values");
        assert_eq!(u.statistic, 0.0);
        assert!(u.p_value < 0.05, "{u:?}");
        assert_eq!(cliff_delta(low, high), Some(-1.0));
        assert!(kruskal_wallis(&[low, high]).is_some());
        let t = welch_t(low, &[2.0, 3.0, 2.0, 3.0]).expect("one sample varies");
        assert!(t.statistic < 0.0);
    }

    #[test]
    fn statistics_are_antisymmetric_in_the_order_of_the_samples() {
        let x: &[f64] = &[1.0, 4.0, 2.0, 8.0, 5.0];
        let y: &[f64] = &[3.0, 9.0, 7.0, 6.0];
        let (a, b) = (welch_t(x, y).expect("t"), welch_t(y, x).expect("t"));
        assert_eq!(a.statistic, -b.statistic);
        assert_eq!(a.p_value, b.p_value);
        let (a, b) = (
            mann_whitney_u(x, y).expect("u"),
            mann_whitney_u(y, x).expect("u"),
        );
        assert_eq!(a.statistic + b.statistic, 20.0);
        assert_eq!(a.p_value, b.p_value);
        assert_eq!(cliff_delta(x, y), cliff_delta(y, x).map(|d| -d));
    }
}
