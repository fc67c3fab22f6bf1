//! Tests of the findings: exact p-values, Holm, too few trials, sentences.
use super::*;
use crate::model::Group;

/// A group of cells 0..policies.len(), baseline cell 0, with `makespans[c]` as the
/// trial values of cell c.
fn findings(policies: &[&str], makespans: &[Vec<f64>]) -> Vec<Finding> {
    let names: Vec<String> = policies.iter().map(|s| s.to_string()).collect();
    let tv: Vec<Vec<Vec<(i64, f64)>>> = makespans
        .iter()
        .map(|xs| {
            let mut m = vec![Vec::new(); Metric::ALL.len()];
            m[Metric::Makespan.index()] =
                xs.iter().enumerate().map(|(i, &x)| (i as i64, x)).collect();
            m
        })
        .collect();
    let g = Group {
        label: "cpu:pi with 2 tasks".into(),
        tasks: 2,
        panel: 0,
        cells: (0..policies.len()).collect(),
        baseline: Some(0),
        tests: Vec::new(),
    };
    against_baseline(0, &g, Metric::Makespan, &names, &tv, 7)
}

#[test]
fn three_trials_per_policy_are_too_few_and_the_finding_names_the_smallest_detectable_difference() {
    // Completely separated, yet 3 vs 3 trials: the exact two-sided p is 2 / C(6, 3) = 0.1.
    let f = &findings(
        &["other", "fifo"],
        &[vec![28.0, 30.0, 32.0], vec![10.0, 11.0, 12.0]],
    )[0];
    assert_eq!((f.baseline.as_str(), f.policy.as_str()), ("other", "fifo"));
    assert!(
        (f.p_adjusted.expect("test ran") - 0.1).abs() < 1e-12,
        "{f:?}"
    );
    assert_eq!(f.method, Some(PValueMethod::Exact));
    assert!(f.too_few_trials && !f.significant_at_05);
    assert_eq!(f.trials_needed, Some(4));
    // By hand: pooled sd = sqrt((8 + 2) / 4) = 1.5811; (t(.975, 4) + t(.8, 4)) = 3.71741;
    // times 1.5811 * sqrt(2/3) = 4.7991 ms.
    let mdd = f.min_detectable.expect("mdd");
    assert!((mdd - 4.7991).abs() < 1e-3, "{mdd}");
    assert!((f.ratio.expect("ratio") - 11.0 / 30.0).abs() < 1e-12);
    assert_eq!(
        f.sentence,
        "For cpu:pi with 2 tasks, fifo vs other (baseline): fifo's makespan is 63% lower than other's (11.0 ms vs 30.0 ms) [95% CI 57–69% lower]; too few trials: 3 vs 3 cannot reach p < 0.05, p < 0.05 becomes possible (not likely) from 4 per policy (Holm-adjusted p = 0.100; exact Mann-Whitney on 3 vs 3 trials)."
    );
    assert_eq!(f.verdict(), "too few");
}

#[test]
fn six_separated_trials_are_significant_and_holm_counts_every_other_policy() {
    let base = vec![23.0, 23.2, 23.4, 23.6, 23.8, 24.0];
    let fast: Vec<f64> = base.iter().map(|x| x - 3.0).collect();
    let slow: Vec<f64> = base.iter().map(|x| x + 0.1).collect();
    let fs = findings(&["other", "fifo", "rr"], &[base, fast, slow]);
    assert_eq!(fs.len(), 2);
    let (fifo, rr) = (&fs[0], &fs[1]);
    // Exact p of 6 vs 6 separated: 2 / C(12, 6) = 2 / 924; Holm with 2 comparisons
    // doubles the smallest.
    assert!((fifo.p.expect("p") - 2.0 / 924.0).abs() < 1e-12);
    assert!((fifo.p_adjusted.expect("p") - 4.0 / 924.0).abs() < 1e-12);
    assert!(fifo.significant_at_01 && !fifo.too_few_trials);
    assert_eq!(fifo.verdict(), "lower **");
    assert!(fifo.sentence.contains(
        "lower (better) than the baseline at alpha 0.01 (Holm-adjusted p = 0.004; exact Mann-Whitney on 6 vs 6 trials)"
    ), "{}", fifo.sentence);
    let (lo, hi) = fifo.ratio_ci.expect("ci");
    let r = fifo.ratio.expect("ratio");
    assert!(lo <= r && r <= hi && hi < 1.0, "{lo} {r} {hi}");
    assert!(!rr.significant_at_05 && rr.p_adjusted.expect("p") > 0.05);
    assert_eq!(rr.verdict(), "n.s.");
    assert!(rr
        .sentence
        .contains("no significant difference at alpha 0.05"));
    // No detectable-difference claim: the t-test it came from is not the test run.
    assert!(!rr.sentence.contains("detect"), "{}", rr.sentence);
    assert!(rr.min_detectable.is_some(), "still computed for the csv");
    assert_eq!((rr.comparisons, rr.policies), (2, 3));
}

