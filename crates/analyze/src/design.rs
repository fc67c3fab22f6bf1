//! What a design can decide before it runs: the smallest p each claim's test and each of its
//! cells' tests can give after n rounds, and from that the earliest round at which each can
//! be decided under the family's procedure (`gatekeeping.rs`) and, for `--until-decided`,
//! the look schedule (`sequential.rs`).
//!
//! The smallest p of a rank test depends on the number of trials alone (every trial on the
//! claim's side): the signed-rank test on n rounds gives one-sided 2^-n, Mann-Whitney on n
//! against n trials 1 / C(2n, n), and a stratified test over cells the product of its
//! strata's. A direction's family p is twice the smaller one-sided p; an equality's is its
//! TOST p (no doubling); a trend's is the signed-rank test on per-round contrasts, over its
//! contexts Bonferroni.

use serde::Serialize;

use super::claim_level::Scope;
use super::claim_types::ClaimKind;
use super::sequential::LookSchedule;

/// A claim's design, as far as its smallest p goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClaimDesign {
    /// Direction, equality or trend.
    pub kind: ClaimKind,
    /// Overall or in every cell.
    pub scope: Scope,
    /// Its cells (a trend: its contexts).
    pub cells: usize,
    /// Trials paired by round (one machine), else independent (pooled runs).
    pub paired: bool,
}

/// ln of the smallest one-sided p of one cell's test at n trials per side.
fn ln_cell_one_sided(paired: bool, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    if paired {
        -(n as f64) * std::f64::consts::LN_2
    } else {
        // -ln C(2n, n)
        -(1..=n)
            .map(|i| ((n + i) as f64 / i as f64).ln())
            .sum::<f64>()
    }
}

impl ClaimDesign {
    fn doubling(&self) -> f64 {
        match self.kind {
            ClaimKind::Equivalence => 1.0,
            ClaimKind::Direction | ClaimKind::Trend => 2.0,
        }
    }

    /// The smallest family p of the claim-level test after `n` rounds.
    pub fn claim_min_p(&self, n: usize) -> f64 {
        let c = self.cells.max(1) as f64;
        let cell = ln_cell_one_sided(self.paired, n);
        let p = match (self.kind, self.scope) {
            (ClaimKind::Trend, _) => c * cell.exp(),
            (_, Scope::Every) => cell.exp(),
            (_, Scope::Overall) => (c * cell).exp(),
        };
        (self.doubling() * p).min(1.0)
    }

    /// The smallest family p of one of its cells' tests after `n` rounds.
    pub fn cell_min_p(&self, n: usize) -> f64 {
        (self.doubling() * ln_cell_one_sided(self.paired, n).exp()).min(1.0)
    }

    /// The divisor of a cell's first step behind the claim (`gatekeeping.rs`).
    fn first_divisor(&self) -> f64 {
        match self.scope {
            Scope::Overall => self.cells.saturating_sub(1).max(1) as f64,
            Scope::Every => self.cells.max(1) as f64,
        }
    }
}

/// The earliest rounds at which a claim and its cells can be decided (None: not within the
/// rounds considered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Earliest {
    /// The claim, tested at its first Holm step (alpha / m).
    pub claim: Option<usize>,
    /// Its cells, behind the claim at their first step.
    pub cells: Option<usize>,
}

/// The earliest rounds (up to `max_rounds`) for each of `claims`, in a fixed design at
/// `alpha` (`looks` None: one look at the end, after n rounds) or under `looks`.
pub fn earliest(
    claims: &[ClaimDesign],
    alpha: f64,
    max_rounds: usize,
    looks: Option<&LookSchedule>,
) -> Vec<Earliest> {
    let m = claims.len().max(1) as f64;
    let candidates: Vec<(usize, f64)> = match looks {
        Some(s) => s.looks.iter().map(|l| (l.rounds, l.alpha)).collect(),
        None => (1..=max_rounds).map(|n| (n, alpha)).collect(),
    };
    claims
        .iter()
        .map(|d| {
            let claim = candidates
                .iter()
                .find(|(n, a)| d.claim_min_p(*n) <= a / m)
                .map(|x| x.0);
            let cells = candidates
                .iter()
                .find(|(n, a)| {
                    d.claim_min_p(*n) <= a / m && d.cell_min_p(*n) <= a / m / d.first_divisor()
                })
                .map(|x| x.0);
            Earliest { claim, cells }
        })
        .collect()
}

