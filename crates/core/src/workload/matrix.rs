//! The cache-footprint kernel: rows of a naive product of two square u64 matrices, after
//! schbench's "matrix multiply" (written here from its description, not copied).
//!
//! A footprint of F KiB gives matrices of side s = floor(sqrt(F·1024 / 3 / 8)) (three s×s u64
//! matrices fill the footprint), mapped once, zeroed, before the measured region. One unit
//! of work is one row of m3 = m1 × m2 (s dot products of length s, m2 walked by columns); a
//! task cycles through the rows. As in schbench, m1 and m2 are read but never written, so
//! those reads hit the kernel's zero page, and only m3 is written. The matrices get a private
//! mapping of their own ([`PrivatePages`]) so that this holds in every process: from the heap,
//! a recycled block comes back memset into real pages, which made the work of a forked task
//! 1.5-2.2x slower per unit than in its calibration thread (measured 2026-11-25: 50 ms of
//! calibrated work took 74-112 ms of CPU).

use schedlab_sys::PrivatePages;
use std::hint::black_box;

/// Square u64 matrices of one footprint and the next row to compute.
#[derive(Debug)]
pub struct Matrix {
    side: usize,
    buf: PrivatePages<u64>,
    row: usize,
}

impl Matrix {
    /// Side of the matrices for a footprint of `kib` KiB (at least 1).
    pub fn side(kib: u64) -> usize {
        (((kib * 1024 / 3 / 8) as f64).sqrt().floor() as usize).max(1)
    }

    /// Maps the three matrices of a `kib` KiB footprint, zeroed; an error if the kernel
    /// refuses the memory.
    pub fn new(kib: u64) -> std::io::Result<Matrix> {
        let side = Matrix::side(kib);
        Ok(Matrix {
            side,
            buf: PrivatePages::new(3 * side * side)?,
            row: 0,
        })
    }

    /// Computes the next `rows` rows of m3 = m1 × m2.
    #[inline]
    pub fn rows(&mut self, rows: u64) {
        let s = self.side;
        let (m12, m3) = self.buf.as_mut_slice().split_at_mut(2 * s * s);
        let (m1, m2) = m12.split_at(s * s);
        for _ in 0..rows {
            let i = self.row;
            for j in 0..s {
                let mut sum = 0u64;
                for k in 0..s {
                    sum = sum.wrapping_add(m1[i * s + k].wrapping_mul(m2[k * s + j]));
                }
                m3[i * s + j] = black_box(sum);
            }
            self.row = (i + 1) % s;
        }
    }

    /// The row computed next.
    pub fn next_row(&self) -> usize {
        self.row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_side_fills_the_footprint_with_three_matrices() {
        // schbench's default 256 KiB: 104 (104² · 24 B = 259,584 B ≤ 262,144 B < 105² · 24 B).
        assert_eq!(Matrix::side(256), 104);
        assert_eq!(Matrix::side(1024), 209);
        assert_eq!(Matrix::side(0), 1);
        let m = Matrix::new(256).unwrap();
        assert_eq!(m.buf.as_slice().len(), 3 * 104 * 104);
    }

    #[test]
    fn rows_advance_and_wrap_and_compute_a_real_product() {
        let mut m = Matrix::new(1).unwrap();
        let s = m.side;
        assert_eq!(s, 6);
        // m1 = identity, m2 = i*10 + j: the product is m2.
        for i in 0..s {
            m.buf.as_mut_slice()[i * s + i] = 1;
            for j in 0..s {
                m.buf.as_mut_slice()[s * s + i * s + j] = (i * 10 + j) as u64;
            }
        }
        m.rows(s as u64 + 2);
        assert_eq!(m.next_row(), 2);
        for i in 0..s {
            for j in 0..s {
                assert_eq!(m.buf.as_slice()[2 * s * s + i * s + j], (i * 10 + j) as u64);
            }
        }
    }

    #[test]
    fn only_the_product_takes_memory_so_every_process_reads_the_zero_page() {
        // A full pass over the rows reads all of m1 and m2 and writes all of m3: only m3's
        // pages may become resident (the defect: heap memory handed back memset made m1 and
        // m2 real pages in forked tasks, and their work 1.5-2.2x slower than calibrated).
        let mut m = Matrix::new(256).unwrap();
        m.rows(104);
        let m3_kib = (104 * 104 * 8) as u64 / 1024; // 84.5 KiB: 22 pages at most
        let rss = schedlab_testkit::resident_kib(m.buf.addr());
        assert!(
            rss <= m3_kib + 8 && rss >= m3_kib - 4,
            "{rss} KiB resident; m3 is {m3_kib} KiB of the 253.5 KiB mapped"
        );
    }
}
