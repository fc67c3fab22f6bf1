//! `csv/claims.csv`: one row per claim cell, every number at full precision.

use crate::claims::{CellOutcome, ClaimOutcome, ClaimsOutcome};
use anyhow::Result;
use schedlab_analyze::TrialsNeeded;

const HEADER: [&str; 24] = [
    "claim",
    "text",
    "metric",
    "a",
    "relation",
    "others",
    "declared",
    "where",
    "verdict",
    "exploratory",
    "p",
    "p_adjusted",
    "effect_scale",
    "effect",
    "ci_lo",
    "ci_hi",
    "ci_level",
    "ci_coverage",
    "n_a",
    "n_b",
    "test",
    "power",
    "trials_needed",
    "untested",
];

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v}"))
}

fn row(c: &ClaimOutcome, cell: &CellOutcome) -> Vec<String> {
    let e = cell.effect.as_ref();
    let power = cell.power.as_ref();
    vec![
        c.claim.name.clone(),
        c.claim.text.clone(),
        c.claim.metric.clone(),
        c.claim.a.label(),
        c.claim.relation.symbol(),
        c.claim
            .others
            .iter()
            .map(|t| t.label())
            .collect::<Vec<_>>()
            .join("; "),
        format!("{:?}", c.claim.declared).to_lowercase(),
        cell.label.clone(),
        cell.verdict.map_or_else(String::new, |v| v.word().into()),
        cell.exploratory
            .map_or_else(String::new, |x| x.label.into()),
        num(Some(cell.p)),
        num(cell.p_adjusted),
        e.map_or_else(String::new, |e| format!("{:?}", e.scale).to_lowercase()),
        num(e.map(|e| e.estimate)),
        num(e.map(|e| e.lo)),
        num(e.map(|e| e.hi)),
        num(e.map(|e| e.level)),
        num(e.map(|e| e.coverage)),
        cell.n.0.to_string(),
        cell.n.1.to_string(),
        cell.test.clone(),
        num(power.and_then(|p| p.power)),
        match power.and_then(|p| p.trials_needed) {
            Some(TrialsNeeded::PerSide(n)) => n.to_string(),
            Some(TrialsNeeded::MoreThan(n)) => format!(">{n}"),
            Some(TrialsNeeded::Enough) => "enough".into(),
            None => String::new(),
        },
        cell.untested.clone().unwrap_or_default(),
    ]
}

/// The CSV document.
pub fn document(o: &ClaimsOutcome) -> Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for c in &o.claims {
        for cell in &c.cells {
            w.write_record(row(c, cell))?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