/// The look schedule of an `--until-decided` run of `claims` at `alpha`.
pub fn look_schedule(
    claims: &[ClaimDesign],
    alpha: f64,
    (min_rounds, max_rounds): (usize, usize),
) -> LookSchedule {
    LookSchedule::new(alpha, claims.len(), (min_rounds, max_rounds), |n| {
        claims
            .iter()
            .map(|d| d.claim_min_p(n))
            .fold(1.0f64, f64::min)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paired(kind: ClaimKind, cells: usize) -> ClaimDesign {
        ClaimDesign {
            kind,
            scope: Scope::Overall,
            cells,
            paired: true,
        }
    }

    #[test]
    fn smallest_p_by_hand() {
        let d = paired(ClaimKind::Direction, 4);
        // 4 cells x 3 rounds: 2 * 2^-12; one cell: 2 * 2^-3.
        assert!((d.claim_min_p(3) - 2.0 / 4096.0).abs() < 1e-15);
        assert!((d.cell_min_p(3) - 0.25).abs() < 1e-15);
        let e = paired(ClaimKind::Equivalence, 1);
        assert!((e.claim_min_p(3) - 0.125).abs() < 1e-15);
        // Unpaired 3 vs 3: 1 / 20 one-sided.
        let u = ClaimDesign {
            paired: false,
            ..paired(ClaimKind::Direction, 1)
        };
        assert!((u.claim_min_p(3) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_issues_cases_three_rounds_decide_nothing_and_thirteen_cells_need_ten() {
        // Study 000 as the issue counts it: 13 claim cells, each its own member, need
        // 2 * 2^-n <= 0.05 / 13: n >= 9.
        let one = paired(ClaimKind::Direction, 1);
        let thirteen = vec![one; 13];
        let e = earliest(&thirteen, 0.05, 30, None);
        assert_eq!(e[0].claim, Some(10));
        assert_eq!(earliest(&[one], 0.05, 3, None)[0].claim, None);
        // As claims: a claim over 4 cells is decided at round 2 (2 * 2^-8 <= 0.01); its
        // cells behind it need 2 * 2^-n <= 0.01 / 3.
        let five = vec![
            paired(ClaimKind::Direction, 2),
            paired(ClaimKind::Direction, 4),
            paired(ClaimKind::Direction, 4),
            paired(ClaimKind::Trend, 1),
            paired(ClaimKind::Direction, 2),
        ];
        let e = earliest(&five, 0.05, 30, None);
        assert_eq!(e[1].claim, Some(2));
        assert_eq!(e[1].cells, Some(10));
        assert_eq!(e[0].cells, Some(8));
    }

    #[test]
    fn looks_start_where_a_claim_can_first_be_decided_and_spend_alpha() {
        let one = [paired(ClaimKind::Direction, 1)];
        let s = look_schedule(&one, 0.05, (2, 30));
        let total: f64 = s.looks.iter().map(|l| l.alpha).sum();
        assert!((total - 0.05).abs() < 1e-12, "{total}");
        let first = s.looks[0];
        // The first look's alpha is reachable there and not one round before.
        assert!(one[0].claim_min_p(first.rounds) <= first.alpha);
        assert!(one[0].claim_min_p(first.rounds - 1) > first.alpha);
        assert!(s.looks.windows(2).all(|w| w[0].rounds < w[1].rounds));
    }
}
