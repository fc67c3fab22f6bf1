use super::*;
use crate::claim_level::{test_claim_over_cells, CellArms};
use crate::claim_types::{Arm, Relation};
use crate::claims::test_claim;
use crate::draws::standard_normal;
use crate::family::{decide_family, untested};

fn t(p: f64, leaning: Leaning) -> ClaimTest {
    ClaimTest {
        p_family: p,
        leaning,
        ..untested(ClaimKind::Direction)
    }
}

#[test]
fn a_claim_opens_its_cells_and_a_closed_claim_passes_its_share_on() {
    let s = Leaning::Support;
    // Claim A over 3 cells (claim p 0.001); claim B over one cell (p 0.02).
    let a_claim = t(0.001, s);
    let a_cells = [t(0.004, s), t(0.03, Leaning::Against), t(0.5, s)];
    let b_claim = t(0.02, s);
    let b_cells = [t(0.02, s)];
    let members = [
        ClaimMember {
            claim: &a_claim,
            cells: &a_cells,
            scope: Scope::Overall,
        },
        ClaimMember {
            claim: &b_claim,
            cells: &b_cells,
            scope: Scope::Overall,
        },
    ];
    // By hand, alpha 0.05: m = 2, level 0.025. A: 0.001 <= 0.025, decided; its cells at
    // 0.025 / (3 - 1): 0.004 yes, then 0.03 > 0.0125 no. B: 0.02 <= 0.025, decided with its
    // one cell, so B closes and A alone has 0.05: its next cell needs 0.03 <= 0.05 / 2: no.
    let d = decide_claims(&members, 0.05, None);
    assert_eq!(d[0].verdict, Verdict::Supported);
    assert_eq!(
        d[0].cells,
        [
            Verdict::Supported,
            Verdict::Inconclusive,
            Verdict::Inconclusive
        ]
    );
    assert_eq!(d[1].verdict, Verdict::Supported);
    assert_eq!(d[1].cells, [Verdict::Supported]);
    // At 0.08: level 0.04 for both; A's second cell needs 0.02 (no) until B closes, then
    // 0.08 / 2 = 0.04 >= 0.03: contradicted in that cell.
    let d = decide_claims(&members, 0.08, None);
    assert_eq!(d[0].cells[1], Verdict::Contradicted);
    // The adjusted p of A's second cell: the smallest alpha deciding it, 0.06 (B closes at
    // 0.04 (0.02 <= alpha/2), then 0.03 <= alpha/2).
    let adj = adjusted(&members);
    assert!((adj[0].1[1] - 0.06).abs() < 1e-9, "{adj:?}");
    assert!((adj[0].0 - 0.002).abs() < 1e-9);
    // A claim that is not decided judges none of its cells, however small their p.
    let weak = t(0.3, s);
    let strong_cells = [t(1e-6, s), t(0.9, s)];
    let d = decide_claims(
        &[ClaimMember {
            claim: &weak,
            cells: &strong_cells,
            scope: Scope::Overall,
        }],
        0.05,
        None,
    );
    assert!(!d[0].gate_open());
    assert_eq!(d[0].cells, [Verdict::Inconclusive; 2]);
    // What an earlier look decided stays decided.
    let kept = decide_claims(
        &[ClaimMember {
            claim: &weak,
            cells: &strong_cells,
            scope: Scope::Overall,
        }],
        0.05,
        Some(&[ClaimDecision {
            verdict: Verdict::Supported,
            cells: vec![Verdict::Supported, Verdict::Inconclusive],
        }]),
    );
    assert_eq!(kept[0].verdict, Verdict::Supported);
}

#[test]
fn a_claim_in_every_cell_is_supported_only_with_all_of_them_and_then_in_each() {
    let s = Leaning::Support;
    let cells = [t(0.004, s), t(0.01, s)];
    let claim = crate::claim_level::every_of(
        ClaimKind::Direction,
        &[
            ClaimTest {
                p_support: 0.002,
                p_against: 0.99,
                ..t(0.004, s)
            },
            ClaimTest {
                p_support: 0.005,
                p_against: 0.99,
                ..t(0.01, s)
            },
        ],
    );
    let m = [ClaimMember {
        claim: &claim,
        cells: &cells,
        scope: Scope::Every,
    }];
    let d = decide_claims(&m, 0.05, None);
    assert_eq!(d[0].cells, [Verdict::Supported, Verdict::Supported]);
    let (claim_level, cell_level) =
        interval_levels(0.05, 5, 4, Scope::Overall, ClaimKind::Direction);
    assert!((claim_level - 0.99).abs() < 1e-12 && (cell_level - (1.0 - 0.01 / 3.0)).abs() < 1e-12);
}

