//! Exact null distributions of the rank statistics behind the claims engine, as counts over
//! a lattice: Mann-Whitney U (tie-free, and conditional on ties by counting rank sums), the
//! Wilcoxon signed-rank T+, Jonckheere-Terpstra's J (tie-free), and binomial tails for
//! order statistics.
//!
//! Statistics that can take half values (ties) are counted in half units: the lattice
//! point `v` stands for the value `v / 2`.
//!
//! Hand-written: statrs 0.18 has no rank-statistic distributions. Checked against scipy
//! (`mannwhitneyu`, `wilcoxon`, `binom`) and a numpy enumeration (Jonckheere-Terpstra) in
//! `tests/fixtures/stats/reference.json`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Largest number of table updates spent counting one distribution (about 0.1 s in a
/// release build); beyond it callers use an approximation.
pub(super) const MAX_WORK: usize = 60_000_000;

/// Counts of a statistic over the lattice `start, start + step, ...` (in half units), with
/// running sums from both ends so that either tail is read in O(1) without cancellation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Counts {
    start: i64,
    step: i64,
    counts: Vec<f64>,
    /// `below[i]` = counts[0..=i] summed.
    below: Vec<f64>,
    /// `above[i]` = counts[i..] summed.
    above: Vec<f64>,
    total: f64,
}

impl Counts {
    fn new(start: i64, step: i64, counts: Vec<f64>) -> Counts {
        let mut below = counts.clone();
        for i in 1..below.len() {
            below[i] += below[i - 1];
        }
        let mut above = counts.clone();
        for i in (0..above.len().saturating_sub(1)).rev() {
            above[i] += above[i + 1];
        }
        let total = above.first().copied().unwrap_or(0.0);
        Counts {
            start,
            step,
            counts,
            below,
            above,
            total,
        }
    }

    /// Index of the last lattice point <= `x` (half units); `None` if `x` is below the start.
    fn last_at_or_below(&self, x: i64) -> Option<usize> {
        if x < self.start {
            return None;
        }
        Some((((x - self.start) / self.step) as usize).min(self.counts.len() - 1))
    }

    /// P(statistic <= x), `x` in half units.
    pub(super) fn le(&self, x: i64) -> f64 {
        match self.last_at_or_below(x) {
            None => 0.0,
            Some(i) => (self.below[i] / self.total).min(1.0),
        }
    }

    /// P(statistic >= x), `x` in half units.
    pub(super) fn ge(&self, x: i64) -> f64 {
        let first = match self.last_at_or_below(x - 1) {
            None => 0,
            Some(i) => i + 1,
        };
        if first >= self.counts.len() {
            return 0.0;
        }
        (self.above[first] / self.total).min(1.0)
    }

    /// The distribution as probabilities on the step-1 half-unit lattice: (first point,
    /// P(statistic = first + i) for each i). Points between a step-2 lattice's get 0.
    pub(super) fn probabilities(&self) -> (i64, Vec<f64>) {
        let step = self.step.max(1) as usize;
        let mut out = vec![0.0; (self.counts.len() - 1) * step + 1];
        for (i, c) in self.counts.iter().enumerate() {
            out[i * step] = c / self.total;
        }
        (self.start, out)
    }

    /// Number of arrangements counted (e.g. C(m + n, m) for Mann-Whitney).
    #[cfg(test)]
    pub(super) fn total(&self) -> f64 {
        self.total
    }
}

/// The exact null distribution of U (in half units, so step 2) for tie-free samples of `m`
/// and `n` values; `None` when counting would exceed [`MAX_WORK`] or overflow a float.
pub(super) fn mann_whitney_tie_free(m: usize, n: usize) -> Option<Rc<Counts>> {
    let (m, n) = (m.min(n), m.max(n));
    let top = m * n;
    if m.saturating_mul(top) > MAX_WORK || m + n > 1000 {
        return None;
    }
    Some(remember((Kind::MannWhitney, m, n), || {
        Counts::new(0, 2, gaussian_binomial(m, n, top))
    }))
}

/// Which tie-free distribution a cached entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    MannWhitney,
    SignedRank,
}

/// Most tie-free distributions kept per thread; the cache is emptied when full.
const CACHE_ENTRIES: usize = 256;

