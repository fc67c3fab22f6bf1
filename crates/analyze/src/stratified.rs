//! Stratified rank tests: one claim tested over all its cells at once, each cell a stratum,
//! and the effect with the interval that inverts that same test.
//!
//! Each stratum contributes the rank statistic its design calls for, ranked within the
//! stratum only (so cells of different scale or spread never compete for ranks):
//! - rounds (A and B paired by round): the signed-rank T+ of its per-round differences at
//!   the boundary (log ratios when every value is positive);
//! - independent trials: Mann-Whitney U of A against the moved B.
//!
//! The claim's statistic is their sum. Under the null (every stratum at the boundary: each
//! round's difference symmetric about 0, or A and the moved B exchangeable), the strata are
//! independent and each statistic has its exact permutation distribution, so the sum's
//! exact distribution is their convolution. It is counted while that is cheap
//! ([`STRATIFIED_WORK`] table updates, a few ms) and otherwise replaced by the normal
//! approximation with the summed means and variances (tie-corrected) and a continuity
//! correction of half a unit: by then the sum runs over many strata and the approximation is
//! close. For rounds this is the van Elteren idea applied to the signed-rank test: a
//! stratum with n rounds can give at most 2^-n, the claim over strata with N rounds in all
//! 2^-N, which is why a claim over many cells is decided long before any one of them.
//!
//! Hand-written: no crate has stratified rank tests. Checked against complete enumeration of
//! the sign flips and relabelings in the tests below.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use statrs::distribution::{ContinuousCDF, Normal};

use super::claim_types::ClaimError;
use super::claims::{Boundary, PairData};
use super::effect::EffectScale;
use super::exact::{self, doubled_ranks};
use super::hypothesis::PValueMethod;

/// Most table updates spent counting a stratified distribution exactly; beyond it the
/// normal approximation is used (both by the test and by the interval that inverts it, so
/// the two always agree).
pub const STRATIFIED_WORK: usize = 4_000_000;

/// One stratum's statistic at a boundary, in half units, with its null distribution.
#[derive(Debug, Clone)]
struct Stratum {
    /// The observed statistic, doubled.
    observed2: i64,
    /// Null mean and variance of the doubled statistic.
    mean2: f64,
    var2: f64,
    /// What identifies its exact null distribution.
    null: NullKey,
}

/// How a stratum's exact null distribution is made (tie-free ones are shared).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum NullKey {
    /// No difference left (every value at the boundary): the statistic is 0 always.
    Degenerate,
    /// Signed-rank, tie-free, n nonzero differences.
    SignedRankFree(usize),
    /// Signed-rank with ties: the doubled ranks.
    SignedRankTied(Vec<i64>),
    /// Mann-Whitney, tie-free, m and n values.
    MannWhitneyFree(usize, usize),
    /// Mann-Whitney with ties: the doubled ranks, A's m first.
    MannWhitneyTied(Vec<i64>, usize),
}

/// The one-sided p-values of a stratified test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StratifiedP {
    /// Small when A tends to lie below the boundary across the strata.
    pub p_less: f64,
    /// Small when A tends to lie above it.
    pub p_greater: f64,
    /// Exact, exact conditional on ties, or the normal approximation.
    pub method: PValueMethod,
}

/// The per-round differences (or A and the moved B) of one stratum at `boundary`.
fn stratum(data: &PairData, boundary: Boundary) -> Result<Stratum, ClaimError> {
    let moved = |b: f64| match boundary {
        Boundary::Scale(r) => r * b,
        Boundary::Shift(d) => b + d,
    };
    match data {
        PairData::Unpaired { a, b, .. } => {
            if let Boundary::Scale(r) = boundary {
                if r != 1.0 && a.iter().chain(b).any(|v| *v < 0.0) {
                    return Err(ClaimError::NeedsNonNegative);
                }
            }
            let pooled: Vec<f64> = a
                .iter()
                .copied()
                .chain(b.iter().map(|v| moved(*v)))
                .collect();
            if pooled.iter().any(|v| !v.is_finite()) {
                return Err(ClaimError::NonFinite);
            }
            Ok(mann_whitney_stratum(&pooled, a.len()))
        }
        PairData::Rounds { pairs, .. } => {
            let positive = pairs.iter().all(|(x, y)| *x > 0.0 && *y > 0.0);
            let d: Vec<f64> = match boundary {
                Boundary::Scale(r) if positive => pairs
                    .iter()
                    .map(|(x, y)| x.ln() - y.ln() - r.ln())
                    .collect(),
                Boundary::Scale(r) => {
                    if r != 1.0 && pairs.iter().any(|(x, y)| *x < 0.0 || *y < 0.0) {
                        return Err(ClaimError::NeedsNonNegative);
                    }
                    pairs.iter().map(|(x, y)| x - r * y).collect()
                }
                Boundary::Shift(s) => pairs.iter().map(|(x, y)| x - y - s).collect(),
            };
            if d.iter().any(|v| !v.is_finite()) {
                return Err(ClaimError::NonFinite);
            }
            Ok(signed_rank_stratum(&d))
        }
    }
}

