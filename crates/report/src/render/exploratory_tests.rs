//! Tests of the exploratory comparisons (computed in `model::exploratory`, worded here): unadjusted exact p-values, effects with their
//! intervals, too few trials, what the p says, and the sentences render makes of them.
use super::{change, sentence, verdict};
use crate::model::exploratory::*;
use crate::model::{Group, Metric};
use crate::render::fmt::fmt_ratio;
use schedlab_analyze::{EffectScale, PValueMethod};

/// The comparison's sentence, as every output prints it, for the group [`compared`] makes.
fn said(f: &ExploratoryComparison) -> String {
    sentence("cpu:pi with 2 tasks", f)
}

/// A group of cells 0..policies.len(), baseline cell 0, with `makespans[c]` as the
/// trial values of cell c.
fn compared(policies: &[&str], makespans: &[Vec<f64>]) -> Vec<ExploratoryComparison> {
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
    against_baseline(0, &g, Metric::Makespan, &names, &tv)
}

#[test]
fn three_trials_per_policy_are_too_few_and_the_sentence_says_from_how_many() {
    // Completely separated, yet 3 vs 3 trials: the exact two-sided p is 2 / C(6, 3) = 0.1.
    let f = &compared(
        &["other", "fifo"],
        &[vec![28.0, 30.0, 32.0], vec![10.0, 11.0, 12.0]],
    )[0];
    assert_eq!((f.baseline.as_str(), f.policy.as_str()), ("other", "fifo"));
    assert!((f.p.expect("test ran") - 0.1).abs() < 1e-12, "{f:?}");
    assert_eq!(f.method, Some(PValueMethod::Exact));
    assert!(f.too_few_trials && !f.significant_at_05);
    assert_eq!(f.trials_needed, Some(4));
    // By hand: pooled sd = sqrt((8 + 2) / 4) = 1.5811; (t(.975, 4) + t(.8, 4)) = 3.71741;
    // times 1.5811 * sqrt(2/3) = 4.7991 ms.
    let mdd = f.min_detectable.expect("mdd");
    assert!((mdd - 4.7991).abs() < 1e-3, "{mdd}");
    // By hand: the 9 ratios fifo / other have median 11 / 30; 3 vs 3 allows no 95%
    // interval, the widest is [10 / 32, 12 / 28] and covers 1 - 2 / C(6, 3) = 90%.
    let e = f.effect.expect("effect");
    assert_eq!(e.scale, EffectScale::Ratio);
    assert!((e.estimate - 11.0 / 30.0).abs() < 1e-12);
    assert!((e.lo - 10.0 / 32.0).abs() < 1e-12 && (e.hi - 12.0 / 28.0).abs() < 1e-12);
    assert!(e.below_level && (e.coverage - 0.9).abs() < 1e-12);
    assert_eq!(
        said(f),
        "For cpu:pi with 2 tasks, fifo vs other (baseline): fifo's makespan is 63% lower than other's (medians 11.0 ms vs 30.0 ms) [90.0% CI 57–69% lower]; too few trials: 3 vs 3 cannot reach p < 0.05, p < 0.05 becomes possible (not likely) from 4 per policy (p (unadjusted) = 0.100; exact Mann-Whitney on 3 vs 3 trials)."
    );
    assert_eq!(verdict(f), "too few");
    assert_eq!(
        f.screening(),
        Screening::Tested {
            p: f.p.unwrap(),
            result: Screened::TooFewTrials
        }
    );
}

#[test]
fn the_p_is_the_unadjusted_exact_mann_whitney_p_whatever_the_number_of_comparisons() {
    // Two policies, each 3 trials fully separated from the baseline's 3: scipy's
    // mannwhitneyu(method="exact") gives 0.1 for each; Holm over the two would give 0.2.
    let base = vec![20.0, 21.0, 22.0];
    let fs = compared(
        &["other", "fifo", "rr"],
        &[base, vec![10.0, 11.0, 12.0], vec![30.0, 31.0, 32.0]],
    );
    assert_eq!(fs.len(), 2);
    for f in &fs {
        assert!((f.p.expect("p") - 0.1).abs() < 1e-12, "{f:?}");
        assert_eq!(f.method, Some(PValueMethod::Exact));
        assert_eq!(f.min_p, Some(0.1));
        assert!(said(f).contains("p (unadjusted) = 0.100"), "{}", said(f));
    }
}

