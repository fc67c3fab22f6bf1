use super::*;
use crate::draws::standard_normal;
use crate::effect::effect_paired;
use crate::rank_tests::{mann_whitney_one_sided, signed_rank_one_sided};

fn rounds(d: &[f64]) -> PairData {
    // Pairs whose log ratio is d: a = e^d, b = 1.
    PairData::Rounds {
        pairs: d.iter().map(|x| (x.exp(), 1.0)).collect(),
        dropped: 0,
    }
}

/// Average ranks of |d| within one stratum, by a plain double loop (independent of
/// `doubled_ranks`).
fn ranks(d: &[f64]) -> Vec<f64> {
    d.iter()
        .map(|x| {
            let below = d.iter().filter(|y| y.abs() < x.abs()).count() as f64;
            let same = d.iter().filter(|y| y.abs() == x.abs()).count() as f64;
            below + (same + 1.0) / 2.0
        })
        .collect()
}

/// Both tails of the stratified signed-rank sum by listing every sign flip of every round.
fn enumerated(strata: &[Vec<f64>]) -> (f64, f64) {
    let scored: Vec<(f64, f64)> = strata
        .iter()
        .flat_map(|d| {
            let r = ranks(d);
            d.iter().zip(r).map(|(x, r)| (*x, r)).collect::<Vec<_>>()
        })
        .collect();
    let observed: f64 = scored
        .iter()
        .filter(|(x, _)| *x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let n = scored.len();
    let (mut le, mut ge) = (0u64, 0u64);
    for mask in 0u64..(1 << n) {
        let t: f64 = (0..n)
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| scored[i].1)
            .sum();
        le += u64::from(t <= observed + 1e-9);
        ge += u64::from(t >= observed - 1e-9);
    }
    let total = (1u64 << n) as f64;
    (le as f64 / total, ge as f64 / total)
}

#[test]
fn two_strata_by_hand_and_by_complete_enumeration() {
    // Hand count: 2 + 2 rounds all above the boundary. Each stratum's T+ is 0..3 with
    // probability 1/4 each, so P(sum >= 6) = P(both 3) = 1/16.
    let p = stratified_at(
        &[rounds(&[0.1, 0.2]), rounds(&[0.3, 0.05])],
        Boundary::Scale(1.0),
    )
    .expect("testable");
    assert!((p.p_greater - 1.0 / 16.0).abs() < 1e-15, "{p:?}");
    assert!((p.p_less - 1.0).abs() < 1e-15);
    assert_eq!(p.method, PValueMethod::Exact);
    // Random strata, some with tied magnitudes, against listing all 2^11 flips.
    let mut rng = fastrand::Rng::with_seed(7);
    for case in 0..20 {
        let mut strata: Vec<Vec<f64>> = vec![
            (0..3).map(|_| standard_normal(&mut rng) + 0.3).collect(),
            (0..4).map(|_| standard_normal(&mut rng)).collect(),
            (0..4).map(|_| standard_normal(&mut rng) - 0.2).collect(),
        ];
        if case % 3 == 0 {
            strata[1][2] = -strata[1][0]; // a tie of magnitudes across signs
        }
        let data: Vec<PairData> = strata.iter().map(|d| rounds(d)).collect();
        let got = stratified_at(&data, Boundary::Scale(1.0)).expect("testable");
        // The values the test sees: log ratios of the pairs built from them.
        let seen: Vec<Vec<f64>> = strata
            .iter()
            .map(|d| d.iter().map(|x| x.exp().ln()).collect())
            .collect();
        let (le, ge) = enumerated(&seen);
        assert!(
            (got.p_less - le).abs() < 1e-9,
            "case {case}: {got:?} vs {le}"
        );
        assert!(
            (got.p_greater - ge).abs() < 1e-9,
            "case {case}: {got:?} vs {ge}"
        );
    }
}

#[test]
fn one_stratum_is_the_plain_test() {
    let mut rng = fastrand::Rng::with_seed(3);
    for _ in 0..10 {
        let d: Vec<f64> = (0..9).map(|_| standard_normal(&mut rng) + 0.4).collect();
        let got = stratified_at(&[rounds(&d)], Boundary::Scale(1.0)).expect("testable");
        let want = signed_rank_one_sided(&d).expect("testable");
        assert!((got.p_less - want.p_less).abs() < 1e-12);
        assert!((got.p_greater - want.p_greater).abs() < 1e-12);
        let a: Vec<f64> = (0..5)
            .map(|_| (standard_normal(&mut rng) + 3.0).max(0.1))
            .collect();
        let b: Vec<f64> = (0..6)
            .map(|_| (standard_normal(&mut rng) + 2.5).max(0.1))
            .collect();
        let un = PairData::Unpaired {
            a: a.clone(),
            b: b.clone(),
            fallback: None,
        };
        let got = stratified_at(&[un], Boundary::Scale(1.0)).expect("testable");
        let want = mann_whitney_one_sided(&a, &b).expect("testable");
        assert!((got.p_less - want.p_less).abs() < 1e-12);
        assert!((got.p_greater - want.p_greater).abs() < 1e-12);
    }
}