/// The tie-free distribution `key`, computed once per thread: simulations and interval
/// searches ask for the same few sizes thousands of times. (Memoisation only: the result
/// is the same as `compute()`'s.)
fn remember(key: (Kind, usize, usize), compute: impl FnOnce() -> Counts) -> Rc<Counts> {
    thread_local! {
        static CACHE: RefCell<HashMap<(Kind, usize, usize), Rc<Counts>>> =
            RefCell::new(HashMap::new());
    }
    CACHE.with(|cache| {
        if let Some(c) = cache.borrow().get(&key) {
            return Rc::clone(c);
        }
        let c = Rc::new(compute());
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(key, Rc::clone(&c));
        c
    })
}

/// The coefficients of q^0..=q^`top` of the Gaussian binomial [m + n choose m]_q: the number
/// of ways U takes each value for tie-free samples of m and n values. Built as
/// Π_{i=1..m} (1 - q^(n+i)) / (1 - q^i); O(m · top).
fn gaussian_binomial(m: usize, n: usize, top: usize) -> Vec<f64> {
    let mut c = vec![0.0; top + 1];
    c[0] = 1.0;
    for i in 1..=m {
        let d = n + i;
        // Multiply by (1 - q^d): descending, so c[j - d] is still the old coefficient.
        for j in (d..=top).rev() {
            c[j] -= c[j - d];
        }
        // Divide by (1 - q^i): a running sum with stride i.
        for j in i..=top {
            c[j] += c[j - i];
        }
    }
    // Round-off can leave tiny negatives far from the tails; counts are never negative.
    c.iter_mut().for_each(|x: &mut f64| *x = x.max(0.0));
    c
}

/// The exact permutation distribution of U (half units) of the first `m` of `doubled`
/// (twice the average ranks of the pooled sample, in any order), conditional on its ties;
/// `None` when counting would exceed [`MAX_WORK`]. Each tied block of t values contributes
/// C(t, j) ways to choose j of them.
pub(super) fn mann_whitney_with_ties(doubled: &[i64], m: usize) -> Option<Counts> {
    let mut sorted = doubled.to_vec();
    sorted.sort_unstable();
    let blocks = tie_blocks(&sorted);
    let base = sorted[0];
    let span = shifted_span(&sorted, m);
    let work: usize = blocks
        .iter()
        .map(|&(_, t)| t.min(m).saturating_mul(m + 1).saturating_mul(span))
        .fold(0usize, usize::saturating_add);
    if work > MAX_WORK || sorted.len() > 1000 {
        return None;
    }
    let row = subset_sums(&blocks, base, span, m);
    // Doubled U = doubled rank sum - m (m + 1); rank sum = shifted sum + base m.
    let offset = base * m as i64 - (m * (m + 1)) as i64;
    Some(Counts::new(offset, 1, row))
}

/// The tied blocks of ascending ranks `sorted`: each distinct rank with how many share it.
pub(super) fn tie_blocks(sorted: &[i64]) -> Vec<(i64, usize)> {
    let mut blocks: Vec<(i64, usize)> = Vec::new();
    for &r in sorted {
        match blocks.last_mut() {
            Some((last, t)) if *last == r => *t += 1,
            _ => blocks.push((r, 1)),
        }
    }
    blocks
}

/// The width of [`subset_sums`]' row for subsets of size `m` of ascending ranks `sorted`:
/// rank sums shifted by the smallest rank times `m` run from 0 to this minus 1.
pub(super) fn shifted_span(sorted: &[i64], m: usize) -> usize {
    let highest: i64 = sorted[sorted.len() - m..].iter().sum();
    (highest - sorted[0] * m as i64) as usize + 1
}

