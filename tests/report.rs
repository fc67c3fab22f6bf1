//! Reports, stats and compare on a small synthetic database with fixed numbers: snapshot tests
//! of every text format (Markdown, LaTeX, CSV, `stats`) and end-to-end runs of the binary.

use assert_cmd::Command;
use predicates::prelude::*;
use rusqlite::params;
use schedlab_report::cmd::{write_report, ReportFormat};
use schedlab_report::model::compare;
use schedlab_report::model::{self, figures, Metric, Report};
use schedlab_report::pool::load_input;
use schedlab_report::render::notes::warnings;
use schedlab_report::render::stats::render_stats;
use schedlab_report::render::{self, csv_tables, latex, markdown};
use schedlab_store::Store;
use std::path::{Path, PathBuf};

mod report_db;
use report_db::{report_of, synthetic_db};

#[test]
fn the_markdown_summary_matches_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    insta::assert_snapshot!("markdown", markdown::render(&r, &figures::figures(&r)));
}

#[test]
fn the_latex_tables_match_their_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    insta::assert_snapshot!("latex", latex::render(&r));
}

#[test]
fn every_csv_table_matches_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let tables = csv_tables::tables(&r).expect("csv");
    assert_eq!(tables.len(), 8);
    for (name, text) in tables {
        insta::assert_snapshot!(format!("csv_{name}"), text);
    }
}

#[test]
fn the_stats_output_matches_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    insta::assert_snapshot!("stats", render_stats(&r, false));
    let all = render_stats(&r, true);
    insta::assert_snapshot!("stats_all", all);
    // Pooled per-task tables are descriptive: the tasks of a trial are correlated, so no
    // interval with n = tasks is given (it covered 56-84 % where it said 95 %).
    for pooled in all
        .split("\n\n")
        .filter(|t| t.contains("pooled: every task"))
    {
        assert!(!pooled.contains("95% CI"), "{pooled}");
    }
    let summaries = csv_tables::tables(&r).expect("csv");
    let csv = &summaries
        .iter()
        .find(|(n, _)| n.contains("summaries"))
        .expect("summaries")
        .1;
    for line in csv.lines().filter(|l| l.ends_with(",tasks_pooled")) {
        assert!(
            line.contains(",,,,,,tasks_pooled"),
            "no interval in a pooled row: {line}"
        );
    }
}

/// Every file under `dir` but images, as (path, text).
fn text_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(text_files(&path));
        } else if path.extension().is_none_or(|e| e != "png") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path, text));
        }
    }
    out
}

#[test]
fn no_output_calls_an_exploratory_comparison_a_finding() {
    // Issue 18: what was not declared is exploratory, "never called a finding". Every
    // format, every file name, stats (both views) and compare.
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let r = report_of(&db, false);
    let out = dir.path().join("out");
    let all = [
        ReportFormat::Html,
        ReportFormat::Latex,
        ReportFormat::Markdown,
        ReportFormat::Csv,
    ];
    write_report(&r, &all, &out).expect("written");
    let mut texts = text_files(&out);
    assert!(texts.len() > 10, "{} files", texts.len());
    assert!(texts
        .iter()
        .any(|(p, _)| p.ends_with("csv/exploratory.csv")));
    texts.push(("stats".into(), render_stats(&r, false)));
    texts.push(("stats --all".into(), render_stats(&r, true)));
    let input = load_input(&Store::open(&db).unwrap(), 1, false).unwrap();
    let c = compare::compare(&input, &input);
    texts.push(("compare".into(), render::compare::render(&c)));
    for (path, text) in &texts {
        let name = path.to_string_lossy().to_lowercase();
        assert!(!name.contains("finding"), "{name}");
        let said = text.lines().find(|l| l.to_lowercase().contains("finding"));
        assert!(
            said.is_none(),
            "{name} says finding: {}",
            said.unwrap_or("")
        );
    }
    // And the comparisons are labelled with their unadjusted p where shown.
    let stats = render_stats(&r, true);
    assert!(stats.contains("p (unadjusted)"), "{stats}");
    assert!(texts
        .iter()
        .any(|(p, t)| p.ends_with("report.md") && t.contains("p (unadjusted)")));
}

