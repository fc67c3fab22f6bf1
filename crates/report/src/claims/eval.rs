//! The claims' tests on stored trials: per claim cell the arms (one value per undisturbed
//! trial, with its round), the test, the family decided together by Holm, and power with
//! trials needed for the inconclusive ones.

use super::cells::{claim_cells, ClaimCell};
use super::{CellOutcome, ClaimOutcome, ClaimsOutcome, CLAIMS_ALPHA};
use crate::model::{par_map, trial_values, Metric, ReportInput};
use schedlab_analyze::{
    claim_power, claims_methods_text, decide_family, exploratory, power_alpha, test_claim,
    test_trend, untested, Amount, Arm, ClaimKind, ClaimTest, PowerQuery, Relation, UntilDecided,
    Verdict,
};
use schedlab_spec::claims::{Claim, ClaimAmount, ClaimRelation, Declared};
use schedlab_store::query::{CellView, RunInfo};
use std::collections::HashSet;

/// One cell's trials of every metric: (round, value) per kept ok trial.
type CellValues = Vec<Vec<(i64, f64)>>;

/// A claim cell tested: the test the family adjusts (untested: p = 1) and what it rests on.
struct Tested {
    claim: usize,
    cell: ClaimCell,
    test: ClaimTest,
    untested: Option<String>,
}

/// Decides `claims` on `input`'s stored trials (see the module doc of `claims`).
pub(super) fn evaluate(input: &ReportInput, claims: &[Claim]) -> ClaimsOutcome {
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
    let (alpha, look) = alpha_of(input);
    let data = Data {
        values: &values,
        pooled,
        level: 1.0 - alpha,
        seed: input.run.seed,
    };
    let tested = test_all(claims, &input.cells, &data);
    let (outcomes, m) = decide(&tested, claims, alpha, &data, req.no_power);
    let claims_out: Vec<ClaimOutcome> = claims
        .iter()
        .zip(outcomes)
        .map(|(c, cells)| ClaimOutcome {
            claim: c.clone(),
            cells,
        })
        .collect();
    let mut methods = vec![claims_methods_text(alpha, m)];
    methods.extend(look.map(|(rule, k)| rule.methods_text(k)));
    methods.push(disturbed_note(req.include_disturbed, left_out, all_ok));
    if claims.iter().any(|c| c.declared == Declared::PostHoc) {
        methods.push("Claims given with `--claim` to stats or report were declared after the data were seen: they are exploratory (post hoc), shown with unadjusted p and no verdict, and are not part of the family.".into());
    }
    ClaimsOutcome {
        alpha,
        family_size: m,
        claims: claims_out,
        disturbed_left_out: left_out,
        trials: all_ok - left_out,
        include_disturbed: req.include_disturbed,
        methods,
        problem: None,
    }
}

/// Every claim in every claim cell, tested (untested where it cannot be: p = 1).
fn test_all(claims: &[Claim], cells: &[CellView], data: &Data) -> Vec<Tested> {
    let mut tested: Vec<Tested> = Vec::new();
    for (k, claim) in claims.iter().enumerate() {
        for cell in claim_cells(claim, cells) {
            let (test, why) = match data.test(claim, &cell) {
                Ok(t) => (t, None),
                Err(why) => (untested(kind(&claim.relation)), Some(why)),
            };
            tested.push(Tested {
                claim: k,
                cell,
                test,
                untested: why,
            });
        }
    }
    tested
}

