//! The shape of one sample for the report's figures: Tukey boxes, Gaussian kernel densities
//! with Silverman's bandwidth, and the steps of the empirical CDF (pure functions, in the
//! unit of the data; checked against numpy and scipy values below).

use super::summary::quantile_sorted;

/// The finite values of `values` (NaN and ±inf dropped), sorted ascending.
pub fn sorted_finite(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

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

/// The steps of the empirical CDF of ascending `sorted`: (x, fraction of values <= x) before
/// and after each distinct value rises (ties make one taller step). The fraction is 0 before
/// the first step and 1 after the last; empty data give no step.
pub fn ecdf_steps(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut path = Vec::with_capacity(2 * sorted.len());
    let mut y = 0.0;
    for (i, x) in sorted.iter().enumerate() {
        if sorted.get(i + 1) == Some(x) {
            continue;
        }
        path.push((*x, y));
        y = (i + 1) as f64 / n;
        path.push((*x, y));
    }
    path
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
    fn ecdf_steps_rise_at_each_distinct_value() {
        // By hand: 1 of 4 values <= 1, 3 of 4 <= 2, all 4 <= 4.
        let p = ecdf_steps(&[1.0, 2.0, 2.0, 4.0]);
        assert_eq!(
            p,
            vec![
                (1.0, 0.0),
                (1.0, 0.25),
                (2.0, 0.25),
                (2.0, 0.75),
                (4.0, 0.75),
                (4.0, 1.0)
            ]
        );
        assert!(ecdf_steps(&[]).is_empty());
    }
}
