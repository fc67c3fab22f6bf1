//! What a plan's design can decide, said before the run (`schedlab plan` and the start of
//! `schedlab run`): for each declared claim the earliest round at which it, and its cells
//! behind it, can be decided under its test, the family and (with `--until-decided`) the
//! spending; and one line with the remedy when nothing can be decided at all.

use super::cells::claim_cells;
use super::eval::design;
use schedlab_analyze::ALPHA;
use schedlab_analyze::{earliest, look_schedule, ClaimDesign, Earliest};
use schedlab_spec::claims::{check_claims, Declared};
use schedlab_spec::plan::Plan;
use schedlab_spec::Spec;
use schedlab_store::query::CellView;
use serde::Serialize;

/// One claim's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignLine {
    /// The claim's name.
    pub claim: String,
    /// Its cells in this plan.
    pub cells: usize,
    /// The earliest rounds it and its cells can be decided at.
    pub earliest: Earliest,
}

/// What the plan can decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DesignStatement {
    /// One line per declared claim.
    pub lines: Vec<DesignLine>,
    /// Measured rounds the plan runs (the most, with `--until-decided`).
    pub rounds: usize,
    /// Whether the rounds are added until decided.
    pub until_decided: bool,
}

/// Rounds considered for "from round N" in a fixed design.
const HORIZON: usize = 200;

/// The statement of `plan` (None when it declares no claim).
pub fn statement(plan: &Plan) -> Option<DesignStatement> {
    let spec = Spec::read_as_run(&plan.spec_toml).ok()?;
    let claims: Vec<_> = check_claims(&spec)
        .ok()?
        .into_iter()
        .filter(|c| c.declared == Declared::Before)
        .collect();
    if claims.is_empty() {
        return None;
    }
    let views: Vec<CellView> = plan
        .cells
        .iter()
        .enumerate()
        .map(|(i, c)| CellView::planned(i, c))
        .collect();
    let counts: Vec<usize> = claims
        .iter()
        .map(|c| claim_cells(c, &views).len())
        .collect();
    let designs: Vec<ClaimDesign> = claims
        .iter()
        .zip(&counts)
        .map(|(c, n)| design(c, *n, false))
        .collect();
    let adaptive = plan.settings.adaptive.as_ref().filter(|a| a.until_decided);
    let (rounds, found) = match adaptive {
        Some(a) => {
            let (min, max) = ((a.min_trials as usize).max(2), a.max_trials as usize);
            let s = look_schedule(&designs, ALPHA, (min, max.max(min)));
            (max, earliest(&designs, ALPHA, max, Some(&s)))
        }
        None => (
            plan.settings.trials as usize,
            earliest(&designs, ALPHA, HORIZON, None),
        ),
    };
    Some(DesignStatement {
        lines: claims
            .iter()
            .zip(counts)
            .zip(found)
            .map(|((c, cells), earliest)| DesignLine {
                claim: c.name.clone(),
                cells,
                earliest,
            })
            .collect(),
        rounds,
        until_decided: adaptive.is_some(),
    })
}

impl DesignStatement {
    /// Whether any claim can be decided within the plan's rounds.
    pub fn any_decidable(&self) -> bool {
        self.lines
            .iter()
            .any(|l| l.earliest.claim.is_some_and(|n| n <= self.rounds))
    }

    /// The statement as text lines (for `plan` and the start of `run`).
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let how = if self.until_decided {
            format!(
                "under --until-decided's spending, at most {} rounds",
                self.rounds
            )
        } else {
            format!("{} rounds", self.rounds)
        };
        out.push(format!(
            "Claims ({} in the family, Holm at alpha {ALPHA}; {how}): earliest round each can be decided",
            self.lines.len()
        ));
        for l in &self.lines {
            let within = if self.until_decided {
                self.rounds
            } else {
                HORIZON
            };
            let at = |n: Option<usize>| match n {
                Some(n) if n <= self.rounds => format!("from round {n}"),
                Some(n) => format!("from round {n}, beyond this plan's {}", self.rounds),
                None => format!("not within {within} rounds"),
            };
            let cells = if l.cells > 1 {
                format!("; its {} cells {}", l.cells, at(l.earliest.cells))
            } else {
                String::new()
            };
            out.push(format!("  {}: {}{cells}", l.claim, at(l.earliest.claim)));
        }
        if !self.any_decidable() {
            let need = self.lines.iter().filter_map(|l| l.earliest.claim).min();
            out.push(match (need, self.until_decided) {
                (Some(n), false) => format!("No claim can be decided with {} rounds: the tests cannot give a p small enough. Run --trials {n} or more, or --until-decided.", self.rounds),
                (Some(n), true) => format!("No claim can be decided within {} rounds: raise --max-trials to {n} or more.", self.rounds),
                (None, _) => "No claim can be decided in this design at all: check that each claim's treatments have cells.".into(),
            });
        }
        out
    }
}
