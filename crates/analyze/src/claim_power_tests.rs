use super::*;
use crate::claims::test_claim;
use crate::family::{decide_family, power_alpha, Verdict};

fn lower(e: f64) -> Relation {
    Relation::Lower {
        smallest_effect: Some(Amount::Relative(e)),
    }
}

/// `n` log-normal trials around `level` with log-SD `sd`.
fn trials(level: f64, sd: f64, n: usize, rng: &mut fastrand::Rng) -> Vec<f64> {
    (0..n)
        .map(|_| (level.ln() + sd * standard_normal(rng)).exp())
        .collect()
}

/// The share of `reps` replications in which the real pipeline (test_claim, then
/// decide_family) gives `want` at `alpha`, on data from the power model: A's log-trials
/// shifted by ln(ratio) with log-SD `sd` against each B; with `rounds`, per-round pairs that
/// share a random round level, so the per-round log-differences have SD `sd`.
#[allow(clippy::too_many_arguments)]
fn simulated(
    relation: &Relation,
    ratio: f64,
    sd: f64,
    n: usize,
    bs: usize,
    rounds: bool,
    alpha: f64,
    reps: usize,
    seed: u64,
) -> f64 {
    let mut rng = fastrand::Rng::with_seed(seed);
    let ids: Vec<u64> = (0..n as u64).collect();
    let want = match relation {
        Relation::Equal { .. } => Verdict::Equivalent,
        _ => Verdict::Supported,
    };
    let mut hits = 0;
    for _ in 0..reps {
        let (a, others): (Vec<f64>, Vec<Vec<f64>>) = if rounds {
            let level: Vec<f64> = (0..n).map(|_| 50.0 + 100.0 * rng.f64()).collect();
            let a = level
                .iter()
                .map(|l| l * ratio * (sd * standard_normal(&mut rng)).exp())
                .collect();
            (a, (0..bs).map(|_| level.clone()).collect())
        } else {
            let a = trials(100.0 * ratio, sd, n, &mut rng);
            (a, (0..bs).map(|_| trials(100.0, sd, n, &mut rng)).collect())
        };
        let arm = |v: &[f64]| -> Vec<f64> { v.to_vec() };
        let (a, others) = (arm(&a), others);
        let arms: Vec<Arm> = others
            .iter()
            .map(|b| {
                if rounds {
                    Arm::with_rounds(b, &ids)
                } else {
                    Arm::new(b)
                }
            })
            .collect();
        let arm_a = if rounds {
            Arm::with_rounds(&a, &ids)
        } else {
            Arm::new(&a)
        };
        let t = test_claim(arm_a, &arms, relation, 0.95).expect("testable");
        hits += usize::from(decide_family(&[t], alpha)[0].verdict == want);
    }
    hits as f64 / reps as f64
}

#[test]
fn no_power_where_the_trials_cannot_reach_alpha() {
    let mut rng = fastrand::Rng::with_seed(3);
    let (a, b) = (
        trials(90.0, 0.05, 3, &mut rng),
        trials(100.0, 0.05, 3, &mut rng),
    );
    let q = PowerQuery::new(0.05, 1);
    let p = claim_power(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), &q)
        .expect("ok")
        .expect("a model");
    // 3 vs 3: two-sided family p is at least 2/20.
    assert!((p.min_p - 0.1).abs() < 1e-15 && !p.possible, "{p:?}");
    assert_eq!(p.power, Some(0.0));
    assert_eq!(p.detectable, None);
    let Some(TrialsNeeded::PerSide(n)) = p.trials_needed else {
        panic!("{p:?}")
    };
    assert!(n > 3, "{n}");
    // 4 vs 4 reaches 2/70 = 0.029: possible at 0.05, not at 0.05 / 2.
    let (a, b) = (
        trials(90.0, 0.05, 4, &mut rng),
        trials(100.0, 0.05, 4, &mut rng),
    );
    let four = claim_power(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), &q).expect("ok");
    assert!(four.expect("model").possible);
    let strict = PowerQuery::new(power_alpha(0.05, 2), 1);
    let four = claim_power(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), &strict).expect("ok");
    assert!(!four.expect("model").possible);
}

