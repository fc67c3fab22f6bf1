//! schedlab: a laboratory for Linux CPU scheduling — run policy experiments, measure every task, store every number.

pub mod analyze;
pub mod app;
pub mod cli;
pub mod env;
pub mod plan;
pub mod policy;
pub mod procfs;
pub mod records;
pub mod report;
pub mod run;
pub mod spec;
pub mod store;
pub mod sys;
pub mod workload;
