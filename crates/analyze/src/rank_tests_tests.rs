use super::*;
use crate::fixtures::{assert_close, floats, items, num, reference};

#[test]
fn one_sided_mann_whitney_matches_scipy_exact_and_permutation_p_values() {
    let cases = items(&reference()["claims"]["mwu_one_sided"]);
    assert!(cases.len() >= 20);
    for case in cases {
        let (x, y) = (floats(&case["x"]), floats(&case["y"]));
        let label = format!("{} vs {}", x.len(), y.len());
        let t = mann_whitney_one_sided(&x, &y).expect("usable");
        assert_close(t.p_less, num(&case["p_less"]), 1e-9, &label);
        assert_close(t.p_greater, num(&case["p_greater"]), 1e-9, &label);
        assert_eq!(t.statistic, num(&case["statistic"]), "{label}");
        let tied = case["ties"].as_bool().expect("bool");
        let want = if tied {
            PValueMethod::Permutation
        } else {
            PValueMethod::Exact
        };
        assert_eq!(t.method, want, "{label}");
    }
}

#[test]
fn one_sided_signed_rank_matches_scipy_wilcoxon() {
    for case in items(&reference()["claims"]["wilcoxon_one_sided"]) {
        let d = floats(&case["d"]);
        let label = format!("{d:?}");
        let t = signed_rank_one_sided(&d).expect("usable");
        assert_close(t.p_less, num(&case["p_less"]), 1e-9, &label);
        assert_close(t.p_greater, num(&case["p_greater"]), 1e-9, &label);
        if let Some(s) = case["statistic"].as_f64() {
            assert_eq!(t.statistic, s, "{label}");
        }
    }
}

#[test]
fn jonckheere_matches_a_numpy_enumeration_of_every_assignment() {
    for case in items(&reference()["claims"]["jonckheere"]) {
        let groups: Vec<Vec<f64>> = items(&case["groups"]).iter().map(floats).collect();
        let refs: Vec<&[f64]> = groups.iter().map(|g| &g[..]).collect();
        let t = jonckheere_one_sided(&refs, 7).expect("usable");
        let label = format!("{groups:?}");
        assert_eq!(t.statistic, num(&case["statistic"]), "{label}");
        let (less, greater) = (num(&case["p_less"]), num(&case["p_greater"]));
        if t.method == PValueMethod::MonteCarlo {
            // 10 000 relabelings: standard error at most 0.005; allow four.
            assert!(
                (t.p_less - less).abs() < 0.02,
                "{label}: {} vs {less}",
                t.p_less
            );
            assert!((t.p_greater - greater).abs() < 0.02, "{label}");
        } else {
            assert_eq!(t.method, PValueMethod::Exact);
            assert_close(t.p_less, less, 1e-9, &label);
            assert_close(t.p_greater, greater, 1e-9, &label);
        }
    }
}

#[test]
fn the_normal_approximation_agrees_with_the_exact_p_in_the_middle() {
    // 40 vs 40 tie-free: exact and asymptotic tails agree to a few 1e-3 near p = 0.1.
    let x: Vec<f64> = (0..40).map(|i| i as f64).collect();
    let y: Vec<f64> = (0..40).map(|i| i as f64 + 6.3).collect();
    let exact = mann_whitney_one_sided(&x, &y).expect("usable");
    assert_eq!(exact.method, PValueMethod::Exact);
    let approx = normal_tails(exact.statistic, 800.0, 1600.0 * 81.0 / 12.0);
    assert!(
        (exact.p_less - approx.p_less).abs() < 0.005,
        "{exact:?} {approx:?}"
    );
}

#[test]
fn degenerate_inputs_give_none_or_p_one() {
    assert_eq!(mann_whitney_one_sided(&[], &[1.0]), None);
    assert_eq!(mann_whitney_one_sided(&[f64::NAN], &[1.0]), None);
    let flat = mann_whitney_one_sided(&[2.0, 2.0], &[2.0, 2.0, 2.0]).expect("usable");
    assert_eq!((flat.p_less, flat.p_greater), (1.0, 1.0));
    let zeros = signed_rank_one_sided(&[0.0, 0.0]).expect("usable");
    assert_eq!((zeros.p_less, zeros.p_greater), (1.0, 1.0));
    assert_eq!(signed_rank_one_sided(&[]), None);
    assert_eq!(jonckheere_one_sided(&[&[1.0, 2.0]], 0), None);
}

#[test]
fn separated_samples_reach_the_smallest_one_sided_p() {
    // 4 vs 4 without overlap: 1 / C(8, 4) = 1/70 one-sided.
    let t = mann_whitney_one_sided(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).expect("u");
    assert!((t.p_less - 1.0 / 70.0).abs() < 1e-15);
    assert!((t.p_greater - 1.0).abs() < 1e-15);
    // Five positive differences: 1 / 2^5.
    let s = signed_rank_one_sided(&[0.1, 0.2, 0.3, 0.4, 0.5]).expect("t");
    assert!((s.p_greater - 1.0 / 32.0).abs() < 1e-15);
}
