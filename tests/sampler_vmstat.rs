//! The sampler's columns against independent sources: a hand computation in this file from the
//! same bytes of the /proc files, and `vmstat` run over the same one-second interval.

use schedlab_procfs::{SystemCounters, SystemReader, SYSTEM_FILES};
use schedlab_run::sampler::compute;
use std::process::Command;
use std::time::{Duration, Instant};

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
    if !schedlab_testkit::program("vmstat", "-V", "procps") {
        return;
    }
    // Start both together: vmstat's second line covers roughly the same second as ours.
    let handle = std::thread::spawn(vmstat_interval);
    let mut reader = SystemReader::open();
    let a = reader.read();
    std::thread::sleep(Duration::from_millis(1000));
    let b = reader.read();
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
}

/// The contents of the files of `SYSTEM_FILES` now, as text (`None` = unreadable).
fn read_texts() -> [Option<String>; 6] {
    SYSTEM_FILES.map(|f| std::fs::read_to_string(format!("/proc/{f}")).ok())
}

/// By hand: the words after `key` on the line of `text` whose first word is `key`.
fn line_after(text: &str, key: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no line {key} in {text}"));
    line.split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// By hand: the first number after `key`.
fn number_after(text: &str, key: &str) -> u64 {
    line_after(text, key)[0].parse().unwrap()
}

/// By hand: `total=` of the `some` or `full` line of a pressure file, microseconds.
fn psi_total_us(text: &str, line: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(line))?
        .split(' ')
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

#[test]
fn sampler_columns_equal_a_hand_computation_on_the_same_bytes() {
    let before = read_texts();
    let t0 = Instant::now();
    // Move the counters: some CPU work, and many context switches.
    while t0.elapsed() < Duration::from_millis(60) {
        std::hint::black_box((0..1000u64).sum::<u64>());
    }
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let after = read_texts();
    let dt_ns = t0.elapsed().as_nanos() as u64;
    let (t_a, t_b) = (5_000, 5_000 + dt_ns);
    let counters = |t, texts: &[Option<String>; 6]| {
        SystemCounters::parse(t, texts.each_ref().map(|x| x.as_deref().map(str::as_bytes)))
    };
    let ours =
        compute(&counters(t_a, &before), &counters(t_b, &after), t_a).expect("/proc/stat parses");

    // The same columns from the texts, by hand, as vmstat(8) defines them.
    let (stat_a, stat_b) = (before[0].as_deref().unwrap(), after[0].as_deref().unwrap());
    let cpu = |text: &str| -> Vec<u64> {
        line_after(text, "cpu")
            .iter()
            .map(|w| w.parse().unwrap())
            .collect()
    };
    let (ca, cb) = (cpu(stat_a), cpu(stat_b));
    // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
    let tick: Vec<f64> = (0..8).map(|i| (cb[i] - ca[i]) as f64).collect();
    let all_ticks: f64 = tick.iter().sum();
    assert!(
        all_ticks >= 4.0,
        "the window should hold CPU ticks: {tick:?}"
    );
    let share = |ticks: f64| ticks / all_ticks * 100.0;
    let secs = dt_ns as f64 * 1e-9;
    let per_s = |key: &str| (number_after(stat_b, key) - number_after(stat_a, key)) as f64 / secs;
    let close = |what: &str, ours: f64, hand: f64| {
        assert!(
            (ours - hand).abs() <= 1e-9 * hand.abs().max(1.0),
            "{what}: sampler {ours} vs hand {hand}"
        );
    };
    close("us", ours.us_pct, share(tick[0] + tick[1]));
    close("sy", ours.sy_pct, share(tick[2] + tick[5] + tick[6]));
    close("id", ours.id_pct, share(tick[3]));
    close("wa", ours.wa_pct, share(tick[4]));
    close("st", ours.st_pct, share(tick[7]));
    let cs = per_s("ctxt");
    assert!(cs * secs >= 80.0, "80 sleeps and wake-ups at least: {cs}/s");
    close("cs", ours.cs_per_s, cs);
    close("in", ours.in_per_s, per_s("intr"));
    assert_eq!(ours.r, number_after(stat_b, "procs_running"));
    assert_eq!(ours.b, number_after(stat_b, "procs_blocked"));
    let (vm_a, vm_b) = (before[1].as_deref().unwrap(), after[1].as_deref().unwrap());
    let kib_s = |key: &str| (number_after(vm_b, key) - number_after(vm_a, key)) as f64 / secs;
    close("bi", ours.bi_kib_s, kib_s("pgpgin"));
    close("bo", ours.bo_kib_s, kib_s("pgpgout"));
    for (i, name) in ["cpu", "io", "memory"].iter().enumerate() {
        for (j, line) in ["some", "full"].iter().enumerate() {
            let hand = match (&before[2 + i], &after[2 + i]) {
                (Some(a), Some(b)) => psi_total_us(a, line)
                    .zip(psi_total_us(b, line))
                    .map(|(a, b)| (b - a) as f64 / (dt_ns as f64 / 1e3) * 100.0),
                _ => None,
            };
            let what = format!("psi {name} {line}");
            match (ours.psi_pct[2 * i + j], hand) {
                (Some(o), Some(h)) => close(&what, o, h),
                (o, h) => assert_eq!(o, h, "{what}"),
            }
        }
    }
    let load1 = after[5]
        .as_deref()
        .map(|t| t.split_whitespace().next().unwrap().parse::<f64>().unwrap());
    assert_eq!(ours.load1, load1);
    assert_eq!((ours.t_ns, ours.interval_ns), (dt_ns, dt_ns));
}