/// Stated power against the real pipeline simulated at the same model and alpha: 2000
/// replications each side (standard errors at most 0.011 each, so 0.05 is over three
/// standard errors of the difference).
#[test]
fn stated_power_is_within_five_points_of_the_simulated_test() {
    let mut rng = fastrand::Rng::with_seed(4);
    let reps = 2000;
    let equal = Relation::Equal {
        margin: Amount::Relative(0.1),
    };
    let at_least = Relation::RatioAtLeast {
        ratio: 2.0,
        smallest_effect: Some(Amount::Relative(0.15)),
    };
    let higher = Relation::Higher {
        smallest_effect: Some(Amount::Relative(0.05)),
    };
    // (relation, true ratio, log-SD, trials, Bs, rounds, family size)
    let configs = [
        (lower(0.1), 0.9, 0.08, 6, 1, false, 4),
        (higher, 1.05, 0.04, 10, 1, true, 2),
        (equal, 1.0, 0.06, 10, 1, false, 1),
        (at_least, 2.3, 0.1, 8, 2, false, 3),
    ];
    for (i, (relation, ratio, sd, n, bs, rounds, m)) in configs.into_iter().enumerate() {
        let alpha = power_alpha(0.05, m);
        // A pilot whose spread the statement uses.
        let ids: Vec<u64> = (0..n as u64).collect();
        let level: Vec<f64> = (0..n).map(|_| 100.0 * (1.0 + rng.f64())).collect();
        let (a, b) = if rounds {
            let a = level
                .iter()
                .map(|l| l * ratio * (sd * standard_normal(&mut rng)).exp())
                .collect();
            (a, level.clone())
        } else {
            (
                trials(100.0 * ratio, sd, n, &mut rng),
                trials(100.0, sd, n, &mut rng),
            )
        };
        let (arm_a, arm_b) = if rounds {
            (Arm::with_rounds(&a, &ids), Arm::with_rounds(&b, &ids))
        } else {
            (Arm::new(&a), Arm::new(&b))
        };
        let others = vec![arm_b; bs];
        let q = PowerQuery::new(alpha, 40 + i as u64);
        let p = claim_power(arm_a, &others, &relation, &q)
            .expect("ok")
            .expect("a model");
        let stated = p.power.expect("an effect");
        let effect = p.effect.expect("an effect");
        let got = simulated(
            &relation,
            effect,
            p.spread,
            n,
            bs,
            rounds,
            alpha,
            reps,
            90 + i as u64,
        );
        assert!(
            (stated - got).abs() <= 0.05,
            "config {i}: stated {stated}, simulated {got} ({p:?})"
        );
        eprintln!("power config {i}: stated {stated:.3}, simulated {got:.3}");
    }
}

#[test]
fn trials_needed_and_detectable_effect_hold_for_the_real_test() {
    let mut rng = fastrand::Rng::with_seed(5);
    // Two trials a side with a log-SD of about 0.15: inconclusive, and tens of trials needed.
    let (a, b) = ([80.0, 100.0], [95.0, 115.0]);
    let alpha = 0.05;
    let t = test_claim(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), 0.95).expect("ok");
    assert_eq!(decide_family(&[t], alpha)[0].verdict, Verdict::Inconclusive);
    let q = PowerQuery::new(alpha, 7);
    let p = claim_power(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), &q)
        .expect("ok")
        .expect("a model");
    assert_eq!((p.possible, p.power), (false, Some(0.0)));
    let Some(TrialsNeeded::PerSide(n)) = p.trials_needed else {
        panic!("{p:?}")
    };
    let effect = p.effect.expect("effect");
    let at_n = simulated(&lower(0.1), effect, p.spread, n, 1, false, alpha, 1000, 8);
    let below = simulated(
        &lower(0.1),
        effect,
        p.spread,
        n - 1,
        1,
        false,
        alpha,
        1000,
        9,
    );
    assert!(n > 10, "{n} ({p:?})");
    assert!(
        at_n >= 0.75 && below < 0.85,
        "n = {n}: {at_n} vs {below} at n - 1"
    );
    eprintln!("trials needed {n}: simulated power {at_n:.3} (n - 1: {below:.3})");

    // With 8 trials a side, the detectable ratio has 80% power in the real test.
    let (a, b) = (
        trials(90.0, 0.1, 8, &mut rng),
        trials(100.0, 0.1, 8, &mut rng),
    );
    let p = claim_power(Arm::new(&a), &[Arm::new(&b)], &lower(0.1), &q)
        .expect("ok")
        .expect("a model");
    let r = p.detectable.expect("possible at 8 vs 8");
    assert!(r < 1.0, "{r}");
    let got = simulated(&lower(0.1), r, p.spread, 8, 1, false, alpha, 2000, 10);
    assert!(
        (got - 0.8).abs() <= 0.05,
        "detectable {r}: simulated power {got}"
    );
}

#[test]
fn no_model_without_spread_or_with_a_ratio_of_zeros() {
    let q = PowerQuery::new(0.05, 1);
    let flat = [5.0, 5.0, 5.0];
    assert_eq!(
        claim_power(Arm::new(&flat), &[Arm::new(&flat)], &lower(0.1), &q),
        Ok(None)
    );
    let zeros = [0.0, 1.0, 2.0];
    assert_eq!(
        claim_power(Arm::new(&zeros), &[Arm::new(&flat)], &lower(0.1), &q),
        Ok(None)
    );
    let one = [1.0];
    assert_eq!(
        claim_power(Arm::new(&one), &[Arm::new(&one)], &lower(0.1), &q),
        Ok(None)
    );
    // An absolute effect on values with zeros works on the difference scale.
    let abs = Relation::Lower {
        smallest_effect: Some(Amount::Absolute(1.0)),
    };
    let p = claim_power(Arm::new(&zeros), &[Arm::new(&[1.0, 2.0, 4.0])], &abs, &q)
        .expect("ok")
        .expect("model");
    assert_eq!((p.scale, p.effect), (EffectScale::Difference, Some(-1.0)));
}
