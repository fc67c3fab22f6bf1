//! `csv/claims.csv`: one row per claim (`level` = claim) and one per claim cell (`level` =
//! cell), every number at full precision. An interval is given only where it is shown: a
//! cell of an undecided claim has its estimate alone.

use crate::claims::{CellOutcome, ClaimOutcome, ClaimsOutcome};
use crate::error::RenderError;

type Result<T, E = RenderError> = std::result::Result<T, E>;
use schedlab_analyze::TrialsNeeded;

const HEADER: [&str; 27] = [
    "claim",
    "level",
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
    "rounds_dropped",
    "decided_after_rounds",
];

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v}"))
}

fn row(c: &ClaimOutcome, cell: &CellOutcome) -> Vec<String> {
    let shown = cell.interval_level.is_some();
    let mut r = common(c, "cell", &cell.label, cell.verdict.map(|v| v.word()));
    r.extend([
        cell.exploratory
            .map_or_else(String::new, |x| x.label.into()),
        num(Some(cell.p)),
        num(cell.p_adjusted),
    ]);
    r.extend(effect_cells(cell.effect.as_ref(), shown));
    r.extend([
        cell.n.0.to_string(),
        cell.n.1.to_string(),
        cell.test.clone(),
    ]);
    let power = cell.power.as_ref();
    r.extend([
        num(power.and_then(|p| p.power)),
        match power.and_then(|p| p.trials_needed) {
            Some(TrialsNeeded::PerSide(n)) => n.to_string(),
            Some(TrialsNeeded::MoreThan(n)) => format!(">{n}"),
            Some(TrialsNeeded::Enough) => "enough".into(),
            None => String::new(),
        },
        cell.untested.clone().unwrap_or_default(),
        cell.rounds_dropped.to_string(),
        cell.decided_after
            .map_or_else(String::new, |n| n.to_string()),
    ]);
    r
}

fn claim_row(c: &ClaimOutcome) -> Vec<String> {
    let o = &c.overall;
    let mut r = common(c, "claim", &o.reading, o.verdict.map(|v| v.word()));
    r.extend([
        if c.claim.declared == schedlab_spec::claims::Declared::PostHoc {
            "exploratory".into()
        } else {
            String::new()
        },
        num(Some(o.p)),
        num(o.p_adjusted),
    ]);
    r.extend(effect_cells(o.effect.as_ref(), true));
    r.extend([o.n.0.to_string(), o.n.1.to_string(), o.test.clone()]);
    r.extend([
        String::new(),
        String::new(),
        String::new(),
        o.rounds_dropped.to_string(),
        o.decided_after.map_or_else(String::new, |n| n.to_string()),
    ]);
    r
}

fn common(c: &ClaimOutcome, level: &str, place: &str, verdict: Option<&str>) -> Vec<String> {
    vec![
        c.claim.name.clone(),
        level.into(),
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
        place.into(),
        verdict.unwrap_or_default().into(),
    ]
}

fn effect_cells(e: Option<&schedlab_analyze::Effect>, shown: bool) -> Vec<String> {
    let ci = |v: f64| if shown { num(Some(v)) } else { String::new() };
    vec![
        e.map_or_else(String::new, |e| format!("{:?}", e.scale).to_lowercase()),
        num(e.map(|e| e.estimate)),
        e.map_or_else(String::new, |e| ci(e.lo)),
        e.map_or_else(String::new, |e| ci(e.hi)),
        e.map_or_else(String::new, |e| ci(e.level)),
        e.map_or_else(String::new, |e| ci(e.coverage)),
    ]
}

/// The CSV document.
pub fn document(o: &ClaimsOutcome) -> Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for c in &o.claims {
        w.write_record(claim_row(c))?;
        for cell in &c.cells {
            w.write_record(row(c, cell))?;
        }
    }
    Ok(String::from_utf8(
        w.into_inner().map_err(|e| e.into_error())?,
    )?)
}