#[test]
fn a_rounds_stratum_and_an_unpaired_one_combine_exactly() {
    // Stratum 1: two rounds (+, +); stratum 2: A = {5}, B = {1, 2}: A above both.
    // T+ ∈ {0, 1, 2, 3} (1/4 each); U of A ∈ {0, 1, 2} (1/3 each): P(sum >= 3 + 2) = 1/12.
    let un = PairData::Unpaired {
        a: vec![5.0],
        b: vec![1.0, 2.0],
        fallback: None,
    };
    let p = stratified_at(&[rounds(&[0.1, 0.2]), un], Boundary::Scale(1.0)).expect("ok");
    assert!((p.p_greater - 1.0 / 12.0).abs() < 1e-15, "{p:?}");
}

/// The exact tails of a sum of tie-free signed-rank strata, by convolving each stratum's
/// listed sign flips (independent of `summed_null`).
fn tails_by_listing(sizes: &[usize], observed2: i64) -> (f64, f64) {
    let mut dist = vec![1.0f64];
    for &n in sizes {
        let mut flips = vec![0.0f64; n * (n + 1) + 1];
        for mask in 0u32..(1 << n) {
            let t2: usize = (0..n)
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| 2 * (i + 1))
                .sum();
            flips[t2] += 1.0 / f64::from(1u32 << n);
        }
        let mut next = vec![0.0; dist.len() + flips.len() - 1];
        for (i, p) in dist.iter().enumerate() {
            for (j, q) in flips.iter().enumerate() {
                next[i + j] += p * q;
            }
        }
        dist = next;
    }
    let o = observed2 as usize;
    (dist[..=o].iter().sum(), dist[o..].iter().sum())
}

#[test]
fn many_strata_use_the_normal_approximation_close_to_the_exact_tails() {
    // 90 cells of 6 rounds each: too many to count within the work limit.
    let mut rng = fastrand::Rng::with_seed(11);
    let strata: Vec<Vec<f64>> = (0..90)
        .map(|_| (0..6).map(|_| standard_normal(&mut rng) + 0.1).collect())
        .collect();
    let data: Vec<PairData> = strata.iter().map(|d| rounds(d)).collect();
    let got = stratified_at(&data, Boundary::Scale(1.0)).expect("testable");
    assert_eq!(got.method, PValueMethod::Asymptotic);
    let observed2: i64 = strata
        .iter()
        .map(|d| {
            let r = ranks(d);
            d.iter()
                .zip(r)
                .filter(|(x, _)| **x > 0.0)
                .map(|(_, r)| (2.0 * r) as i64)
                .sum::<i64>()
        })
        .sum();
    let (le, ge) = tails_by_listing(&[6; 90], observed2);
    assert!(ge < 0.05, "the shift shows: {ge}");
    for (g, w) in [(got.p_less, le), (got.p_greater, ge)] {
        assert!((g - w).abs() < 0.002 + 0.05 * w, "{g} vs exact {w}");
    }
}

#[test]
fn one_stratum_effect_is_the_walsh_interval_and_intervals_match_the_p_values() {
    let mut rng = fastrand::Rng::with_seed(5);
    let d: Vec<f64> = (0..10)
        .map(|_| 0.1 * standard_normal(&mut rng) - 0.1)
        .collect();
    let data = rounds(&d);
    let e = stratified_effect(std::slice::from_ref(&data), EffectScale::Ratio, 0.9).expect("e");
    let pairs: Vec<(f64, f64)> = d.iter().map(|x| (x.exp(), 1.0)).collect();
    let w = effect_paired(&pairs, 0.9).expect("walsh");
    for (g, x) in [(e.estimate, w.estimate), (e.lo, w.lo), (e.hi, w.hi)] {
        assert!((g - x).abs() < 1e-9 * x.abs().max(1.0), "{e:?} vs {w:?}");
    }
    // Over many strata sets: the interval at 1 - g excludes 1 exactly when 2 min(p) <= g.
    for case in 0..40 {
        let shift = 0.02 * (case % 7) as f64 - 0.06;
        let strata: Vec<PairData> = (0..1 + case % 4)
            .map(|_| {
                let d: Vec<f64> = (0..4 + case % 5)
                    .map(|_| 0.1 * standard_normal(&mut rng) + shift)
                    .collect();
                rounds(&d)
            })
            .collect();
        let g = 0.05;
        let p = stratified_at(&strata, Boundary::Scale(1.0)).expect("p");
        let e = stratified_effect(&strata, EffectScale::Ratio, 1.0 - g).expect("e");
        let rejects = 2.0 * p.p_less.min(p.p_greater) <= g;
        let excludes = e.lo > 1.0 || e.hi < 1.0;
        assert_eq!(rejects, excludes, "case {case}: {p:?} {e:?}");
        assert!(e.lo <= e.estimate && e.estimate <= e.hi, "{e:?}");
    }
}