#[test]
fn the_default_stats_fit_one_screen_per_ten_cells() {
    // Issue 18: no default output longer than one screen (50 lines of a 1280x800 terminal)
    // per 10 cells; --all keeps everything the default leaves out.
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "s.db", 1.0), false);
    let screens = r.cells.len().div_ceil(10).max(1);
    let (short, all) = (render_stats(&r, false), render_stats(&r, true));
    assert!(
        short.lines().count() <= 50 * screens,
        "{} lines for {} cells:\n{short}",
        short.lines().count(),
        r.cells.len()
    );
    for gone in [
        "\nMethods\n",
        "pairwise tests on the trial values",
        "response (ms), per trial",
    ] {
        assert!(!short.contains(gone) && all.contains(gone), "{gone}");
    }
}

#[test]
fn warmup_trials_are_left_out_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let n = |r: &Report| {
        r.cells[0]
            .summary(Metric::Makespan)
            .expect("makespan")
            .summary
            .n
    };
    assert_eq!(n(&report_of(&db, false)), 6);
    let with = report_of(&db, true);
    assert_eq!(n(&with), 7);
    assert!(render::notes::method_notes(&with)
        .iter()
        .any(|s| s.contains("included")));
}

#[test]
fn the_default_stats_show_one_line_per_group_for_the_primary_metric() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let text = render_stats(&r, false);
    let start = text
        .find("makespan (ms) per group")
        .expect("the compact table");
    let rows: Vec<&str> = text[start..]
        .lines()
        .take_while(|l| !l.starts_with("(every tested metric"))
        .filter(|l| l.starts_with('│'))
        .collect();
    assert!(r.groups.len() >= 2);
    assert_eq!(
        rows.len(),
        1 + r.groups.len(),
        "a header and a line per group: {rows:#?}"
    );
    for (g, group) in r.groups.iter().enumerate() {
        let line: Vec<&&str> = rows.iter().filter(|l| l.contains(&group.label)).collect();
        assert_eq!(line.len(), 1, "{}", group.label);
        assert!(line[0].contains("(baseline)"), "{}", line[0]);
        for f in r
            .exploratory
            .iter()
            .filter(|f| f.group == g && f.metric == Metric::Makespan)
        {
            let entry = format!(
                "{} (",
                schedlab_report::render::fmt::fmt_value(f.median, f.metric)
            );
            assert!(
                line[0].contains(&entry) && line[0].contains(&render::exploratory::verdict(f)),
                "{}",
                line[0]
            );
        }
    }
    assert!(
        !text.contains("every policy vs"),
        "the per-metric tables are behind --all"
    );
    assert!(
        render_stats(&r, true).contains("Exploratory: every policy against its group's baseline")
    );
}

#[test]
fn warnings_of_one_code_show_as_one_line_with_their_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let c = rusqlite::Connection::open(&db).unwrap();
    for t in 1..=5 {
        c.execute(
            "INSERT INTO warnings (run_id, trial_id, message, code, params) VALUES (1, NULL, ?1, 'machine_busy', '{}')",
            [format!("before trial {t}: the machine was not idle")],
        )
        .unwrap();
    }
    drop(c);
    let r = report_of(&db, false);
    assert_eq!(
        warnings(&r)
            .iter()
            .filter(|w| w.contains("not idle"))
            .count(),
        5,
        "the report keeps every warning (CSV lists them all)"
    );
    let text = render_stats(&r, false);
    let section =
        &text[text.find("\nWarnings\n").unwrap()..text.find("\nExploratory comparisons").unwrap()];
    let busy: Vec<&str> = section.lines().filter(|l| l.contains("not idle")).collect();
    assert_eq!(
        busy,
        vec!["- machine_busy (5 warnings), e.g. before trial 1: the machine was not idle"],
        "{section}"
    );
    assert!(section.contains("governor is powersave"), "{section}");
    assert!(
        section.contains("warnings in all; `schedlab show 1`"),
        "{section}"
    );
    let md = markdown::render(&r, &[]);
    assert_eq!(md.matches("not idle").count(), 1, "{md}");
}

