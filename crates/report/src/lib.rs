//! Output of results: terminal tables and progress (one file per output format).

#![forbid(unsafe_code)]

pub use error::ReportError;

pub mod claims;
pub mod cmd;
pub mod compare;
pub mod csv_tables;
pub mod error;
pub mod html;
pub mod latex;
pub mod markdown;
pub mod model;
pub mod plots;
pub mod pool;
pub mod terminal;
