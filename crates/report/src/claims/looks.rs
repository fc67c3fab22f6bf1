//! The family decided over a run's looks: one look at the end of a fixed design, or each
//! planned look of an `--until-decided` run replayed on the rounds it saw (what a look
//! decided is kept); then the outcome of the last look with its intervals, adjusted p,
//! negligible effects, power and heterogeneity.

use super::cells::ClaimCell;
use super::eval::{design, kind, relation, scope, Data};
use super::{CellOutcome, ClaimLevel, LooksTaken};
use crate::error::Untested;
use crate::model::ReportInput;
use schedlab_analyze::ALPHA;
use schedlab_analyze::{
    adjusted, claim_power, decide_claims, earliest, exploratory, interval_levels, look_schedule,
    negligible, untested, ClaimDecision, ClaimDesign, ClaimMember, ClaimTest, Effect, LookSchedule,
    PowerQuery, Verdict,
};
use schedlab_spec::claims::{Claim, Declared};
use std::collections::BTreeSet;

/// What [`decide`] found.
pub(super) struct Decided {
    /// The alpha of the last look (or of the fixed design).
    pub alpha: f64,
    /// Confirmatory claims.
    pub family_size: usize,
    /// Per claim (in order): the claim level and its cells.
    pub outcomes: Vec<(ClaimLevel, Vec<CellOutcome>)>,
    /// `--until-decided`: the looks taken.
    pub looks: Option<LooksTaken>,
    /// The looks' methods sentence.
    pub looks_text: Option<String>,
}

/// The measured rounds after which a claim, and each of its cells, was decided (0: a fixed
/// design's one look), and after which the claim was found negligible (kept once found).
#[derive(Debug, Clone, Default)]
struct DecidedAt {
    claim: Option<usize>,
    cells: Vec<Option<usize>>,
    negligible: Option<usize>,
    /// The claim's effect, and its interval's level, at the look that found it negligible.
    negligible_effect: Option<(Effect, f64)>,
}

/// One look: the rounds it sees (None: all) and its alpha.
#[derive(Debug, Clone, Copy)]
struct Look {
    through: Option<i64>,
    rounds: usize,
    alpha: f64,
}

/// Every claim's cell tests and claim-level test at one look (effects at the levels given).
struct Tested {
    cells: Vec<Vec<Option<ClaimTest>>>,
    why: Vec<Vec<Option<Untested>>>,
    claims: Vec<ClaimTest>,
}

fn test_all(
    claims: &[Claim],
    cells: &[Vec<ClaimCell>],
    data: &Data,
    levels: &dyn Fn(usize) -> (Option<f64>, f64),
) -> Tested {
    let mut t = Tested {
        cells: Vec::new(),
        why: Vec::new(),
        claims: Vec::new(),
    };
    for (k, claim) in claims.iter().enumerate() {
        let (claim_level, cell_level) = levels(k);
        let results: Vec<Result<ClaimTest, Untested>> = cells[k]
            .iter()
            .map(|c| data.cell_test(claim, c, cell_level))
            .collect();
        let tests: Vec<Option<ClaimTest>> =
            results.iter().map(|r| r.as_ref().ok().cloned()).collect();
        t.why.push(results.into_iter().map(|r| r.err()).collect());
        t.claims
            .push(data.claim_test(claim, &cells[k], &tests, claim_level));
        t.cells.push(tests);
    }
    t
}

/// The planned looks of `input`'s run, and its schedule when it is `--until-decided`.
fn looks_of(input: &ReportInput, designs: &[ClaimDesign]) -> (Vec<Look>, Option<LookSchedule>) {
    let fixed = vec![Look {
        through: None,
        rounds: 0,
        alpha: ALPHA,
    }];
    let Some((min, max)) = until_decided(input) else {
        return (fixed, None);
    };
    let rounds: Vec<i64> = input
        .quality
        .iter()
        .map(|q| q.round)
        .collect::<BTreeSet<i64>>()
        .into_iter()
        .collect();
    let schedule = look_schedule(designs, ALPHA, (min, max));
    let looks = schedule
        .looks
        .iter()
        .filter(|l| l.rounds <= rounds.len())
        .map(|l| Look {
            through: Some(rounds[l.rounds - 1]),
            rounds: l.rounds,
            alpha: l.alpha,
        })
        .collect();
    (looks, Some(schedule))
}

/// `(min_trials, max_trials)` of a run whose spec as run says `until_decided = true`.
fn until_decided(input: &ReportInput) -> Option<(usize, usize)> {
    let a = input
        .run
        .spec()
        .ok()?
        .adaptive()
        .filter(|a| a.until_decided)?;
    let min = (a.min_trials as usize).max(2);
    Some((min, (a.max_trials as usize).max(min)))
}