#[test]
fn six_separated_trials_are_below_001_unadjusted() {
    let base = vec![23.0, 23.2, 23.4, 23.6, 23.8, 24.0];
    let fast: Vec<f64> = base.iter().map(|x| x - 3.0).collect();
    let slow: Vec<f64> = base.iter().map(|x| x + 0.1).collect();
    let fs = compared(&["other", "fifo", "rr"], &[base, fast, slow]);
    assert_eq!(fs.len(), 2);
    let (fifo, rr) = (&fs[0], &fs[1]);
    // Exact p of 6 vs 6 separated: 2 / C(12, 6) = 2 / 924, not adjusted for rr.
    assert!((fifo.p.expect("p") - 2.0 / 924.0).abs() < 1e-12);
    assert!(fifo.significant_at_01 && !fifo.too_few_trials);
    assert_eq!(verdict(fifo), "lower **");
    assert!(matches!(
        fifo.screening(),
        Screening::Tested {
            result: Screened::Below01(Direction::Lower),
            ..
        }
    ));
    assert!(said(fifo).contains(
        "lower (better) than the baseline at alpha 0.01 (p (unadjusted) = 0.002; exact Mann-Whitney on 6 vs 6 trials)"
    ), "{}", said(fifo));
    let e = fifo.effect.expect("effect");
    assert!(
        e.lo <= e.estimate && e.estimate <= e.hi && e.hi < 1.0,
        "{e:?}"
    );
    assert!(!e.below_level && said(fifo).contains("[95% CI "));
    assert!(!rr.significant_at_05 && rr.p.expect("p") > 0.05);
    assert_eq!(verdict(rr), "n.s.");
    assert!(matches!(
        rr.screening(),
        Screening::Tested {
            result: Screened::NotSignificant,
            ..
        }
    ));
    assert!(said(rr).contains("no significant difference at alpha 0.05"));
    // No detectable-difference claim: the t-test it came from is not the test run.
    assert!(!said(rr).contains("detect"), "{}", said(rr));
    assert!(rr.min_detectable.is_some(), "still computed for the csv");
    assert_eq!(rr.policies, 3);
}

#[test]
fn the_sentence_states_the_effect_with_its_interval_in_words() {
    // Three times the baseline: "times", the interval as ratios. By hand: the 9 ratios run
    // from 3 / 1.2 = 2.5 to 3.6 / 1 = 3.6 with median 3.
    let f = &compared(
        &["other", "fifo"],
        &[vec![1.0, 1.1, 1.2], vec![3.0, 3.3, 3.6]],
    )[0];
    assert!(
        said(f).contains(
            "fifo's makespan is 3.00 times other's (medians 3.30 ms vs 1.10 ms) [90.0% CI 2.50–3.60 times]"
        ),
        "{}",
        said(f)
    );
    // Overlapping trials, 4 vs 4: the Hodges-Lehmann ratio is the median of the 16 ratios,
    // 1.0436 (by hand in Python), the interval [10.5 / 13, 13.5 / 10], which covers
    // 1 - 2 / C(8, 4) = 97.1%, so it is a 95% interval.
    let f = &compared(
        &["other", "fifo"],
        &[vec![10.0, 11.0, 12.0, 13.0], vec![10.5, 11.5, 12.5, 13.5]],
    )[0];
    assert!(
        said(f).contains(
            "fifo's makespan is 4.4% higher than other's (medians 12.0 ms vs 11.5 ms) [95% CI 19% lower to 35% higher]"
        ),
        "{}",
        said(f)
    );
    assert_eq!(change(0.88), "12% lower");
    assert_eq!(change(1.045), "4.5% higher");
    assert_eq!(change(0.99996), "0.0040% lower");
    assert_eq!(change(1.0), "0%");
}

#[test]
fn one_trial_or_identical_values_give_no_test_and_say_why() {
    let f = &compared(&["other", "fifo"], &[vec![5.0], vec![4.0, 4.5]])[0];
    assert_eq!(f.p, None);
    assert!(said(f).ends_with("no test: a test needs at least 2 trials per policy."));
    assert_eq!(verdict(f), "no test");
    assert_eq!(f.screening(), Screening::NoTest(NoTest::FewTrials));
    let f = &compared(&["other", "fifo"], &[vec![1.0, 1.0], vec![1.0, 1.0]])[0];
    assert_eq!(f.screening(), Screening::NoTest(NoTest::AllEqual));
    assert!(
        said(f).ends_with("no test: every trial value is the same."),
        "{}",
        said(f)
    );
    assert!(compared(&["other", "fifo"], &[vec![], vec![1.0, 2.0]]).is_empty());
    assert_eq!(fmt_ratio(133.3), "133x");
    assert_eq!(fmt_ratio(0.0123), "0.012x");
}

#[test]
fn a_value_of_zero_gives_the_difference_not_a_ratio() {
    // The case: a numerator that is always 0 printed "ratio 0.00 [0.00, 0.00]".
    // By hand: the 9 differences 0 - other are -40, -45, -50 (three times each).
    let f = &compared(
        &["other", "fifo"],
        &[vec![40.0, 45.0, 50.0], vec![0.0, 0.0, 0.0]],
    )[0];
    let e = f.effect.expect("effect");
    assert_eq!(
        (e.scale, e.estimate, e.lo, e.hi),
        (EffectScale::Difference, -45.0, -50.0, -40.0)
    );
    assert!(
        said(f).contains(
            "fifo's makespan is 45.0 ms lower than other's (medians 0 ms vs 45.0 ms) [90.0% CI 40.0–50.0 ms lower];"
        ),
        "{}",
        said(f)
    );
    // 2 vs 2: differences 0, 0, 2, 2, median 1; [min, max] covers 1 - 2 / C(4, 2) = 66.7%.
    let f = &compared(&["other", "fifo"], &[vec![0.0, 0.0], vec![2.0, 0.0]])[0];
    assert!(
        said(f).contains(
            "fifo's makespan is 1.00 ms higher than other's (medians 1.00 ms vs 0 ms) [66.7% CI 0 ms to +2.00 ms]"
        ),
        "{}",
        said(f)
    );
    // One zero among other values: still no ratio (log 0), the difference.
    let f = &compared(&["other", "fifo"], &[vec![10.0, 12.0], vec![0.0, 11.0]])[0];
    assert_eq!(f.effect.expect("effect").scale, EffectScale::Difference);
}