/// The confirmatory cells decided together at `alpha` (Holm), power for the inconclusive
/// ones, the post-hoc ones read as exploratory: per claim its cells, and the family's size.
fn decide(
    tested: &[Tested],
    claims: &[Claim],
    alpha: f64,
    data: &Data,
    no_power: bool,
) -> (Vec<Vec<CellOutcome>>, usize) {
    let confirmatory: Vec<usize> = (0..tested.len())
        .filter(|&i| claims[tested[i].claim].declared == Declared::Before)
        .collect();
    let tests: Vec<ClaimTest> = confirmatory
        .iter()
        .map(|&i| tested[i].test.clone())
        .collect();
    let decided = decide_family(&tests, alpha);
    let m = tests.len();
    let mut outcomes: Vec<Vec<CellOutcome>> = vec![Vec::new(); claims.len()];
    for (i, t) in tested.iter().enumerate() {
        let fv = confirmatory
            .iter()
            .position(|&c| c == i)
            .map(|j| decided[j]);
        let mut out = cell_outcome(t, &claims[t.claim], data);
        out.verdict = fv.map(|f| f.verdict);
        out.p_adjusted = fv.map(|f| f.p_adjusted);
        if fv.is_none() {
            out.exploratory = Some(exploratory(&t.test, CLAIMS_ALPHA));
        }
        if out.verdict == Some(Verdict::Inconclusive) && !no_power && t.untested.is_none() {
            out.power = data.power(&claims[t.claim], &t.cell, power_alpha(alpha, m));
        }
        outcomes[t.claim].push(out);
    }
    (outcomes, m)
}

fn disturbed_note(include: bool, left_out: usize, all: usize) -> String {
    let rule = format!(
        "A trial is disturbed when work outside it used more than {:.0} % of its CPUs' time while it ran (busy time of those CPUs minus its own tasks and harness)",
        schedlab_core::records::DISTURBED_PCT
    );
    if include {
        format!("{rule}; disturbed trials were kept (--include-disturbed).")
    } else {
        format!("{rule}; verdicts use undisturbed trials only: {left_out} of {all} ok trials were left out (--include-disturbed keeps them).")
    }
}

/// The family's alpha, and for an `--until-decided` run its rule and last look.
fn alpha_of(input: &ReportInput) -> (f64, Option<(UntilDecided, usize)>) {
    if let Some(a) = input.claims.alpha {
        return (a, None);
    }
    let Some((min, max)) = until_decided(&input.run) else {
        return (CLAIMS_ALPHA, None);
    };
    let rounds: HashSet<i64> = input.quality.iter().map(|q| q.round).collect();
    let rule = UntilDecided {
        min_trials: min,
        max_trials: max,
        alpha: CLAIMS_ALPHA,
    };
    let look = rule.look(rounds.len()).unwrap_or(1);
    (rule.alpha_at(look), Some((rule, look)))
}

/// `(min_trials, max_trials)` of a run whose spec as run says `until_decided = true`.
pub(super) fn until_decided(run: &RunInfo) -> Option<(usize, usize)> {
    let a = run.spec().ok()?.adaptive().filter(|a| a.until_decided)?;
    let min = (a.min_trials as usize).max(2);
    Some((min, (a.max_trials as usize).max(min)))
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

fn kind(r: &ClaimRelation) -> ClaimKind {
    match r {
        ClaimRelation::Equal { .. } => ClaimKind::Equivalence,
        ClaimRelation::Trend { .. } => ClaimKind::Trend,
        _ => ClaimKind::Direction,
    }
}

/// The analysis relation of a claim (None for a trend).
pub(super) fn relation(r: &ClaimRelation) -> Option<Relation> {
    let amount = |a: ClaimAmount| match a {
        ClaimAmount::Relative(v) => Amount::Relative(v),
        ClaimAmount::Absolute(v) => Amount::Absolute(v),
    };
    Some(match *r {
        ClaimRelation::Lower { smallest_effect } => Relation::Lower {
            smallest_effect: smallest_effect.map(amount),
        },
        ClaimRelation::Higher { smallest_effect } => Relation::Higher {
            smallest_effect: smallest_effect.map(amount),
        },
        ClaimRelation::RatioAtLeast {
            ratio,
            smallest_effect,
        } => Relation::RatioAtLeast {
            ratio,
            smallest_effect: smallest_effect.map(amount),
        },
        ClaimRelation::RatioAtMost {
            ratio,
            smallest_effect,
        } => Relation::RatioAtMost {
            ratio,
            smallest_effect: smallest_effect.map(amount),
        },
        ClaimRelation::Equal { margin } => Relation::Equal {
            margin: amount(margin),
        },
        ClaimRelation::Trend { .. } => return None,
    })
}

/// The trials of every cell and how to test them.
struct Data<'a> {
    values: &'a [CellValues],
    pooled: bool,
    level: f64,
    seed: u64,
}

