//! schedlab: a laboratory for Linux CPU scheduling — run policy experiments, measure every task, store every number.
//!
//! Unsafe code is denied everywhere but in [`sys`], the one boundary with the operating system.

#![deny(unsafe_code)]

pub mod analyze;
pub mod app;
pub mod cli;
pub mod machine;
pub mod plan;
pub mod policy;
pub mod procfs;
pub mod records;
pub mod report;
pub mod run;
pub mod spec;
pub mod store;
#[allow(unsafe_code)]
pub mod sys;
pub mod workload;