/// How many subsets of size `m` of the ranks in `blocks` (ascending, tied ranks one block)
/// have each rank sum, by dynamic programming: entry s counts the sum `base * m + s`
/// (`base` the smallest rank), for s below `span` ([`shifted_span`]). Choosing j of a
/// block's t tied members multiplies the count by C(t, j). The caller bounds the work,
/// about the blocks' sizes (at most m) times (m + 1) times `span`.
pub(super) fn subset_sums(blocks: &[(i64, usize)], base: i64, span: usize, m: usize) -> Vec<f64> {
    // table[k * span + s]: subsets of size k with shifted rank sum s.
    let mut table = vec![0.0; (m + 1) * span];
    table[0] = 1.0;
    for &(rank, t) in blocks {
        let step = (rank - base) as usize;
        for k in (0..m).rev() {
            let mut choose = 1.0; // C(t, j)
            for j in 1..=t.min(m - k) {
                choose = choose * (t + 1 - j) as f64 / j as f64;
                let shift = j * step;
                for s in (0..span - shift).rev() {
                    let from = table[k * span + s];
                    if from != 0.0 {
                        table[(k + j) * span + s + shift] += from * choose;
                    }
                }
            }
        }
    }
    table.split_off(m * span)
}

/// The exact null distribution of T+ (in half units) for the doubled ranks `doubled` of the
/// nonzero |differences|: each rank enters the sum with probability 1/2, independently.
/// `None` when counting would exceed [`MAX_WORK`].
pub(super) fn signed_rank(doubled: &[i64]) -> Option<Counts> {
    let top: i64 = doubled.iter().sum();
    let width = top as usize + 1;
    if doubled.len().saturating_mul(width) > MAX_WORK || doubled.len() > 1000 {
        return None;
    }
    let mut c = vec![0.0; width];
    c[0] = 1.0;
    let mut reach = 0usize;
    for &r in doubled {
        let r = r as usize;
        for s in (0..=reach).rev() {
            if c[s] != 0.0 {
                c[s + r] += c[s];
            }
        }
        reach += r;
    }
    Some(Counts::new(0, 1, c))
}

/// The exact null distribution of T+ (half units, step 2) for `n` tie-free nonzero
/// differences: ranks 1..=n.
pub(super) fn signed_rank_tie_free(n: usize) -> Option<Rc<Counts>> {
    let top = n * (n + 1) / 2;
    if n.saturating_mul(top + 1) > MAX_WORK || n > 1000 {
        return None;
    }
    Some(remember((Kind::SignedRank, n, 0), || {
        let mut c = vec![0.0; top + 1];
        c[0] = 1.0;
        for r in 1..=n {
            // Sums reachable with ranks 1..r-1 are at most r (r - 1) / 2.
            for s in (0..=r * (r - 1) / 2).rev() {
                c[s + r] += c[s];
            }
        }
        Counts::new(0, 2, c)
    }))
}

/// The exact null distribution of Jonckheere-Terpstra's J (half units, step 2) for tie-free
/// groups of the given sizes: J = Σ over ordered pairs of groups k < l of the number of
/// pairs with the value in l above the value in k. J is a sum of independent U statistics
/// (each group against all groups before it), so its generating function is the product of
/// Gaussian binomials [N_l choose n_l]_q. `None` when counting would exceed [`MAX_WORK`].
pub(super) fn jonckheere_tie_free(sizes: &[usize]) -> Option<Counts> {
    let mut dist = vec![1.0];
    let mut before = 0usize;
    for &n in sizes {
        if before > 0 && n > 0 {
            let (m, k) = (n.min(before), n.max(before));
            let top = m * k;
            if m.saturating_mul(top) > MAX_WORK
                || dist.len().saturating_mul(top + 1) > MAX_WORK
                || before + n > 1000
            {
                return None;
            }
            dist = convolve(&dist, &gaussian_binomial(m, k, top));
        }
        before += n;
    }
    Some(Counts::new(0, 2, dist))
}

pub(super) fn convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        if *x == 0.0 {
            continue;
        }
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

/// P(Binomial(n, 1/2) <= j), summed in log space (accurate in the tails for any n).
pub(super) fn binomial_half_cdf(n: usize, j: usize) -> f64 {
    if j >= n {
        return 1.0;
    }
    let ln2 = std::f64::consts::LN_2;
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut terms = Vec::with_capacity(j + 1);
    for i in 0..=j {
        if i > 0 {
            ln_choose += ((n + 1 - i) as f64).ln() - (i as f64).ln();
        }
        terms.push(ln_choose - n as f64 * ln2);
    }
    let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
    (top.exp() * sum).min(1.0)
}

