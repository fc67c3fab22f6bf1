//! The sampler's vmstat columns agree with `vmstat` run over the same one-second interval.

use schedlab::run::sampler::{compute, Reading};
use std::process::Command;

/// The last line of `vmstat 1 2` (the one-second interval), as column name -> value.
fn vmstat_interval() -> Option<std::collections::HashMap<String, f64>> {
    let out = Command::new("vmstat")
        .args(["-n", "1", "2"])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().find(|l| l.trim_start().starts_with("r "))?;
    let last = lines.last()?;
    Some(
        header
            .split_whitespace()
            .map(str::to_string)
            .zip(last.split_whitespace().filter_map(|v| v.parse().ok()))
            .collect(),
    )
}

#[test]
fn sampler_columns_match_vmstat_over_the_same_second() {
    if Command::new("vmstat").arg("-V").output().is_err() {
        eprintln!("skipping: vmstat (Debian package procps) is not installed");
        return;
    }
    // Start both together: vmstat's second line covers roughly the same second as ours.
    let handle = std::thread::spawn(vmstat_interval);
    let a = Reading::take();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let b = Reading::take();
    let ours = compute(&a, &b, a.t_ns).unwrap();
    let theirs = handle.join().unwrap().expect("vmstat output parses");
    // The windows differ by the start-up time of vmstat (a few ms), so allow for rounding plus
    // a little drift: percentages within 4 points, rates within 25% or 300/s.
    for (col, ours) in [
        ("us", ours.us_pct),
        ("sy", ours.sy_pct),
        ("id", ours.id_pct),
        ("wa", ours.wa_pct),
        ("st", ours.st_pct),
    ] {
        let t = theirs[col];
        assert!(
            (ours - t).abs() <= 4.0,
            "{col}: ours {ours:.1} vs vmstat {t}"
        );
    }
    for (col, ours) in [("in", ours.in_per_s), ("cs", ours.cs_per_s)] {
        let t = theirs[col];
        assert!(
            (ours - t).abs() <= (0.25 * t).max(300.0),
            "{col}: ours {ours:.0} vs vmstat {t}"
        );
    }
    let sum = ours.us_pct + ours.sy_pct + ours.id_pct + ours.wa_pct + ours.st_pct;
    assert!((sum - 100.0).abs() < 1e-6);
}
