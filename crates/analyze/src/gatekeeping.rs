//! The confirmatory family of claims: one member per claim, decided by Holm, and each
//! decided claim's cells judged behind it (serial gatekeeping), so that "supported overall;
//! contradicted for io at 20 tasks" can be said while the chance of any false verdict, on a
//! claim or on a cell, stays at alpha.
//!
//! The procedure is a closed test (Marcus, Peritz and Gabriel 1976) whose shortcut is:
//! 1. Of the claims still open (a claim is closed once it and every one of its cells are
//!    decided), m remain; each is tested at alpha / m by its claim-level p
//!    (`claim_level.rs`: the stratified test, or the every-cell reading).
//! 2. A decided claim opens its cells: they are tested at the same alpha / m, Holm among
//!    them, with the divisors n - 1, n - 1, n - 2, ..., 1 for n cells (the first step is the
//!    claim's own test, which already rejected "every cell at the boundary"; a claim with one
//!    cell has that cell decided with it). A claim read in every cell and supported has all
//!    its cells supported at once (intersection-union).
//! 3. A closed claim passes its share on: m falls and steps 1-2 repeat until nothing changes.
//!
//! Why it holds: every intersection of cell hypotheses across claims is tested by a
//! Bonferroni split over the claims it touches, and within a claim by the claim-level test
//! (all its cells) or Bonferroni (a proper subset); a cell is decided when every
//! intersection containing it is rejected, which is exactly the steps above. Directions come
//! from two-sided p-values, each direction at half the level (`family.rs`). The simulation
//! test checks 5 claims over 80 cells.
//!
//! Sequential use (`--until-decided`): a look passes what earlier looks decided as
//! `before`; those stay decided (a union bound over looks keeps the error at the alpha spent
//! in all), and the claims they closed pass their share on at this look.

use serde::Serialize;

use super::claim_level::Scope;
use super::claim_types::{ClaimKind, Leaning};
use super::claims::ClaimTest;
use super::family::Verdict;

/// One claim of the family: its claim-level test and the tests of its cells.
#[derive(Debug, Clone, Copy)]
pub struct ClaimMember<'a> {
    /// The claim-level test (for one cell, that cell's test).
    pub claim: &'a ClaimTest,
    /// One test per cell (untested cells: `family::untested`, p = 1).
    pub cells: &'a [ClaimTest],
    /// Overall or in every cell.
    pub scope: Scope,
}

/// A claim and its cells, decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimDecision {
    /// The claim's verdict.
    pub verdict: Verdict,
    /// Each cell's, in the member's order (inconclusive while the claim is not decided).
    pub cells: Vec<Verdict>,
}

impl ClaimDecision {
    /// Whether the claim was decided by its test, so its cells were judged (a claim found
    /// negligible was not: that is an interval's statement, no rejection).
    pub fn gate_open(&self) -> bool {
        !matches!(self.verdict, Verdict::Inconclusive | Verdict::Negligible)
    }

    fn closed(&self) -> bool {
        self.gate_open() && self.cells.iter().all(|v| *v != Verdict::Inconclusive)
    }
}

/// Decides `members` at `alpha` (see the module doc); `before`: what earlier looks decided
/// (same members, same order), kept.
pub fn decide_claims(
    members: &[ClaimMember],
    alpha: f64,
    before: Option<&[ClaimDecision]>,
) -> Vec<ClaimDecision> {
    let mut state: Vec<ClaimDecision> = members
        .iter()
        .enumerate()
        .map(|(k, m)| match before.and_then(|b| b.get(k)) {
            Some(d) if d.cells.len() == m.cells.len() => d.clone(),
            _ => ClaimDecision {
                verdict: Verdict::Inconclusive,
                cells: vec![Verdict::Inconclusive; m.cells.len()],
            },
        })
        .collect();
    // Each claim's cells from the smallest p up, once.
    let orders: Vec<Vec<usize>> = members
        .iter()
        .map(|m| {
            let mut o: Vec<usize> = (0..m.cells.len()).collect();
            o.sort_by(|&x, &y| m.cells[x].p_family.total_cmp(&m.cells[y].p_family));
            o
        })
        .collect();
    loop {
        let open: Vec<usize> = (0..members.len()).filter(|&k| !state[k].closed()).collect();
        if open.is_empty() {
            break;
        }
        let level = alpha / open.len() as f64;
        let mut changed = false;
        for k in open {
            changed |= step(&members[k], &orders[k], &mut state[k], level);
        }
        if !changed {
            break;
        }
    }
    state
}

