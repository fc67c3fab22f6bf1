//! The claims table (claim, where, verdict, effect [CI], adjusted p, n per side, test) and
//! the one-line summary of each claim, as text cells every renderer shares.

use crate::claims::{CellOutcome, ClaimOutcome, ClaimsOutcome};
pub use crate::model::fmt_effect;
use crate::model::tables::Table;
use crate::model::{fmt_num, fmt_p, Metric};
use schedlab_analyze::{Power, TrialsNeeded, Verdict};
use schedlab_spec::claims::{Claim, Declared};

pub use schedlab_core::records::DISTURBED_PCT;

/// The table's columns.
pub const HEADER: [&str; 7] = [
    "claim",
    "where",
    "verdict",
    "effect [CI]",
    "adj. p",
    "n A/B",
    "test",
];

/// The verdict cell: the word, with the trials 80 % power needs when inconclusive; post-hoc
/// claims read "exploratory, p = ...".
pub fn verdict_text(c: &CellOutcome) -> String {
    if let (None, Some(why)) = (c.verdict, &c.untested) {
        return format!("exploratory: not tested ({why})");
    }
    if let Some(e) = &c.exploratory {
        let lean = match e.leaning {
            schedlab_analyze::Leaning::Support => "leans for",
            schedlab_analyze::Leaning::Against => "leans against",
        };
        return format!(
            "exploratory: {lean}, p (unadjusted) = {}",
            fmt_p(e.p_unadjusted)
        );
    }
    let Some(v) = c.verdict else {
        return "-".into();
    };
    match (v, &c.untested, &c.power) {
        (Verdict::Inconclusive, Some(why), _) => format!("inconclusive (not tested: {why})"),
        (Verdict::Inconclusive, None, Some(p)) => format!("inconclusive ({})", need(p)),
        _ => v.word().into(),
    }
}

/// What more trials would take, in a few words.
pub fn need(p: &Power) -> String {
    match p.trials_needed {
        Some(TrialsNeeded::PerSide(n)) => format!("80% power needs {n} trials per side"),
        Some(TrialsNeeded::MoreThan(n)) => format!("80% power needs more than {n} trials per side"),
        Some(TrialsNeeded::Enough) => {
            "power already 80%: the effect is likely smaller than smallest_effect".into()
        }
        None if !p.possible => format!(
            "{} vs {} trials cannot reach p <= {:.2e}",
            p.n_a, p.n_b, p.alpha
        ),
        None => match p.detectable {
            Some(d) => format!(
                "no smallest_effect; 80% power at an effect of {}",
                fmt_num(d)
            ),
            None => "no smallest_effect declared".into(),
        },
    }
}

/// One row per claim cell.
pub fn claims_table(o: &ClaimsOutcome) -> Table {
    let mut rows = Vec::new();
    for c in &o.claims {
        let metric = Metric::from_key(&c.claim.metric);
        for cell in &c.cells {
            let effect = match (&cell.effect, cell.concordance) {
                (Some(e), _) => fmt_effect(e, metric),
                (None, Some(k)) => format!("concordance {k:.2}"),
                _ => "-".into(),
            };
            rows.push(vec![
                c.claim.name.clone(),
                cell.label.clone(),
                verdict_text(cell),
                effect,
                cell.p_adjusted.map_or_else(|| "-".into(), fmt_p),
                format!("{}/{}", cell.n.0, cell.n.1),
                cell.test.clone(),
            ]);
        }
    }
    Table {
        title: format!(
            "Claims: {} declared claim cells decided together (Holm, alpha {})",
            o.family_size,
            fmt_alpha(o.alpha)
        ),
        header: HEADER.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn fmt_alpha(a: f64) -> String {
    if a >= 0.01 {
        format!("{a}")
    } else {
        format!("{a:.2e}")
    }
}

/// "fifo-turnaround (turnaround: fifo < other): supported in 3 of 3 cells".
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
        // A `--claim` is named by its own text.
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
    let mut parts: Vec<String> = Vec::new();
    for v in [
        Verdict::Supported,
        Verdict::Contradicted,
        Verdict::Equivalent,
        Verdict::NotEquivalent,
        Verdict::Inconclusive,
    ] {
        let k = cells.iter().filter(|c| c.verdict == Some(v)).count();
        if k > 0 {
            parts.push(format!("{} in {k}", v.word()));
        }
    }
    let mut line = format!(
        "{head}: {} of {n} cell{}",
        parts.join(", "),
        if n == 1 { "" } else { "s" }
    );
    if let Some(most) = most_needed(cells) {
        line += &format!("; inconclusive cells: {most}");
    }
    line
}

fn others(claim: &Claim) -> String {
    claim
        .others
        .iter()
        .map(|t| t.label())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The largest need among the inconclusive cells, in words.
fn most_needed(cells: &[CellOutcome]) -> Option<String> {
    let powers: Vec<&Power> = cells
        .iter()
        .filter(|c| c.verdict == Some(Verdict::Inconclusive))
        .filter_map(|c| c.power.as_ref())
        .collect();
    let rank = |p: &Power| match p.trials_needed {
        Some(TrialsNeeded::MoreThan(n)) => n + 1,
        Some(TrialsNeeded::PerSide(n)) => n,
        _ => 0,
    };
    powers.into_iter().max_by_key(|p| rank(p)).map(need)
}
