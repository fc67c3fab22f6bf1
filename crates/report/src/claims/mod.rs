//! Declared claims decided from a run's stored trials: the typed [`ClaimsOutcome`] every
//! output renders first (terminal, HTML, Markdown, LaTeX, `csv/claims.csv`, `stats --format
//! json`; the renderers are in `crate::render::claims`).
//!
//! - Claims come from the run's spec as run (`[[claims]]`, `run --claim`): confirmatory.
//!   Claims given to `stats`/`report --claim` were declared after the data were seen: they are
//!   labelled exploratory (post hoc), tested alone with unadjusted p, and get no verdict word.
//! - Units: one value per trial (per-task metrics: the median of the trial's tasks), trials
//!   flagged `disturbed` left out unless `--include-disturbed` (and how many is said); rounds
//!   pair A's and B's trials (Wilcoxon signed-rank on per-round differences) in a run of one
//!   machine, Mann-Whitney otherwise (`schedlab_analyze::claims`).
//! - The family: one member per confirmatory claim, decided by its claim-level test (one
//!   stratified test over its cells, or every cell; `schedlab_analyze::claim_level`) under
//!   Holm at alpha = 0.05, and a decided claim's cells judged behind it
//!   (`schedlab_analyze::gatekeeping`). An `--until-decided` run replays its looks
//!   (`schedlab_analyze::LookSchedule`) and keeps what each look decided.
//! - Intervals are shown at the level of the verdict beside them (1 - alpha / m for a claim,
//!   that over the first within-claim divisor for a cell; twice the alpha for an equality),
//!   and a cell's interval only once its claim is decided: no interval excludes the boundary
//!   beside "inconclusive".
//! - An inconclusive cell states the trials that 80 % power at `smallest_effect` needs, for
//!   the test actually run, at its level (`schedlab_analyze::claim_power`); an inconclusive
//!   claim, the round from which it can be decided at all.

mod cells;
pub mod design;
pub mod eval;
mod looks;
mod outcome;

use schedlab_analyze::{Effect, Exploratory, Power, Verdict};
use schedlab_spec::claims::{check_claims, check_post_hoc, Claim, ClaimSpec};
use schedlab_spec::Problem;
use schedlab_store::query::RunInfo;
use serde::Serialize;

/// What the caller asks of the claims.
#[derive(Debug, Clone, Default)]
pub struct ClaimsRequest {
    /// Claims declared after the data (`stats --claim`): exploratory.
    pub post_hoc: Vec<ClaimSpec>,
    /// Keep trials flagged disturbed.
    pub include_disturbed: bool,
    /// Keep trials flagged slowed.
    pub include_slowed: bool,
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
    /// Adjusted over the family's procedure (confirmatory claims of a fixed design only).
    pub p_adjusted: Option<f64>,
    /// The effect of A against the B that binds (the largest p for the claim). Its interval
    /// is at `interval_level`; None where the claim is not decided (`lo`/`hi` unused).
    pub effect: Option<Effect>,
    /// The level of the effect's interval; None when no interval is shown (the cell's claim
    /// is not decided, so the cell was not judged).
    pub interval_level: Option<f64>,
    /// A trend's change of the ratio per level step (> 1: rising), paired runs.
    pub step_factor: Option<f64>,
    /// Trials (rounds when paired) of A and of the binding B used; a trend: rounds, levels.
    pub n: (usize, usize),
    /// Rounds left out because a side was missing or unbalanced there.
    pub rounds_dropped: usize,
    /// The test and how its p-value was obtained.
    pub test: String,
    /// Power and trials needed, for an inconclusive verdict of a judged cell.
    pub power: Option<Power>,
    /// Why the cell could not be tested, if so.
    pub untested: Option<String>,
    /// The measured rounds after which its verdict was reached (`--until-decided`).
    pub decided_after: Option<usize>,
}

/// A claim over all its cells: the family member.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimLevel {
    /// Overall (stratified), every cell, or one cell.
    pub reading: String,
    /// The verdict (confirmatory claims only).
    pub verdict: Option<Verdict>,
    /// Its p before adjustment (post hoc: unadjusted, exploratory).
    pub p: f64,
    /// Adjusted over the family's procedure (fixed designs).
    pub p_adjusted: Option<f64>,
    /// The effect over its cells, interval at `interval_level`.
    pub effect: Option<Effect>,
    /// The level of the interval.
    pub interval_level: f64,
    /// Trials (rounds when paired) of A and B used over its cells.
    pub n: (usize, usize),
    /// The most rounds any of its cells has.
    pub rounds: usize,
    /// Rounds left out over its cells.
    pub rounds_dropped: usize,
    /// The test.
    pub test: String,
    /// Where its cells disagree (large heterogeneity only).
    pub heterogeneity: Option<Heterogeneity>,
    /// The earliest round it could be decided at, in this design (None: not within its
    /// rounds).
    pub earliest_round: Option<usize>,
    /// The measured rounds after which its verdict was reached (`--until-decided`).
    pub decided_after: Option<usize>,
}

