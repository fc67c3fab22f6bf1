//! The claims' outcome ([`crate::claims::ClaimsOutcome`]) in every output: the table's
//! text cells every renderer shares, then terminal, HTML, Markdown, LaTeX and CSV.

pub mod csv;
pub mod html;
pub mod json;
pub mod latex;
pub mod markdown;
pub mod table;
pub mod terminal;
