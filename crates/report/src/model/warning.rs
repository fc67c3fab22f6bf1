//! The warnings a report makes about a run and the notes of its methods section, as values
//! (`render::notes` words each, for every output), with the stored warnings and the claims'
//! methods beside them.

use super::Metric;
use schedlab_analyze::{AnytimeStoppingRule, PValueMethod};
use schedlab_core::records::{RunStatus, TrialStatus};
use schedlab_spec::SpecError;
use schedlab_store::query::Tally;
use std::sync::Arc;

/// A cell as warnings name it: its policy in its group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CellName {
    /// The cell's policy (treatment label).
    pub policy: String,
    /// Its group's label.
    pub group: String,
}

/// How many trials were run again and which are left out of summaries and verdicts, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// Contaminated trials run again at the end of their rounds.
    pub retried: usize,
    /// Ok trials left out, in all.
    pub left_out: usize,
    /// Left out as disturbed (other processes above 10% of their CPUs' time).
    pub disturbed: usize,
    /// Left out as slowed (calibrated work over 10% slower than the run's steady speed).
    pub slowed: usize,
    /// Attempts not used (another attempt at the same trial is).
    pub superseded: usize,
}

/// One warning of the report: what the report found itself, or one stored with the run.
#[derive(Debug, Clone)]
pub enum Warning {
    /// The run did not end as done: the report covers the trials stored.
    RunNotDone {
        /// The run's status.
        status: RunStatus,
        /// Trials stored.
        stored: i64,
        /// Trials planned.
        planned: i64,
    },
    /// The spec as run does not read (written by another version): the defaults it costs.
    SpecUnreadable(Arc<SpecError>),
    /// The claims declared in the spec as run do not check against it (written by another
    /// version): none of them is judged.
    ClaimsUnchecked(schedlab_spec::Problem),
    /// A cell's trials that are not ok, counted by status.
    NotOk {
        /// The cell.
        cell: CellName,
        /// Trials not ok.
        not_ok: i64,
        /// Trials stored.
        total: i64,
        /// (status, count) of the trials not ok.
        statuses: Vec<(Tally, i64)>,
        /// The cell's reason, if stored.
        reason: Option<String>,
    },
    /// A cell with one ok trial: no spread, no CI.
    OneOkTrial(CellName),
    /// A group without a cell of the `--baseline` asked for.
    NoBaselineCell {
        /// The group's label.
        group: String,
        /// The baseline asked for.
        baseline: String,
    },
    /// A group whose baseline cell has no ok trial.
    BaselineWithoutOk {
        /// The group's label.
        group: String,
        /// The baseline policy.
        baseline: String,
    },
    /// A trial that timed out or failed.
    Problem {
        /// The trial's index in its cell.
        trial_index: i64,
        /// Its cell.
        cell: CellName,
        /// Its stored status.
        status: TrialStatus,
        /// Why, if stored.
        reason: Option<String>,
    },
    /// More timed-out or failed trials than are listed one by one.
    MoreProblems(usize),
    /// Trials flagged noisy and kept.
    Noisy {
        /// Trials flagged noisy.
        noisy: usize,
        /// Trials with a reference speed.
        measured: usize,
    },
    /// Trials run again or left out.
    LeftOut(LeftOut),
    /// Trials cut short by RT throttling.
    Throttled(usize),
    /// Cells of an adaptive run short of its precision.
    ShortOfPrecision {
        /// The cells.
        cells: Vec<CellName>,
        /// The precision asked for, as a fraction of the median.
        precision: f64,
        /// The adaptive run's key metric.
        metric: Metric,
    },
    /// A warning stored with the run (its sentence as stored).
    Stored(String),
}

/// One note of the methods section.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum MethodNote {
    /// What the summaries are, with the level of their CIs (0..1).
    Summaries {
        /// The CIs' level.
        ci_level: f64,
    },
    /// Per-trial and per-task metrics, units, derived metrics.
    Metrics,
    /// Tests run on the trial, the unit of replication.
    TrialUnit,
    /// What the exploratory comparisons are, against which baseline, at which level.
    Exploratory {
        /// The intervals' level (0..1).
        ci_level: f64,
        /// The baseline named with `--baseline`; `None`: the first policy of the axis.
        baseline: Option<String>,
    },
    /// How Mann-Whitney p-values are computed, and how many comparisons used each way.
    PValues(Vec<(PValueMethod, usize)>),
    /// Why Mann-Whitney on trials rather than a stratified permutation test.
    WhyMannWhitney,
    /// What too few trials mean, and no power for exploratory comparisons.
    TooFewTrials,
    /// The pairwise table and the tests of all policies of a group.
    Pairwise,
    /// Whether warm-up trials were included.
    Warmup {
        /// Included (`--include-warmup`).
        included: bool,
    },
    /// The reference loop before and after every trial, and noisy trials.
    Noise,
    /// Interference, in-trial speed and re-runs.
    Interference,
    /// Noisy trials left out (`--exclude-noisy`): how many.
    NoisyLeftOut(usize),
    /// An adaptive run's trial count and the rule it stopped on.
    Adaptive {
        /// The key metric.
        metric: Metric,
        /// Rounds before the first look.
        min_trials: u32,
        /// The stopping rule.
        rule: AnytimeStoppingRule,
    },
    /// A note of the declared claims (worded by the claims' evaluation).
    Claims(String),
}
