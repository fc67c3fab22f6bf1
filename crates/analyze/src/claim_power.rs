//! Power, trials needed and the detectable effect of a claim, for the test that is actually
//! run (the exact rank test of `claims.rs`, combined and decided as `family.rs` does) at
//! the alpha the family gives it.
//!
//! Model: a shift on the scale of the claim's amounts (the log scale for relative amounts,
//! so a change of scale; the raw scale for absolute ones) with normal noise of the observed
//! spread: the pooled standard deviation of the trials (of their logarithms), or of the
//! per-round differences when the test pairs rounds. Each replication draws trials from the
//! model, computes the rank statistic at every boundary, reads its exact p-values, combines
//! them as the claim test does, and counts a success when the verdict would be `supported`
//! (or `equivalent`) at alpha. Seeded, with common random numbers across sample sizes and
//! effects, so power grows smoothly with both and the same inputs give the same statement.
//!
//! - Power at the current trials, at `smallest_effect` (equivalence: at θ = 1).
//! - Trials needed: the fewest trials per side (rounds, when paired) with power >= the
//!   target (0.8), searched up to a cap (200): "more than 200" beyond it.
//! - The smallest family p the current trials can give; when it exceeds alpha no effect
//!   can be shown and power is 0 whatever the spread.
//! - The detectable effect: the effect with the target power at the current trials, the
//!   rank-test replacement of the t-test's minimum detectable difference.

use serde::Serialize;

use super::claim_types::{
    check_relation, Amount, Arm, ClaimError, ClaimKind, Design, Leaning, Relation,
};
use super::claims::{boundaries, combine, pair_data, sides, Boundary, PairData};
use super::draws::standard_normal;
use super::effect::EffectScale;
use super::exact::{self, Counts};

/// The power an inconclusive verdict's trials-needed aims at.
pub const POWER_TARGET: f64 = 0.8;
/// The largest number of trials per side searched.
pub const POWER_CAP: usize = 200;
/// Replications per power estimate: standard error at most 0.011.
pub const POWER_REPLICATIONS: usize = 2000;

/// What to state power for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PowerQuery {
    /// The alpha of the claim's test: `family::power_alpha(alpha, m)`, or a look's alpha.
    pub alpha: f64,
    /// The power trials-needed aims at.
    pub target: f64,
    /// The largest trials per side searched.
    pub cap: usize,
    /// Replications per estimate.
    pub replications: usize,
    /// Seed of the replications.
    pub seed: u64,
}

impl PowerQuery {
    /// The defaults ([`POWER_TARGET`], [`POWER_CAP`], [`POWER_REPLICATIONS`]) at `alpha`.
    pub fn new(alpha: f64, seed: u64) -> PowerQuery {
        PowerQuery {
            alpha,
            target: POWER_TARGET,
            cap: POWER_CAP,
            replications: POWER_REPLICATIONS,
            seed,
        }
    }
}

/// How many trials the target power needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialsNeeded {
    /// The current trials already have it.
    Enough,
    /// This many trials per side (rounds, when paired).
    PerSide(usize),
    /// More than this many (the search's cap).
    MoreThan(usize),
}

/// What a claim's trials can and could show.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Power {
    /// The alpha of the test.
    pub alpha: f64,
    /// Ratio (relative amounts) or difference (absolute ones).
    pub scale: EffectScale,
    /// The effect power is stated at (smallest_effect applied to the claim's boundary;
    /// 1 or 0 for equivalence); `None` without a smallest effect.
    pub effect: Option<f64>,
    /// The model's noise: SD of the log values (ratio) or values (difference), per trial or
    /// per round difference.
    pub spread: f64,
    /// Unpaired, or rounds.
    pub design: Design,
    /// Trials (or rounds) of A now.
    pub n_a: usize,
    /// Trials (or rounds) of the smallest B now.
    pub n_b: usize,
    /// The smallest family p these trials can give.
    pub min_p: f64,
    /// `min_p <= alpha`: whether any verdict but inconclusive is possible at all.
    pub possible: bool,
    /// Power at `effect` with the current trials.
    pub power: Option<f64>,
    /// Trials per side for the target power at `effect`.
    pub trials_needed: Option<TrialsNeeded>,
    /// The effect the current trials detect with the target power (direction claims).
    pub detectable: Option<f64>,
    /// The target power.
    pub target: f64,
    /// Replications per estimate.
    pub replications: usize,
}

