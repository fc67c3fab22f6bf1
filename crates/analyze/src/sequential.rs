//! Adaptive trial counts that stay valid when the data are checked after every round.
//!
//! - `--precision`: a confidence sequence for each cell's median ([`MedianSequence`]): an
//!   interval for every trial count t that contains the true median at every t at once with
//!   probability >= 1 - alpha, whatever the distribution (ties and bimodal values included).
//!   Stopping when it is narrow enough therefore keeps its coverage, unlike a fixed-n
//!   interval recomputed each round (whose "lucky" early stops undercover).
//!   Construction (Howard, Ramdas, McAuliffe & Sekhon 2021, Ann. Statist. 49(2)): the number
//!   of trials below the true median minus t/2 is a sum of centred Bernoulli steps, 1/2-sub-
//!   Gaussian; the one-sided normal-mixture boundary u_t, the smallest u with
//!   sqrt(ρ / (V + ρ)) · exp(u² / (2 (V + ρ))) · 2 Φ(u / sqrt(V + ρ)) >= 2 / alpha, V = t / 4,
//!   bounds it at every t with probability 1 - alpha/2 (Ville's inequality), and likewise
//!   the count above. So at every t the median lies in [x_(t-J), x_(J+1)], J the largest
//!   integer below t/2 + u_t (unbounded while J >= t); the intervals are intersected over t.
//!   ρ = 0.5 makes the sequence finite from 10 trials (at alpha = 0.05), the earliest any ρ
//!   gives; at 20 trials it is [x_(4), x_(17)], where a fixed-n 95% interval is [x_(6), x_(15)].
//! - `--until-decided`: alpha spent over looks ([`LookSchedule`]). Only the rounds where the
//!   claims' tests can give a small enough p are looks (that depends on the rounds alone, so
//!   it is fixed before the run); look k of K spends alpha_k ∝ k^-1/2, summing to alpha, on
//!   the family's procedure and the effects' intervals. By the union bound, the probability
//!   that any look gives any false verdict is at most alpha, however the stopping depends on
//!   the data. A verdict reached at a look is kept at later looks (`gatekeeping.rs`).

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::summary::median;

/// ρ of the normal-mixture boundary, in units of V = t/4 (see the module doc).
pub const SEQUENCE_RHO: f64 = 0.5;

/// u_t of the module doc: the boundary's half-width, in trials, at `t` trials.
pub fn sequence_boundary(t: usize, alpha: f64) -> f64 {
    boundary_with(t, alpha, SEQUENCE_RHO)
}

