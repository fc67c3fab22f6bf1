//! The replications behind [`super::claim_power`]: one claim test on model data, with the
//! rank statistics counted directly and their exact p-values read from cached null
//! distributions (the data are continuous, so tie-free).

use std::rc::Rc;

use super::*;

/// The largest cap honoured: beyond it the exact distributions cost too much to count.
const MAX_CAP: usize = 300;

/// Bisection steps of the detectable effect (the bracket shrinks 4096-fold).
const BISECTION_STEPS: usize = 12;

impl Model {
    /// The smallest family p with `n_a` trials of A against `arms`.
    pub(super) fn min_p(&self, n_a: usize, arms: &[Arm2]) -> f64 {
        let best: Vec<(f64, f64)> = arms
            .iter()
            .map(|arm| match *arm {
                Arm2::Unpaired(n_b) => (1.0 / choose(n_a + n_b, n_a), 1.0),
                Arm2::Rounds(r) => (0.5f64.powi(r as i32), 1.0),
            })
            .collect();
        combine(self.kind, &best).2
    }

    /// Power at `theta` (on the model's scale) with `n_a` trials of A against `arms`.
    pub(super) fn power(
        &self,
        theta: f64,
        n_a: usize,
        arms: &[Arm2],
        query: &PowerQuery,
        possible: bool,
    ) -> f64 {
        if !possible || query.replications == 0 {
            return 0.0;
        }
        let Some(nulls) = self.nulls(n_a, arms) else {
            return f64::NAN;
        };
        let mut hits = 0usize;
        for rep in 0..query.replications {
            hits += usize::from(self.replicate(theta, n_a, arms, &nulls, query, rep));
        }
        hits as f64 / query.replications as f64
    }

    /// Trials per side for the target power at `theta`, given the power now.
    pub(super) fn trials_needed(&self, theta: f64, now: f64, query: &PowerQuery) -> TrialsNeeded {
        if now >= query.target {
            return TrialsNeeded::Enough;
        }
        let cap = query.cap.clamp(2, MAX_CAP);
        let eval = |n: usize| {
            let arms = self.scaled(n);
            let possible = self.min_p(n, &arms) <= query.alpha;
            self.power(theta, n, &arms, query, possible) >= query.target
        };
        let current = self.arms.iter().map(size).fold(self.n_a, usize::max);
        let (mut lo, mut hi) = (current, (current + 1).max(2));
        loop {
            if hi >= cap {
                if !eval(cap) {
                    return TrialsNeeded::MoreThan(cap);
                }
                hi = cap;
                break;
            }
            if eval(hi) {
                break;
            }
            lo = hi;
            hi *= 2;
        }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if eval(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        TrialsNeeded::PerSide(hi)
    }

    /// The effect (model scale) with the target power at the current trials, in the
    /// claimed direction from the boundary; `None` if even a huge one falls short.
    pub(super) fn detectable(&self, query: &PowerQuery) -> Option<f64> {
        let sign = match self.relation {
            Relation::Lower { .. } | Relation::RatioAtMost { .. } => -1.0,
            _ => 1.0,
        };
        let base = self.bounds[0];
        let reaches =
            |t: f64| self.power(base + sign * t, self.n_a, &self.arms, query, true) >= query.target;
        let mut hi = 4.0 * self.spread;
        let mut doublings = 0;
        while !reaches(hi) {
            hi *= 2.0;
            doublings += 1;
            if doublings > 12 {
                return None;
            }
        }
        let mut lo = 0.0;
        for _ in 0..BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if reaches(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(base + sign * hi)
    }

    /// Every arm at `n` trials per side (rounds when paired).
    fn scaled(&self, n: usize) -> Vec<Arm2> {
        self.arms
            .iter()
            .map(|arm| match arm {
                Arm2::Unpaired(_) => Arm2::Unpaired(n),
                Arm2::Rounds(_) => Arm2::Rounds(n),
            })
            .collect()
    }

    /// The tie-free null distribution of each arm's statistic.
    fn nulls(&self, n_a: usize, arms: &[Arm2]) -> Option<Vec<Rc<Counts>>> {
        arms.iter()
            .map(|arm| match *arm {
                Arm2::Unpaired(n_b) => exact::mann_whitney_tie_free(n_a, n_b),
                Arm2::Rounds(r) => exact::signed_rank_tie_free(r),
            })
            .collect()
    }

    /// One replication: whether the claim would be supported (or equivalent) at alpha.
    fn replicate(
        &self,
        theta: f64,
        n_a: usize,
        arms: &[Arm2],
        nulls: &[Rc<Counts>],
        query: &PowerQuery,
        rep: usize,
    ) -> bool {
        let stream = |arm: usize| {
            let mix = (rep as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ ((arm as u64) << 48);
            fastrand::Rng::with_seed(query.seed ^ mix)
        };
        let mut rng = stream(0);
        let mut x: Vec<f64> = (0..n_a)
            .map(|_| theta + self.spread * standard_normal(&mut rng))
            .collect();
        x.sort_unstable_by(f64::total_cmp);
        let mut per_arm = Vec::with_capacity(arms.len());
        for (j, (arm, null)) in arms.iter().zip(nulls).enumerate() {
            let mut rng = stream(j + 1);
            let at: Vec<(f64, f64)> = match *arm {
                Arm2::Unpaired(n_b) => {
                    let mut y: Vec<f64> = (0..n_b)
                        .map(|_| self.spread * standard_normal(&mut rng))
                        .collect();
                    y.sort_unstable_by(f64::total_cmp);
                    self.bounds
                        .iter()
                        .map(|b0| {
                            let u2 = 2 * pairs_above(&x, &y, *b0) as i64;
                            (null.le(u2), null.ge(u2))
                        })
                        .collect()
                }
                Arm2::Rounds(r) => {
                    let d: Vec<f64> = (0..r)
                        .map(|_| theta + self.spread * standard_normal(&mut rng))
                        .collect();
                    self.bounds
                        .iter()
                        .map(|b0| {
                            let t2 = 2 * positive_rank_sum(&d, *b0) as i64;
                            (null.le(t2), null.ge(t2))
                        })
                        .collect()
                }
            };
            per_arm.push(sides(&self.relation, &at));
        }
        let (_, _, family, leaning) = combine(self.kind, &per_arm);
        family <= query.alpha && leaning == Leaning::Support
    }
}

/// Trials of one arm now.
fn size(arm: &Arm2) -> usize {
    match *arm {
        Arm2::Unpaired(n) | Arm2::Rounds(n) => n,
    }
}

/// #{(i, j): x_i > y_j + shift} for ascending `x` and `y`.
fn pairs_above(x: &[f64], y: &[f64], shift: f64) -> usize {
    let mut j = 0;
    let mut count = 0;
    for xi in x {
        while j < y.len() && y[j] + shift < *xi {
            j += 1;
        }
        count += j;
    }
    count
}

/// T+ of `d - shift`: the sum of the ranks of |d - shift| over the positive ones.
fn positive_rank_sum(d: &[f64], shift: f64) -> usize {
    let mut e: Vec<f64> = d.iter().map(|v| v - shift).collect();
    e.sort_unstable_by(|a, b| a.abs().total_cmp(&b.abs()));
    e.iter()
        .enumerate()
        .filter(|(_, v)| **v > 0.0)
        .map(|(i, _)| i + 1)
        .sum()
}

/// C(n, k) as a float.
fn choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (1..=k).fold(1.0, |acc, i| acc * (n - k + i) as f64 / i as f64)
}
