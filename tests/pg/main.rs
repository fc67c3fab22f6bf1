//! schedlab against a real PostgreSQL server: the whole CLI, the work queue, push, the spool
//! and the errors. Plain `#[test]` functions, so that libtest finds every one (no list to keep):
//! the first test starts one server for the whole binary (`server::shared`), which its
//! watchdog stops when the process ends; the tests take turns on it, each in a database of
//! its own. Where PostgreSQL's server binaries are missing, each test skips with the reason
//! (or fails under `SCHEDLAB_TEST_REQUIRE`).
//!
//! `cargo test --test pg [NAME]` runs the tests whose name contains NAME.

mod cli;
#[path = "../common/mod.rs"]
mod common;
mod errors;
mod gates;
mod knobs;
mod push;
mod queue;
mod retries;
mod secrets;
mod server;
mod spool;

use assert_cmd::cargo::CommandCargoExt;
use std::process::{Command, Output};

/// The schedlab binary under test, with the server's password in PGPASSWORD (never on its
/// command line, where schedlab refuses it).
pub fn schedlab() -> Command {
    let mut c = Command::cargo_bin("schedlab").expect("binary built");
    c.env("PGPASSWORD", server::PASSWORD);
    c
}

/// Runs schedlab with `args`; panics with its output unless it succeeds; returns stdout.
pub fn ok(args: &[&str]) -> String {
    let o = schedlab().args(args).output().unwrap();
    assert!(
        o.status.success(),
        "schedlab {args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs schedlab with `args` and returns its output, whatever the exit.
pub fn out(args: &[&str]) -> Output {
    schedlab().args(args).output().unwrap()
}

/// One integer from a query on PostgreSQL.
pub fn pg_int(c: &mut postgres::Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).unwrap().get(0)
}