#[test]
fn skipped_cells_timeouts_and_stored_warnings_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let all = warnings(&r).join("\n");
    assert!(
        all.contains("rr, cpu:pi with 2 tasks: 6 of 6 trials not ok (6 skipped): SCHED_RR refused"),
        "{all}"
    );
    assert!(
        all.contains("Trial 7 of other, cpu:pi with 4 tasks: timeout: deadline of 10 s passed"),
        "{all}"
    );
    assert!(all.contains("governor is powersave"), "{all}");
}

#[test]
fn compare_finds_the_slower_fifo_turnaround_in_run_b_and_lists_unmatched_cells() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(synthetic_db(dir.path(), "a.db", 1.0)).unwrap();
    let b = Store::open(synthetic_db(dir.path(), "b.db", 1.5)).unwrap();
    let mut input_b = load_input(&b, 1, false).unwrap();
    input_b.cells.retain(|c| c.tasks == 2);
    let c = compare::compare(&load_input(&a, 1, false).unwrap(), &input_b);
    let row = c
        .rows
        .iter()
        .find(|r| r.metric == Metric::Turnaround && r.cell.starts_with("fifo"))
        .expect("fifo turnaround row");
    let e = row.effect.expect("effect");
    assert!((e.estimate - 1.5).abs() < 0.01, "{e:?}");
    assert!(
        e.lo > 1.4 && e.hi < 1.6 && e.lo <= e.estimate && e.estimate <= e.hi,
        "{e:?}"
    );
    assert_eq!(
        schedlab_report::render::compare::stars(row.significance()),
        "**"
    );
    let other = c
        .rows
        .iter()
        .find(|r| r.metric == Metric::Turnaround && r.cell.starts_with("other"))
        .expect("other turnaround row");
    assert!(
        (other.ratio().expect("ratio") - 1.0).abs() < 1e-12,
        "{other:?}"
    );
    assert_eq!(
        schedlab_report::render::compare::stars(other.significance()),
        ""
    );
    assert_eq!(
        c.only_a,
        vec!["other, cpu:pi with 4 tasks", "fifo, cpu:pi with 4 tasks"]
    );
    let text = render::compare::render(&c);
    assert!(
        text.contains("Only in run 1 \"synthetic\":\n- other, cpu:pi with 4 tasks"),
        "{text}"
    );
}

#[test]
fn the_report_command_writes_a_self_contained_page_plots_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let out = dir.path().join("out");
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["report", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("index.html"));
    let page = std::fs::read_to_string(out.join("1/index.html")).expect("index.html");
    assert!(page.contains("<svg"), "figures are inline");
    assert!(page.contains("fifo vs other (baseline): fifo") && page.contains("s makespan is "));
    // The first screen: the exploratory comparisons (the one-line-per-group table first),
    // then the warnings and the run's record.
    let at = |what: &str| {
        page.find(what)
            .unwrap_or_else(|| panic!("{what} in the page"))
    };
    assert!(at("id=\"exploratory\"") < at("makespan (ms) per group"));
    assert!(at("makespan (ms) per group") < at("<ul class=\"sentences\">"));
    assert!(at("<ul class=\"sentences\">") < at("id=\"warnings\""));
    assert!(at("id=\"warnings\"") < at("<dl class=\"meta\">"));
    assert!(at("<dl class=\"meta\">") < at("id=\"figures\""));
    assert!(
        page.contains("kernel_release") && page.contains("6.8.0"),
        "environment record"
    );
    assert!(
        page.contains("SCHED_RR refused"),
        "skipped cells are warned about"
    );
    for external in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(
            !page.contains(external),
            "the page must not load {external}"
        );
    }
    for file in [
        "report.md",
        "report.tex",
        "csv/summaries.csv",
        "plots/1-cpu-pi-makespan.png",
        "plots/1-cpu-pi-makespan.svg",
    ] {
        assert!(out.join("1").join(file).is_file(), "{file} is written");
    }
}