#[test]
fn the_sentence_states_the_effect_with_its_interval_in_words() {
    // Three times the baseline: "times", the interval as ratios.
    let f = &findings(
        &["other", "fifo"],
        &[vec![1.0, 1.1, 1.2], vec![3.0, 3.3, 3.6]],
    )[0];
    let (lo, hi) = f.ratio_ci.expect("ci");
    assert!(
        f.sentence.contains(&format!(
            "fifo's makespan is 3.00 times other's (3.30 ms vs 1.10 ms) [95% CI {}–{} times]",
            fmt_ratio_bare(lo),
            fmt_ratio_bare(hi)
        )),
        "{}",
        f.sentence
    );
    // Overlapping trials: an interval from lower to higher around the estimate.
    let f = &findings(
        &["other", "fifo"],
        &[vec![10.0, 11.0, 12.0, 13.0], vec![10.5, 11.5, 12.5, 13.5]],
    )[0];
    let (lo, hi) = f.ratio_ci.expect("ci");
    assert!(lo < 1.0 && 1.0 < hi, "[{lo}, {hi}]");
    let want = format!(
        "[95% CI {}% lower to {}% higher]",
        fmt_pct((1.0 - lo) * 100.0),
        fmt_pct((hi - 1.0) * 100.0)
    );
    assert!(
        f.sentence
            .contains("fifo's makespan is 4.3% higher than other's (12.0 ms vs 11.5 ms)"),
        "{}",
        f.sentence
    );
    assert!(f.sentence.contains(&want), "{want} in {}", f.sentence);
    assert_eq!(change(0.88), "12% lower");
    assert_eq!(change(1.045), "4.5% higher");
    assert_eq!(change(0.99996), "0.0040% lower");
    assert_eq!(change(1.0), "0%");
}

#[test]
fn one_trial_or_identical_values_give_no_test_and_say_why() {
    let f = &findings(&["other", "fifo"], &[vec![5.0], vec![4.0, 4.5]])[0];
    assert_eq!(f.p_adjusted, None);
    assert!(f
        .sentence
        .ends_with("no test: a test needs at least 2 trials per policy."));
    assert_eq!(f.verdict(), "no test");
    let f = &findings(&["other", "fifo"], &[vec![1.0, 1.0], vec![1.0, 1.0]])[0];
    assert!(
        f.sentence
            .ends_with("no test: every trial value is the same."),
        "{}",
        f.sentence
    );
    assert!(findings(&["other", "fifo"], &[vec![], vec![1.0, 2.0]]).is_empty());
    assert_eq!(fmt_ratio(133.3), "133x");
    assert_eq!(fmt_ratio(0.0123), "0.012x");
}

#[test]
fn a_side_of_all_zeros_gets_the_difference_not_a_ratio() {
    // The case: a numerator that is always 0 printed "ratio 0.00 [0.00, 0.00]".
    let f = &findings(
        &["other", "fifo"],
        &[vec![40.0, 45.0, 50.0], vec![0.0, 0.0, 0.0]],
    )[0];
    assert_eq!(f.all_zero, AllZero::Policy);
    assert_eq!((f.ratio, f.ratio_ci), (None, None));
    // By hand: 0 - 45 = -45 ms.
    assert!(
        f.sentence.contains(
            "makespan 0 ms vs 45.0 ms, difference -45.0 ms (no ratio: every trial of fifo is 0);"
        ),
        "{}",
        f.sentence
    );
    let f = &findings(&["other", "fifo"], &[vec![0.0, 0.0], vec![2.0, 0.0]])[0];
    assert_eq!(f.all_zero, AllZero::Baseline);
    assert!(
        f.sentence
            .contains("difference +1.00 ms (no ratio: every trial of other is 0)"),
        "{}",
        f.sentence
    );
    // One zero among other values is no reason to drop the ratio.
    let f = &findings(&["other", "fifo"], &[vec![10.0, 12.0], vec![0.0, 11.0]])[0];
    assert_eq!(f.all_zero, AllZero::Neither);
    assert!(f.ratio.is_some());
}
