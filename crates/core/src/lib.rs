//! The shared vocabulary of schedlab, which every stage may use and which uses no stage:
//! the records between stages ([`records`]), scheduling policies ([`policy`]) and what a task
//! does ([`workload`]).

#![forbid(unsafe_code)]

pub use error::CoreError;

pub mod error;
pub mod policy;
pub mod records;
pub mod workload;
