//! What a run showed and its outputs: [`model`] computes the report from stored rows (the
//! analysis: summaries, tests, exploratory comparisons, claims in [`claims`], comparisons, figures' data),
//! [`render`] only formats it (terminal, HTML, LaTeX, Markdown, CSV, plots); [`cmd`] and
//! [`pool`] read the store and connect the two for `report`, `stats` and `compare`.

#![forbid(unsafe_code)]

pub use error::ReportError;

pub mod claims;
pub mod cmd;
pub mod error;
pub mod model;
pub mod pool;
pub mod render;