/// The family's members (confirmatory claims) of one look's tests.
fn members<'a>(
    confirmatory: &[usize],
    claims: &[Claim],
    t: &'a Tested,
    untested_cells: &'a [Vec<ClaimTest>],
) -> Vec<ClaimMember<'a>> {
    confirmatory
        .iter()
        .map(|&k| ClaimMember {
            claim: &t.claims[k],
            cells: &untested_cells[k],
            scope: scope(&claims[k]),
        })
        .collect()
}

/// Each claim's cell tests with untested ones as p = 1.
fn filled(claims: &[Claim], t: &Tested) -> Vec<Vec<ClaimTest>> {
    claims
        .iter()
        .zip(&t.cells)
        .map(|(c, cells)| {
            cells
                .iter()
                .map(|x| x.clone().unwrap_or_else(|| untested(kind(&c.relation))))
                .collect()
        })
        .collect()
}

/// The family's confirmatory claims (indices into the claims) and their designs.
struct Family {
    confirmatory: Vec<usize>,
    designs: Vec<ClaimDesign>,
}

/// Replays `looks` (what each decided is kept): the decisions of the last look (None before
/// the first) and the rounds after which each claim and cell was decided (sequential runs).
fn replay(
    family: &Family,
    claims: &[Claim],
    cells: &[Vec<ClaimCell>],
    data: &Data,
    (looks, sequential): (&[Look], bool),
) -> (Option<Vec<ClaimDecision>>, Vec<DecidedAt>) {
    let mut before: Option<Vec<ClaimDecision>> = None;
    let mut decided_at: Vec<DecidedAt> = family
        .confirmatory
        .iter()
        .map(|&k| DecidedAt {
            cells: vec![None; cells[k].len()],
            ..DecidedAt::default()
        })
        .collect();
    let m = family.confirmatory.len();
    for look in looks {
        let d = Data {
            through: look.through,
            ..*data
        };
        // The claim-level effect only where it can make the claim negligible.
        let level = |k: usize| {
            let c = &claims[k];
            let with_effect = c.declared == Declared::Before
                && relation(&c.relation).is_some_and(|r| r.smallest_effect().is_some());
            let (claim, _) =
                interval_levels(look.alpha, m, cells[k].len(), scope(c), kind(&c.relation));
            (with_effect.then_some(claim), 0.95)
        };
        let t = test_all(claims, cells, &d, &level);
        let filled = filled(claims, &t);
        let now = decide_claims(
            &members(&family.confirmatory, claims, &t, &filled),
            look.alpha,
            before.as_deref(),
        );
        for (j, dn) in now.iter().enumerate() {
            let k = family.confirmatory[j];
            let at = &mut decided_at[j];
            if at.negligible.is_none() {
                if let Some(e) = negligible_now(&claims[k], &t.claims[k]) {
                    at.negligible = Some(look.rounds);
                    let c = &claims[k];
                    let (claim_level, _) =
                        interval_levels(look.alpha, m, cells[k].len(), scope(c), kind(&c.relation));
                    at.negligible_effect = Some((e, claim_level));
                }
            }
            if !sequential {
                continue;
            }
            if dn.gate_open() && at.claim.is_none() {
                at.claim = Some(look.rounds);
            }
            for (i, v) in dn.cells.iter().enumerate() {
                if *v != Verdict::Inconclusive && at.cells[i].is_none() {
                    at.cells[i] = Some(look.rounds);
                }
            }
        }
        before = Some(now);
    }
    (before, decided_at)
}

/// The effect of claim `c`'s claim-level test `t` when it shows the claim negligible: its
/// interval (at the look's level) within ± smallest_effect of the boundary. A look that finds
/// it so keeps it so, as for every verdict of `--until-decided` (the union bound over looks
/// covers intervals too), and the report shows that look's interval.
fn negligible_now(c: &Claim, t: &ClaimTest) -> Option<Effect> {
    let rel = relation(&c.relation)?;
    t.pairs
        .iter()
        .max_by(|x, y| x.p_support.total_cmp(&y.p_support))
        .and_then(|p| p.effect)
        .filter(|e| !e.below_level && negligible(&rel, e))
}

