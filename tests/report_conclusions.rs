//! Conclusions that respect the design (issue 11), on the synthetic database of
//! `report_db`: exploratory comparisons against the baseline with effect, CI and unadjusted
//! p, too few trials
//! and from how many p < 0.05 is possible, the methods section, `compare`'s comparability
//! checks, and tables that fit 120 columns.

use assert_cmd::Command;
use predicates::prelude::*;
use schedlab_analyze::PValueMethod;
use schedlab_report::model::compare;
use schedlab_report::model::{self, Metric, Report};
use schedlab_report::pool::load_input;
use schedlab_report::render::stats::render_stats;
use schedlab_store::Store;

mod report_db;
use report_db::{keep_trials, report_of, synthetic_db};

/// A comparison of the 2-task group as every output words it.
fn said(f: &model::ExploratoryComparison) -> String {
    schedlab_report::render::exploratory::sentence("cpu:pi with 2 tasks", f)
}

#[test]
fn fifo_is_compared_with_the_baseline_other_and_found_significantly_faster() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let f = r
        .exploratory
        .iter()
        .find(|f| f.metric == Metric::Makespan && r.groups[f.group].tasks == 2)
        .expect("a makespan comparison for 2 tasks");
    // The spec lists no policies, so the baseline is the first policy in cell order.
    assert_eq!((f.baseline.as_str(), f.policy.as_str()), ("other", "fifo"));
    // By hand: other's makespans are 22.06 + 0.4 t ms and fifo's 20.01 + 0.15 t ms for the
    // trials t = 1..6, so their medians are 23.46 and 20.535 ms.
    assert!((f.baseline_median - 23.46).abs() < 1e-9, "{f:?}");
    assert!((f.median - 20.535).abs() < 1e-9, "{f:?}");
    // The Hodges-Lehmann ratio is the median of the 36 ratios fifo / other, all within the
    // extremes 20.16 / 24.46 and 20.91 / 22.46; 6 vs 6 allows a 95% interval inside them.
    let e = f.effect.expect("effect");
    assert!(e.lo <= e.estimate && e.estimate <= e.hi, "{e:?}");
    assert!(e.lo > 20.16 / 24.46 && e.hi < 20.91 / 22.46, "{e:?}");
    assert!(!e.below_level && e.coverage >= 0.95, "{e:?}");
    // 6 vs 6 trials without overlap: exact p = 2 / C(12, 6) = 2 / 924, unadjusted.
    assert!((f.p.expect("p") - 2.0 / 924.0).abs() < 1e-12);
    assert_eq!(f.method, Some(PValueMethod::Exact));
    assert!(f.significant_at_01 && !f.too_few_trials);
    // The effect in words with its interval.
    let pct = |v: f64| {
        assert!(v >= 1.0, "{v}");
        if v >= 10.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    assert_eq!(
        said(f),
        format!(
            "For cpu:pi with 2 tasks, fifo vs other (baseline): fifo's makespan is {}% lower than other's (medians 20.5 ms vs 23.5 ms) [95% CI {}–{}% lower]; lower (better) than the baseline at alpha 0.01 (p (unadjusted) = 0.002; exact Mann-Whitney on 6 vs 6 trials).",
            pct((1.0 - e.estimate) * 100.0),
            pct((1.0 - e.hi) * 100.0),
            pct((1.0 - e.lo) * 100.0)
        )
    );
    // Per-task metrics are tested on the trial medians, 6 per policy, not on the 12 tasks.
    let turnaround = r
        .exploratory
        .iter()
        .find(|f| f.metric == Metric::Turnaround && r.groups[f.group].tasks == 2)
        .expect("a turnaround comparison");
    assert_eq!((turnaround.n_policy, turnaround.n_baseline), (6, 6));
    assert!(said(turnaround).contains("on 6 vs 6 trial medians"));
    // rr has no ok trial: no comparison for it.
    assert!(r.exploratory.iter().all(|f| f.policy != "rr"));
}

