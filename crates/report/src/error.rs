//! The errors of the report stage's entry points (`report`, `stats`, `compare` and what they
//! load): [`ReportError`] says whether the user chose what cannot be reported (a flag to fix,
//! [`ReportError::is_bad_input`]), the store failed or refused, or the output could not be
//! written.

use schedlab_store::StoreError;
use std::path::PathBuf;

/// Why a report, `stats` or `compare` could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading the runs failed, or the store refused the `--db` or a run id.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A choice of runs or options the user fixes with a flag: an unknown `--baseline`, runs
    /// of different experiments in one report, a spec hash no run has, two runs whose work
    /// differs without `--allow-different-work`. The message names the flag.
    #[error("{0}")]
    BadSelection(String),
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
    /// An output could not be rendered (a template or a table).
    #[error("cannot render the report: {0}")]
    Render(String),
}

impl ReportError {
    /// Whether the user asked for what cannot be (exit 2): a bad selection, or a `--db` or
    /// run id the store refused.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ReportError::BadSelection(_) | ReportError::OutDir { .. } => true,
            ReportError::Store(e) => e.is_bad_input(),
            ReportError::Write { .. } | ReportError::Render(_) => false,
        }
    }
}