/// One simulated run of `claims` claims of `cells` cells with `rounds` rounds, A's true
/// ratio to B per cell given by `ratio(claim, cell)`; returns (any false verdict, claims
/// decided, cells decided, cells a per-cell Holm over every cell decides).
fn one_run(
    rng: &mut fastrand::Rng,
    (claims, cells, rounds): (usize, usize, usize),
    ratio: &dyn Fn(usize, usize) -> f64,
) -> (bool, usize, usize, usize) {
    let lower = Relation::Lower {
        smallest_effect: None,
    };
    let r: Vec<u64> = (0..rounds as u64).collect();
    let mut claim_tests = Vec::new();
    let mut cell_tests: Vec<Vec<ClaimTest>> = Vec::new();
    for k in 0..claims {
        let data: Vec<(Vec<f64>, Vec<f64>)> = (0..cells)
            .map(|c| {
                let drift: Vec<f64> = (0..rounds).map(|_| 50.0 + 100.0 * rng.f64()).collect();
                let noise = 0.05 + 0.1 * (c % 4) as f64; // cells differ in spread
                let a = drift
                    .iter()
                    .map(|d| ratio(k, c) * d * (noise * standard_normal(rng)).exp())
                    .collect();
                let b = drift
                    .iter()
                    .map(|d| d * (noise * standard_normal(rng)).exp())
                    .collect();
                (a, b)
            })
            .collect();
        let arms: Vec<CellArms> = data
            .iter()
            .map(|(a, b)| CellArms {
                a: Arm::with_rounds(a, &r),
                others: vec![Arm::with_rounds(b, &r)],
            })
            .collect();
        claim_tests.push(test_claim_over_cells(&arms, &lower, None).expect("ok"));
        cell_tests.push(
            arms.iter()
                .map(|c| test_claim(c.a, &c.others, &lower, 0.95).expect("ok"))
                .collect(),
        );
    }
    let members: Vec<ClaimMember> = (0..claims)
        .map(|k| ClaimMember {
            claim: &claim_tests[k],
            cells: &cell_tests[k],
            scope: Scope::Overall,
        })
        .collect();
    let d = decide_claims(&members, 0.05, None);
    let wrong = |v: Verdict, truth: f64| match v {
        Verdict::Supported => truth >= 1.0,
        Verdict::Contradicted => truth <= 1.0,
        _ => false,
    };
    let mut any_false = false;
    for (k, dk) in d.iter().enumerate() {
        let all_null = (0..cells).all(|c| ratio(k, c) == 1.0);
        any_false |= all_null && dk.gate_open();
        any_false |= dk
            .cells
            .iter()
            .enumerate()
            .any(|(c, v)| wrong(*v, ratio(k, c)));
    }
    let per_cell: Vec<ClaimTest> = cell_tests.iter().flatten().cloned().collect();
    let holm_decided = decide_family(&per_cell, 0.05)
        .iter()
        .filter(|f| f.verdict != Verdict::Inconclusive)
        .count();
    let claims_decided = d.iter().filter(|x| x.gate_open()).count();
    let cells_decided = d
        .iter()
        .flat_map(|x| &x.cells)
        .filter(|v| **v != Verdict::Inconclusive)
        .count();
    (any_false, claims_decided, cells_decided, holm_decided)
}

#[test]
fn five_claims_over_eighty_cells_keep_the_family_error_and_gain_power() {
    let mut rng = fastrand::Rng::with_seed(41);
    let reps = 600;
    // Every cell null: any decision is an error.
    let null = |_: usize, _: usize| 1.0;
    // Partly false: claims 0-1 null everywhere; claim 2 holds in half its cells (ratio 0.8)
    // and is null in the others; claims 3-4 hold at 0.9 in every cell, except that one cell
    // of claim 4 goes the other way (1.1). False verdicts in null cells or in the wrong
    // direction are errors.
    let mixed = |k: usize, c: usize| match k {
        0 | 1 => 1.0,
        2 if c % 2 == 0 => 0.8,
        2 => 1.0,
        4 if c == 0 => 1.1,
        _ => 0.9,
    };
    for (name, ratio) in [
        ("null", &null as &dyn Fn(usize, usize) -> f64),
        ("mixed", &mixed),
    ] {
        let errors = (0..reps)
            .filter(|_| one_run(&mut rng, (5, 16, 6), ratio).0)
            .count();
        let rate = errors as f64 / reps as f64;
        eprintln!("{name}: family error {rate} over {reps} runs");
        assert!(rate <= 0.06, "{name}: family error {rate}");
    }
    // Power: every claim holds at 0.9 in every cell, 6 rounds. A cell alone can reach
    // 2 / 64 at best, so per-cell Holm over 80 cells decides nothing; claims are decided.
    let holds = |_: usize, _: usize| 0.9;
    let (mut claims, mut cells, mut holm) = (0, 0, 0);
    for _ in 0..100 {
        let (_, c, k, h) = one_run(&mut rng, (5, 16, 6), &holds);
        claims += c;
        cells += k;
        holm += h;
    }
    assert_eq!(
        holm, 0,
        "per-cell Holm over 80 cells cannot decide at 6 rounds"
    );
    eprintln!("in 100 runs: {claims} of 500 claims and {cells} of 8000 cells decided; per-cell Holm {holm}");
    assert!(claims >= 400, "claims decided in 100 runs of 5: {claims}");
}

