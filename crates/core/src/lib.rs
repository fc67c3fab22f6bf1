//! The shared vocabulary of schedlab, which every stage may use and which uses no stage:
//! the records between stages ([`records`]), scheduling policies ([`policy`]) and what a task
//! does ([`workload`]), and the warnings stored with a run ([`warning`]).

#![forbid(unsafe_code)]

pub use error::CoreError;
pub use warning::Warning;

pub mod error;
pub mod policy;
pub mod records;
pub mod warning;
pub mod workload;
