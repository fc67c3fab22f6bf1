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
//! - `--until-decided`: alpha spent over looks. Look k (the k-th time the claims are checked)
//!   uses alpha_k = alpha · 6 / (π² k²), which sums to alpha over all looks, for Holm's
//!   family, the verdicts and the effects' intervals (level 1 - alpha_k). By the union bound,
//!   the probability that any look gives any false verdict (or any interval misses) is at
//!   most alpha, however the stopping depends on the data. The verdicts and intervals a run
//!   reports are those of its last look, at that look's alpha.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::family::Verdict;
use super::precision::Decision;
use super::summary::median;

/// ρ of the normal-mixture boundary, in units of V = t/4 (see the module doc).
pub const SEQUENCE_RHO: f64 = 0.5;

/// The default alpha of the sequences (95% coverage).
pub const SEQUENCE_ALPHA: f64 = 0.05;

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

/// `--precision` with an anytime-valid interval: the same fields and calls as
/// [`super::StoppingRule`], plus alpha.
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
    /// Decide from every cell's per-trial values so far, in trial order (as
    /// `StoppingRule::decide`).
    pub fn decide<S: AsRef<[f64]>>(&self, cells: &[S]) -> Decision {
        let states: Option<Vec<MedianSequence>> = cells
            .iter()
            .map(|c| MedianSequence::of(c.as_ref(), self.alpha))
            .collect();
        let rounds = cells.iter().map(|c| c.as_ref().len()).min();
        self.decide_states(states.as_deref(), rounds)
    }

    fn decide_states(&self, states: Option<&[MedianSequence]>, rounds: Option<usize>) -> Decision {
        let min = self.min_trials.max(2);
        let max = self.max_trials.max(min);
        let rounds = rounds.unwrap_or(min);
        if rounds < min {
            return Decision::Continue;
        }
        let precise = states.is_some_and(|s| {
            s.iter()
                .all(|c| c.n() > 0 && precision_of(c, self.precision).within)
        });
        if precise {
            Decision::Precise
        } else if rounds >= max {
            Decision::LimitReached
        } else {
            Decision::Continue
        }
    }

    /// Run rounds until the rule stops (as `StoppingRule::run`): `round(i)` returns one new
    /// value per cell. Returns the values per cell and the final decision.
    pub fn run<F>(&self, mut round: F) -> (Vec<Vec<f64>>, Decision)
    where
        F: FnMut(usize) -> Vec<f64>,
    {
        let mut cells: Vec<Vec<f64>> = Vec::new();
        let mut states: Vec<MedianSequence> = Vec::new();
        // A bad alpha or a non-finite value: never precise, as `decide` would say.
        let mut usable = MedianSequence::new(self.alpha).is_some();
        for i in 0.. {
            let values = round(i);
            if cells.is_empty() {
                cells = vec![Vec::new(); values.len()];
                let empty = MedianSequence::new(self.alpha).unwrap_or(MedianSequence {
                    alpha: SEQUENCE_ALPHA,
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
            let decision = self.decide_states(usable.then_some(&states[..]), rounds);
            if decision != Decision::Continue {
                return (cells, decision);
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

/// alpha_k = alpha · 6 / (π² k²), the alpha of look k (k from 1; 0 counts as 1).
pub fn look_alpha(alpha: f64, look: usize) -> f64 {
    let k = look.max(1) as f64;
    alpha * 6.0 / (std::f64::consts::PI * std::f64::consts::PI * k * k)
}

/// What [`UntilDecided::decide`] says after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UntilDecidedStep {
    /// Run another round.
    Continue,
    /// Stop: no verdict is inconclusive.
    Decided,
    /// Stop: the maximum is reached with some verdict inconclusive.
    LimitReached,
}

/// `--until-decided`: add rounds until every claim has a verdict other than inconclusive,
/// with alpha spent over looks (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UntilDecided {
    /// Rounds before the first look, at least 2.
    pub min_trials: usize,
    /// Rounds never exceeded.
    pub max_trials: usize,
    /// The family's alpha over all looks together.
    pub alpha: f64,
}

impl UntilDecided {
    /// The look after `rounds` rounds (1 at `min_trials`), or `None` before the first.
    pub fn look(&self, rounds: usize) -> Option<usize> {
        let min = self.min_trials.max(2);
        (rounds >= min).then(|| rounds - min + 1)
    }

    /// The alpha of look `look`: pass it to `decide_family`, and 1 - it as the level of
    /// `test_claim`'s intervals.
    pub fn alpha_at(&self, look: usize) -> f64 {
        look_alpha(self.alpha, look)
    }

    /// Decide after `rounds` rounds from the verdicts of this round's look (computed at
    /// [`Self::alpha_at`] of [`Self::look`]); ignored before the first look.
    pub fn decide(&self, rounds: usize, verdicts: &[Verdict]) -> UntilDecidedStep {
        let max = self.max_trials.max(self.min_trials.max(2));
        if self.look(rounds).is_none() {
            return UntilDecidedStep::Continue;
        }
        if verdicts.iter().all(|v| *v != Verdict::Inconclusive) {
            UntilDecidedStep::Decided
        } else if rounds >= max {
            UntilDecidedStep::LimitReached
        } else {
            UntilDecidedStep::Continue
        }
    }

    /// The methods text naming the rule, for a run that ended at look `last_look`.
    pub fn methods_text(&self, last_look: usize) -> String {
        format!(
            "Trial counts until decided (--until-decided): from {} rounds on, the claims were checked after every round and rounds were added until no verdict was inconclusive (or {} trials). To keep the family's error at alpha = {} over all these looks, look k used alpha_k = alpha · 6 / (π² k²) (these sum to alpha) for Holm's procedure and 1 - alpha_k as the level of the effects' intervals. The verdicts shown are those of the last look, {last_look}, at alpha = {:.2e}.",
            self.min_trials.max(2),
            self.max_trials,
            self.alpha,
            self.alpha_at(last_look),
        )
    }
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