fn signed_rank_stratum(d: &[f64]) -> Stratum {
    let nonzero: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    if nonzero.is_empty() {
        return Stratum {
            observed2: 0,
            mean2: 0.0,
            var2: 0.0,
            null: NullKey::Degenerate,
        };
    }
    let magnitudes: Vec<f64> = nonzero.iter().map(|v| v.abs()).collect();
    let doubled = doubled_ranks(&magnitudes);
    let observed2: i64 = doubled
        .iter()
        .zip(&nonzero)
        .filter(|(_, v)| **v > 0.0)
        .map(|(r, _)| r)
        .sum();
    let mean2 = doubled.iter().sum::<i64>() as f64 / 2.0;
    let var2 = doubled.iter().map(|r| (*r as f64).powi(2)).sum::<f64>() / 4.0;
    let null = if tied(&doubled) {
        NullKey::SignedRankTied(doubled)
    } else {
        NullKey::SignedRankFree(nonzero.len())
    };
    Stratum {
        observed2,
        mean2,
        var2,
        null,
    }
}

fn mann_whitney_stratum(pooled: &[f64], m: usize) -> Stratum {
    let doubled = doubled_ranks(pooled);
    let n = pooled.len() - m;
    let rank_sum: i64 = doubled[..m].iter().sum();
    let observed2 = rank_sum - (m * (m + 1)) as i64;
    let (mf, nf) = (m as f64, n as f64);
    let total = mf + nf;
    let ties = tie_term(&doubled);
    let var = if total > 1.0 {
        mf * nf / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)))
    } else {
        0.0
    };
    let null = if tied(&doubled) {
        NullKey::MannWhitneyTied(doubled, m)
    } else {
        NullKey::MannWhitneyFree(m, n)
    };
    Stratum {
        observed2,
        mean2: mf * nf,
        var2: 4.0 * var,
        null,
    }
}

fn tied(doubled: &[i64]) -> bool {
    let mut s = doubled.to_vec();
    s.sort_unstable();
    s.windows(2).any(|w| w[0] == w[1])
}

/// Σ(t³ - t) over tied blocks.
fn tie_term(doubled: &[i64]) -> f64 {
    let mut s = doubled.to_vec();
    s.sort_unstable();
    let mut term = 0.0;
    let mut i = 0;
    while i < s.len() {
        let j = (i..s.len()).find(|&j| s[j] != s[i]).unwrap_or(s.len());
        let t = (j - i) as f64;
        term += t * t * t - t;
        i = j;
    }
    term
}

/// Lattice width (half units) of a stratum's exact null distribution.
fn width(key: &NullKey) -> usize {
    match key {
        NullKey::Degenerate => 1,
        NullKey::SignedRankFree(n) => n * (n + 1) + 1,
        NullKey::SignedRankTied(d) => d.iter().sum::<i64>() as usize + 1,
        NullKey::MannWhitneyFree(m, n) => 2 * m * n + 1,
        NullKey::MannWhitneyTied(d, m) => {
            let mut s = d.clone();
            s.sort_unstable();
            (s[s.len() - m..].iter().sum::<i64>() - s[..*m].iter().sum::<i64>()) as usize + 1
        }
    }
}

/// A stratum's exact null distribution on the step-1 half-unit lattice.
fn exact_null(key: &NullKey) -> Option<(i64, Vec<f64>)> {
    let counts = match key {
        NullKey::Degenerate => return Some((0, vec![1.0])),
        NullKey::SignedRankFree(n) => exact::signed_rank_tie_free(*n)?.probabilities(),
        NullKey::SignedRankTied(d) => exact::signed_rank(d)?.probabilities(),
        NullKey::MannWhitneyFree(m, n) => exact::mann_whitney_tie_free(*m, *n)?.probabilities(),
        NullKey::MannWhitneyTied(d, m) => exact::mann_whitney_with_ties(d, *m)?.probabilities(),
    };
    Some(counts)
}

