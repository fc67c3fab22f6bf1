//! Tests of the stratified permutation test against numpy's explicit enumeration.

use super::*;
use crate::fixtures::{assert_close, floats, items, num, reference};

/// The rounds of a reference design as owned (A, B) vectors.
fn design(case: &serde_json::Value) -> Vec<(Vec<f64>, Vec<f64>)> {
    items(&case["strata"])
        .iter()
        .map(|s| (floats(&s["a"]), floats(&s["b"])))
        .collect()
}

fn borrowed(rounds: &[(Vec<f64>, Vec<f64>)]) -> Vec<(&[f64], &[f64])> {
    rounds
        .iter()
        .map(|(a, b)| (a.as_slice(), b.as_slice()))
        .collect()
}

#[test]
fn exact_stratified_p_matches_numpys_enumeration_of_every_relabeling() {
    let cases = reference()["stratified_permutation"]
        .as_object()
        .expect("designs");
    let mut exact = 0;
    for (name, case) in cases {
        let rounds = design(case);
        for (location, key) in [(Location::Mean, "mean"), (Location::Median, "median")] {
            let want = &case[key];
            let label = format!("{name} {key}");
            let r = stratified_permutation_test(&borrowed(&rounds), location, 1, 20_000)
                .expect("usable design");
            assert_close(r.statistic, num(&want["statistic"]), 1e-12, &label);
            assert_eq!(r.rounds, rounds.len(), "{label}");
            assert_eq!(r.location, location);
            let relabelings = num(&want["relabelings"]) as u64;
            if relabelings <= STRATIFIED_EXACT_MAX {
                assert_eq!(r.method, PValueMethod::Permutation, "{label}");
                assert_eq!(r.relabelings, relabelings, "{label}");
                assert_close(r.p_value, num(&want["pvalue"]), 1e-12, &label);
                assert_close(r.min_p, num(&want["min_p"]), 1e-12, &label);
                exact += 1;
            } else {
                // 18 rounds: 2^18 relabelings, so Monte Carlo with 20 000 draws.
                assert_eq!(r.method, PValueMethod::MonteCarlo, "{label}");
                assert_eq!(r.relabelings, 20_000);
                let p = num(&want["pvalue"]);
                let se = (p * (1.0 - p) / 20_000.0).sqrt().max(1e-4);
                assert!((r.p_value - p).abs() < 4.0 * se, "{label}: {r:?} vs {p}");
                assert_eq!(r.min_p, 1.0 / 20_001.0);
            }
        }
    }
    assert!(exact >= 14, "{exact}");
}

#[test]
fn three_rounds_cannot_reach_005_however_large_the_difference() {
    let rounds: Vec<(Vec<f64>, Vec<f64>)> = (0..3)
        .map(|r| (vec![100.0 + r as f64], vec![10.0 + r as f64]))
        .collect();
    let t = stratified_permutation_test(&borrowed(&rounds), Location::Mean, 0, 1000)
        .expect("three rounds");
    assert_eq!(t.statistic, 90.0);
    assert_eq!((t.p_value, t.min_p), (0.25, 0.25));
    assert_eq!(stratified_min_p(&[(1, 1); 3]), Some(0.25));
    assert_eq!(stratified_min_p(&[(1, 1); 5]), Some(0.0625));
    assert_eq!(stratified_min_p(&[(1, 1); 6]), Some(0.03125));
    // Unbalanced rounds lose the mirror image: 1 / (3 * 3 * 6).
    assert_eq!(
        stratified_min_p(&[(2, 1), (1, 2), (2, 2)]),
        Some(1.0 / 54.0)
    );
    assert_eq!(stratified_min_p(&[(0, 3), (2, 0)]), None);
}

#[test]
fn the_design_min_p_matches_the_enumerated_one_for_tie_free_reference_data() {
    for name in [
        "three_rounds_b_always_higher",
        "five_rounds_shift",
        "six_rounds_shift",
        "four_rounds_two_each",
        "unbalanced",
    ] {
        let case = &reference()["stratified_permutation"][name];
        let d: Vec<(usize, usize)> = design(case)
            .iter()
            .map(|(a, b)| (a.len(), b.len()))
            .collect();
        let got = stratified_min_p(&d).expect("design");
        assert_close(got, num(&case["mean"]["min_p"]), 1e-12, name);
    }
}