/// Doubled average ranks (1-based) of `values`, in input order: integers, so that tied
/// ranks (x.5) stay exact.
pub(super) fn doubled_ranks(values: &[f64]) -> Vec<i64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_unstable_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut out = vec![0i64; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end share the mean of ranks start+1..=end; doubled: start+end+1.
        for &i in &order[start..end] {
            out[i] = (start + end + 1) as i64;
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(n: u64, k: u64) -> f64 {
        (1..=k).fold(1.0, |acc, i| acc * (n - k + i) as f64 / i as f64)
    }

    #[test]
    fn tie_free_mann_whitney_counts_sum_to_the_binomial_and_are_symmetric() {
        for (m, n) in [(1, 1), (3, 3), (4, 7), (8, 8), (15, 12)] {
            let c = mann_whitney_tie_free(m, n).expect("small");
            assert_eq!(c.total(), choose((m + n) as u64, m as u64), "{m} {n}");
            let top = 2 * (m * n) as i64;
            for x in (0..=top).step_by(2) {
                let (lo, hi) = (c.le(x), c.ge(top - x));
                assert!((lo - hi).abs() < 1e-12, "{m} {n} {x}: {lo} vs {hi}");
            }
            assert_eq!(c.le(-1), 0.0);
            assert_eq!(c.ge(top + 1), 0.0);
            assert!((c.le(top) - 1.0).abs() < 1e-12);
        }
        // 3 vs 3: P(U <= 0) = 1 / 20 (hand count: one arrangement of 20).
        let c = mann_whitney_tie_free(3, 3).expect("small");
        assert!((c.le(0) - 0.05).abs() < 1e-15);
        assert!(
            (c.le(1) - 0.05).abs() < 1e-15,
            "half units between lattice points"
        );
        assert!((c.le(2) - 0.1).abs() < 1e-15);
    }

    #[test]
    fn without_ties_the_tie_counting_distribution_equals_the_tie_free_one() {
        let values: Vec<f64> = (0..11).map(|i| i as f64 * 1.5).collect();
        let doubled = doubled_ranks(&values);
        let ties = mann_whitney_with_ties(&doubled, 5).expect("small");
        let free = mann_whitney_tie_free(5, 6).expect("small");
        for x in -2..=62 {
            assert!((ties.le(x) - free.le(x)).abs() < 1e-12, "{x}");
            assert!((ties.ge(x) - free.ge(x)).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn signed_rank_counts_by_hand_for_three_differences() {
        // Ranks 1, 2, 3: subsets' sums 0,1,2,3,3,4,5,6 -> P(T+ <= 3) = 5/8.
        let c = signed_rank_tie_free(3).expect("small");
        assert_eq!(c.total(), 8.0);
        assert!((c.le(6) - 5.0 / 8.0).abs() < 1e-15);
        assert!((c.ge(12) - 1.0 / 8.0).abs() < 1e-15);
    }

    #[test]
    fn jonckheere_of_two_groups_is_mann_whitney() {
        let j = jonckheere_tie_free(&[4, 6]).expect("small");
        let u = mann_whitney_tie_free(4, 6).expect("small");
        for x in 0..=48 {
            assert!((j.le(x) - u.le(x)).abs() < 1e-12);
        }
        // Three groups of 2: 6! / (2! 2! 2!) = 90 orderings.
        assert_eq!(
            jonckheere_tie_free(&[2, 2, 2]).expect("small").total(),
            90.0
        );
    }

    #[test]
    fn binomial_half_cdf_by_hand_and_in_the_far_tail() {
        assert!((binomial_half_cdf(5, 0) - 1.0 / 32.0).abs() < 1e-15);
        assert!((binomial_half_cdf(15, 3) - 576.0 / 32768.0).abs() < 1e-15);
        assert_eq!(binomial_half_cdf(4, 4), 1.0);
        let far = binomial_half_cdf(2000, 0);
        assert!(far == 0.0 || far < 1e-300, "{far}");
        let mid = binomial_half_cdf(2001, 1000);
        assert!((mid - 0.5).abs() < 1e-9, "{mid}");
    }

    #[test]
    fn doubled_ranks_average_ties() {
        assert_eq!(doubled_ranks(&[3.0, 1.0, 3.0, 2.0]), vec![7, 2, 7, 4]);
    }
}