#[test]
fn write_report_writes_only_the_formats_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "a.db", 1.0), false);
    let out = dir.path().join("only-csv");
    let written = write_report(&r, &[ReportFormat::Csv], &out).expect("written");
    assert_eq!(written, vec!["csv/ (8 tables)"]);
    assert!(out.join("csv/exploratory.csv").is_file());
    assert!(!out.join("csv/findings.csv").exists());
    assert!(!out.join("index.html").exists() && !out.join("plots").exists());
}

#[test]
fn an_unknown_run_id_and_an_unknown_format_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["report", "--run", "99", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("run 99 is not in this database"));
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["stats", "--run", "7", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "`schedlab runs` lists the stored runs",
        ));
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["report", "--format", "html,pdf", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "[possible values: html, latex, markdown, csv]",
        ));
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["compare", "1", "2", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("run B")
                .and(predicates::str::contains("run 2 is not in this database")),
        );
}

#[test]
fn stats_and_compare_print_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let a = synthetic_db(dir.path(), "a.db", 1.0);
    let b = synthetic_db(dir.path(), "b.db", 1.5);
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["stats", "--db"])
        .arg(&a)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "Exploratory comparisons (not declared as claims)\nExploratory, not confirmatory: every policy against its group's baseline, screened after the data; only claims declared in the spec before the run ([[claims]]) get verdicts.\n- For cpu:pi with 2 tasks, fifo",
        ))
        .stdout(predicates::str::contains("\nFindings\n").not());
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["compare", "1", "1", "--db"])
        .arg(&a)
        .arg("--db-b")
        .arg(&b)
        .assert()
        .success()
        .stdout(
            predicates::str::contains("Hodges-Lehmann ratio")
                .and(predicates::str::contains("1.50x")),
        );
}

#[test]
fn a_run_whose_every_cell_was_skipped_still_gets_a_report_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE trials SET status = 'skipped', reason = 'SCHED_FIFO refused (EPERM)', makespan_ns = NULL",
            [],
        )
        .unwrap();
    let r = report_of(&db, false);
    assert!(r.exploratory.is_empty());
    assert!(r.cells.iter().all(|c| c.summaries.is_empty()));
    assert!(figures::figures(&r).is_empty());
    let out = dir.path().join("out");
    write_report(&r, &[ReportFormat::Html, ReportFormat::Markdown], &out).expect("written");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("No group has two policies with data to compare."));
    assert!(page.contains("6 of 6 trials not ok (6 skipped): SCHED_FIFO refused (EPERM)"));
    assert!(render_stats(&r, false).contains("No group has two policies with data to compare."));
}

#[test]
fn the_compare_output_matches_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let a = Store::open(synthetic_db(dir.path(), "a.db", 1.0)).unwrap();
    let b = Store::open(synthetic_db(dir.path(), "b.db", 1.5)).unwrap();
    let c = compare::compare(
        &load_input(&a, 1, false).unwrap(),
        &load_input(&b, 1, false).unwrap(),
    );
    insta::assert_snapshot!("compare", render::compare::render(&c));
}

/// Runs a.db (as built) and b.db (FIFO turnaround x1.5) pushed into one database, run 1 on
/// host web1 with kernel 6.1.0 and run 2 on `host_b` with `kernel_b`.
fn two_runs_db(dir: &Path, host_b: &str, kernel_b: &str) -> PathBuf {
    let all = dir.join("all.db");
    let target = Store::open(&all).unwrap();
    for (name, slow, host, kernel) in [
        ("a.db", 1.0, "web1", "6.1.0"),
        ("b.db", 1.5, host_b, kernel_b),
    ] {
        let path = synthetic_db(dir, name, slow);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute(
                "UPDATE runs SET uuid = ?1, host = ?2, kernel = ?3",
                params![format!("uuid-of-{name}"), host, kernel],
            )
            .unwrap();
        let source = Store::open(&path).unwrap();
        schedlab_store::push::push(&source, &target, &Default::default()).unwrap();
    }
    all
}

/// The median turnaround (ms) of the cell whose treatment is `treatment`, with 2 tasks.
fn turnaround(r: &Report, treatment: &str) -> (f64, usize) {
    let c = r
        .cells
        .iter()
        .find(|c| c.key.policy == treatment && c.key.tasks == 2)
        .unwrap_or_else(|| {
            panic!(
                "no cell {treatment}: {:?}",
                r.cells.iter().map(|c| &c.key.policy).collect::<Vec<_>>()
            )
        });
    // Every task of every trial pooled: the hand computations below count tasks.
    let s = &c.pooled(Metric::Turnaround).expect("turnaround").summary;
    (s.median, s.n)
}