/// u_t for any ρ (the fixtures check several).
fn boundary_with(t: usize, alpha: f64, rho: f64) -> f64 {
    let w = t as f64 / 4.0 + rho;
    let z = Normal::new(0.0, 1.0).expect("standard normal");
    let target = (2.0 / alpha).ln();
    let lhs = |u: f64| 0.5 * (rho / w).ln() + u * u / (2.0 * w) + (2.0 * z.cdf(u / w.sqrt())).ln();
    // ln(2 Φ) >= 0 for u >= 0, so this u already satisfies the inequality.
    let mut hi = (2.0 * w * (target - 0.5 * (rho / w).ln())).sqrt();
    let mut lo = 0.0;
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if lhs(mid) >= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// J_t: the largest integer below t/2 + u_t (cached per thread: a loop asks for the same t
/// every round).
fn reach(t: usize, alpha: f64) -> usize {
    thread_local! {
        static CACHE: RefCell<HashMap<(u64, usize), usize>> = RefCell::new(HashMap::new());
    }
    CACHE.with(|c| {
        *c.borrow_mut()
            .entry((alpha.to_bits(), t))
            .or_insert_with(|| {
                let bound = t as f64 / 2.0 + sequence_boundary(t, alpha);
                (bound.ceil() as usize).saturating_sub(1)
            })
    })
}

/// A confidence sequence for the median, fed one trial at a time (in the order they ran).
#[derive(Debug, Clone, PartialEq)]
pub struct MedianSequence {
    alpha: f64,
    sorted: Vec<f64>,
    lo: f64,
    hi: f64,
}

impl MedianSequence {
    /// An empty sequence at `alpha` (coverage 1 - alpha); `None` if alpha is not in (0, 1).
    pub fn new(alpha: f64) -> Option<MedianSequence> {
        (alpha > 0.0 && alpha < 1.0).then_some(MedianSequence {
            alpha,
            sorted: Vec::new(),
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
        })
    }

    /// The sequence after `values` (in trial order); `None` for a bad alpha or a
    /// non-finite value.
    pub fn of(values: &[f64], alpha: f64) -> Option<MedianSequence> {
        let mut s = MedianSequence::new(alpha)?;
        for v in values {
            s.push(*v)?;
        }
        Some(s)
    }

    /// Add the next trial's value; `None` (and no change) if it is not finite.
    pub fn push(&mut self, value: f64) -> Option<()> {
        if !value.is_finite() {
            return None;
        }
        let at = self.sorted.partition_point(|x| *x <= value);
        self.sorted.insert(at, value);
        let t = self.sorted.len();
        let j = reach(t, self.alpha);
        let lo_t = if j < t {
            self.sorted[t - j - 1]
        } else {
            f64::NEG_INFINITY
        };
        let hi_t = if j < t { self.sorted[j] } else { f64::INFINITY };
        let (lo, hi) = (self.lo.max(lo_t), self.hi.min(hi_t));
        // Empty only when some earlier interval missed (probability <= alpha): start over.
        (self.lo, self.hi) = if lo <= hi { (lo, hi) } else { (lo_t, hi_t) };
        Some(())
    }

    /// Trials so far.
    pub fn n(&self) -> usize {
        self.sorted.len()
    }

    /// The interval now: (lower, upper), infinite while unbounded.
    pub fn interval(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// The sample median now.
    pub fn median(&self) -> Option<f64> {
        median(&self.sorted)
    }
}

/// How precisely a cell's median is known, anytime-valid (the replacement of
/// [`super::precision()`], same shape plus the interval's ends).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SequentialPrecision {
    /// Trials.
    pub n: usize,
    /// The median of the per-trial values.
    pub median: f64,
    /// Lower end of the confidence sequence now (-inf while unbounded).
    pub lo: f64,
    /// Upper end (+inf while unbounded).
    pub hi: f64,
    /// (hi - lo) / 2, in the unit of the values; infinite while unbounded.
    pub half_width: f64,
    /// `half_width / |median|`; 0 when both are 0.
    pub relative_half_width: f64,
    /// `relative_half_width <= target`.
    pub within: bool,
    /// 1 - coverage.
    pub alpha: f64,
}

/// The anytime-valid precision of one cell's per-trial values (in trial order) against
/// `target` (a fraction of the median). `None` without values, with a non-finite value, or
/// a target or alpha out of range.
pub fn sequential_precision(
    values: &[f64],
    target: f64,
    alpha: f64,
) -> Option<SequentialPrecision> {
    if values.is_empty() || !(target > 0.0 && target.is_finite()) {
        return None;
    }
    let s = MedianSequence::of(values, alpha)?;
    Some(precision_of(&s, target))
}

fn precision_of(s: &MedianSequence, target: f64) -> SequentialPrecision {
    let (lo, hi) = s.interval();
    let centre = s.median().unwrap_or(0.0);
    let half_width = (hi - lo) / 2.0;
    let relative_half_width = if half_width == 0.0 {
        0.0
    } else {
        half_width / centre.abs()
    };
    SequentialPrecision {
        n: s.n(),
        median: centre,
        lo,
        hi,
        half_width,
        relative_half_width,
        within: relative_half_width <= target,
        alpha: s.alpha,
    }
}

/// `--precision` with an anytime-valid interval: when to stop adding rounds (one more trial
/// of every cell per round): every cell precise, or the trial limit reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AnytimeStoppingRule {
    /// Rounds always run, at least 2.
    pub min_trials: usize,
    /// Rounds never exceeded.
    pub max_trials: usize,
    /// Wanted half-width of every cell's confidence sequence, as a fraction of its median.
    pub precision: f64,
    /// 1 - the sequences' coverage, e.g. 0.05.
    pub alpha: f64,
}