/// Makes `overall` negligible when a look found it so before its test decided it (both at
/// once: the test's verdict), with that look's round and interval.
fn negligible_at_look(overall: &mut ClaimLevel, at: &DecidedAt) {
    let first = at
        .negligible
        .is_some_and(|n| at.claim.is_none_or(|c| n < c));
    if !first {
        return;
    }
    overall.verdict = Some(Verdict::Negligible);
    overall.decided_after = at.negligible.filter(|r| *r > 0);
    if let Some((e, level)) = at.negligible_effect {
        // The interval that showed it, at its look's level (the last look's may be wider, or
        // unbounded when the cells left the run once it was decided).
        (overall.effect, overall.interval_level) = (Some(e), level);
    }
}

/// Decides the family over its looks and builds every claim's outcome.
pub(super) fn decide(
    input: &ReportInput,
    claims: &[Claim],
    cells: &[Vec<ClaimCell>],
    data: &Data,
) -> Decided {
    let confirmatory: Vec<usize> = (0..claims.len())
        .filter(|&k| claims[k].declared == Declared::Before)
        .collect();
    let designs: Vec<ClaimDesign> = confirmatory
        .iter()
        .map(|&k| design(&claims[k], cells[k].len(), data.pooled))
        .collect();
    let family = Family {
        confirmatory,
        designs,
    };
    let (looks, schedule) = looks_of(input, &family.designs);
    let (before, decided_at) = replay(&family, claims, cells, data, (&looks, schedule.is_some()));
    let last = looks.last().copied();
    let first_planned = schedule.as_ref().and_then(|s| s.looks.first());
    let alpha = last.map_or_else(|| first_planned.map_or(ALPHA, |l| l.alpha), |l| l.alpha);
    let final_data = Data {
        through: last.and_then(|l| l.through),
        ..*data
    };
    let outcomes = final_outcomes(
        input,
        (&family, claims, cells),
        &final_data,
        (alpha, before, &decided_at),
        schedule.as_ref(),
    );
    let looks_taken = schedule.as_ref().map(|s| LooksTaken {
        taken: looks.len(),
        planned: s.looks.len(),
        alpha,
        rounds: input
            .quality
            .iter()
            .map(|q| q.round)
            .collect::<BTreeSet<i64>>()
            .len(),
    });
    Decided {
        alpha,
        family_size: family.confirmatory.len(),
        outcomes,
        looks: looks_taken,
        looks_text: schedule.map(|s| s.methods_text((!looks.is_empty()).then_some(looks.len()))),
    }
}

/// The last look's tests with their intervals at the verdicts' levels, and every claim's
/// outcome from the decisions (`before`: the last look's; None: nothing decided yet).
fn final_outcomes(
    input: &ReportInput,
    (family, claims, cells): (&Family, &[Claim], &[Vec<ClaimCell>]),
    data: &Data,
    (alpha, before, decided_at): (f64, Option<Vec<ClaimDecision>>, &[DecidedAt]),
    schedule: Option<&LookSchedule>,
) -> Vec<(ClaimLevel, Vec<CellOutcome>)> {
    let m = family.confirmatory.len();
    let levels = |k: usize| -> (Option<f64>, f64) {
        if claims[k].declared != Declared::Before {
            return (Some(0.95), 0.95);
        }
        let (c, cell) = interval_levels(
            alpha,
            m,
            cells[k].len(),
            scope(&claims[k]),
            kind(&claims[k].relation),
        );
        (Some(c), cell)
    };
    let t = test_all(claims, cells, data, &levels);
    let filled_cells = filled(claims, &t);
    let members = members(&family.confirmatory, claims, &t, &filled_cells);
    let decisions = before.unwrap_or_else(|| {
        members
            .iter()
            .map(|mb| ClaimDecision {
                verdict: Verdict::Inconclusive,
                cells: vec![Verdict::Inconclusive; mb.cells.len()],
            })
            .collect()
    });
    let adjusted_p = schedule.is_none().then(|| adjusted(&members));
    let horizon = schedule.map_or(100, |s| s.looks.last().map_or(0, |l| l.rounds));
    let early = earliest(&family.designs, ALPHA, horizon, schedule);
    let ctx = Outcomes {
        claims,
        cells,
        data,
        t: &t,
        alpha,
        m,
        no_power: input.claims.no_power,
    };
    (0..claims.len())
        .map(|k| match family.confirmatory.iter().position(|&c| c == k) {
            Some(j) => ctx.confirmatory(
                k,
                &decisions[j],
                adjusted_p.as_ref().map(|a| &a[j]),
                (&decided_at[j], early[j].claim),
            ),
            None => ctx.post_hoc(k),
        })
        .collect()
}

/// What building the outcomes needs.
struct Outcomes<'a> {
    claims: &'a [Claim],
    cells: &'a [Vec<ClaimCell>],
    data: &'a Data<'a>,
    t: &'a Tested,
    alpha: f64,
    m: usize,
    no_power: bool,
}

