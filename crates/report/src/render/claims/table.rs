//! The claims table (claim, where, verdict, effect [CI], p, rounds: narrow enough for a
//! 1280 px screen, long reasons as numbered notes under it) and the one-line summary of
//! each claim, as text cells every renderer shares.

use crate::claims::{CellOutcome, ClaimOutcome, ClaimsOutcome, Heterogeneity};
use crate::model::Metric;
pub use crate::render::fmt::fmt_effect;
use crate::render::fmt::{fmt_num, fmt_p};
use crate::render::text_table::Table;
use schedlab_analyze::{Effect, EffectScale, Power, TrialsNeeded, Verdict};
use schedlab_spec::claims::{Claim, Declared};

pub use schedlab_core::records::DISTURBED_PCT;

/// The table's columns.
pub const HEADER: [&str; 6] = [
    "claim",
    "where",
    "verdict",
    "effect [CI]",
    "p (adj.)",
    "rounds",
];

/// The table and the notes its cells refer to ("[1] ...").
pub struct ClaimsTable {
    /// The table.
    pub table: Table,
    /// Numbered notes, in order.
    pub notes: Vec<String>,
}

/// Numbered notes collected while the rows are written.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn add(&mut self, text: String) -> String {
        if let Some(i) = self.0.iter().position(|n| *n == text) {
            return format!("[{}]", i + 1);
        }
        self.0.push(text);
        format!("[{}]", self.0.len())
    }
}

/// What more trials would take, in a few words (None: nothing to say).
pub fn need(p: &Power) -> Option<String> {
    match p.trials_needed {
        Some(TrialsNeeded::PerSide(n)) => {
            Some(format!("80% power at smallest_effect needs {n} rounds"))
        }
        Some(TrialsNeeded::MoreThan(n)) => Some(format!(
            "80% power at smallest_effect needs more than {n} rounds"
        )),
        Some(TrialsNeeded::Enough) => None,
        None if !p.possible => Some(format!(
            "{} rounds cannot reach p <= {:.2e} at all",
            p.n_a, p.alpha
        )),
        None => p.detectable.map(|d| {
            format!(
                "no smallest_effect declared; 80% power at an effect of {}",
                fmt_num(d)
            )
        }),
    }
}

/// An effect's estimate alone (its interval is not shown where the cell was not judged).
fn estimate(e: &Effect, metric: Option<Metric>) -> String {
    match e.scale {
        EffectScale::Ratio => format!("{}x", crate::render::fmt::fmt_ratio_bare(e.estimate)),
        EffectScale::Difference => format!(
            "{} {}",
            fmt_num(e.estimate),
            metric.map_or("", Metric::unit)
        )
        .trim_end()
        .to_string(),
    }
}

fn claim_verdict(c: &ClaimOutcome, notes: &mut Notes) -> String {
    let o = &c.overall;
    if c.claim.declared == Declared::PostHoc {
        return format!("exploratory, p (unadjusted) {}", fmt_p(o.p));
    }
    match o.verdict {
        Some(Verdict::Inconclusive) => {
            let why = match o.earliest_round {
                Some(n) if o.n.0 > 0 && n > o.rounds => format!(
                    "{} can be decided from round {n} at the earliest",
                    c.claim.name
                ),
                _ if o.n.0 == 0 => format!("{}: no cell could be tested", c.claim.name),
                _ => format!(
                    "{}: the effect is too small or too noisy for these rounds",
                    c.claim.name
                ),
            };
            format!("inconclusive {}", notes.add(why))
        }
        Some(v) => v.word().into(),
        None => "-".into(),
    }
}

