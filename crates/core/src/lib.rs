//! The shared vocabulary of schedlab, which every stage may use and which uses no stage:
//! the records between stages ([`records`]), scheduling policies ([`policy`]), what a task
//! does ([`workload`]), the measured quantities ([`metric`]), adaptive trial counts
//! ([`precision`]), the warnings stored with a run ([`warning`]) and the printable filter
//! and check of text from outside ([`text`]).

#![forbid(unsafe_code)]

pub use error::CoreError;
pub use warning::Warning;

pub mod error;
pub mod metric;
pub mod policy;
pub mod precision;
pub mod records;
pub mod text;
pub mod warning;
pub mod workload;
