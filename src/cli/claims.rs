//! The command line's claims: `run --claim` and `--until-decided` (declared before the data,
//! stored with the run), and `stats`/`report --claim` (after the data: exploratory) with
//! `--include-disturbed`.

use clap::Args;
use schedlab_spec::claims::parse_claim_flag;
use schedlab_spec::{ClaimSpec, Spec, SpecError};

/// Claim flags of `schedlab run`.
#[derive(Debug, Args, Default)]
pub struct RunClaimArgs {
    /// A claim to decide, e.g. 'turnaround: fifo < other', 'ivcsw: other > fifo, rr' or
    /// 'makespan: fifo = rr within 10%'; repeatable. Stored with the run, with the spec's
    /// [[claims]]: confirmatory.
    #[arg(long = "claim", value_name = "CLAIM")]
    pub claims: Vec<String>,
    /// Add whole rounds until every claim has a verdict other than inconclusive (alpha spent
    /// over the looks), or --max-trials / --max-time is reached.
    #[arg(long)]
    pub until_decided: bool,
}

impl RunClaimArgs {
    /// `spec` with these claims and the stopping rule added.
    pub fn apply(&self, spec: &mut Spec) -> Result<(), SpecError> {
        for c in &self.claims {
            spec.claims.push(parse_claim_flag(c)?);
        }
        spec.settings.until_decided |= self.until_decided;
        Ok(())
    }
}

/// Claim flags of `schedlab stats` and `report`.
#[derive(Debug, Args, Default)]
pub struct ReportClaimArgs {
    /// A claim to test on the stored trials, e.g. 'turnaround: fifo < other'; repeatable.
    /// Declared after the data: shown as exploratory (unadjusted p, no verdict).
    #[arg(long = "claim", value_name = "CLAIM")]
    pub claims: Vec<String>,
    /// Summaries and verdicts keep the trials flagged disturbed (other processes above 10% of
    /// their CPUs' time) and not their re-runs; by default they are left out and counted.
    #[arg(long)]
    pub include_disturbed: bool,
    /// Summaries and verdicts keep the trials flagged slowed (calibrated work over 10% slower
    /// than the run's steady in-trial speed) and not their re-runs; by default they are left
    /// out and counted.
    #[arg(long)]
    pub include_slowed: bool,
}

impl ReportClaimArgs {
    /// The post-hoc claims, read; Err: the first malformed one.
    pub fn post_hoc(&self) -> Result<Vec<ClaimSpec>, SpecError> {
        self.claims
            .iter()
            .map(|c| parse_claim_flag(c).map_err(SpecError::from))
            .collect()
    }
}