/// One arm's values and rounds.
struct ArmData {
    values: Vec<f64>,
    rounds: Vec<u64>,
}

impl ArmData {
    fn arm(&self, pooled: bool) -> Arm<'_> {
        if pooled {
            Arm::new(&self.values)
        } else {
            Arm::with_rounds(&self.values, &self.rounds)
        }
    }
}

impl Data<'_> {
    fn arm(&self, cell: usize, metric: Metric) -> ArmData {
        let v = &self.values[cell][metric.index()];
        ArmData {
            values: v.iter().map(|&(_, x)| x).collect(),
            rounds: v.iter().map(|&(r, _)| r.max(0) as u64).collect(),
        }
    }

    fn metric(claim: &Claim) -> Result<Metric, String> {
        Metric::from_key(&claim.metric)
            .ok_or_else(|| format!("'{}' is not a metric of this report", claim.metric))
    }

    /// A's arm and each B's, or why a side has no cell or no trials here.
    fn arms(&self, claim: &Claim, cell: &ClaimCell) -> Result<(ArmData, Vec<ArmData>), String> {
        let metric = Self::metric(claim)?;
        let empty = |t: &schedlab_spec::claims::Treatment| {
            format!(
                "no usable trial of {} here (disturbed ones are left out)",
                t.label()
            )
        };
        let mut others = Vec::new();
        for (t, b) in claim.others.iter().zip(&cell.others) {
            let b = b.ok_or_else(|| format!("no cell of {} here", t.label()))?;
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

    fn test(&self, claim: &Claim, cell: &ClaimCell) -> Result<ClaimTest, String> {
        let Some(relation) = relation(&claim.relation) else {
            return self.trend(claim, cell);
        };
        let (a, others) = self.arms(claim, cell)?;
        let arms: Vec<Arm> = others.iter().map(|o| o.arm(self.pooled)).collect();
        test_claim(a.arm(self.pooled), &arms, &relation, self.level).map_err(|e| e.to_string())
    }

    fn trend(&self, claim: &Claim, cell: &ClaimCell) -> Result<ClaimTest, String> {
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
        test_trend(&levels, toward, self.level, self.seed).map_err(|e| e.to_string())
    }

    fn power(
        &self,
        claim: &Claim,
        cell: &ClaimCell,
        alpha: f64,
    ) -> Option<schedlab_analyze::Power> {
        let relation = relation(&claim.relation)?;
        let (a, others) = self.arms(claim, cell).ok()?;
        let arms: Vec<Arm> = others.iter().map(|o| o.arm(self.pooled)).collect();
        claim_power(
            a.arm(self.pooled),
            &arms,
            &relation,
            &PowerQuery::new(alpha, self.seed),
        )
        .ok()
        .flatten()
    }
}

/// A tested cell's numbers; verdict, adjusted p and power are filled in by the caller.
fn cell_outcome(t: &Tested, claim: &Claim, data: &Data) -> CellOutcome {
    let binding = t
        .test
        .pairs
        .iter()
        .max_by(|x, y| x.p_support.total_cmp(&y.p_support));
    let (n, test, effect, concordance) = match (&t.test.trend, binding) {
        (Some(tr), _) => (
            (tr.levels.iter().map(|l| l.pairs).sum(), tr.levels.len()),
            format!(
                "Jonckheere-Terpstra on distances to {} ({})",
                tr.toward,
                tr.method.label()
            ),
            None,
            Some(tr.concordance),
        ),
        (None, Some(p)) => ((p.n_a, p.n_b), p.to_string(), p.effect, None),
        (None, None) => {
            let (a, b) = data.arms(claim, &t.cell).map_or((0, 0), |(a, o)| {
                (
                    a.values.len(),
                    o.iter().map(|x| x.values.len()).min().unwrap_or(0),
                )
            });
            ((a, b), "not tested".into(), None, None)
        }
    };
    CellOutcome {
        label: t.cell.label.clone(),
        verdict: None,
        exploratory: None,
        p: t.test.p_family,
        p_adjusted: None,
        effect,
        concordance,
        n,
        test,
        power: None,
        untested: t.untested.clone(),
    }
}
