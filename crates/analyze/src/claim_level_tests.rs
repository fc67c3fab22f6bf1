use super::*;
use crate::claim_types::Leaning;
use crate::claims::test_claim;
use crate::draws::standard_normal;

const LOWER: Relation = Relation::Lower {
    smallest_effect: None,
};

/// Trials of one cell with per-round drift: A at `ratio` times B, log noise `sd`.
fn cell(ratio: f64, sd: f64, n: usize, rng: &mut fastrand::Rng) -> (Vec<f64>, Vec<f64>) {
    let drift: Vec<f64> = (0..n).map(|_| 100.0 * (0.8 + 0.4 * rng.f64())).collect();
    let a = drift
        .iter()
        .map(|d| ratio * d * (sd * standard_normal(rng)).exp())
        .collect();
    let b = drift
        .iter()
        .map(|d| d * (sd * standard_normal(rng)).exp())
        .collect();
    (a, b)
}

#[test]
fn one_cell_gives_the_cells_own_p_values() {
    let mut rng = fastrand::Rng::with_seed(1);
    let (a, b) = cell(0.9, 0.1, 8, &mut rng);
    let r: Vec<u64> = (0..8).collect();
    let one = test_claim(
        Arm::with_rounds(&a, &r),
        &[Arm::with_rounds(&b, &r)],
        &LOWER,
        0.95,
    )
    .expect("ok");
    let over = test_claim_over_cells(
        &[CellArms {
            a: Arm::with_rounds(&a, &r),
            others: vec![Arm::with_rounds(&b, &r)],
        }],
        &LOWER,
        Some(0.95),
    )
    .expect("ok");
    assert!((one.p_family - over.p_family).abs() < 1e-12);
    assert_eq!(one.leaning, over.leaning);
}

#[test]
fn four_cells_of_three_rounds_decide_what_no_cell_can() {
    // Each cell alone: 3 rounds give at best 2 * 2^-3 = 0.25. Over 4 cells, 12 rounds in
    // all: 2 * 2^-12, far below alpha.
    let mut rng = fastrand::Rng::with_seed(2);
    let data: Vec<(Vec<f64>, Vec<f64>)> = (0..4).map(|_| cell(0.7, 0.05, 3, &mut rng)).collect();
    let r: Vec<u64> = (0..3).collect();
    let cells: Vec<CellArms> = data
        .iter()
        .map(|(a, b)| CellArms {
            a: Arm::with_rounds(a, &r),
            others: vec![Arm::with_rounds(b, &r)],
        })
        .collect();
    let t = test_claim_over_cells(&cells, &LOWER, Some(0.95)).expect("ok");
    assert_eq!(t.leaning, Leaning::Support);
    assert!((t.p_family - 2.0 / 4096.0).abs() < 1e-15, "{}", t.p_family);
    let pair = &t.pairs[0];
    assert_eq!(pair.test, RankTest::Stratified { strata: 4 });
    assert_eq!(
        pair.design,
        Design::Rounds {
            used: 12,
            dropped: 0
        }
    );
    let e = pair.effect.expect("effect");
    assert!(e.lo < 0.7 && 0.7 < e.hi && e.hi < 1.0, "{e:?}");
}

#[test]
fn every_cell_is_the_largest_support_and_bonferroni_against() {
    let t = |s: f64, a: f64| ClaimTest {
        p_support: s,
        p_against: a,
        ..crate::family::untested(ClaimKind::Direction)
    };
    let e = every_of(
        ClaimKind::Direction,
        &[t(0.001, 0.9), t(0.004, 0.8), t(0.002, 0.9)],
    );
    assert_eq!(e.p_support, 0.004);
    assert!((e.p_against - 1.0).abs() < 1e-12);
    assert!((e.p_family - 0.008).abs() < 1e-12);
    let c = every_of(ClaimKind::Direction, &[t(0.5, 0.01), t(0.001, 0.9)]);
    assert_eq!(c.leaning, Leaning::Against);
    assert!((c.p_against - 0.02).abs() < 1e-12 && (c.p_family - 0.04).abs() < 1e-12);
}

#[test]
fn a_tiny_effect_inside_smallest_effect_is_negligible() {
    let rel = Relation::Lower {
        smallest_effect: Some(Amount::Relative(0.05)),
    };
    let effect = |lo: f64, hi: f64| Effect {
        scale: EffectScale::Ratio,
        estimate: (lo + hi) / 2.0,
        lo,
        hi,
        level: 0.99,
        coverage: 0.99,
        below_level: false,
        method: EffectMethod::Stratified,
    };
    // Significantly below 1 (0.97-0.99) but inside 0.95-1.05: negligible.
    assert!(negligible(&rel, &effect(0.97, 0.99)));
    assert!(!negligible(&rel, &effect(0.90, 0.99)));
    assert!(
        !negligible(&LOWER, &effect(0.97, 0.99)),
        "no smallest_effect"
    );
    let at_most = Relation::RatioAtMost {
        ratio: 0.5,
        smallest_effect: Some(Amount::Relative(0.1)),
    };
    assert!(negligible(&at_most, &effect(0.46, 0.54)));
    assert!(!negligible(&at_most, &effect(0.44, 0.54)));
}
