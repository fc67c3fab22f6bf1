//! The claims decided from a run's stored trials ([`build`]): per claim its cells' arms (one
//! value per kept trial, with its round, up to a look's last round), each cell's test, the
//! claim-level test over them, and the outcome of the family decided by `looks.rs`; where an
//! `--until-decided` run stands ([`progress`]).

use super::cells::{claim_cells, ClaimCell};
use super::looks::{decide, Decided};
use super::{claims_of, ClaimOutcome, ClaimsOutcome, Progress};
use crate::error::Untested;
use crate::model::{par_map, trial_values, Metric, ReportInput};
use schedlab_analyze::{
    claims_methods_text, every_of, test_claim, test_claim_over_cells, test_trend, untested, Arm,
    CellArms, ClaimDesign, ClaimKind, ClaimTest, Relation, Scope,
};
use schedlab_spec::claims::{Claim, ClaimRelation, ClaimScope, Declared};
use schedlab_store::query::CellView;
use std::collections::HashSet;

/// One cell's trials of every metric: (round, value) per kept ok trial.
pub(super) type CellValues = Vec<Vec<(i64, f64)>>;

/// The claims of `input`'s run decided from its stored trials; None when it has none.
pub fn build(input: &ReportInput) -> Option<ClaimsOutcome> {
    let claims = claims_of(&input.run, &input.claims).ok()?;
    if claims.is_empty() {
        return None;
    }
    Some(evaluate(input, &claims))
}

/// Decides `claims` on `input`'s stored trials (see the module doc of `claims`).
fn evaluate(input: &ReportInput, claims: &[Claim]) -> ClaimsOutcome {
    let req = &input.claims;
    let disturbed: HashSet<i64> =
        crate::model::quality::excluded_trials(input, req.include_disturbed, req.include_slowed)
            .ids;
    let all_ok: usize = input.cells.iter().map(|c| c.trial_ids.len()).sum();
    let left_out = input
        .cells
        .iter()
        .flat_map(|c| &c.trial_ids)
        .filter(|id| disturbed.contains(id))
        .count();
    let values: Vec<CellValues> = par_map(&input.cells, |c| trial_values(&without(c, &disturbed)));
    let pooled = input
        .cells
        .iter()
        .any(|c| c.host.is_some() || c.kernel.is_some());
    let data = Data {
        values: &values,
        pooled,
        seed: input.run.seed,
        through: None,
    };
    let cells: Vec<Vec<ClaimCell>> = claims
        .iter()
        .map(|c| claim_cells(c, &input.cells))
        .collect();
    let decided = decide(input, claims, &cells, &data);
    let mut methods = vec![claims_methods_text(decided.alpha, decided.family_size)];
    methods.extend(decided.looks_text.clone());
    methods.push(disturbed_note(req.include_disturbed, left_out, all_ok));
    if claims.iter().any(|c| c.declared == Declared::PostHoc) {
        methods.push("Claims given with `--claim` to stats or report were declared after the data were seen: they are exploratory (post hoc), shown with unadjusted p and no verdict, and are not part of the family.".into());
    }
    let Decided {
        alpha,
        family_size,
        outcomes,
        looks,
        ..
    } = decided;
    ClaimsOutcome {
        alpha,
        family_size,
        claims: claims
            .iter()
            .zip(outcomes)
            .map(|(c, (overall, cells))| ClaimOutcome {
                claim: c.clone(),
                overall,
                cells,
            })
            .collect(),
        disturbed_left_out: left_out,
        trials: all_ok - left_out,
        include_disturbed: req.include_disturbed,
        looks,
        methods,
        problem: None,
    }
}

fn disturbed_note(include: bool, left_out: usize, all: usize) -> String {
    let rule = format!(
        "Verdicts use one clean attempt per planned trial: a trial is disturbed when other processes used more than {:.0} % of its CPUs' time while it ran (the kernel's own work for the trial does not count), and slowed when its calibrated work ran more than 10 % slower than the run's steady speed; such a trial is run again at the end of its round, so rounds stay paired",
        schedlab_core::records::DISTURBED_PCT
    );
    let kept = if include {
        "; disturbed trials were kept (--include-disturbed)"
    } else {
        ""
    };
    format!("{rule}{kept}. {left_out} of {all} ok trials were left out (contaminated ones, or re-runs not used; --include-disturbed and --include-slowed keep the contaminated ones).")
}