fn cell_verdict(c: &ClaimOutcome, cell: &CellOutcome, notes: &mut Notes) -> String {
    if let Some(e) = &cell.exploratory {
        let lean = match e.leaning {
            schedlab_analyze::Leaning::Support => "leans for",
            schedlab_analyze::Leaning::Against => "leans against",
        };
        return format!("exploratory: {lean}, p {}", fmt_p(e.p_unadjusted));
    }
    if let Some(why) = &cell.untested {
        return format!("not tested {}", notes.add(why.clone()));
    }
    let Some(v) = cell.verdict else {
        return "-".into();
    };
    let judged = cell.interval_level.is_some() || c.cells.len() == 1;
    match v {
        Verdict::Inconclusive if !judged && c.overall.verdict == Some(Verdict::Negligible) => {
            "not judged (claim negligible)".into()
        }
        Verdict::Inconclusive if !judged => "inconclusive (claim undecided)".into(),
        Verdict::Inconclusive => match cell.power.as_ref().and_then(need) {
            Some(n) => format!("inconclusive {}", notes.add(n)),
            None => "inconclusive".into(),
        },
        v => v.word().into(),
    }
}

fn effect_text(
    e: Option<&Effect>,
    shown: bool,
    metric: Option<Metric>,
    step: Option<f64>,
) -> String {
    match (e, step) {
        (Some(e), _) if shown => fmt_effect(e, metric),
        (Some(e), _) => estimate(e, metric),
        (None, Some(f)) => format!("x{} per level step", fmt_num(f)),
        (None, None) => "-".into(),
    }
}

fn p_text(p: f64, adj: Option<f64>) -> String {
    match adj {
        Some(a) => format!("{} ({})", fmt_p(p), fmt_p(a)),
        None => fmt_p(p),
    }
}

/// "8", "68 over its cells (2 dropped), decided at 5": rounds used (`what` says over what).
fn rounds_text((n, what): (usize, &str), dropped: usize, decided_after: Option<usize>) -> String {
    let mut s = format!("{n} {what}").trim_end().to_string();
    if dropped > 0 {
        s += &format!(" ({dropped} dropped)");
    }
    if let Some(r) = decided_after {
        s += &format!(", decided at {r}");
    }
    s
}

/// One row for a claim over several cells, then one per cell; a claim with one cell, one row.
pub fn claims_table(o: &ClaimsOutcome) -> ClaimsTable {
    let mut notes = Notes::default();
    let mut rows = Vec::new();
    for c in &o.claims {
        let metric = Metric::from_key(&c.claim.metric);
        let single = c.cells.len() == 1;
        if !single {
            let v = &c.overall;
            rows.push(vec![
                c.claim.name.clone(),
                format!("{} ({} cells)", v.reading, c.cells.len()),
                claim_verdict(c, &mut notes),
                effect_text(v.effect.as_ref(), true, metric, None),
                p_text(v.p, v.p_adjusted),
                rounds_text((v.n.0, "over its cells"), v.rounds_dropped, v.decided_after),
            ]);
        }
        for cell in &c.cells {
            let verdict = if single
                && cell.verdict == Some(Verdict::Inconclusive)
                && cell.untested.is_none()
                && cell.power.is_none()
            {
                claim_verdict(c, &mut notes)
            } else {
                cell_verdict(c, cell, &mut notes)
            };
            let shown = cell.interval_level.is_some() || single;
            rows.push(vec![
                if single {
                    c.claim.name.clone()
                } else {
                    String::new()
                },
                if single {
                    cell.label.clone()
                } else {
                    format!("  {}", cell.label)
                },
                verdict,
                effect_text(cell.effect.as_ref(), shown, metric, cell.step_factor),
                p_text(cell.p, cell.p_adjusted),
                rounds_text((cell.n.0, ""), cell.rounds_dropped, cell.decided_after),
            ]);
        }
    }
    ClaimsTable {
        table: Table {
            title: match o.looks {
                Some(l) => format!(
                    "Claims: {} declared claims decided together over {} looks of --until-decided (Holm, alpha 0.05 spent over the looks; the last look's {}; each claim's cells behind it)",
                    o.family_size,
                    l.taken,
                    fmt_alpha(o.alpha)
                ),
                None => format!(
                    "Claims: {} declared claims decided together (Holm at alpha {}, each claim's cells behind it)",
                    o.family_size,
                    fmt_alpha(o.alpha)
                ),
            },
            header: HEADER.iter().map(|h| h.to_string()).collect(),
            rows,
        },
        notes: notes.0,
    }
}

