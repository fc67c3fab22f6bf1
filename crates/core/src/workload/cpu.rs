//! CPU kernels: the units of CPU-bound work the studies used (Monte Carlo pi, primes, Grandi,
//! spin), and a cache-footprint kernel (rows of a matrix product, [`super::matrix`]).

use crate::CoreError;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::str::FromStr;

/// Which CPU-bound computation one unit of work performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuKernel {
    /// One Monte Carlo sample of pi: two pseudo-random coordinates, one distance test (studies 000/002).
    #[default]
    Pi,
    /// Multiply two primes, then factor the product back by trial division (study 001).
    Primes,
    /// One term of Grandi's series 1 - 1 + 1 - ... (study 003).
    Grandi,
    /// One iteration of an empty loop.
    Spin,
    /// One row of a naive u64 matrix product over a cache footprint (`footprint`, default
    /// 256 KiB): schbench's request work.
    Matrix,
}

impl CpuKernel {
    /// The name used on the command line and in the database.
    pub fn name(self) -> &'static str {
        match self {
            CpuKernel::Pi => "pi",
            CpuKernel::Primes => "primes",
            CpuKernel::Grandi => "grandi",
            CpuKernel::Spin => "spin",
            CpuKernel::Matrix => "matrix",
        }
    }
}

impl FromStr for CpuKernel {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "pi" => Ok(CpuKernel::Pi),
            "primes" => Ok(CpuKernel::Primes),
            "grandi" => Ok(CpuKernel::Grandi),
            "spin" => Ok(CpuKernel::Spin),
            "matrix" => Ok(CpuKernel::Matrix),
            _ => Err(CoreError::unknown(
                "cpu kernel",
                s,
                "pi, primes, grandi, spin, matrix",
            )),
        }
    }
}

/// State a CPU kernel carries between units (pseudo-random generator, accumulators).
///
/// The generator is a per-task xorshift64*, not libc `random()`: `random()` takes a
/// process-wide lock, which would make threads of one process contend on it.
#[derive(Debug)]
pub struct CpuState {
    rng: u64,
    hits: u64,
    sum: i64,
    matrix: Option<super::matrix::Matrix>,
}

/// Cache footprint of the matrix kernel when none is given, KiB (schbench's default).
pub const DEFAULT_FOOTPRINT_KIB: u64 = 256;

/// The primes multiplied and factored by one `Primes` unit.
const PRIME_P: u64 = 10_007;
const PRIME_Q: u64 = 10_009;

impl CpuState {
    /// A fresh state; `seed` varies the pi samples between tasks.
    pub fn new(seed: u64) -> CpuState {
        CpuState {
            rng: seed | 1,
            hits: 0,
            sum: 0,
            matrix: None,
        }
    }

    /// Maps the matrices of the matrix kernel for a footprint of `kib` KiB (before the
    /// measured region; without it the first matrix unit maps the default footprint).
    pub fn prepare_matrix(&mut self, kib: u64) -> std::io::Result<()> {
        self.matrix = Some(super::matrix::Matrix::new(kib)?);
        Ok(())
    }

    #[inline]
    fn next_unit_f64(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Performs `units` units of `kernel`.
    #[inline]
    pub fn run(&mut self, kernel: CpuKernel, units: u64) {
        match kernel {
            CpuKernel::Pi => {
                for _ in 0..units {
                    let x = self.next_unit_f64();
                    let y = self.next_unit_f64();
                    if x * x + y * y < 1.0 {
                        self.hits += 1;
                    }
                }
            }
            CpuKernel::Primes => {
                for _ in 0..units {
                    let n = black_box(PRIME_P) * black_box(PRIME_Q);
                    self.hits += smallest_odd_factor(n);
                }
            }
            CpuKernel::Grandi => {
                let mut sign = if self.sum == 0 { 1 } else { -1 };
                for _ in 0..units {
                    self.sum = black_box(self.sum + sign);
                    sign = -sign;
                }
            }
            CpuKernel::Spin => {
                for i in 0..units {
                    black_box(i);
                }
            }
            CpuKernel::Matrix => self
                .matrix
                .get_or_insert_with(|| {
                    super::matrix::Matrix::new(DEFAULT_FOOTPRINT_KIB)
                        .expect("mapping the matrix kernel's default footprint")
                })
                .rows(units),
        }
        black_box(&self.hits);
    }

    /// The estimate of pi from the samples taken so far (pi kernel), for checks.
    pub fn pi_estimate(&self, samples: u64) -> f64 {
        4.0 * self.hits as f64 / samples.max(1) as f64
    }

    /// The partial sum of Grandi's series so far (grandi kernel): 1 after an odd count of terms, 0 after an even one.
    pub fn grandi_sum(&self) -> i64 {
        self.sum
    }

    /// The accumulated factor results (primes kernel), for checks.
    pub fn factor_total(&self) -> u64 {
        self.hits
    }
}

/// Smallest odd factor > 1 of `n` by trial division (n odd).
fn smallest_odd_factor(n: u64) -> u64 {
    let mut d = 3;
    while d * d <= n {
        if n % d == 0 {
            return d;
        }
        d += 2;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_kernel_estimates_pi() {
        let mut s = CpuState::new(42);
        s.run(CpuKernel::Pi, 200_000);
        let est = s.pi_estimate(200_000);
        assert!((est - std::f64::consts::PI).abs() < 0.02, "{est}");
    }

    #[test]
    fn primes_kernel_recovers_the_smaller_prime() {
        let mut s = CpuState::new(1);
        s.run(CpuKernel::Primes, 3);
        assert_eq!(s.factor_total(), 3 * PRIME_P);
    }

    #[test]
    fn grandi_partial_sums_alternate_between_one_and_zero() {
        let mut s = CpuState::new(1);
        s.run(CpuKernel::Grandi, 7);
        assert_eq!(s.grandi_sum(), 1);
        s.run(CpuKernel::Grandi, 1);
        assert_eq!(s.grandi_sum(), 0);
    }

    #[test]
    fn kernel_names_round_trip() {
        for k in [
            CpuKernel::Pi,
            CpuKernel::Primes,
            CpuKernel::Grandi,
            CpuKernel::Spin,
            CpuKernel::Matrix,
        ] {
            assert_eq!(k.name().parse::<CpuKernel>().unwrap(), k);
        }
        assert!("fib"
            .parse::<CpuKernel>()
            .unwrap_err()
            .to_string()
            .contains("pi, primes, grandi, spin, matrix"));
    }
}