#[test]
fn runs_of_one_spec_on_two_hosts_compare_the_hosts_like_policies() {
    use schedlab_report::pool;
    let dir = tempfile::tempdir().unwrap();
    let db = two_runs_db(dir.path(), "web2", "6.1.0");
    let store = Store::open_read(&db).unwrap();
    let r = model::report::build(&pool::load(&store, &[1, 2], false).unwrap());
    // By hand: FIFO's two tasks end at 20 ms + 0.15 ms x trial + 0.01 ms x task (trials 1-6),
    // whose median is (20.46 + 20.60) / 2 = 20.53 ms; run 2 scales that by 1.5.
    let (web1, n1) = turnaround(&r, "fifo @ web1");
    let (web2, n2) = turnaround(&r, "fifo @ web2");
    assert!((web1 - 20.53).abs() < 1e-9, "{web1}");
    assert!((web2 - 1.5 * 20.53).abs() < 1e-9, "{web2}");
    assert_eq!((n1, n2), (12, 12));
    // One group holds both hosts' cells; with web1's FIFO as the baseline, web2's FIFO is
    // found 1.5x slower at alpha 0.01 (6 trials each, every one of web2's above web1's).
    let mut input = pool::load(&store, &[1, 2], false).unwrap();
    input.baseline = Some("fifo @ web1".into());
    let rb = model::report::build(&input);
    let g = rb
        .groups
        .iter()
        .position(|g| g.tasks == 2)
        .expect("group of 2 tasks");
    let f = rb
        .exploratory
        .iter()
        .find(|f| f.group == g && f.metric == Metric::Turnaround && f.policy == "fifo @ web2")
        .expect("a turnaround comparison for web2's FIFO");
    assert_eq!(f.baseline, "fifo @ web1");
    assert_eq!(
        f.policies, 4,
        "other and fifo on each host (rr has no data)"
    );
    let ratio = f.effect.expect("effect").estimate;
    assert!((ratio - 1.5).abs() < 0.01, "{ratio}");
    assert!(f.significant_at_01 && f.direction() == 1, "{f:?}");
    let note = warnings(&r)
        .into_iter()
        .find(|w| w.contains("pools runs 1, 2"))
        .expect("a note");
    assert!(
        note.contains("from hosts web1, web2") && note.contains("host is compared"),
        "{note}"
    );
    // Through the binary, by run ids and by spec hash.
    let out = dir.path().join("out");
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["report", "--runs", "1,2", "--format", "markdown", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("report of runs 1, 2"));
    let md = std::fs::read_to_string(out.join("runs-1-2/report.md")).unwrap();
    assert!(
        md.contains("fifo @ web1") && md.contains("fifo @ web2"),
        "{md}"
    );
    let hash = schedlab_store::query::spec_hash("name = \"synthetic\"");
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["stats", "--spec-hash", &hash[..6], "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains("fifo @ web2"));
}

#[test]
fn kernels_are_treatments_too_and_repeats_on_one_host_pool_their_trials() {
    use schedlab_report::pool;
    let dir = tempfile::tempdir().unwrap();
    let db = two_runs_db(dir.path(), "web1", "6.2.0");
    let store = Store::open_read(&db).unwrap();
    let r = model::report::build(&pool::load(&store, &[1, 2], false).unwrap());
    assert!((turnaround(&r, "fifo @ 6.2.0").0 - 1.5 * 20.53).abs() < 1e-9);
    let note = warnings(&r)
        .into_iter()
        .find(|w| w.contains("pools runs"))
        .expect("a note");
    assert!(
        note.contains("kernel is compared") && !note.contains("host is"),
        "{note}"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = two_runs_db(dir.path(), "web1", "6.1.0");
    let store = Store::open_read(&db).unwrap();
    let r = model::report::build(&pool::load(&store, &[1, 2], false).unwrap());
    assert_eq!(
        r.cells.len(),
        5,
        "the same host and kernel: one cell per cell of the spec"
    );
    let (median, n) = turnaround(&r, "fifo");
    assert_eq!(n, 24, "both runs' tasks");
    // The 12 values of run 1 all lie below run 2's (x1.5): the median is between the largest
    // of run 1 (20.91 ms) and the smallest of run 2 (1.5 x 20.15 ms).
    assert!(
        (median - (20.91 + 1.5 * 20.15) / 2.0).abs() < 1e-9,
        "{median}"
    );
}

#[test]
fn runs_of_different_specs_are_not_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_runs_db(dir.path(), "web2", "6.1.0");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            // A run of another spec: its spec as stored and the hash stored with it.
            "UPDATE runs SET spec_toml = 'name = \"other\"', spec_hash = ?1 WHERE run_id = 2",
            [schedlab_store::query::spec_hash("name = \"other\"")],
        )
        .unwrap();
    Command::cargo_bin("schedlab")
        .unwrap()
        .args(["stats", "--runs", "1,2", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("different experiments"));
}

/// The median of `xs` (mean of the two middle values for even counts), computed here by hand.
fn hand_median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    assert!(n > 0, "no values");
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

#[test]
fn a_cells_response_is_one_number_in_stats_the_key_table_and_the_exploratory_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    // Skewed responses in other's 4-task cell, so that pooling the tasks and taking each
    // trial's median first disagree: task i of trial t waits (i+1)^2 (t+1) ms.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE tasks SET response_ns = (task_index + 1) * (task_index + 1) * 1000000 *
           (SELECT trial_index + 1 FROM trials WHERE trials.trial_id = tasks.trial_id)
         WHERE trial_id IN (SELECT t.trial_id FROM trials t JOIN cells c ON c.cell_id = t.cell_id
                            WHERE c.policy = 'other' AND c.tasks = 4)",
        [],
    )
    .unwrap();
    // The hand computation: each ok measured trial's median over its tasks, then the median
    // over trials; and the pooled median, which must differ for the test to mean something.
    let mut stmt = c
        .prepare(
            "SELECT t.trial_id, k.response_ns FROM tasks k JOIN trials t ON t.trial_id = k.trial_id
             JOIN cells c ON c.cell_id = t.cell_id
             WHERE c.policy = 'other' AND c.tasks = 4 AND t.status = 'ok' AND t.warmup = 0
             ORDER BY t.trial_id",
        )
        .unwrap();
    let rows: Vec<(i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let pooled = hand_median(rows.iter().map(|&(_, v)| v as f64 / 1e6).collect());
    let trial_medians: Vec<f64> = rows
        .chunk_by(|a, b| a.0 == b.0)
        .map(|t| hand_median(t.iter().map(|&(_, v)| v as f64 / 1e6).collect()))
        .collect();
    assert_eq!(trial_medians.len(), 6);
    let expected = hand_median(trial_medians);
    // Measured trials are 1..=6: trial t's median is 6.5 (t + 1) ms, 4.5 x 6.5 over trials.
    assert!((expected - 29.25).abs() < 1e-9, "{expected}");
    assert!((pooled - expected).abs() > 1.0, "{pooled} vs {expected}");

    let r = report_of(&db, false);
    let g = r.groups.iter().position(|g| g.tasks == 4).unwrap();
    let cell = r.cell_of(g, "other").unwrap();
    let median = cell.summary(Metric::Response).unwrap().summary.median;
    assert!((median - expected).abs() < 1e-9, "{median} vs {expected}");
    let comparison = r
        .exploratory
        .iter()
        .find(|f| f.group == g && f.metric == Metric::Response && f.policy == "fifo")
        .unwrap();
    assert!((comparison.baseline_median - expected).abs() < 1e-9);

    // The same number as printed: stats' response table (--all), the Markdown key table, the
    // comparison's sentence.
    let printed = schedlab_report::render::fmt::fmt_value(expected, Metric::Response);
    let stats = render_stats(&r, true);
    let table = &stats[stats
        .find("response (ms), per trial")
        .expect("response table")..];
    let row = table
        .lines()
        .find(|l| l.contains("cpu:pi with 4 tasks") && l.contains(" other "))
        .expect("other's row");
    let cols: Vec<&str> = row.split('│').map(str::trim).collect();
    assert_eq!(cols[4], printed, "{row}");
    let md = markdown::render(&r, &figures::figures(&r));
    let key_row = md
        .lines()
        .find(|l| l.starts_with("| response (ms) | other |"))
        .expect("key table row");
    let key_cols: Vec<&str> = key_row.split('|').map(str::trim).collect();
    assert!(
        key_cols[4].starts_with(&format!(
            "{} [",
            schedlab_report::render::fmt::fmt_num(expected)
        )),
        "{key_row}"
    );
    let sentence = render::exploratory::sentence(&r.groups[comparison.group].label, comparison);
    assert!(
        sentence.contains(&format!(
            "vs {})",
            schedlab_report::render::fmt::fmt_with_unit(expected, Metric::Response)
        )),
        "{sentence}"
    );
}