/// `c` without the ok trials in `drop` (their makespans and tasks).
fn without(c: &CellView, drop: &HashSet<i64>) -> CellView {
    if drop.is_empty() {
        return c.clone();
    }
    let keep: Vec<usize> = (0..c.trial_ids.len())
        .filter(|&i| !drop.contains(&c.trial_ids[i]))
        .collect();
    CellView {
        makespans_ns: keep.iter().map(|&i| c.makespans_ns[i]).collect(),
        trial_rounds: keep.iter().map(|&i| c.trial_rounds[i]).collect(),
        trial_ids: keep.iter().map(|&i| c.trial_ids[i]).collect(),
        task_rows: c
            .task_rows
            .iter()
            .filter(|r| !drop.contains(&r.trial_id))
            .cloned()
            .collect(),
        ..c.clone()
    }
}

/// The verdict words a claim's relation gets.
pub(super) fn kind(r: &ClaimRelation) -> ClaimKind {
    match r {
        ClaimRelation::Pair(relation) => relation.kind(),
        ClaimRelation::Trend { .. } => ClaimKind::Trend,
    }
}

/// The relation the analysis tests pair by pair (the spec's own, `schedlab-claim`); None for a
/// trend.
pub(super) fn relation(r: &ClaimRelation) -> Option<Relation> {
    match *r {
        ClaimRelation::Pair(relation) => Some(relation),
        ClaimRelation::Trend { .. } => None,
    }
}

/// How a claim reads over its cells, for the analysis.
pub(super) fn scope(c: &Claim) -> Scope {
    match c.reading {
        ClaimScope::Overall => Scope::Overall,
        ClaimScope::Every => Scope::Every,
    }
}

/// The design of a claim with `cells` cells, for its smallest p.
pub(super) fn design(c: &Claim, cells: usize, pooled: bool) -> ClaimDesign {
    ClaimDesign {
        kind: kind(&c.relation),
        scope: scope(c),
        cells,
        paired: !pooled,
    }
}

/// The trials of every cell and how to test them, up to a look's last round.
#[derive(Clone, Copy)]
pub(super) struct Data<'a> {
    pub values: &'a [CellValues],
    pub pooled: bool,
    pub seed: u64,
    /// The last round a look sees (None: every round).
    pub through: Option<i64>,
}

/// One arm's values and rounds.
pub(super) struct ArmData {
    pub values: Vec<f64>,
    pub rounds: Vec<u64>,
}

impl ArmData {
    pub fn arm(&self, pooled: bool) -> Arm<'_> {
        if pooled {
            Arm::new(&self.values)
        } else {
            Arm::with_rounds(&self.values, &self.rounds)
        }
    }
}