impl Outcomes<'_> {
    fn confirmatory(
        &self,
        k: usize,
        d: &ClaimDecision,
        adj: Option<&(f64, Vec<f64>)>,
        (at, earliest_round): (&DecidedAt, Option<usize>),
    ) -> (ClaimLevel, Vec<CellOutcome>) {
        let claim = &self.claims[k];
        let (claim_level, cell_level) = interval_levels(
            self.alpha,
            self.m,
            self.cells[k].len(),
            scope(claim),
            kind(&claim.relation),
        );
        let mut overall = super::outcome::claim_level(claim, &self.t.claims[k], claim_level);
        overall.verdict = Some(d.verdict);
        overall.p_adjusted = adj.map(|a| a.0);
        overall.earliest_round = earliest_round;
        overall.decided_after = at.claim;
        negligible_at_look(&mut overall, at);
        overall.heterogeneity = super::outcome::heterogeneity(claim, &self.t.cells[k]);
        if let (Some(rel), Some(e)) = (relation(&claim.relation), &overall.effect) {
            if negligible(&rel, e) {
                overall.verdict = Some(Verdict::Negligible);
            }
        }
        let mut cells = (0..self.cells[k].len())
            .map(|i| {
                let mut c = super::outcome::cell(
                    &self.cells[k][i],
                    self.t.cells[k][i].as_ref(),
                    self.t.why[k][i].clone(),
                    claim,
                    self.data,
                );
                c.verdict = Some(d.cells[i]);
                c.p_adjusted = adj.map(|a| a.1[i]);
                c.decided_after = at.cells[i];
                if d.gate_open() || self.cells[k].len() == 1 {
                    c.interval_level = c.effect.map(|_| cell_level);
                    if let (Some(rel), Some(e)) = (relation(&claim.relation), &c.effect) {
                        if negligible(&rel, e) {
                            c.verdict = Some(Verdict::Negligible);
                        }
                    }
                }
                let judged_inconclusive = d.gate_open() && c.verdict == Some(Verdict::Inconclusive);
                let alone = self.cells[k].len() == 1 && c.verdict == Some(Verdict::Inconclusive);
                if (judged_inconclusive || alone) && !self.no_power && c.untested.is_none() {
                    let two = if kind(&claim.relation) == schedlab_analyze::ClaimKind::Equivalence {
                        2.0
                    } else {
                        1.0
                    };
                    let alpha = ((1.0 - cell_level) / two).max(f64::MIN_POSITIVE);
                    c.power = self.power(claim, &self.cells[k][i], alpha);
                }
                c
            })
            .collect::<Vec<CellOutcome>>();
        // A claim of one cell is that cell: found negligible, so is the cell.
        if let ([c], Some(Verdict::Negligible)) = (&mut cells[..], overall.verdict) {
            c.verdict = overall.verdict;
            c.decided_after = overall.decided_after;
            c.power = None;
        }
        overall.rounds = cells.iter().map(|c| c.n.0).max().unwrap_or(0);
        (overall, cells)
    }

    fn post_hoc(&self, k: usize) -> (ClaimLevel, Vec<CellOutcome>) {
        let claim = &self.claims[k];
        let mut overall = super::outcome::claim_level(claim, &self.t.claims[k], 0.95);
        overall.heterogeneity = super::outcome::heterogeneity(claim, &self.t.cells[k]);
        let cells = (0..self.cells[k].len())
            .map(|i| {
                let mut c = super::outcome::cell(
                    &self.cells[k][i],
                    self.t.cells[k][i].as_ref(),
                    self.t.why[k][i].clone(),
                    claim,
                    self.data,
                );
                c.exploratory = self.t.cells[k][i].as_ref().map(|t| exploratory(t, ALPHA));
                c.interval_level = c.effect.map(|_| 0.95);
                c
            })
            .collect();
        (overall, cells)
    }

    fn power(
        &self,
        claim: &Claim,
        cell: &ClaimCell,
        alpha: f64,
    ) -> Option<schedlab_analyze::Power> {
        let rel = relation(&claim.relation)?;
        let (a, others) = self.data.arms(claim, cell).ok()?;
        let arms: Vec<schedlab_analyze::Arm> =
            others.iter().map(|o| o.arm(self.data.pooled)).collect();
        claim_power(
            a.arm(self.data.pooled),
            &arms,
            &rel,
            &PowerQuery::new(alpha, self.data.seed),
        )
        .ok()
        .flatten()
    }
}
