//! Declared claims decided from a run's stored trials: the typed [`ClaimsOutcome`] every
//! output renders first (terminal, HTML, Markdown, LaTeX, `csv/claims.csv`; the renderers are in
//! `crate::render::claims`).
//!
//! - Claims come from the run's spec as run (`[[claims]]`, `run --claim`): confirmatory.
//!   Claims given to `stats`/`report --claim` were declared after the data were seen: they are
//!   labelled exploratory (post hoc), tested alone with unadjusted p, and get no verdict word.
//! - Units: one value per trial (per-task metrics: the median of the trial's tasks), trials
//!   flagged `disturbed` left out unless `--include-disturbed` (and how many is said); rounds
//!   pair A's and B's trials (Wilcoxon signed-rank on per-round differences) in a run of one
//!   machine, Mann-Whitney otherwise (`schedlab_analyze::claims`).
//! - The family: every confirmatory claim in every claim cell (`cells.rs`), decided together
//!   by Holm at alpha = 0.05, or at the last look's alpha of an `--until-decided` run.
//! - Every inconclusive verdict states the trials that 80 % power at `smallest_effect` needs,
//!   for the test actually run, at alpha / m (`schedlab_analyze::claim_power`).

mod cells;
mod eval;

use crate::model::ReportInput;
use schedlab_analyze::{Effect, Exploratory, Power, Verdict};
use schedlab_spec::claims::{check_claims, check_post_hoc, Claim, ClaimSpec};
use schedlab_spec::Spec;
use serde::Serialize;

/// The family's alpha when the run did not spend it over looks.
pub const CLAIMS_ALPHA: f64 = 0.05;

/// What the caller asks of the claims.
#[derive(Debug, Clone, Default)]
pub struct ClaimsRequest {
    /// Claims declared after the data (`stats --claim`): exploratory.
    pub post_hoc: Vec<ClaimSpec>,
    /// Keep trials flagged disturbed.
    pub include_disturbed: bool,
    /// Keep trials flagged slowed.
    pub include_slowed: bool,
    /// The family's alpha (an `--until-decided` look's); None: from the run's settings.
    pub alpha: Option<f64>,
    /// Skip power and trials needed (the adaptive judge looks after every round).
    pub no_power: bool,
}

/// One claim in one claim cell, decided.
#[derive(Debug, Clone, Serialize)]
pub struct CellOutcome {
    /// The other axes' values, e.g. "cpu:pi, 10 tasks".
    pub label: String,
    /// The verdict (confirmatory claims only).
    pub verdict: Option<Verdict>,
    /// The exploratory reading (post-hoc claims only).
    pub exploratory: Option<Exploratory>,
    /// Family p-value before adjustment.
    pub p: f64,
    /// Holm-adjusted over the family (confirmatory claims only).
    pub p_adjusted: Option<f64>,
    /// The effect of A against the B that binds (the largest p for the claim), with its CI.
    pub effect: Option<Effect>,
    /// A trend's concordance (-1..1: 1, the ratio always closer to its target further along).
    pub concordance: Option<f64>,
    /// Trials of A and of the binding B used (rounds when paired; pairs for a trend).
    pub n: (usize, usize),
    /// The test and how its p-value was obtained.
    pub test: String,
    /// Power and trials needed, for an inconclusive verdict.
    pub power: Option<Power>,
    /// Why the cell could not be tested, if so.
    pub untested: Option<String>,
}

/// One claim over its cells.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimOutcome {
    /// The claim as checked.
    pub claim: Claim,
    /// Its cells, in cell order (`render::claims::table::summary_line` sums them up).
    pub cells: Vec<CellOutcome>,
}

/// Every claim of a report, decided.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimsOutcome {
    /// The alpha verdicts were decided at.
    pub alpha: f64,
    /// Confirmatory claim cells adjusted together.
    pub family_size: usize,
    /// The claims, confirmatory first, in declaration order.
    pub claims: Vec<ClaimOutcome>,
    /// Ok trials left out as disturbed.
    pub disturbed_left_out: usize,
    /// Ok trials that could be used.
    pub trials: usize,
    /// Disturbed trials were kept (`--include-disturbed`).
    pub include_disturbed: bool,
    /// How the verdicts were reached, as sentences.
    pub methods: Vec<String>,
    /// A stored spec whose claims could not be read (a schedlab too old or too new).
    pub problem: Option<String>,
}

/// The run's declared claims (its spec as run) and `request`'s post-hoc ones, checked.
/// Err: a post-hoc claim that does not fit the run (a usage error).
pub fn claims_of(spec_toml: &str, request: &ClaimsRequest) -> Result<Vec<Claim>, String> {
    let Ok(spec) = Spec::read_as_run(spec_toml) else {
        return Ok(Vec::new());
    };
    let mut claims = check_claims(&spec).unwrap_or_default();
    claims.extend(check_post_hoc(&spec, &request.post_hoc).map_err(|p| p.to_string())?);
    Ok(claims)
}

/// The claims of `input`'s run decided from its stored trials; None when it has none.
pub fn build(input: &ReportInput) -> Option<ClaimsOutcome> {
    let claims = claims_of(&input.run.spec_toml, &input.claims).ok()?;
    if claims.is_empty() {
        return None;
    }
    Some(eval::evaluate(input, &claims))
}

/// The verdicts of every confirmatory claim cell (for `--until-decided`).
pub fn verdicts(outcome: &ClaimsOutcome) -> Vec<Verdict> {
    outcome
        .claims
        .iter()
        .flat_map(|c| c.cells.iter().filter_map(|cell| cell.verdict))
        .collect()
}
