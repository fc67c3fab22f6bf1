//! The errors of the report stage: of its entry points (`report`, `stats`, `compare` and
//! what they load), [`ReportError`] says whether the user chose what cannot be reported (a
//! flag to fix, [`ReportError::is_bad_input`]), the store failed or refused, or the output
//! could not be written; why a claim cell went untested ([`Untested`]); why a plot could not
//! be drawn or converted ([`PlotError`]).

use schedlab_store::StoreError;
use std::path::PathBuf;

/// Why a report, `stats` or `compare` could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading the runs failed, or the store refused the `--db` or a run id.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Two runs whose work differs, compared without `--allow-different-work`: the runs and
    /// the cells whose units differ (the message names each and the flag).
    #[error("{}", crate::render::compare::refusal(.0))]
    DifferentWork(Box<crate::model::compare::DifferentWork>),
    /// A report file or directory could not be written.
    #[error("cannot write {}: {source}; check permissions or pass --out DIR", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output directory (or one on its way) is refused: someone else could plant links
    /// in it.
    #[error("{source}; give --out a directory only you can write (it is created if missing)")]
    OutDir {
        /// The refusal, with the directory and why.
        source: std::io::Error,
    },
    /// `--spec-hash` names no run of the store.
    #[error("--spec-hash {hash}: no run of {location} has a spec hash starting with it; `schedlab runs` shows them")]
    NoRunOfSpec {
        /// The hash prefix asked for.
        hash: String,
        /// The store.
        location: String,
    },
    /// `--runs` of different experiments in one report.
    #[error("--runs: runs {a} and {b} are different experiments (spec hashes {hash_a} and {hash_b}); a report compares runs of one spec, `schedlab compare A B` any two runs")]
    DifferentSpecs {
        /// The first run.
        a: i64,
        /// A run of another spec.
        b: i64,
        /// The first run's spec hash, 8 digits.
        hash_a: String,
        /// The other's, 8 digits.
        hash_b: String,
    },
    /// A `--baseline` that is none of the run's policies.
    #[error("--baseline {baseline}: run {run_id} has no cell with policy '{baseline}'; pick one of its policies (accepted: {})", accepted_or_none(.accepted))]
    UnknownBaseline {
        /// The policy asked for.
        baseline: String,
        /// The run.
        run_id: i64,
        /// The run's policies.
        accepted: Vec<String>,
    },
    /// A claim given with `--claim` that does not fit the run, or a run whose spec as run
    /// does not read to check it against.
    #[error("{0}")]
    Claims(crate::claims::ClaimsOfError),
    /// An output could not be rendered (a template or a table).
    #[error("cannot render the report: {0}")]
    Render(#[from] RenderError),
}

/// Why an output could not be rendered: a schedlab bug (the templates and tables are fixed).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The HTML template did not parse or render.
    #[error("{what} (a schedlab bug): {source}")]
    Template {
        /// What failed: parsing or rendering the template.
        what: &'static str,
        /// minijinja's error.
        source: minijinja::Error,
    },
    /// A CSV record could not be written.
    #[error(transparent)]
    Csv(#[from] csv::Error),
    /// The CSV writer could not be flushed.
    #[error(transparent)]
    Flush(#[from] std::io::Error),
    /// A CSV document is not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::string::FromUtf8Error),
    /// The JSON document could not be written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The accepted baselines as the message lists them.
fn accepted_or_none(accepted: &[String]) -> String {
    if accepted.is_empty() {
        "none: the run has no cells".to_string()
    } else {
        accepted.join(", ")
    }
}

/// Why one claim cell could not be tested: the reason its row shows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Untested {
    /// The claim's metric is not one of the report's.
    #[error("'{0}' is not a metric of this report")]
    UnknownMetric(String),
    /// The run has no cell of a treatment here.
    #[error("the run has no cell of {treatment} in {cell}")]
    NoCell {
        /// The treatment's label.
        treatment: String,
        /// The claim cell's label.
        cell: String,
    },
    /// A treatment has no usable trial here.
    #[error("no usable trial of {treatment} in {cell} (disturbed ones are left out)")]
    NoTrials {
        /// The treatment's label.
        treatment: String,
        /// The claim cell's label.
        cell: String,
    },
    /// The test refused its input.
    #[error(transparent)]
    Test(#[from] schedlab_analyze::ClaimError),
}

/// Why a plot could not be drawn or converted to PNG.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// plotters could not draw on the SVG canvas.
    #[error("{0}")]
    Draw(Box<dyn std::error::Error + Send + Sync>),
    /// A PNG scale that is not a finite positive number.
    #[error("invalid PNG scale {0}")]
    Scale(f32),
    /// The SVG does not parse.
    #[error("cannot parse SVG: {0}")]
    Svg(#[from] resvg::usvg::Error),
    /// The PNG would be larger than the limit on a side.
    #[error("PNG would be {width}x{height} px, more than {max} px on a side")]
    TooLarge {
        /// Width, px.
        width: f32,
        /// Height, px.
        height: f32,
        /// The limit, px.
        max: f32,
    },
    /// The image could not be allocated.
    #[error("cannot allocate a {width}x{height} px image")]
    Allocate {
        /// Width, px.
        width: f32,
        /// Height, px.
        height: f32,
    },
    /// The PNG encoder failed.
    #[error("cannot encode PNG: {0}")]
    Encode(#[from] png::EncodingError),
}

impl ReportError {
    /// Whether the user asked for what cannot be (exit 2): a bad selection, or a `--db` or
    /// run id the store refused.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ReportError::DifferentWork(_)
            | ReportError::NoRunOfSpec { .. }
            | ReportError::DifferentSpecs { .. }
            | ReportError::UnknownBaseline { .. }
            | ReportError::Claims(_)
            | ReportError::OutDir { .. } => true,
            ReportError::Store(e) => e.is_bad_input(),
            ReportError::Write { .. } | ReportError::Render(_) => false,
        }
    }
}
