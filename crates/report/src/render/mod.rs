//! The renderers: each turns the computed report ([`crate::model`]) into one output format
//! and only formats (no statistic, no decision is computed here): terminal tables (`stats`,
//! `compare`, the table after a run), HTML, LaTeX, Markdown, CSV, the claims in each of
//! them, and the plots (SVG, PNG).

pub mod claims;
pub mod compare;
pub mod csv_tables;
pub mod exploratory;
pub mod fmt;
pub mod html;
pub mod latex;
pub mod markdown;
pub mod notes;
pub mod plots;
pub mod quality;
pub mod sections;
pub mod stats;
pub mod tables;
pub mod terminal;
pub mod text_table;