/// Where a claim's cells disagree by much: the range of their ratio effects and how many lie
/// on the other side of the claim's boundary (rendered by `render::claims::table`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Heterogeneity {
    /// The smallest cell effect, a ratio.
    pub lo: f64,
    /// The largest cell effect, a ratio.
    pub hi: f64,
    /// Cells on the other side of the boundary than the most.
    pub minority: usize,
    /// Cells with a ratio effect.
    pub cells: usize,
    /// The claim's boundary, a ratio (1 for lower, higher and equal).
    pub boundary: f64,
}

/// One claim: the claim-level verdict and its cells.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimOutcome {
    /// The claim as checked.
    pub claim: Claim,
    /// The claim over its cells.
    pub overall: ClaimLevel,
    /// Its cells, in cell order (`render::claims::table::summary_line` sums them up).
    pub cells: Vec<CellOutcome>,
}

/// How an `--until-decided` run's looks went.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LooksTaken {
    /// Looks taken (the last one's verdicts and intervals are shown).
    pub taken: usize,
    /// Looks planned up to max_trials.
    pub planned: usize,
    /// The last look's alpha.
    pub alpha: f64,
    /// Measured rounds the run has.
    pub rounds: usize,
}

/// Every claim of a report, decided.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimsOutcome {
    /// The alpha the family was decided at (the last look's, `--until-decided`).
    pub alpha: f64,
    /// Confirmatory claims decided together (the family's members).
    pub family_size: usize,
    /// The claims, confirmatory first, in declaration order.
    pub claims: Vec<ClaimOutcome>,
    /// Ok trials left out as disturbed.
    pub disturbed_left_out: usize,
    /// Ok trials that could be used.
    pub trials: usize,
    /// Disturbed trials were kept (`--include-disturbed`).
    pub include_disturbed: bool,
    /// `--until-decided`: the looks.
    pub looks: Option<LooksTaken>,
    /// How the verdicts were reached, as sentences.
    pub methods: Vec<String>,
    /// A stored spec whose claims could not be read (a schedlab too old or too new).
    pub problem: Option<String>,
}

/// The run's declared claims (its spec as run) and `request`'s post-hoc ones, checked.
/// Err: a post-hoc claim that does not fit the run, or that cannot be checked because the
/// run's spec as run does not read or its declared claims do not check against it (usage
/// errors). Such a run has no declared claims; its report's warnings say why
/// (`notes::spec_warning`, [`declared_problem`]).
pub fn claims_of(run: &RunInfo, request: &ClaimsRequest) -> Result<Vec<Claim>, ClaimsOfError> {
    let spec = match run.spec_read() {
        Ok(spec) => spec,
        Err(why) if !request.post_hoc.is_empty() => {
            return Err(ClaimsOfError::SpecUnread {
                run_id: run.run_id,
                why,
            })
        }
        Err(_) => return Ok(Vec::new()),
    };
    let mut claims = match check_claims(spec) {
        Ok(claims) => claims,
        Err(why) if !request.post_hoc.is_empty() => {
            return Err(ClaimsOfError::DeclaredUnchecked {
                run_id: run.run_id,
                why,
            })
        }
        Err(_) => Vec::new(),
    };
    claims.extend(check_post_hoc(spec, &request.post_hoc).map_err(ClaimsOfError::PostHoc)?);
    Ok(claims)
}

/// Why `--claim` cannot be checked against a run.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsOfError {
    /// The run's spec as run does not read.
    #[error("--claim cannot be checked against run {run_id}: {why}")]
    SpecUnread {
        /// The run.
        run_id: i64,
        /// Why its spec does not read.
        why: std::sync::Arc<schedlab_spec::SpecError>,
    },
    /// The claims declared with the run do not check against its spec as run (written by
    /// another version).
    #[error("--claim cannot be checked against run {run_id}: {}", DeclaredProblem(.why))]
    DeclaredUnchecked {
        /// The run.
        run_id: i64,
        /// The first declared claim's mistake.
        why: Problem,
    },
    /// The claim does not fit the run.
    #[error("{0}")]
    PostHoc(Problem),
}

/// Why the claims declared with a run whose spec as run reads do not check against it (a
/// spec written by another version); None when they check, or the spec does not read (that
/// is `notes::spec_warning`'s).
pub fn declared_problem(run: &RunInfo) -> Option<Problem> {
    check_claims(run.spec().ok()?).err()
}

/// The sentence of a [`declared_problem`]: what, why and what to do.
#[derive(Debug, Clone, Copy)]
pub struct DeclaredProblem<'a>(pub &'a Problem);

impl std::fmt::Display for DeclaredProblem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the claims stored with the run do not check against its spec as run in schedlab {}: {}; it was probably written by another version: `schedlab show` prints it as stored, and that version of schedlab judges its claims",
            env!("CARGO_PKG_VERSION"),
            self.0
        )
    }
}

/// Where an `--until-decided` run stands: claims and claim cells still inconclusive, and
/// the cells (run cell indices) no undecided claim needs any more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    /// Confirmatory claims and claim cells still inconclusive.
    pub undecided: usize,
    /// Cells whose every claim is decided with all its cells.
    pub finished_cells: Vec<usize>,
}

/// The verdicts of every confirmatory claim and claim cell.
pub fn verdicts(outcome: &ClaimsOutcome) -> Vec<Verdict> {
    outcome
        .claims
        .iter()
        .flat_map(|c| {
            c.overall
                .verdict
                .into_iter()
                .chain(c.cells.iter().filter_map(|cell| cell.verdict))
        })
        .collect()
}