#[test]
fn the_baseline_is_the_first_policy_of_the_spec_axis_or_the_one_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let store = Store::open(&db).unwrap();
    let makespan = |r: &Report| {
        r.exploratory
            .iter()
            .find(|f| f.metric == Metric::Makespan && r.groups[f.group].tasks == 2)
            .cloned()
            .expect("a makespan comparison")
    };
    let mut input = load_input(&store, 1, false).unwrap();
    input.baseline = Some("fifo".into());
    let f = makespan(&model::report::build(&input));
    assert_eq!((f.baseline.as_str(), f.policy.as_str()), ("fifo", "other"));
    let e = f.effect.expect("effect");
    assert!(
        e.lo > 1.0 && e.lo <= e.estimate && e.estimate <= e.hi,
        "{e:?}"
    );
    assert!(
        said(&f).starts_with(
            "For cpu:pi with 2 tasks, other vs fifo (baseline): other's makespan is 14% higher than fifo's (medians 23.5 ms vs 20.5 ms)"
        ),
        "{}",
        said(&f)
    );
    assert!(said(&f).contains("higher (worse) than the baseline at alpha 0.01"));
    // The stored spec lists fifo first: fifo is the default baseline.
    let mut input = load_input(&store, 1, false).unwrap();
    input
        .run
        .set_spec_toml("[axes]\npolicies = [\"fifo\", \"other\", \"rr\"]\n".into());
    let r = model::report::build(&input);
    assert_eq!(makespan(&r).baseline, "fifo");
    assert!(schedlab_report::render::notes::method_notes(&r)
        .iter()
        .any(|n| n.contains("the first policy of the run's policy axis")));
    // Through the binary: a known baseline is used, an unknown one refused with the list.
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["stats", "--baseline", "fifo", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicates::str::contains("other vs fifo (baseline)"));
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["report", "--baseline", "deadline", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains(
                "--baseline deadline: run 1 has no cell with policy 'deadline'",
            )
            .and(predicates::str::contains("accepted: other, fifo, rr")),
        );
}

#[test]
fn three_trials_per_policy_are_too_few_and_the_comparison_says_from_how_many_p_below_005_is_possible(
) {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    keep_trials(&db, 3);
    let r = report_of(&db, false);
    let f = r
        .exploratory
        .iter()
        .find(|f| f.metric == Metric::Makespan && r.groups[f.group].tasks == 2)
        .expect("a makespan comparison");
    // Separated, but 3 vs 3: the exact p cannot go below 2 / C(6, 3) = 0.1.
    assert!((f.p.expect("p") - 0.1).abs() < 1e-12, "{f:?}");
    assert!(f.too_few_trials && !f.significant_at_05);
    assert_eq!(f.trials_needed, Some(4));
    // By hand: other 22.46, 22.86, 23.26 ms (var 0.16), fifo 20.16, 20.31, 20.46 ms
    // (var 0.0225): pooled sd sqrt(0.09125) = 0.30208; (t(.975, 4) + t(.8, 4)) = 3.71741;
    // MDD = 3.71741 * 0.30208 * sqrt(2/3) = 0.91689 ms.
    // Computed for the csv only: the t-test it belongs to is not the test the comparison runs.
    let mdd = f.min_detectable.expect("mdd");
    assert!((mdd - 0.91689).abs() < 1e-4, "{mdd}");
    assert!(
        said(f).contains("too few trials: 3 vs 3 cannot reach p < 0.05, p < 0.05 becomes possible (not likely) from 4 per policy (p (unadjusted) = 0.100; exact Mann-Whitney on 3 vs 3 trials)."),
        "{}",
        said(f)
    );
    let text = render_stats(&r, false);
    assert!(text.contains("too few"), "{text}");
}

#[test]
fn the_methods_section_names_the_test_its_unit_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let notes = schedlab_report::render::notes::method_notes(&r).join("\n");
    for needle in [
        "Tests run on the trial, the unit of replication",
        "the median of its tasks for per-task metrics",
        "two-sided Mann-Whitney U test, its p unadjusted for the other comparisons",
        "Hodges-Lehmann ratio",
        "order-statistic interval",
        "Student t interval: 95% for normal values only",
        "exact null distribution of U",
        "rather than a permutation test stratified by round",
        "The exploratory comparisons state no power",
        "pool every task of every trial instead (n = tasks)",
        "They are over the trial values (n = trials)",
    ] {
        assert!(notes.contains(needle), "{needle} missing from:\n{notes}");
    }
    // Which p-value method each comparison used is counted: with ties (the counts) a
    // permutation p, without them the exact distribution.
    let exact = r
        .exploratory
        .iter()
        .filter(|f| f.method == Some(PValueMethod::Exact))
        .count();
    assert!(exact > 0);
    assert!(
        notes.contains(&format!("exact null distribution for {exact} comparisons")),
        "{notes}"
    );
    assert!(r.methods.p_methods.contains(&(PValueMethod::Exact, exact)));
}

