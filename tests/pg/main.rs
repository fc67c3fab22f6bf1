//! schedlab against a real PostgreSQL server: the whole CLI, the work queue, push, the spool
//! and the errors. One server (see `server.rs`) is started for the whole binary and stopped at
//! the end; the tests run one after another, each in a database of its own. Skipped, with the
//! reason printed, where PostgreSQL's server binaries are missing.
//!
//! `cargo test --test pg [NAME]` runs the tests whose name contains NAME.

mod cli;
#[path = "../common/mod.rs"]
mod common;
mod errors;
mod knobs;
mod push;
mod queue;
mod secrets;
mod server;
mod spool;

use assert_cmd::cargo::CommandCargoExt;
use server::Server;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Output};

/// The schedlab binary under test.
pub fn schedlab() -> Command {
    Command::cargo_bin("schedlab").expect("binary built")
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

type Test = (&'static str, fn(&Server));

const TESTS: &[Test] = &[
    (
        "cli_runs_and_reads_on_postgres",
        cli::cli_runs_and_reads_on_postgres,
    ),
    (
        "bad_urls_wrong_passwords_and_missing_schemas_are_clear_and_write_nothing",
        errors::bad_urls_wrong_passwords_and_missing_schemas_are_clear_and_write_nothing,
    ),
    (
        "four_workers_store_each_of_40_trials_once",
        queue::four_workers_store_each_of_40_trials_once,
    ),
    (
        "a_killed_workers_trial_is_rerun_by_another_once",
        queue::a_killed_workers_trial_is_rerun_by_another_once,
    ),
    (
        "a_worker_spools_while_the_server_is_away_and_nothing_is_lost",
        queue::a_worker_spools_while_the_server_is_away_and_nothing_is_lost,
    ),
    (
        "host_labels_route_trials_and_the_runs_report_together",
        queue::host_labels_route_trials_and_the_runs_report_together,
    ),
    (
        "a_worker_restores_each_runs_settings_before_the_next_run",
        knobs::a_worker_restores_each_runs_settings_before_the_next_run,
    ),
    (
        "labels_match_exactly_so_percent_and_underscore_are_plain",
        queue::labels_match_exactly_so_percent_and_underscore_are_plain,
    ),
    (
        "a_queued_command_runs_only_on_a_worker_started_with_allow_commands",
        queue::a_queued_command_runs_only_on_a_worker_started_with_allow_commands,
    ),
    (
        "a_push_from_a_file_whose_column_names_are_sql_changes_nothing_on_the_server",
        push::a_push_from_a_file_whose_column_names_are_sql_changes_nothing_on_the_server,
    ),
    (
        "no_output_file_or_stored_row_holds_the_database_password",
        secrets::no_output_file_or_stored_row_holds_the_database_password,
    ),
    (
        "pushing_twice_stores_each_run_once_with_the_same_rows",
        spool::pushing_twice_stores_each_run_once_with_the_same_rows,
    ),
    (
        "server_stopped_mid_run_loses_no_trial_and_stores_none_twice",
        spool::server_stopped_mid_run_loses_no_trial_and_stores_none_twice,
    ),
];

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let chosen: Vec<&Test> = TESTS
        .iter()
        .filter(|(name, _)| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if chosen.is_empty() {
        println!("no PostgreSQL test matches {filter:?}");
        return;
    }
    let server = match Server::start() {
        Ok(s) => s,
        Err(reason) => {
            println!("skipping {} PostgreSQL tests: {reason}", chosen.len());
            return;
        }
    };
    let mut failed = Vec::new();
    for (name, test) in &chosen {
        let t = std::time::Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| test(&server)));
        let secs = t.elapsed().as_secs_f64();
        match result {
            Ok(()) => println!("test {name} ... ok ({secs:.1} s)"),
            Err(_) => {
                println!("test {name} ... FAILED ({secs:.1} s)");
                failed.push(*name);
            }
        }
    }
    drop(server);
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        chosen.len() - failed.len(),
        failed.len()
    );
    if !failed.is_empty() {
        println!("failed: {}", failed.join(", "));
        std::process::exit(1);
    }
}
