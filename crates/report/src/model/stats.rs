//! Summaries of one metric of one cell, with bootstrap or (large samples) analytic CIs, and a
//! small parallel map that spreads the statistics over the CPUs.

use super::CiMethod;
use schedlab_analyze::{
    mean, percentile_sorted, sample_variance, summarize, Summary, DEFAULT_RESAMPLES,
};

/// Samples larger than this get analytic CIs instead of bootstrap ones (see [`CiMethod`]).
/// The bootstrap of the mean costs n draws per resample, so this bounds one summary at
/// 2,000 x 2,000 draws (a few ms); at this size the two kinds of interval agree.
pub const LARGE_N: usize = 2_000;

/// Two-sided 95% normal quantile, for the analytic CIs of large samples.
const Z_95: f64 = 1.959_963_984_540_054;

/// Summary of one sample with 95% CIs: bootstrap (seeded) up to [`LARGE_N`] values,
/// analytic beyond, where the bootstrap of the mean would cost n draws per resample.
pub fn summarize_metric(samples: &[f64], seed: u64) -> Option<(Summary, CiMethod)> {
    let n = samples.len();
    if n <= LARGE_N {
        return Some((
            summarize(samples, seed, DEFAULT_RESAMPLES)?,
            CiMethod::Bootstrap,
        ));
    }
    if samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let mean = mean(&sorted)?;
    let sd = sample_variance(&sorted).map_or(0.0, f64::sqrt);
    let half = Z_95 * sd / (n as f64).sqrt();
    let nf = n as f64;
    let spread = Z_95 * nf.sqrt() / 2.0;
    // 1-based ranks j = floor(n/2 - spread), k = ceil(1 + n/2 + spread), as 0-based indices.
    let lo = ((nf / 2.0 - spread).floor() as usize).clamp(1, n) - 1;
    let hi = ((1.0 + nf / 2.0 + spread).ceil() as usize).clamp(1, n) - 1;
    let (min, max) = (sorted[0], sorted[n - 1]);
    let summary = Summary {
        n,
        mean,
        sd,
        median: percentile_sorted(&sorted, 50.0)?,
        min,
        max,
        range: max - min,
        p5: percentile_sorted(&sorted, 5.0)?,
        p95: percentile_sorted(&sorted, 95.0)?,
        median_ci: (sorted[lo], sorted[hi]),
        mean_ci: (mean - half, mean + half),
    };
    Some((summary, CiMethod::Analytic))
}

/// `f` applied to every item, on as many threads as there are CPUs, results in item order.
/// Items are handed out one at a time, so uneven costs balance.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break out };
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_the_order_of_its_items() {
        let xs: Vec<u64> = (0..1000).collect();
        let ys = par_map(&xs, |x| x * x);
        assert_eq!(ys, xs.iter().map(|x| x * x).collect::<Vec<_>>());
        assert!(par_map(&Vec::<u64>::new(), |x| *x).is_empty());
    }

    #[test]
    fn large_samples_get_analytic_cis_that_bracket_the_estimates() {
        let xs: Vec<f64> = (0..LARGE_N as u64 + 1).map(|i| (i % 1000) as f64).collect();
        let (s, method) = summarize_metric(&xs, 3).expect("summary");
        assert_eq!(method, CiMethod::Analytic);
        assert!(s.mean_ci.0 < s.mean && s.mean < s.mean_ci.1, "{s:?}");
        assert!(
            s.median_ci.0 <= s.median && s.median <= s.median_ci.1,
            "{s:?}"
        );
        assert!(s.median_ci.1 - s.median_ci.0 < 60.0, "{s:?}");
        let (boot, small) = summarize_metric(&xs[..LARGE_N], 3).expect("summary");
        assert_eq!(small, CiMethod::Bootstrap);
        let (analytic, _) = summarize_metric(&xs[..LARGE_N + 1], 3).expect("summary");
        let width = |ci: (f64, f64)| ci.1 - ci.0;
        // Both kinds of interval agree at the threshold (to within Monte Carlo error).
        assert!(
            (width(boot.mean_ci) / width(analytic.mean_ci) - 1.0).abs() < 0.15,
            "{boot:?} {analytic:?}"
        );
        assert!(
            (width(boot.median_ci) / width(analytic.median_ci) - 1.0).abs() < 0.5,
            "{boot:?} {analytic:?}"
        );
        assert_eq!(
            (analytic.min, analytic.max, analytic.n),
            (0.0, 999.0, LARGE_N + 1)
        );
    }
}