impl Data<'_> {
    fn arm(&self, cell: usize, metric: Metric) -> ArmData {
        let v = self.values[cell][metric.index()]
            .iter()
            .filter(|(r, _)| self.through.is_none_or(|t| *r <= t));
        let (rounds, values) = v.map(|&(r, x)| (r.max(0) as u64, x)).unzip();
        ArmData { values, rounds }
    }

    fn metric(claim: &Claim) -> Result<Metric, Untested> {
        Metric::from_key(&claim.metric).ok_or_else(|| Untested::UnknownMetric(claim.metric.clone()))
    }

    /// A's arm and each B's, or why a side has no cell or no trials here (naming the
    /// treatment and the cell).
    pub fn arms(
        &self,
        claim: &Claim,
        cell: &ClaimCell,
    ) -> Result<(ArmData, Vec<ArmData>), Untested> {
        let metric = Self::metric(claim)?;
        let empty = |t: &schedlab_spec::claims::Treatment| Untested::NoTrials {
            treatment: t.label(),
            cell: cell.label.clone(),
        };
        let mut others = Vec::new();
        for (t, b) in claim.others.iter().zip(&cell.others) {
            let b = b.ok_or_else(|| Untested::NoCell {
                treatment: t.label(),
                cell: cell.label.clone(),
            })?;
            let arm = self.arm(b, metric);
            if arm.values.is_empty() {
                return Err(empty(t));
            }
            others.push(arm);
        }
        let a = self.arm(cell.a, metric);
        if a.values.is_empty() {
            return Err(empty(&claim.a));
        }
        Ok((a, others))
    }

    /// One claim cell's test, effects at `level`.
    pub fn cell_test(
        &self,
        claim: &Claim,
        cell: &ClaimCell,
        level: f64,
    ) -> Result<ClaimTest, Untested> {
        let Some(relation) = relation(&claim.relation) else {
            return self.trend(claim, cell, level);
        };
        let (a, others) = self.arms(claim, cell)?;
        let arms: Vec<Arm> = others.iter().map(|o| o.arm(self.pooled)).collect();
        Ok(test_claim(a.arm(self.pooled), &arms, &relation, level)?)
    }

    fn trend(&self, claim: &Claim, cell: &ClaimCell, level: f64) -> Result<ClaimTest, Untested> {
        let ClaimRelation::Trend { toward, .. } = claim.relation else {
            unreachable!("trend claims only");
        };
        let metric = Self::metric(claim)?;
        let data: Vec<(ArmData, ArmData)> = cell
            .levels
            .iter()
            .filter_map(|(_, a, b)| Some((self.arm(*a, metric), self.arm((*b)?, metric))))
            .collect();
        let levels: Vec<(Arm, Arm)> = data
            .iter()
            .map(|(a, b)| (a.arm(self.pooled), b.arm(self.pooled)))
            .collect();
        Ok(test_trend(&levels, toward, level, self.seed)?)
    }

    /// The claim-level test over `cells` (with their tests `tests`, None where untested);
    /// the effect at `level` when given.
    pub fn claim_test(
        &self,
        claim: &Claim,
        cells: &[ClaimCell],
        tests: &[Option<ClaimTest>],
        level: Option<f64>,
    ) -> ClaimTest {
        let k = kind(&claim.relation);
        let done: Vec<ClaimTest> = tests.iter().flatten().cloned().collect();
        if done.is_empty() {
            return untested(k);
        }
        if cells.len() == 1 {
            return done[0].clone();
        }
        match (relation(&claim.relation), scope(claim)) {
            (None, _) => bonferroni(k, &done, cells.len()),
            (Some(_), Scope::Every) if done.len() < cells.len() => untested(k),
            (Some(_), Scope::Every) => every_of(k, &done),
            (Some(rel), Scope::Overall) => {
                let arms: Vec<(ArmData, Vec<ArmData>)> = cells
                    .iter()
                    .zip(tests)
                    .filter(|(_, t)| t.is_some())
                    .filter_map(|(c, _)| self.arms(claim, c).ok())
                    .collect();
                let strata: Vec<CellArms> = arms
                    .iter()
                    .map(|(a, o)| CellArms {
                        a: a.arm(self.pooled),
                        others: o.iter().map(|x| x.arm(self.pooled)).collect(),
                    })
                    .collect();
                test_claim_over_cells(&strata, &rel, level).unwrap_or_else(|_| untested(k))
            }
        }
    }
}

/// A trend over several contexts: the smallest context p times their number (Bonferroni).
fn bonferroni(kind: ClaimKind, tests: &[ClaimTest], contexts: usize) -> ClaimTest {
    let c = contexts as f64;
    let best = tests
        .iter()
        .min_by(|x, y| x.p_family.total_cmp(&y.p_family))
        .expect("at least one test");
    ClaimTest {
        kind,
        p_support: (c * best.p_support).min(1.0),
        p_against: (c * best.p_against).min(1.0),
        p_family: (c * best.p_family).min(1.0),
        ..best.clone()
    }
}

/// Where the run stands (see [`Progress`]).
pub fn progress(input: &ReportInput, outcome: &ClaimsOutcome) -> Progress {
    let mut undecided = 0;
    let mut open_cells: HashSet<usize> = HashSet::new();
    let mut claimed: HashSet<usize> = HashSet::new();
    for o in &outcome.claims {
        if o.claim.declared != Declared::Before {
            continue;
        }
        use schedlab_analyze::Verdict;
        // A claim found negligible overall is answered: its cells are not judged behind it
        // (no significance gate opened), so they neither wait nor keep the run going.
        let answered = o.overall.verdict == Some(Verdict::Negligible);
        let pending = o
            .cells
            .iter()
            .filter(|x| !answered && x.verdict == Some(Verdict::Inconclusive))
            .count();
        let claim_open = o.overall.verdict == Some(Verdict::Inconclusive);
        let open = claim_open || pending > 0;
        undecided += usize::from(claim_open) + pending;
        for cell in claim_cells(&o.claim, &input.cells) {
            let used = cell
                .levels
                .iter()
                .flat_map(|(_, a, b)| [Some(*a), *b])
                .chain(std::iter::once(Some(cell.a)))
                .chain(cell.others.iter().copied())
                .flatten();
            for i in used {
                claimed.insert(i);
                if open {
                    open_cells.insert(i);
                }
            }
        }
    }
    let mut finished_cells: Vec<usize> = claimed
        .into_iter()
        .filter(|i| !open_cells.contains(i))
        .map(|i| input.cells[i].cell_index as usize)
        .collect();
    finished_cells.sort_unstable();
    Progress {
        undecided,
        finished_cells,
    }
}