/// The summed exact null (first point, probabilities, running sums from below and above).
type Summed = (i64, Vec<f64>, Vec<f64>, Vec<f64>);

/// The exact null of the sum of the strata's statistics, or None when counting it would
/// exceed [`STRATIFIED_WORK`]. Cached per thread by the strata's keys (memoisation only):
/// the interval search asks for the same strata many times.
fn summed_null(strata: &[Stratum]) -> Option<Rc<Summed>> {
    thread_local! {
        static CACHE: RefCell<HashMap<Vec<NullKey>, Rc<Summed>>> = RefCell::new(HashMap::new());
    }
    let mut keys: Vec<NullKey> = strata.iter().map(|s| s.null.clone()).collect();
    keys.sort_by_key(|k| format!("{k:?}"));
    let mut work = 0usize;
    let mut reach = 1usize;
    for k in &keys {
        let w = width(k);
        work = work.saturating_add(w.saturating_mul(reach));
        reach = reach.saturating_add(w);
    }
    if work > STRATIFIED_WORK {
        return None;
    }
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&keys).cloned()) {
        return Some(hit);
    }
    let mut start = 0i64;
    let mut probs = vec![1.0];
    for k in &keys {
        let (s, p) = exact_null(k)?;
        start += s;
        probs = exact::convolve(&probs, &p);
    }
    let mut below = probs.clone();
    for i in 1..below.len() {
        below[i] += below[i - 1];
    }
    let mut above = probs.clone();
    for i in (0..above.len().saturating_sub(1)).rev() {
        above[i] += above[i + 1];
    }
    let summed = Rc::new((start, probs, below, above));
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(keys, Rc::clone(&summed));
    });
    Some(summed)
}

/// The stratified test of `strata` at `boundary` (see the module doc).
pub(super) fn stratified_at(
    strata: &[PairData],
    boundary: Boundary,
) -> Result<StratifiedP, ClaimError> {
    let s: Vec<Stratum> = strata
        .iter()
        .map(|d| stratum(d, boundary))
        .collect::<Result<_, _>>()?;
    Ok(tails(&s))
}

fn tails(s: &[Stratum]) -> StratifiedP {
    let observed: i64 = s.iter().map(|x| x.observed2).sum();
    let any_ties = s.iter().any(|x| {
        matches!(
            x.null,
            NullKey::SignedRankTied(_) | NullKey::MannWhitneyTied(..)
        )
    });
    if let Some(null) = summed_null(s) {
        let (start, _, below, above) = &*null;
        let last = below.len() as i64 - 1;
        let idx = observed - start;
        let p_less = if idx < 0 {
            0.0
        } else {
            below[idx.min(last) as usize]
        };
        let p_greater = if idx > last {
            0.0
        } else {
            above[idx.max(0) as usize]
        };
        return StratifiedP {
            p_less: p_less.min(1.0),
            p_greater: p_greater.min(1.0),
            method: if any_ties {
                PValueMethod::Permutation
            } else {
                PValueMethod::Exact
            },
        };
    }
    let mean: f64 = s.iter().map(|x| x.mean2).sum();
    let var: f64 = s.iter().map(|x| x.var2).sum();
    let z = Normal::new(0.0, 1.0).expect("standard normal");
    let (p_less, p_greater) = if var > 0.0 {
        let sd = var.sqrt();
        let o = observed as f64;
        (z.cdf((o - mean + 1.0) / sd), z.sf((o - mean - 1.0) / sd))
    } else {
        (1.0, 1.0)
    };
    StratifiedP {
        p_less: p_less.min(1.0),
        p_greater: p_greater.min(1.0),
        method: PValueMethod::Asymptotic,
    }
}

/// The effect that inverts the stratified test: its Hodges-Lehmann-type estimate (where the
/// summed statistic crosses its null mean) and the two-sided interval at `level`, the
/// boundaries the test does not reject at (1 - level) / 2 on either side. An end that no
/// boundary reaches is infinite (the trials cannot give so small a p).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StratifiedEffect {
    /// Ratio or difference.
    pub scale: EffectScale,
    /// The estimate on that scale.
    pub estimate: f64,
    /// Lower end (0 or -inf when unbounded).
    pub lo: f64,
    /// Upper end (+inf when unbounded).
    pub hi: f64,
    /// The interval's level.
    pub level: f64,
}

