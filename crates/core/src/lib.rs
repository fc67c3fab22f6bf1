//! The shared vocabulary of schedlab, which every stage may use and which uses no stage:
//! the records between stages ([`records`]), scheduling policies ([`policy`]), what a task
//! does ([`workload`]), the measured quantities ([`metric`]) and adaptive trial counts
//! ([`precision`]).

#![forbid(unsafe_code)]

pub use error::CoreError;

pub mod error;
pub mod metric;
pub mod policy;
pub mod precision;
pub mod records;
pub mod workload;