impl AnytimeStoppingRule {
    /// Whether every cell's per-trial values so far (in trial order) are precise enough to
    /// stop: at least `min_trials` rounds (the fewest trials any cell has; below 2 counts as
    /// 2) and every cell's sequence within the precision. A cell with a non-finite value, or
    /// a bad alpha, is never precise. Whether the limit is reached is the caller's count.
    pub fn precise<S: AsRef<[f64]>>(&self, cells: &[S]) -> bool {
        let states: Option<Vec<MedianSequence>> = cells
            .iter()
            .map(|c| MedianSequence::of(c.as_ref(), self.alpha))
            .collect();
        let rounds = cells.iter().map(|c| c.as_ref().len()).min();
        self.precise_states(states.as_deref(), rounds)
    }

    fn precise_states(&self, states: Option<&[MedianSequence]>, rounds: Option<usize>) -> bool {
        let min = self.min_trials.max(2);
        rounds.unwrap_or(min) >= min
            && states.is_some_and(|s| {
                s.iter()
                    .all(|c| c.n() > 0 && precision_of(c, self.precision).within)
            })
    }

    /// Run rounds until the rule stops: `round(i)` (i from 0) returns one new value per cell
    /// (always the same number of cells), until every cell is [`Self::precise`] or
    /// `max_trials` rounds ran (below the minimum counts as the minimum). Returns the values
    /// per cell and whether it stopped precise. The rule does no I/O: `round` may run real
    /// trials or draw synthetic numbers.
    pub fn run<F>(&self, mut round: F) -> (Vec<Vec<f64>>, bool)
    where
        F: FnMut(usize) -> Vec<f64>,
    {
        let max = self.max_trials.max(self.min_trials.max(2));
        let mut cells: Vec<Vec<f64>> = Vec::new();
        let mut states: Vec<MedianSequence> = Vec::new();
        // A bad alpha or a non-finite value: never precise, as `precise` would say.
        let mut usable = MedianSequence::new(self.alpha).is_some();
        for i in 0.. {
            let values = round(i);
            if cells.is_empty() {
                cells = vec![Vec::new(); values.len()];
                let empty = MedianSequence::new(self.alpha).unwrap_or(MedianSequence {
                    alpha: crate::ALPHA,
                    sorted: Vec::new(),
                    lo: f64::NEG_INFINITY,
                    hi: f64::INFINITY,
                });
                states = vec![empty; values.len()];
            }
            for ((cell, state), v) in cells.iter_mut().zip(&mut states).zip(values) {
                cell.push(v);
                usable &= state.push(v).is_some();
            }
            let rounds = cells.iter().map(Vec::len).min();
            if self.precise_states(usable.then_some(&states[..]), rounds) {
                return (cells, true);
            }
            if rounds.unwrap_or(max) >= max {
                return (cells, false);
            }
        }
        unreachable!("the rule stops at max_trials")
    }

    /// The methods text naming the rule.
    pub fn methods_text(&self) -> String {
        format!(
            "Adaptive trial counts (--precision ±{:.1}%): rounds were added until every cell's median was known to within ±{:.1}% (or {} trials). The interval is a {:.0}% confidence sequence for the median (Howard, Ramdas, McAuliffe and Sekhon 2021: a one-sided normal-mixture boundary, ρ = {SEQUENCE_RHO}, on the numbers of trials below and above the median, intersected over rounds), valid at every round at once, so checking after every round and stopping when it is narrow keeps its coverage. It is finite from 10 trials.",
            self.precision * 100.0,
            self.precision * 100.0,
            self.max_trials,
            (1.0 - self.alpha) * 100.0,
        )
    }
}