#[test]
fn compare_refuses_cells_whose_units_of_work_differ_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let a = synthetic_db(dir.path(), "a.db", 1.0);
    let b = synthetic_db(dir.path(), "b.db", 3.0);
    // B's fifo cells did three times the work (a 60 ms run against a 20 ms one).
    rusqlite::Connection::open(&b)
        .unwrap()
        .execute(
            "UPDATE cells SET units = 3000, work_ns = 60000000 WHERE policy = 'fifo'",
            [],
        )
        .unwrap();
    let compare = || {
        let mut cmd = Command::cargo_bin("schedlab").unwrap();
        cmd.args(["compare", "1", "1", "--db"])
            .arg(&a)
            .arg("--db-b")
            .arg(&b);
        cmd
    };
    compare()
        .assert()
        .code(2)
        .stdout(predicates::str::is_empty())
        .stderr(
            predicates::str::contains("2 of 5 matched cells did different work")
                .and(predicates::str::contains(
                    "fifo, cpu:pi with 2 tasks: 1000 units per task in A (20.00 ms), 3000 in B (60.00 ms)",
                ))
                .and(predicates::str::contains("--allow-different-work")),
        );
    compare()
        .arg("--allow-different-work")
        .assert()
        .success()
        .stdout(
            predicates::str::contains("NO (units differ)")
                .and(predicates::str::contains(
                    "fifo, cpu:pi with 2 tasks (≠ work)",
                ))
                .and(predicates::str::contains(
                    "kernel 6.8.0, machine 2 CPUs, host unknown",
                )),
        );
    // Same units on both sides: no refusal, and every cell says so.
    let sa = Store::open(&a).unwrap();
    let c = compare::compare(
        &load_input(&sa, 1, false).unwrap(),
        &load_input(&sa, 1, false).unwrap(),
    );
    assert!(c.refusal().is_none());
    assert!(c.cells.iter().all(|m| m.same == compare::SameWork::Yes));
}

#[test]
fn compare_states_the_coverage_of_an_interval_a_single_trial_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let a = synthetic_db(dir.path(), "a.db", 1.0);
    let b = synthetic_db(dir.path(), "b.db", 1.0);
    keep_trials(&b, 1);
    let (sa, sb) = (Store::open(&a).unwrap(), Store::open(&b).unwrap());
    let c = compare::compare(
        &load_input(&sa, 1, false).unwrap(),
        &load_input(&sb, 1, false).unwrap(),
    );
    let row = c
        .rows
        .iter()
        .find(|r| r.metric == Metric::Makespan)
        .expect("a makespan row");
    assert_eq!((row.n_a, row.n_b), (6, 1));
    // 6 vs 1: U takes 0..6 with probability 1/7 each, so the widest interval [min, max] of
    // the 6 ratios covers 1 - 2/7 = 71.4%, and says so.
    let e = row.effect.expect("effect");
    assert!(
        e.below_level && (e.coverage - 5.0 / 7.0).abs() < 1e-12,
        "{e:?}"
    );
    let text = schedlab_report::render::compare::render(&c);
    assert!(text.contains("(71.4% CI)"), "{text}");
}

/// The widest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn the_default_tables_fit_120_columns_and_wide_shows_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let r = report_of(&db, false);
    let narrow = render_stats(&r, false);
    let tables: String = narrow
        .lines()
        .filter(|l| {
            l.starts_with(['┌', '│', '├', '└'])
                || l.starts_with("result")
                || l.starts_with("too few")
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(widest(&tables) <= 120, "{}:\n{tables}", widest(&tables));
    let wide = render_stats(&r, true);
    assert!(widest(&wide) > 120);
    for column in ["Welch t", "Cohen's d", "trials for p < 0.05", "range"] {
        let heading = format!("│ {column} ");
        assert!(
            wide.contains(&heading) && !narrow.contains(&heading),
            "{column}"
        );
    }
    // The table after `schedlab run`.
    let store = Store::open(&db).unwrap();
    let cells = schedlab_store::query::cells(&store, 1, false).unwrap();
    let lines = schedlab_report::model::run_table::lines(&cells);
    let table = schedlab_report::render::terminal::render(&lines, false);
    assert!(widest(&table) <= 120, "{table}");
    assert!(
        !table.contains("cpu/task p50") && !table.contains("prio"),
        "{table}"
    );
    let all = schedlab_report::render::terminal::render(&lines, true);
    assert!(all.contains("cpu/task p50") && all.contains("prio") && widest(&all) > 120);
}