#[test]
fn round_effects_are_removed_so_a_consistent_small_shift_is_found() {
    // Each round has its own level (0, 50, 100, ...); B is 1 above A in every round.
    // Pooled across rounds the shift drowns in the round-to-round spread; within rounds
    // it is perfectly consistent, so p is the smallest attainable: 2 / 2^8.
    let rounds: Vec<(Vec<f64>, Vec<f64>)> = (0..8)
        .map(|r| {
            let level = 50.0 * r as f64 + 0.1 * (r * r) as f64;
            (vec![level], vec![level + 1.0])
        })
        .collect();
    let t = stratified_permutation_test(&borrowed(&rounds), Location::Mean, 0, 1000)
        .expect("eight rounds");
    assert_eq!(t.p_value, 2.0 / 256.0);
    assert!((t.statistic + 1.0).abs() < 1e-12);
    let a: Vec<f64> = rounds.iter().map(|(a, _)| a[0]).collect();
    let b: Vec<f64> = rounds.iter().map(|(_, b)| b[0]).collect();
    let pooled = super::super::mann_whitney_u(&a, &b).expect("u");
    assert!(pooled.p_value > 0.5, "{pooled:?}");
}

#[test]
fn monte_carlo_is_repeatable_for_a_seed_and_needs_resamples() {
    let rounds: Vec<(Vec<f64>, Vec<f64>)> = (0..20)
        .map(|r| (vec![r as f64 + 0.3 * (r % 3) as f64], vec![r as f64 + 0.5]))
        .collect();
    let run = |seed| stratified_permutation_test(&borrowed(&rounds), Location::Mean, seed, 5000);
    let (a, b, c) = (run(4), run(4), run(5));
    assert_eq!(a, b);
    assert_ne!(a.map(|t| t.p_value), c.map(|t| t.p_value));
    assert_eq!(a.map(|t| t.method), Some(PValueMethod::MonteCarlo));
    assert_eq!(
        stratified_permutation_test(&borrowed(&rounds), Location::Mean, 4, 0),
        None
    );
}

#[test]
fn rounds_without_both_treatments_are_skipped_and_bad_input_gives_none() {
    let full: (Vec<f64>, Vec<f64>) = (vec![1.0], vec![2.0]);
    let only_a: (Vec<f64>, Vec<f64>) = (vec![5.0], vec![]);
    let with_gap = [full.clone(), only_a, full.clone()];
    let t = stratified_permutation_test(&borrowed(&with_gap), Location::Median, 0, 10)
        .expect("two usable rounds");
    assert_eq!((t.rounds, t.relabelings), (2, 4));
    assert_eq!(
        stratified_permutation_test(&[(&[1.0][..], &[][..])], Location::Mean, 0, 10),
        None
    );
    assert_eq!(
        stratified_permutation_test(&[(&[f64::NAN][..], &[1.0][..])], Location::Mean, 0, 10),
        None
    );
    // No difference at all: p = 1.
    let same = [(vec![3.0], vec![3.0]), (vec![4.0], vec![4.0])];
    let t = stratified_permutation_test(&borrowed(&same), Location::Mean, 0, 10).expect("ok");
    assert_eq!(t.p_value, 1.0);
}

#[test]
fn each_rounds_splits_are_all_subsets_with_the_observed_one_first() {
    let d = round_differences(&[1.0, 2.0], &[4.0, 8.0], Location::Mean);
    // C(4, 2) = 6 splits, mean of A* minus mean of the rest: {1,2} 1.5 - 6, {1,4} 2.5 - 5,
    // {1,8} 4.5 - 3, {2,4} 3 - 4.5, {2,8} 5 - 2.5, {4,8} 6 - 1.5.
    assert_eq!(d, vec![-4.5, -2.5, 1.5, -1.5, 2.5, 4.5]);
    assert_eq!(binomial(20, 10), Some(184_756));
    assert_eq!(binomial(200, 100), None);
}