/// The look weights' exponent: look k of K gets alpha · k^-1/2 / Σ_j j^-1/2 (mildly
/// front-loaded). Chosen by simulation (`sequential_tests.rs`): against a flat split and
/// 1/k and 1/k², it decides the audit's case (ratio 0.9, log-SD 0.1) in the fewest rounds.
const WEIGHT_EXPONENT: f64 = 0.5;

/// One planned look of an `--until-decided` run: after `rounds` measured rounds, the family
/// is decided at `alpha`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Look {
    /// Measured rounds when it looks.
    pub rounds: usize,
    /// The alpha it spends.
    pub alpha: f64,
}

/// `--until-decided`: alpha spent only on looks that can decide something (module doc).
///
/// Which looks can decide depends on the number of rounds alone: the smallest p the claims'
/// tests can give at n rounds (`min_p(n)`, the best claim's; see `design.rs`) is fixed by
/// the design, not by the data. So skipping the rounds where even that p could not pass the
/// look's first Holm step (alpha_k / m) is decided before the run and keeps the union bound:
/// the looks' alphas sum to alpha. Of the rounds from `min_rounds` to `max_rounds`, the
/// schedule takes the most looks that can all decide, with weights k^-1/2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookSchedule {
    /// The family's alpha over all looks together.
    pub alpha: f64,
    /// The looks, in order.
    pub looks: Vec<Look>,
}

impl LookSchedule {
    /// The schedule for a family of `members` claims whose best claim-level p at n rounds is
    /// `min_p(n)`, looking from `min_rounds` to `max_rounds` rounds.
    pub fn new(
        alpha: f64,
        members: usize,
        (min_rounds, max_rounds): (usize, usize),
        min_p: impl Fn(usize) -> f64,
    ) -> LookSchedule {
        let m = members.max(1) as f64;
        let min = min_rounds.max(1);
        let candidates: Vec<usize> = (min..=max_rounds.max(min)).collect();
        for k_max in (1..=candidates.len()).rev() {
            let norm: f64 = (1..=k_max).map(|k| (k as f64).powf(-WEIGHT_EXPONENT)).sum();
            let weight = |k: usize| alpha * (k as f64).powf(-WEIGHT_EXPONENT) / norm;
            let mut looks = Vec::with_capacity(k_max);
            for &n in &candidates {
                let k = looks.len() + 1;
                if k <= k_max && min_p(n) <= weight(k) / m {
                    looks.push(Look {
                        rounds: n,
                        alpha: weight(k),
                    });
                }
            }
            if looks.len() == k_max {
                return LookSchedule { alpha, looks };
            }
        }
        LookSchedule {
            alpha,
            looks: Vec::new(),
        }
    }

    /// The last look at or before `rounds` measured rounds, if any.
    pub fn last_look(&self, rounds: usize) -> Option<(usize, Look)> {
        self.looks
            .iter()
            .enumerate()
            .rev()
            .find(|(_, l)| l.rounds <= rounds)
            .map(|(i, l)| (i + 1, *l))
    }

    /// The methods text naming the rule, for a run whose last look was `last` (1-based).
    pub fn methods_text(&self, last: Option<usize>) -> String {
        let first = self.looks.first().map_or(0, |l| l.rounds);
        let planned = self.looks.len();
        let tail = match last {
            Some(k) => format!(
                "The run's last look was look {k} of {planned} (after {} rounds, alpha {:.2e}); a verdict reached at an earlier look is kept.",
                self.looks[k - 1].rounds,
                self.looks[k - 1].alpha
            ),
            None => "The run stopped before its first look.".into(),
        };
        format!(
            "Trial counts until decided (--until-decided): the claims were checked after every round from round {first} on, where the claims' tests first can give a p small enough to decide (earlier rounds cannot, so no alpha is spent there), up to {planned} looks. Look k spent alpha_k = alpha · k^-1/2 / Σ_j j^-1/2 (these sum to alpha = {}) on the family's procedure and the effects' intervals, so the chance of any false verdict over all looks together stays at alpha. {tail}",
            self.alpha
        )
    }
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