#[test]
fn the_spec_s_primary_metric_leads_the_compact_stats_and_the_html_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = synthetic_db(dir.path(), "a.db", 1.0);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET spec_toml = 'name = \"synthetic\"\n[settings]\nprimary_metric = \"turnaround\"\n'",
        [],
    )
    .unwrap();
    let r = report_of(&db, false);
    assert_eq!(r.primary_metric, Metric::Turnaround);
    let text = render_stats(&r, false);
    let title = "turnaround (ms) per group: median of the trial medians per policy";
    let start = text.find(title).expect("the compact table of turnaround");
    assert!(!text.contains("makespan (ms) per group"));
    // fifo with 4 tasks: its trial values' median, as the summary holds it.
    let g = r.groups.iter().position(|g| g.tasks == 4).unwrap();
    let fifo = r.cell_of(g, "fifo").unwrap();
    let median = fifo.summary(Metric::Turnaround).unwrap().summary.median;
    let row = text[start..]
        .lines()
        .find(|l| l.contains("cpu:pi with 4 tasks"))
        .expect("the 4-task row");
    assert!(
        row.contains(&format!(
            "{} (",
            schedlab_report::render::fmt::fmt_value(median, Metric::Turnaround)
        )),
        "{row}"
    );
    let out = dir.path().join("out");
    write_report(&r, &[ReportFormat::Html], &out).expect("report");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains(title), "the HTML report's first screen");
}

