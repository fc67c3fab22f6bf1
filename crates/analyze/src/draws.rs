//! Seeded random draws for the simulations (power, stopping rules, coverage tests): standard
//! normal values from `fastrand`, so results are reproducible from the seed.

// Hand-written sampler: statrs 0.18 only samples distributions with its optional `rand`
// feature (off here, and it would pull in `rand`), and fastrand only draws uniforms.

/// Standard normal draw by the Box-Muller transform.
pub(super) fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // in (0, 1], so ln is finite
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::super::summary::{mean, sample_variance};
    use super::*;

    #[test]
    fn normal_draws_have_mean_0_and_variance_1() {
        let mut rng = fastrand::Rng::with_seed(4);
        let xs: Vec<f64> = (0..50_000).map(|_| standard_normal(&mut rng)).collect();
        // Standard errors: 1/sqrt(50 000) = 0.0045 for the mean, 0.0063 for the variance.
        let (m, v) = (
            mean(&xs).expect("mean"),
            sample_variance(&xs).expect("variance"),
        );
        assert!(m.abs() < 0.02, "mean {m}");
        assert!((v - 1.0).abs() < 0.03, "variance {v}");
        let beyond = xs.iter().filter(|x| x.abs() > 1.959_964).count() as f64 / 5e4;
        assert!((beyond - 0.05).abs() < 0.005, "share beyond 1.96: {beyond}");
    }
}
