//! Tests of the reference loop, its calibration and the noise flag.

use super::*;

#[test]
fn noisy_means_more_than_ten_percent_below_the_runs_steady_speed() {
    let steady = Some(1.0);
    assert!(!is_noisy(Some(0.95), Some(1.08), steady));
    assert!(is_noisy(Some(0.85), Some(1.0), steady));
    assert!(is_noisy(None, Some(0.88), steady));
    // A fast reading is no slowdown: the quick experiment of 2026-11-28 read 1.0 against a
    // steady 0.53 (190 %) beside makespans within 3 % (7 of 24 trials were flagged so).
    assert!(!is_noisy(Some(1.0), Some(0.52), Some(0.53)));
    assert!(!is_noisy(None, Some(1.15), steady));
    assert!(!is_noisy(None, None, steady));
    assert!(!is_noisy(Some(0.5), Some(0.5), None), "no steady speed yet");
    // Against a steady speed of 1.31 (a calibration taken at a slow moment), 1.3 is steady
    // and 1.0 is 24 % below it.
    assert!(!is_noisy(Some(1.3), Some(1.32), Some(1.31)));
    assert!(is_noisy(Some(1.0), Some(1.3), Some(1.31)));
    let meta = TrialMeta {
        speed_before: Some(0.85),
        speed_steady: Some(1.25),
        ..TrialMeta::default()
    };
    let w = noisy_warning(&meta, 1, "other").to_string();
    // 0.85 / 1.25 = 68 % of the steady speed, which is 125 % of the calibration.
    assert!(
        w.contains("68 % of the run's steady speed (125 % of its stored calibration)")
            && w.contains("--exclude-noisy"),
        "{w}"
    );
}

#[test]
fn a_steady_run_is_never_all_flagged_whatever_its_calibration() {
    // Nine trials of a steady run read 1.31 against a calibration taken at a slow moment
    // (what `cargo run --release -- run` showed): none is noisy. One slow moment in the
    // middle is, and it does not move the steady speed.
    let mut steady = Steady::default();
    let speeds = [1.31, 1.30, 1.32, 1.31, 0.95, 1.29, 1.31, 1.33, 1.30];
    let flagged: Vec<usize> = speeds
        .iter()
        .enumerate()
        .filter(|&(_, &s)| {
            steady.add([Some(s), Some(s + 0.005)]);
            is_noisy(Some(s), Some(s + 0.005), steady.median())
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(flagged, vec![4]);
    let m = steady.median().unwrap();
    assert!((m - 1.31).abs() < 0.006, "median {m}");
}

#[test]
fn the_calibration_is_a_high_quantile_of_its_measurements_with_their_spread() {
    // Ten measurements, two at slow moments: sorted 0.6 0.7 0.98 0.99 1 1 1.01 1.02 1.03 1.05;
    // the 90 % quantile is the 9th of 10 (index round(9 x 0.9) = 8): 1.03; the 10 % one the
    // 2nd (index round(0.9) = 1): 0.7; spread (1.03 - 0.7) / 1.03.
    let c = Calibrated::of(vec![1.0, 0.6, 1.02, 0.98, 1.05, 0.7, 1.01, 0.99, 1.0, 1.03]);
    assert_eq!(c.speed, 1.03);
    assert!((c.spread - 0.33 / 1.03).abs() < 1e-12, "{}", c.spread);
    assert_eq!(
        Calibrated::of(Vec::new()),
        Calibrated {
            speed: 1.0,
            spread: 0.0
        }
    );
}

#[test]
fn steal_is_the_share_of_the_chosen_cpus_ticks() {
    let t = |steal: u64, idle: u64| CpuTicks {
        steal,
        idle,
        ..CpuTicks::default()
    };
    let before = vec![(0, t(10, 100)), (1, t(0, 100))];
    // CPU 0: 20 of 100 ticks stolen; CPU 1: none of 100.
    let after = vec![(0, t(30, 180)), (1, t(0, 200))];
    assert_eq!(steal_pct(&before, &after, Some(&[0])), Some(20.0));
    assert_eq!(steal_pct(&before, &after, None), Some(10.0));
    assert_eq!(steal_pct(&before, &before, None), None);
}

#[test]
fn at_most_n_cpus_are_measured_evenly_spread() {
    assert_eq!(spread(&[0, 1], 4), vec![0, 1]);
    assert_eq!(spread(&(0..16).collect::<Vec<_>>(), 4), vec![0, 4, 8, 12]);
}

#[test]
fn the_reference_loop_runs_near_its_calibrated_speed_and_restores_affinity() {
    // Calibrate the loop the way a run does (no sink: nothing stored), then measure on
    // CPU 0: on a quiet CPU the speed is about 1; on this shared machine allow a band.
    let progress = crate::progress::Progress::new(0, true);
    let mut cal = Calibrator::new(None, std::path::Path::new("/tmp"), &progress);
    let r = Reference::new(&mut cal).expect("calibration");
    let before = schedlab_sys::allowed_cpus();
    let s = r.speed(Some(&before[..1])).expect("measured");
    assert!(s > 0.6 && s < 1.6, "speed {s}");
    assert_eq!(schedlab_sys::allowed_cpus(), before);
    let rate = schedlab_core::workload::calibrate::Rate {
        units_per_sec: r.units_per_sec,
    };
    // Half the calibrated rate makes the same loop look twice as fast.
    let half = Reference::with_rate(rate.units_per_sec / 2.0);
    let s2 = half.speed(Some(&before[..1])).expect("measured");
    assert!(s2 > s * 1.3, "{s2} vs {s}");
}