/// One B's design in the model: unpaired with its trial count, or paired with its rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Arm2 {
    Unpaired(usize),
    Rounds(usize),
}

/// The claim's test, reduced to what a replication needs.
struct Model {
    relation: Relation,
    kind: ClaimKind,
    /// Boundaries on the model's scale (log or raw).
    bounds: Vec<f64>,
    spread: f64,
    n_a: usize,
    arms: Vec<Arm2>,
}

/// Power, trials needed and the detectable effect of `relation` of A against `others`
/// (see the module doc). `Ok(None)` when no model can be fitted: no spread (fewer than two
/// trials, or all equal) or a relative amount on values that are not all positive.
pub fn claim_power(
    a: Arm,
    others: &[Arm],
    relation: &Relation,
    query: &PowerQuery,
) -> Result<Option<Power>, ClaimError> {
    check_relation(relation)?;
    if others.is_empty() {
        return Err(ClaimError::NoComparison);
    }
    let data: Vec<PairData> = others
        .iter()
        .enumerate()
        .map(|(i, b)| pair_data(a, *b, i))
        .collect::<Result<_, _>>()?;
    let Some((model, relative)) = Model::fit(&data, a.values.len(), relation) else {
        return Ok(None);
    };
    Ok(Some(model.statement(&data, relative, query)))
}

impl Model {
    /// The model of the claim's test on `data` (A has `n_a` trials), and whether it works on
    /// the log scale (relative amounts); None without a usable spread.
    fn fit(data: &[PairData], n_a: usize, relation: &Relation) -> Option<(Model, bool)> {
        let relative = match (relation, relation.smallest_effect()) {
            (Relation::Equal { margin }, _) => matches!(margin, Amount::Relative(_)),
            (_, Some(e)) => matches!(e, Amount::Relative(_)),
            (Relation::Lower { .. } | Relation::Higher { .. }, None) => all_positive(data),
            (_, None) => true,
        };
        if relative && !all_positive(data) {
            return None;
        }
        let spread = spread(data, relative)?;
        let g = |v: f64| if relative { v.ln() } else { v };
        let bounds: Vec<f64> = boundaries(relation)
            .into_iter()
            .map(|b| match b {
                Boundary::Scale(r) => g(r),
                Boundary::Shift(d) => d,
            })
            .collect();
        let arms: Vec<Arm2> = data
            .iter()
            .map(|d| match d {
                PairData::Unpaired { b, .. } => Arm2::Unpaired(b.len()),
                PairData::Rounds { pairs, .. } => Arm2::Rounds(pairs.len()),
            })
            .collect();
        let model = Model {
            relation: *relation,
            kind: relation.kind(),
            bounds,
            spread,
            n_a,
            arms,
        };
        Some((model, relative))
    }

