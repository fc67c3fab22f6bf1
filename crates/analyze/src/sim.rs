//! Test support: the data shapes and draws the simulation tests share.

use super::draws::standard_normal;

/// The three shapes of the coverage tests, each with a known median.
#[derive(Debug, Clone, Copy)]
pub(super) enum Shape {
    Normal,
    LogNormal,
    Bimodal,
}

impl Shape {
    pub(super) const ALL: [Shape; 3] = [Shape::Normal, Shape::LogNormal, Shape::Bimodal];

    /// A positive draw: normal(100, 10), lognormal(ln 100, 0.5), or an equal mixture of
    /// normal(80, 3) and normal(120, 3).
    pub(super) fn draw(self, rng: &mut fastrand::Rng) -> f64 {
        let z = standard_normal(rng);
        match self {
            Shape::Normal => 100.0 + 10.0 * z,
            Shape::LogNormal => (100.0f64.ln() + 0.5 * z).exp(),
            Shape::Bimodal => {
                if rng.bool() {
                    80.0 + 3.0 * z
                } else {
                    120.0 + 3.0 * z
                }
            }
        }
    }

    /// The distribution's median (100 for all three; the bimodal one by symmetry).
    pub(super) fn median(self) -> f64 {
        100.0
    }

    /// The distribution's mean: 100 for the normal and the (symmetric) bimodal one,
    /// 100 e^(0.5²/2) = 113.31 for the log-normal one.
    pub(super) fn mean(self) -> f64 {
        match self {
            Shape::LogNormal => 100.0 * (0.125f64).exp(),
            Shape::Normal | Shape::Bimodal => 100.0,
        }
    }
}
