//! The numbers behind the plots, hand-written and unit-tested: quantiles, Tukey boxes, Gaussian KDE, axis ranges, tick labels.

/// The finite values of `values` (NaN and ±inf dropped), sorted ascending.
pub fn sorted_finite(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Quantile `q` (0..=1) of ascending `sorted` data by linear interpolation between
/// order statistics, as numpy's default (`method="linear"`, R type 7): the crate's one
/// quantile, [`schedlab_analyze::quantile_sorted`]. `None` for empty data or `q` outside 0..=1.
pub use schedlab_analyze::quantile_sorted;

/// A Tukey box: quartiles, whiskers and outliers, in the unit of the data.
#[derive(Debug, Clone, PartialEq)]
pub struct TukeyBox {
    /// First quartile (numpy linear interpolation).
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// The smallest data value >= q1 - 1.5 IQR (a data value, never a fence).
    pub lo_whisker: f64,
    /// The largest data value <= q3 + 1.5 IQR (a data value, never a fence).
    pub hi_whisker: f64,
    /// Every value outside the whiskers, ascending.
    pub outliers: Vec<f64>,
    /// Number of finite values the box describes.
    pub n: usize,
}

/// The Tukey box of `values` (non-finite values skipped); `None` if none is finite.
pub fn tukey_box(values: &[f64]) -> Option<TukeyBox> {
    let v = sorted_finite(values);
    let q1 = quantile_sorted(&v, 0.25)?;
    let median = quantile_sorted(&v, 0.5)?;
    let q3 = quantile_sorted(&v, 0.75)?;
    let iqr = q3 - q1;
    let (lo_fence, hi_fence) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let inside = |x: &&f64| **x >= lo_fence && **x <= hi_fence;
    // q1 and q3 lie between data values inside the fences, so both exist.
    let lo_whisker = v.iter().find(inside).copied().unwrap_or(q1);
    let hi_whisker = v.iter().rev().find(inside).copied().unwrap_or(q3);
    let outliers = v
        .iter()
        .copied()
        .filter(|x| *x < lo_whisker || *x > hi_whisker)
        .collect();
    Some(TukeyBox {
        q1,
        median,
        q3,
        lo_whisker,
        hi_whisker,
        outliers,
        n: v.len(),
    })
}

/// Sample standard deviation (n - 1 denominator) of `v`; 0 for fewer than two values.
fn sample_sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

/// Kernel bandwidth by Silverman's rule of thumb, as R's `bw.nrd0`:
/// `0.9 * min(sd, IQR / 1.34) * n^(-1/5)` (sd with n - 1; if that minimum is 0, the
/// non-zero one of the two is used). When the data have no spread at all (one value, or
/// all equal) it falls back to 10% of |value| (or 1 for 0), so the density is a visible
/// narrow bump instead of a division by zero. Same unit as the data; `None` if empty.
pub fn silverman_bandwidth(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    let q1 = quantile_sorted(sorted, 0.25)?;
    let q3 = quantile_sorted(sorted, 0.75)?;
    let sd = sample_sd(sorted);
    let iqr = (q3 - q1) / 1.34;
    let spread = match (sd > 0.0, iqr > 0.0) {
        (true, true) => sd.min(iqr),
        (true, false) => sd,
        (false, true) => iqr,
        (false, false) => 0.0,
    };
    let h = 0.9 * spread * (n as f64).powf(-0.2);
    if h > 0.0 && h.is_finite() {
        Some(h)
    } else {
        let x = sorted[0].abs();
        Some(if x > 0.0 { 0.1 * x } else { 1.0 })
    }
}

/// Gaussian kernel density estimate of `data` with bandwidth `h` at `x`:
/// `1/(n h) * sum phi((x - x_i) / h)`, phi the standard normal density. Unit: 1/(data unit).
pub fn kde_at(data: &[f64], h: f64, x: f64) -> f64 {
    if data.is_empty() || h <= 0.0 || !h.is_finite() {
        return 0.0;
    }
    let norm = 1.0 / ((2.0 * std::f64::consts::PI).sqrt() * h * data.len() as f64);
    data.iter()
        .map(|xi| (-0.5 * ((x - xi) / h).powi(2)).exp())
        .sum::<f64>()
        * norm
}

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
    fn quantiles_match_numpy_linear() {
        // numpy.percentile(d, [25, 50, 75]) for each data set.
        let cases: &[(&[f64], [f64; 3])] = &[
            (
                &[1., 2., 3., 4., 5., 6., 7., 8., 9., 100.],
                [3.25, 5.5, 7.75],
            ),
            (&[-50., 10., 11., 12., 13., 14., 40.], [10.5, 12.0, 13.5]),
            (&[5., 1., 4., 2., 3.], [2.0, 3.0, 4.0]),
            (&[3.0], [3.0, 3.0, 3.0]),
        ];
        for (data, want) in cases {
            let v = sorted_finite(data);
            for (q, w) in [0.25, 0.5, 0.75].iter().zip(want) {
                assert!(close(quantile_sorted(&v, *q).unwrap(), *w), "{data:?} q{q}");
            }
        }
        // numpy.percentile([1, 2, 3, 4], [10, 90]) == [1.3, 3.7]
        assert!(close(quantile_sorted(&[1., 2., 3., 4.], 0.1).unwrap(), 1.3));
        assert!(close(quantile_sorted(&[1., 2., 3., 4.], 0.9).unwrap(), 3.7));
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[1.0], 1.5), None);
    }

    #[test]
    fn tukey_whiskers_are_data_values_and_outliers_listed() {
        // q1 3.25, q3 7.75, IQR 4.5: fences -3.5 and 14.5; 100 is an outlier.
        let b = tukey_box(&[1., 2., 3., 4., 5., 6., 7., 8., 9., 100.]).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (3.25, 5.5, 7.75));
        assert_eq!((b.lo_whisker, b.hi_whisker), (1.0, 9.0)); // not the fences -3.5 / 14.5
        assert_eq!(b.outliers, vec![100.0]);
        // Fences 6 and 18: whiskers clamp to 10 and 14, both tails are outliers.
        let b = tukey_box(&[40., -50., 10., 11., f64::NAN, 12., 13., 14.]).unwrap();
        assert_eq!((b.q1, b.median, b.q3), (10.5, 12.0, 13.5));
        assert_eq!((b.lo_whisker, b.hi_whisker), (10.0, 14.0));
        assert_eq!(b.outliers, vec![-50.0, 40.0]);
        assert_eq!(b.n, 7);
        // No outliers: whiskers are min and max, inside the fences.
        let b = tukey_box(&[5., 1., 4., 2., 3.]).unwrap();
        assert_eq!(
            (b.lo_whisker, b.hi_whisker, b.outliers.len()),
            (1.0, 5.0, 0)
        );
        // Zero IQR.
        let b = tukey_box(&[1., 1., 1., 1., 50.]).unwrap();
        assert_eq!(
            (b.q1, b.q3, b.lo_whisker, b.hi_whisker),
            (1.0, 1.0, 1.0, 1.0)
        );
        assert_eq!(b.outliers, vec![50.0]);
        // One value; nothing finite.
        let b = tukey_box(&[3.0]).unwrap();
        assert_eq!(
            (b.q1, b.median, b.q3, b.lo_whisker, b.hi_whisker),
            (3., 3., 3., 3., 3.)
        );
        assert!(tukey_box(&[]).is_none());
        assert!(tukey_box(&[f64::NAN, f64::INFINITY]).is_none());
    }

    #[test]
    fn kde_matches_scipy() {
        // h = 0.9 * min(sd, IQR/1.34) * n^-0.2 computed with numpy; densities from
        // scipy.stats.gaussian_kde(d, bw_method=h / d.std(ddof=1)).
        let d = sorted_finite(&[1., 2., 3., 4., 5., 7., 11.]);
        let h = silverman_bandwidth(&d).unwrap();
        assert!(close(h, 1.59289132627725), "{h}");
        let want = [
            (0.0, 0.0535093489200187),
            (3.0, 0.12859984945160907),
            (6.5, 0.07208092746591702),
            (12.0, 0.029641349604817693),
        ];
        for (x, w) in want {
            assert!((kde_at(&d, h, x) - w).abs() < 1e-12, "x={x}");
        }
        // One point at 0 with h = 1: the standard normal density.
        assert!(close(kde_at(&[0.0], 1.0, 0.0), 0.398_942_280_401_432_7));
        // It integrates to 1.
        let area: f64 = (-2000..=3000)
            .map(|i| kde_at(&d, h, i as f64 * 0.01) * 0.01)
            .sum();
        assert!((area - 1.0).abs() < 1e-3, "{area}");
        // No spread: fallback bandwidths, never zero.
        assert_eq!(silverman_bandwidth(&[4.0]), Some(0.4));
        assert_eq!(silverman_bandwidth(&[0.0, 0.0]), Some(1.0));
        assert_eq!(silverman_bandwidth(&[]), None);
        assert_eq!(kde_at(&[], 1.0, 0.0), 0.0);
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
