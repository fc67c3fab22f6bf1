//! A tested claim and its tested cells as outcome rows (numbers only; the verdicts, adjusted
//! p and decision rounds are filled in by `looks.rs`), and the heterogeneity note.

use super::cells::ClaimCell;
use super::eval::Data;
use super::{CellOutcome, ClaimLevel, Heterogeneity};
use crate::error::Untested;
use schedlab_analyze::{ClaimTest, Design, Effect, PairTest};
use schedlab_spec::claims::{Claim, ClaimRelation, ClaimScope, Relation};

/// `e` as a claim shows it: an interval that cannot reach its level with these trials
/// bounds nothing at that level (its ends become infinite, shown as "no bound"), so that no
/// interval excludes the boundary beside a verdict that could not be reached.
fn shown(e: Option<Effect>) -> Option<Effect> {
    e.map(|e| {
        if e.below_level {
            Effect {
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                ..e
            }
        } else {
            e
        }
    })
}

/// The pair that binds (the largest p for the claim) of a test.
fn binding(t: &ClaimTest) -> Option<&PairTest> {
    t.pairs
        .iter()
        .max_by(|x, y| x.p_support.total_cmp(&y.p_support))
}

fn dropped(p: &PairTest) -> usize {
    match p.design {
        Design::Rounds { dropped, .. } => dropped,
        Design::Unpaired => 0,
    }
}

/// The claim level of `claim` from its claim-level test, interval at `level`.
pub(super) fn claim_level(claim: &Claim, t: &ClaimTest, level: f64) -> ClaimLevel {
    let reading = match claim.reading {
        ClaimScope::Every => "in every cell",
        ClaimScope::Overall => "overall",
    };
    let b = binding(t);
    let test = match (&t.trend, b) {
        (Some(tr), _) => format!(
            "trend: signed-rank on per-round contrasts ({})",
            tr.method.label()
        ),
        (None, Some(p)) => p.to_string(),
        (None, None) => "not tested".into(),
    };
    // A trend's claim level is its one context's test (or the best of several): its rounds.
    let n = match (&t.trend, b) {
        (Some(tr), _) => (tr.used, tr.used),
        (None, Some(p)) => (p.n_a, p.n_b),
        (None, None) => (0, 0),
    };
    ClaimLevel {
        reading: reading.into(),
        verdict: None,
        p: t.p_family,
        p_adjusted: None,
        effect: shown(b.and_then(|p| p.effect)),
        interval_level: level,
        n,
        rounds: 0,
        rounds_dropped: b.map_or(0, dropped),
        test,
        heterogeneity: None,
        earliest_round: None,
        decided_after: None,
    }
}

/// A cell's numbers from its test (None: untested, `why`).
pub(super) fn cell(
    cell: &ClaimCell,
    t: Option<&ClaimTest>,
    why: Option<Untested>,
    claim: &Claim,
    data: &Data,
) -> CellOutcome {
    let b = t.and_then(binding);
    let (n, test, step_factor) = match (t.and_then(|t| t.trend.as_ref()), b) {
        (Some(tr), _) => (
            (tr.used, tr.levels.len()),
            format!(
                "trend toward {}: signed-rank on per-round contrasts ({})",
                tr.toward,
                tr.method.label()
            ),
            tr.step_factor,
        ),
        (None, Some(p)) => ((p.n_a, p.n_b), p.to_string(), None),
        (None, None) => {
            let (a, b) = data.arms(claim, cell).map_or((0, 0), |(a, o)| {
                (
                    a.values.len(),
                    o.iter().map(|x| x.values.len()).min().unwrap_or(0),
                )
            });
            ((a, b), "not tested".into(), None)
        }
    };
    CellOutcome {
        label: cell.label.clone(),
        verdict: None,
        exploratory: None,
        p: t.map_or(1.0, |t| t.p_family),
        p_adjusted: None,
        effect: shown(b.and_then(|p| p.effect)),
        interval_level: None,
        step_factor,
        n,
        rounds_dropped: b.map_or(0, dropped),
        test,
        power: None,
        untested: why.map(|w| w.to_string()),
        decided_after: None,
    }
}

/// Where a claim's cells disagree, when they do by much: some cells' estimates on the other
/// side of the claim's boundary (at least a fifth of them), or estimates more than a factor
/// of 2 apart. None for one cell or a trend.
pub(super) fn heterogeneity(claim: &Claim, tests: &[Option<ClaimTest>]) -> Option<Heterogeneity> {
    let boundary = match claim.relation {
        ClaimRelation::Pair(
            Relation::RatioAtLeast { ratio, .. } | Relation::RatioAtMost { ratio, .. },
        ) => ratio,
        ClaimRelation::Pair(
            Relation::Lower { .. } | Relation::Higher { .. } | Relation::Equal { .. },
        ) => 1.0,
        ClaimRelation::Trend { .. } => return None,
    };
    let estimates: Vec<f64> = tests
        .iter()
        .flatten()
        .filter_map(|t| binding(t).and_then(|p| p.effect))
        .filter(|e| e.scale == schedlab_analyze::EffectScale::Ratio)
        .map(|e| e.estimate)
        .collect();
    if estimates.len() < 2 {
        return None;
    }
    let below = estimates.iter().filter(|e| **e < boundary).count();
    let above = estimates.len() - below;
    let minority = below.min(above);
    let (lo, hi) = estimates
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), e| (a.min(*e), b.max(*e)));
    let straddle = minority > 0 && minority * 5 >= estimates.len();
    let spread = hi > 2.0 * lo;
    (straddle || spread).then_some(Heterogeneity {
        lo,
        hi,
        minority,
        cells: estimates.len(),
        boundary,
    })
}