    /// Power, trials needed and the detectable effect from the fitted model.
    fn statement(&self, data: &[PairData], relative: bool, query: &PowerQuery) -> Power {
        let g = |v: f64| if relative { v.ln() } else { v };
        let effect = alternative(&self.relation, relative);
        let min_p = self.min_p(self.n_a, &self.arms);
        let possible = min_p <= query.alpha;
        let power = effect.map(|e| self.power(g(e), self.n_a, &self.arms, query, possible));
        let trials_needed = match (effect, power) {
            (Some(e), Some(p)) => Some(self.trials_needed(g(e), p, query)),
            _ => None,
        };
        let detectable = if possible && self.kind == ClaimKind::Direction {
            self.detectable(query)
                .map(|t| if relative { t.exp() } else { t })
        } else {
            None
        };
        let (n_b, design) = match data.iter().min_by_key(|d| d.n()) {
            Some(PairData::Rounds { pairs, dropped }) => (
                pairs.len(),
                Design::Rounds {
                    used: pairs.len(),
                    dropped: *dropped,
                },
            ),
            Some(d) => (d.n(), Design::Unpaired),
            None => (0, Design::Unpaired),
        };
        Power {
            alpha: query.alpha,
            scale: if relative {
                EffectScale::Ratio
            } else {
                EffectScale::Difference
            },
            effect,
            spread: self.spread,
            design,
            n_a: if matches!(design, Design::Rounds { .. }) {
                n_b
            } else {
                self.n_a
            },
            n_b,
            min_p,
            possible,
            power,
            trials_needed,
            detectable,
            target: query.target,
            replications: query.replications,
        }
    }
}

impl PairData {
    /// Trials of B (rounds when paired).
    fn n(&self) -> usize {
        match self {
            PairData::Unpaired { b, .. } => b.len(),
            PairData::Rounds { pairs, .. } => pairs.len(),
        }
    }
}

fn all_positive(data: &[PairData]) -> bool {
    data.iter().all(|d| match d {
        PairData::Unpaired { a, b, .. } => a.iter().chain(b).all(|v| *v > 0.0),
        PairData::Rounds { pairs, .. } => pairs.iter().all(|(x, y)| *x > 0.0 && *y > 0.0),
    })
}

/// The effect power is stated at, on the claim's scale (ratio or difference).
fn alternative(relation: &Relation, relative: bool) -> Option<f64> {
    let amount = |e: Amount| match e {
        Amount::Relative(v) | Amount::Absolute(v) => v,
    };
    let none = if relative { 1.0 } else { 0.0 };
    let moved = |base: f64, sign: f64, e: Amount| {
        if relative {
            base * (1.0 + sign * amount(e))
        } else {
            base + sign * amount(e)
        }
    };
    match *relation {
        Relation::Lower { smallest_effect } => smallest_effect.map(|e| moved(none, -1.0, e)),
        Relation::Higher { smallest_effect } => smallest_effect.map(|e| moved(none, 1.0, e)),
        Relation::RatioAtLeast {
            ratio,
            smallest_effect,
        } => smallest_effect.map(|e| moved(ratio, 1.0, e)),
        Relation::RatioAtMost {
            ratio,
            smallest_effect,
        } => smallest_effect.map(|e| moved(ratio, -1.0, e)),
        Relation::Equal { .. } => Some(none),
    }
}

/// Pooled SD of the values (their logs when `log`) around each side's mean, or of the
/// per-round differences; `None` without degrees of freedom or spread.
fn spread(data: &[PairData], log: bool) -> Option<f64> {
    let g = |v: f64| if log { v.ln() } else { v };
    let mut groups: Vec<Vec<f64>> = Vec::new();
    let mut a_done = false;
    for d in data {
        match d {
            PairData::Unpaired { a, b, .. } => {
                if !a_done {
                    groups.push(a.iter().map(|v| g(*v)).collect());
                    a_done = true;
                }
                groups.push(b.iter().map(|v| g(*v)).collect());
            }
            PairData::Rounds { pairs, .. } => {
                groups.push(pairs.iter().map(|(x, y)| g(*x) - g(*y)).collect());
            }
        }
    }
    let (mut ss, mut df) = (0.0, 0usize);
    for group in &groups {
        let m = group.iter().sum::<f64>() / group.len() as f64;
        ss += group.iter().map(|v| (v - m) * (v - m)).sum::<f64>();
        df += group.len() - 1;
    }
    let sd = (ss / df as f64).sqrt();
    (df > 0 && sd > 0.0 && sd.is_finite()).then_some(sd)
}

#[path = "power_replications.rs"]
mod replications;

#[cfg(test)]
#[path = "claim_power_tests.rs"]
mod tests;