#[test]
fn the_pairwise_table_shows_each_pairs_unadjusted_p_as_the_comparisons_do() {
    // Issue 18: one p per comparison across the output. The pairwise table used to show
    // Holm over the pairs of a group, so the same pair had an unadjusted p in the
    // comparisons with the baseline and another, adjusted, in the pairwise table (this
    // data has one tested pair per group, where the two agree: the header tells them apart).
    let dir = tempfile::tempdir().unwrap();
    let r = report_of(&synthetic_db(dir.path(), "p.db", 1.0), false);
    let table = render::tables::pairs_table(&r);
    let col = |name: &str| table.header.iter().position(|h| h == name).expect(name);
    let (pair_col, mw_col) = (col("pair"), col("Mann-Whitney p (unadjusted)"));
    let mut checked = 0;
    for f in &r.exploratory {
        let Some(p) = f.p else { continue };
        let g = &r.groups[f.group];
        let comparison = &g
            .tests
            .iter()
            .find(|(m, _)| *m == f.metric)
            .expect("tested")
            .1;
        let pair = comparison
            .pairs
            .iter()
            .find(|q| {
                (q.a == f.baseline && q.b == f.policy) || (q.a == f.policy && q.b == f.baseline)
            })
            .expect("the pair is tested");
        let label = format!("{} vs {}", pair.a, pair.b);
        let row = table
            .rows
            .iter()
            .find(|row| row[0] == g.label && row[1] == f.metric.label() && row[pair_col] == label)
            .expect("a row for the pair");
        assert_eq!(
            row[mw_col],
            schedlab_report::render::fmt::fmt_p(p),
            "{label}, {}",
            f.metric.label()
        );
        checked += 1;
    }
    assert!(checked > 0, "no comparison was checked");
}
