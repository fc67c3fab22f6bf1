//! Tests against the real cgroups of this machine (root; skipped with the reason otherwise).
//! A plain `main` (no libtest) because the binary also runs as the tests' child processes and
//! the tests must run one after another (CPU 0 pinning, the root cpuset setting).
//! `cargo test --test real [NAME]`; `--list` lists them.

mod child;
mod common;
mod groups;
mod v2;

use common::Skip;
use std::panic::{catch_unwind, AssertUnwindSafe};

type Test = (&'static str, fn() -> Result<(), Skip>);

const TESTS: &[Test] = &[
    (
        "bandwidth_throttles_a_limited_group_only",
        groups::bandwidth,
    ),
    ("weights_100_300_share_cpu0_1_to_3", groups::weights),
    (
        "partition_admits_pinned_deadline",
        groups::partition_deadline,
    ),
    ("rt_budget_lets_fifo_run_in_its_group", groups::rt_budget),
    (
        "sigkill_leftovers_removed_by_next_command",
        groups::sigkill_recovery,
    ),
    ("v2_real_processes_usage_and_removal", v2::processes),
    ("v2_real_threaded_groups", v2::threads),
];

fn main() {
    if child::dispatch() {
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in TESTS {
            println!("{name}: test");
        }
        return;
    }
    let filter = args.iter().find(|a| !a.starts_with('-'));
    let exact = args.iter().any(|a| a == "--exact");
    let chosen: Vec<&Test> = TESTS
        .iter()
        .filter(|(n, _)| {
            filter.is_none_or(|f| {
                if exact {
                    n == f
                } else {
                    n.contains(f.as_str())
                }
            })
        })
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (name, f) in chosen {
        println!("test {name} ...");
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(Ok(())) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Ok(Err(Skip(why))) => {
                skipped += 1;
                println!("test {name} ... skipped: {why}");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED");
            }
        }
    }
    // Nothing of this process (or of a dead one) may be left, whatever failed.
    if let Ok(caps) = common::caps() {
        let left = common::leftovers(&caps);
        if !left.is_empty() {
            failed += 1;
            println!("LEFT BEHIND: {left:?}");
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {skipped} skipped",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
