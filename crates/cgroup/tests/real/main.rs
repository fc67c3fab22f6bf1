//! Tests against the real cgroups of this machine (root; skipped with the reason otherwise,
//! or failed under `SCHEDLAB_TEST_REQUIRE`). Its own `main` (libtest-mimic) because the binary
//! also runs as the tests' child processes and the tests must run one after another (CPU 0
//! pinning, the root cpuset setting). A test function left out of [`TESTS`] is dead code,
//! which `cargo clippy -- -D warnings` (CI) refuses.
//! `cargo test --test real [NAME]`; `--list` lists them.

mod child;
mod common;
mod groups;
mod v2;

use common::Skip;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use schedlab_testkit::Need;

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

/// A test's result: a skip is reported as ignored with its reason, or as a failure where
/// `SCHEDLAB_TEST_REQUIRE` requires what it lacked (root, else the cgroup hierarchy; a quiet
/// machine for a check that a busy one leaves undone).
fn outcome(result: Result<(), Skip>) -> Result<Completion, Failed> {
    match result {
        Ok(()) => Ok(Completion::Completed),
        Err(skip) => {
            let (need, why) = match skip {
                Skip::Machine(why) if schedlab_testkit::is_root() => (Need::Cgroup, why),
                Skip::Machine(why) => (Need::Root, why),
                Skip::Busy(why) => (Need::Idle, why),
            };
            if schedlab_testkit::required(need) {
                Err(
                    format!("cannot run: {why}, and SCHEDLAB_TEST_REQUIRE requires `{need}`")
                        .into(),
                )
            } else {
                Ok(Completion::ignored_with(why))
            }
        }
    }
}

fn main() {
    if child::dispatch() {
        return;
    }
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    let trials = TESTS
        .iter()
        .map(|&(name, f)| Trial::ignorable_test(name, move || outcome(f())))
        .collect();
    let mut conclusion = libtest_mimic::run(&args, trials);
    // Nothing of this process (or of a dead one) may be left, whatever failed.
    if let Ok(caps) = common::caps() {
        let left = common::leftovers(&caps);
        if !left.is_empty() {
            println!("LEFT BEHIND: {left:?}");
            conclusion.num_failed += 1;
        }
    }
    conclusion.exit();
}