/// An interval never excludes the boundary beside "inconclusive": claim intervals at
/// `interval_levels`' claim level, cells' at their level once the claim is decided (a cell
/// of an undecided claim shows no interval). Before, intervals were 1 - alpha (95 %) beside
/// verdicts at alpha / m, and "0.62x [0.39, 0.68]" stood beside "inconclusive".
#[test]
fn an_interval_that_excludes_the_boundary_always_stands_beside_a_decision() {
    let lower = Relation::Lower {
        smallest_effect: None,
    };
    let mut rng = fastrand::Rng::with_seed(77);
    let r: Vec<u64> = (0..9).collect();
    let (claims, cells) = (4, 3);
    let mut checked = (0, 0);
    for run in 0..150 {
        let data: Vec<Vec<(Vec<f64>, Vec<f64>)>> = (0..claims)
            .map(|k| {
                (0..cells)
                    .map(|c| {
                        let ratio = 1.0 - 0.04 * ((run + k + c) % 4) as f64;
                        let d: Vec<f64> = (0..9).map(|_| 50.0 + 100.0 * rng.f64()).collect();
                        let a = d
                            .iter()
                            .map(|x| ratio * x * (0.08 * standard_normal(&mut rng)).exp())
                            .collect();
                        let b = d
                            .iter()
                            .map(|x| x * (0.08 * standard_normal(&mut rng)).exp())
                            .collect();
                        (a, b)
                    })
                    .collect()
            })
            .collect();
        let (claim_level, cell_level) =
            interval_levels(0.05, claims, cells, Scope::Overall, ClaimKind::Direction);
        let arms: Vec<Vec<CellArms>> = data
            .iter()
            .map(|k| {
                k.iter()
                    .map(|(a, b)| CellArms {
                        a: Arm::with_rounds(a, &r),
                        others: vec![Arm::with_rounds(b, &r)],
                    })
                    .collect()
            })
            .collect();
        let claim_tests: Vec<ClaimTest> = arms
            .iter()
            .map(|k| test_claim_over_cells(k, &lower, Some(claim_level)).expect("ok"))
            .collect();
        let cell_tests: Vec<Vec<ClaimTest>> = arms
            .iter()
            .map(|k| {
                k.iter()
                    .map(|c| test_claim(c.a, &c.others, &lower, cell_level).expect("ok"))
                    .collect()
            })
            .collect();
        let members: Vec<ClaimMember> = (0..claims)
            .map(|k| ClaimMember {
                claim: &claim_tests[k],
                cells: &cell_tests[k],
                scope: Scope::Overall,
            })
            .collect();
        let d = decide_claims(&members, 0.05, None);
        // An interval that cannot reach its level with these rounds bounds nothing there
        // (claims show it as "no bound"): only one that reaches it can exclude 1.
        let excludes = |t: &ClaimTest| {
            let e = t.pairs[0].effect.expect("effect");
            !e.below_level && (e.lo > 1.0 || e.hi < 1.0)
        };
        for k in 0..claims {
            if excludes(&claim_tests[k]) {
                checked.0 += 1;
                assert!(
                    d[k].gate_open(),
                    "run {run} claim {k}: {:?}",
                    claim_tests[k].pairs[0].effect
                );
            }
            for (c, t) in cell_tests[k].iter().enumerate() {
                if d[k].gate_open() && excludes(t) {
                    checked.1 += 1;
                    assert_ne!(
                        d[k].cells[c],
                        Verdict::Inconclusive,
                        "run {run} claim {k} cell {c}"
                    );
                }
            }
        }
    }
    assert!(
        checked.0 > 50 && checked.1 > 20,
        "cases checked: {checked:?}"
    );
}
