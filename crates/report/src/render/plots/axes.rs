//! The plots' axes: nice ranges and tick counts, padded and logarithmic ranges, tick labels, the natural order of lane names.

/// A "nice" tick step (1, 2 or 5 times a power of ten) that cuts `span` into at most
/// about `target` intervals. 1 for a zero, negative or non-finite span.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span > 0.0 && span.is_finite()) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// `lo..hi` widened to multiples of a nice step (at most 9 intervals), so the axis ends on
/// ticks. A degenerate range (lo == hi) is widened around the value first; the result
/// always has lo < hi. Non-finite input gives 0..1.
pub fn nice_range(lo: f64, hi: f64) -> (f64, f64) {
    let (a, b, _) = nice_axis(lo, hi);
    (a, b)
}

/// [`nice_range`] and the number of ticks on it (both ends included). Given as the
/// label count to plotters, which takes the smallest 1-2-5 step with at most that many
/// points, it puts labels exactly on these ticks (every smaller step has more points).
pub fn nice_axis(lo: f64, hi: f64) -> (f64, f64, usize) {
    let (lo, hi) = widen_degenerate(lo, hi);
    let step = nice_step(hi - lo, 8);
    let (a, b) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    // Guard against rounding of huge or tiny magnitudes.
    if a < b && a.is_finite() && b.is_finite() {
        (a, b, ((b - a) / step).round() as usize + 1)
    } else {
        (lo, hi, 8)
    }
}

/// `lo..hi` with `frac` of the span added on each side (after widening a degenerate
/// range), but not across zero: non-negative data keep a non-negative axis (and
/// non-positive data a non-positive one).
pub fn padded_range(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    let (a, b) = widen_degenerate(lo, hi);
    let pad = (b - a) * frac;
    let lo2 = if a >= 0.0 {
        (a - pad).max(0.0)
    } else {
        a - pad
    };
    let hi2 = if b <= 0.0 {
        (b + pad).min(0.0)
    } else {
        b + pad
    };
    (lo2, hi2)
}

/// Whole decades `10^floor(log10 lo) .. 10^ceil(log10 hi)` for a log axis (at least one
/// decade, so the axis has labelled ticks). Needs 0 < lo <= hi; otherwise 1..10.
pub fn log_range(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return (1.0, 10.0);
    }
    let a = lo.log10().floor();
    let mut b = hi.log10().ceil();
    if b <= a {
        b = a + 1.0;
    }
    (10f64.powf(a), 10f64.powf(b))
}

fn widen_degenerate(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (-1.0, 1.0)
    } else {
        let d = lo.abs() * 0.1;
        (lo - d, hi + d)
    }
}

/// A short tick label: at most 6 significant digits, trailing zeros trimmed, scientific
/// notation (`1.5e6`) beyond 1e6 or below 1e-3.
pub fn fmt_tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a < 1e-12 {
        return "0".to_string();
    }
    if !(1e-3..1e6).contains(&a) {
        let s = format!("{v:.2e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{}", trim_zeros(mant), exp);
    }
    let decimals = (5 - a.log10().floor() as i32).clamp(0, 6) as usize;
    trim_zeros(&format!("{v:.decimals$}"))
}

fn trim_zeros(s: &str) -> String {
    let t = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    };
    if t == "-0" {
        "0".to_string()
    } else {
        t.to_string()
    }
}

/// Order for lane names such as "CPU 2" < "CPU 10": runs of digits compare as numbers.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(cb.iter()) {
        let ord = if *da && *db {
            let (ta, tb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb))
        } else {
            sa.cmp(sb)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * (1.0 + b.abs())
    }

    #[test]
    fn nice_ranges() {
        assert_eq!(nice_step(97.0, 6), 20.0);
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(0.0, 5), 1.0);
        assert_eq!(nice_step(f64::NAN, 5), 1.0);
        assert_eq!(nice_range(0.0, 97.0), (0.0, 100.0));
        assert_eq!(nice_axis(0.0, 97.0), (0.0, 100.0, 6));
        assert_eq!(nice_axis(0.0, 144.2), (0.0, 160.0, 9));
        assert_eq!(nice_axis(-12.4, 20.6), (-15.0, 25.0, 9));
        assert_eq!(nice_range(3.0, 47.0), (0.0, 50.0));
        assert_eq!(nice_range(-13.0, 12.0), (-15.0, 15.0));
        let (a, b) = nice_range(0.12, 0.87);
        assert!(close(a, 0.1) && close(b, 0.9), "{a} {b}");
        let (a, b) = nice_range(5.0, 5.0);
        assert!(close(a, 4.4) && close(b, 5.6), "{a} {b}");
        assert_eq!(nice_range(0.0, 0.0), (-1.0, 1.0));
        assert_eq!(nice_range(f64::NAN, 1.0), (0.0, 1.0));
        assert_eq!(padded_range(-10.0, 10.0, 0.05), (-11.0, 11.0));
        assert_eq!(padded_range(0.0, 10.0, 0.05), (0.0, 10.5));
        assert_eq!(padded_range(1.0, 11.0, 0.2), (0.0, 13.0));
        assert_eq!(padded_range(-11.0, -1.0, 0.2), (-13.0, 0.0));
        assert_eq!(padded_range(2.0, 2.0, 0.0), (1.8, 2.2));
        assert_eq!(log_range(3.0, 7.0), (1.0, 10.0));
        assert_eq!(log_range(0.02, 350.0), (0.01, 1000.0));
        assert_eq!(log_range(10.0, 10.0), (10.0, 100.0));
        assert_eq!(log_range(0.0, 5.0), (1.0, 10.0));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(fmt_tick(-0.0), "0");
        assert_eq!(fmt_tick(20.0), "20");
        assert_eq!(fmt_tick(0.1 + 0.2), "0.3");
        assert_eq!(fmt_tick(2.5), "2.5");
        assert_eq!(fmt_tick(-1250.0), "-1250");
        assert_eq!(fmt_tick(123456.0), "123456");
        assert_eq!(fmt_tick(1.5e6), "1.5e6");
        assert_eq!(fmt_tick(2e-4), "2e-4");
        assert_eq!(fmt_tick(0.005), "0.005");
        assert_eq!(fmt_tick(f64::NAN), "");
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["CPU 10", "CPU 2", "CPU 1", "GPU", "CPU 02x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, vec!["CPU 1", "CPU 2", "CPU 02x", "CPU 10", "GPU"]);
    }
}