/// Bisection steps of the interval search (2^-60 of the search range).
const STEPS: usize = 60;

/// The stratified effect of `strata` on `scale` at `level` (see [`StratifiedEffect`]).
/// `None` when a stratum cannot be tested or the level is not in (0, 1).
pub(super) fn stratified_effect(
    strata: &[PairData],
    scale: EffectScale,
    level: f64,
) -> Option<StratifiedEffect> {
    if !(level > 0.0 && level < 1.0) || strata.is_empty() {
        return None;
    }
    let (lo_d, hi_d) = search_range(strata, scale)?;
    let boundary = |delta: f64| match scale {
        EffectScale::Ratio => Boundary::Scale(delta.exp()),
        EffectScale::Difference => Boundary::Shift(delta),
    };
    let at = |delta: f64| -> Option<(StratifiedP, f64)> {
        let s: Vec<Stratum> = strata
            .iter()
            .map(|d| stratum(d, boundary(delta)))
            .collect::<Result<_, _>>()
            .ok()?;
        let centre: f64 = s.iter().map(|x| x.observed2 as f64 - x.mean2).sum();
        Some((tails(&s), centre))
    };
    let half = (1.0 - level) / 2.0;
    // p_greater grows with delta: the lower end is the first delta it exceeds half at.
    let lower = first_true(lo_d, hi_d, |d| {
        at(d).is_some_and(|(p, _)| p.p_greater > half)
    });
    // p_less falls with delta: the upper end is the last delta it exceeds half at.
    let upper = first_true(lo_d, hi_d, |d| at(d).is_none_or(|(p, _)| p.p_less <= half));
    // The centre (observed - null mean) falls with delta.
    let c1 = first_true(lo_d, hi_d, |d| at(d).is_none_or(|(_, c)| c <= 0.0));
    let c2 = first_true(lo_d, hi_d, |d| at(d).is_none_or(|(_, c)| c < 0.0));
    let estimate = match (c1, c2) {
        (Some(a), Some(b)) => (a + b) / 2.0,
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => (lo_d + hi_d) / 2.0,
    };
    let lo = match lower {
        Some(d) if d > lo_d => d,
        _ => f64::NEG_INFINITY,
    };
    let hi = match upper {
        Some(d) if d < hi_d => d,
        _ => f64::INFINITY,
    };
    let off = |d: f64| match scale {
        EffectScale::Ratio => d.exp(),
        EffectScale::Difference => d,
    };
    Some(StratifiedEffect {
        scale,
        estimate: off(estimate),
        lo: off(lo),
        hi: off(hi),
        level,
    })
}

/// The smallest delta in [lo, hi] where the monotone `pred` holds (None if it never does),
/// by bisection.
fn first_true(lo: f64, hi: f64, pred: impl Fn(f64) -> bool) -> Option<f64> {
    if pred(lo) {
        return Some(lo);
    }
    if !pred(hi) {
        return None;
    }
    let (mut a, mut b) = (lo, hi);
    for _ in 0..STEPS {
        let mid = 0.5 * (a + b);
        if pred(mid) {
            b = mid;
        } else {
            a = mid;
        }
    }
    Some(b)
}

/// A delta range (log or raw) beyond which every stratum's statistic is at its extreme,
/// widened by 1 on each side.
fn search_range(strata: &[PairData], scale: EffectScale) -> Option<(f64, f64)> {
    let f = |v: f64| match scale {
        EffectScale::Ratio => v.ln(),
        EffectScale::Difference => v,
    };
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in strata {
        match s {
            PairData::Rounds { pairs, .. } => {
                for (x, y) in pairs {
                    let d = f(*x) - f(*y);
                    lo = lo.min(d);
                    hi = hi.max(d);
                }
            }
            PairData::Unpaired { a, b, .. } => {
                let (amin, amax) = min_max(a.iter().map(|v| f(*v)));
                let (bmin, bmax) = min_max(b.iter().map(|v| f(*v)));
                lo = lo.min(amin - bmax);
                hi = hi.max(amax - bmin);
            }
        }
    }
    (lo.is_finite() && hi.is_finite()).then_some((lo - 1.0, hi + 1.0))
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

#[cfg(test)]
#[path = "stratified_tests.rs"]
mod tests;