fn fmt_alpha(a: f64) -> String {
    if a >= 0.01 {
        format!("{a}")
    } else {
        format!("{a:.2e}")
    }
}

/// "fifo-turnaround (turnaround: fifo < other): supported overall; in its 4 cells:
/// supported in 3, inconclusive in 1".
pub fn summary_line(outcome: &ClaimOutcome) -> String {
    let (claim, cells) = (&outcome.claim, &outcome.cells);
    let stated = format!(
        "{}: {} {} {}",
        claim.metric,
        claim.a.label(),
        claim.relation.symbol(),
        others(claim)
    );
    let head = if claim.name == claim.text {
        claim.name.clone()
    } else {
        format!("{} ({stated})", claim.name)
    };
    if cells.is_empty() {
        return format!("{head}: no cell of the run matches it");
    }
    let n = cells.len();
    if claim.declared == Declared::PostHoc {
        let leaning = cells
            .iter()
            .filter(|c| {
                c.exploratory.is_some_and(|e| {
                    e.below_alpha && e.leaning == schedlab_analyze::Leaning::Support
                })
            })
            .count();
        return format!("{head}: exploratory (declared after the data): for the claim at unadjusted p <= 0.05 in {leaning} of {n} cells");
    }
    let word = outcome.overall.verdict.map_or("-", Verdict::word);
    let undecided = outcome.overall.verdict == Some(Verdict::Inconclusive);
    let why = if undecided {
        why_undecided(outcome)
    } else {
        String::new()
    };
    if n == 1 {
        return format!("{head}: {word} ({}){why}", cells[0].label);
    }
    let mut parts: Vec<String> = Vec::new();
    for v in [
        Verdict::Supported,
        Verdict::Contradicted,
        Verdict::Equivalent,
        Verdict::NotEquivalent,
        Verdict::Negligible,
        Verdict::Inconclusive,
    ] {
        let k = cells.iter().filter(|c| c.verdict == Some(v)).count();
        if k > 0 {
            parts.push(format!("{} in {k}", v.word()));
        }
    }
    let mut line = format!(
        "{head}: {word} {}; its {n} cells: {}",
        outcome.overall.reading,
        parts.join(", ")
    );
    if undecided {
        line += &format!(" (cells are judged once the claim is decided){why}");
    }
    if let Some(h) = &outcome.overall.heterogeneity {
        line += &format!("; {}", heterogeneity(h));
    }
    line
}

/// Where a claim's cells disagree, in words: "cells disagree: effects from 0.8x to 1.3x; 2
/// of 6 on the other side of 1x".
pub fn heterogeneity(h: &Heterogeneity) -> String {
    format!(
        "cells disagree: effects from {}x to {}x; {} of {} on the other side of {}x",
        fmt_num(h.lo),
        fmt_num(h.hi),
        h.minority,
        h.cells,
        h.boundary
    )
}

/// Why an undecided claim is so, as "; ..." (empty when nothing useful can be said): the
/// round from which its design can decide it, or the rounds 80 % power needs.
fn why_undecided(o: &ClaimOutcome) -> String {
    if o.cells.iter().all(|c| c.untested.is_some()) {
        return "; not tested (see the notes under the table)".into();
    }
    if let Some(n) = o.overall.earliest_round.filter(|n| *n > o.overall.rounds) {
        return format!("; these rounds cannot decide it: it can be decided from round {n}");
    }
    let rank = |p: &Power| match p.trials_needed {
        Some(TrialsNeeded::MoreThan(n)) => n + 1,
        Some(TrialsNeeded::PerSide(n)) => n,
        _ => 0,
    };
    o.cells
        .iter()
        .filter_map(|c| c.power.as_ref())
        .max_by_key(|p| rank(p))
        .and_then(need)
        .map_or_else(String::new, |n| format!("; {n}"))
}

fn others(claim: &Claim) -> String {
    claim
        .others
        .iter()
        .map(|t| t.label())
        .collect::<Vec<_>>()
        .join(", ")
}
