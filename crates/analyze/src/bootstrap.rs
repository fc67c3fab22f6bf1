//! The bootstrap median draw (for the ratio of medians in `ratio.rs`) and the seeded samplers it
//! and the simulations need.
//!
//! Resamples are drawn from `fastrand::Rng::with_seed(seed)`, so results are reproducible.

/// Draw the median of one bootstrap resample of `sorted` (ascending, n >= 1) in O(1),
/// with exactly the distribution that drawing n values with replacement and taking
/// their median would give.
///
/// Why: a resample is `sorted[floor(n U_i)]` for iid uniform `U_i`. Since `sorted` and
/// `floor` are monotone, its k-th smallest value is `sorted[floor(n U_(k))]`, and the
/// k-th order statistic of n uniforms is Beta(k, n + 1 - k). For even n the next order
/// statistic, given `U_(k) = u`, is `u + (1 - u) * min of (n - k) uniforms`.
/// This replaces O(n) work (fill + select) per resample by two gamma draws.
pub(super) fn bootstrap_median_draw(sorted: &[f64], rng: &mut fastrand::Rng) -> f64 {
    let n = sorted.len();
    let nf = n as f64;
    let index = |u: f64| ((u * nf) as usize).min(n - 1);
    if n % 2 == 1 {
        let k = n.div_ceil(2);
        let u = beta(rng, k as f64, (n + 1 - k) as f64);
        sorted[index(u)]
    } else {
        let k = n / 2;
        let u = beta(rng, k as f64, (n + 1 - k) as f64);
        let remaining = (n - k) as f64;
        // min of m uniforms is 1 - V^(1/m); expm1 keeps precision for large m.
        let v = 1.0 - rng.f64();
        let gap = -(v.ln() / remaining).exp_m1();
        let u_next = u + (1.0 - u) * gap;
        0.5 * (sorted[index(u)] + sorted[index(u_next)])
    }
}

// Hand-written samplers: statrs 0.18 only samples distributions with its optional `rand`
// feature (off here, and it would pull in `rand`), and fastrand only draws uniforms.

/// Standard normal draw by the Box-Muller transform.
pub(super) fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // in (0, 1], so ln is finite
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Gamma(shape, 1) draw for shape >= 1, by Marsaglia & Tsang (2000).
fn gamma(rng: &mut fastrand::Rng, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = 1.0 - rng.f64();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// Beta(a, b) draw for a, b >= 1, as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b).
fn beta(rng: &mut fastrand::Rng, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    x / (x + y)
}

#[cfg(test)]
mod tests {
    use super::super::summary::{mean, sample_variance};
    use super::*;

    /// P(bootstrap median <= sorted[j]) for odd n, exactly: at least k = (n+1)/2 of the
    /// n draws must land in the first j+1 positions, a binomial tail.
    fn exact_median_cdf(n: usize, j: usize) -> f64 {
        let p = (j + 1) as f64 / n as f64;
        let k = n.div_ceil(2);
        let mut total = 0.0;
        let mut binom = 1.0f64; // C(n, i), built incrementally
        for i in 0..=n {
            if i > 0 {
                binom = binom * (n + 1 - i) as f64 / i as f64;
            }
            if i >= k {
                total += binom * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32);
            }
        }
        total
    }

    #[test]
    fn o1_median_draws_follow_the_exact_bootstrap_distribution_for_odd_n() {
        let sorted = [1.0, 2.0, 2.0, 3.0, 5.0, 8.0, 13.0];
        let mut rng = fastrand::Rng::with_seed(21);
        let draws = 200_000;
        let mut counts = [0usize; 7];
        for _ in 0..draws {
            let m = bootstrap_median_draw(&sorted, &mut rng);
            let j = sorted
                .iter()
                .rposition(|x| *x == m)
                .expect("draw is a data value");
            counts[j] += 1;
        }
        let mut cumulative = 0;
        for (j, c) in counts.iter().enumerate() {
            cumulative += c;
            let empirical = cumulative as f64 / draws as f64;
            // Ties: mass of a repeated value sits at its last position.
            if j + 1 < sorted.len() && sorted[j + 1] == sorted[j] {
                continue;
            }
            let exact = exact_median_cdf(sorted.len(), j);
            assert!(
                (empirical - exact).abs() < 0.005,
                "j={j}: {empirical} vs {exact}"
            );
        }
    }

    #[test]
    fn o1_median_draws_match_naive_resampling_for_even_n() {
        let sorted = [0.0, 1.0, 1.0, 4.0, 9.0, 16.0];
        let n = sorted.len();
        let draws = 100_000;
        let mut fast_rng = fastrand::Rng::with_seed(1);
        let mut naive_rng = fastrand::Rng::with_seed(2);
        let mut fast = Vec::with_capacity(draws);
        let mut naive = Vec::with_capacity(draws);
        let mut buf = vec![0.0; n];
        for _ in 0..draws {
            fast.push(bootstrap_median_draw(&sorted, &mut fast_rng));
            for b in buf.iter_mut() {
                *b = sorted[naive_rng.usize(..n)];
            }
            buf.sort_unstable_by(f64::total_cmp);
            naive.push(0.5 * (buf[n / 2 - 1] + buf[n / 2]));
        }
        // Compare the two empirical CDFs at every attainable median value.
        let mut support: Vec<f64> = fast.iter().chain(&naive).copied().collect();
        support.sort_unstable_by(f64::total_cmp);
        support.dedup();
        assert!(support.len() > 5, "even-n medians take midpoints too");
        for t in support {
            let f = fast.iter().filter(|x| **x <= t).count() as f64 / draws as f64;
            let g = naive.iter().filter(|x| **x <= t).count() as f64 / draws as f64;
            assert!((f - g).abs() < 0.01, "at {t}: fast {f} vs naive {g}");
        }
    }

    #[test]
    fn gamma_draws_have_the_right_mean_and_variance() {
        let mut rng = fastrand::Rng::with_seed(4);
        for shape in [1.0, 2.5, 40.0] {
            let xs: Vec<f64> = (0..50_000).map(|_| gamma(&mut rng, shape)).collect();
            let m = mean(&xs).expect("mean");
            let v = sample_variance(&xs).expect("variance");
            assert!((m - shape).abs() < 0.03 * shape, "shape {shape}: mean {m}");
            assert!((v - shape).abs() < 0.06 * shape, "shape {shape}: var {v}");
        }
    }
}
