//! Output of results: terminal tables and progress (one file per output format).

pub mod plots;
pub mod progress;
pub mod terminal;