/// One pass over claim `m` (its cells in `order`, smallest p first) at `level`; whether
/// anything new was decided.
fn step(m: &ClaimMember, order: &[usize], d: &mut ClaimDecision, level: f64) -> bool {
    let mut changed = false;
    if !d.gate_open() && m.claim.p_family <= level {
        d.verdict = Verdict::significant(m.claim.kind, m.claim.leaning);
        changed = true;
    }
    if !d.gate_open() {
        return changed;
    }
    let n = m.cells.len();
    if m.scope == Scope::Every && m.claim.leaning == Leaning::Support {
        for (v, c) in d.cells.iter_mut().zip(m.cells) {
            if *v == Verdict::Inconclusive {
                *v = Verdict::significant(c.kind, Leaning::Support);
                changed = true;
            }
        }
        return changed;
    }
    let mut done = d
        .cells
        .iter()
        .filter(|v| **v != Verdict::Inconclusive)
        .count();
    for &next in order {
        if d.cells[next] != Verdict::Inconclusive {
            continue;
        }
        // Divisors n-1, n-1, n-2, ... (overall: the first step is the claim's own test);
        // n, n-1, ... when the claim-level test was Bonferroni (every cell, contradicted).
        let j = done + 1;
        let divisor = match m.scope {
            Scope::Overall if j == 1 => n.saturating_sub(1),
            Scope::Overall | Scope::Every => n + 1 - j,
        }
        .max(1);
        let c = &m.cells[next];
        if c.p_family > level / divisor as f64 {
            break;
        }
        d.cells[next] = Verdict::significant(c.kind, c.leaning);
        done += 1;
        changed = true;
    }
    changed
}

/// Each claim's and cell's adjusted p: the smallest alpha at which [`decide_claims`] would
/// decide it (1 if none up to 1), found by bisection (the procedure is monotone in alpha).
pub fn adjusted(members: &[ClaimMember]) -> Vec<(f64, Vec<f64>)> {
    let decided_at = |alpha: f64| decide_claims(members, alpha, None);
    members
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let claim = smallest(|a| decided_at(a)[k].gate_open());
            let cells = (0..m.cells.len())
                .map(|i| smallest(|a| decided_at(a)[k].cells[i] != Verdict::Inconclusive))
                .collect();
            (claim, cells)
        })
        .collect()
}

/// The smallest alpha in (0, 1] where the monotone `holds` is true (1 when never).
fn smallest(holds: impl Fn(f64) -> bool) -> f64 {
    if !holds(1.0) {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The levels a claim's intervals are shown at in a family of `claims` claims at `alpha`:
/// the claim's (its first Holm step, alpha / claims) and its cells' (that level over the
/// first within-claim divisor), so that an interval excluding the boundary always stands
/// beside a decided verdict. Equalities use twice the level (two one-sided tests).
pub fn interval_levels(
    alpha: f64,
    claims: usize,
    cells: usize,
    scope: Scope,
    kind: ClaimKind,
) -> (f64, f64) {
    let claim = alpha / claims.max(1) as f64;
    let divisor = match scope {
        Scope::Overall => cells.saturating_sub(1),
        Scope::Every => cells,
    }
    .max(1);
    let cell = claim / divisor as f64;
    let two = if kind == ClaimKind::Equivalence {
        2.0
    } else {
        1.0
    };
    (1.0 - two * claim, 1.0 - two * cell)
}

#[cfg(test)]
#[path = "gatekeeping_tests.rs"]
mod tests;
