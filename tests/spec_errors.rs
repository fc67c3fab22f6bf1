//! Bad experiment files: each spec in `tests/specs/invalid/` makes `plan` and `run` exit 2
//! with one positioned message (snapshotted) and store nothing; the spec parser never
//! panics, whatever text it is given.

mod common;

use common::schedlab;
use proptest::prelude::*;
use schedlab_spec::plan::{build, build_from_text};
use schedlab_spec::Spec;
use std::path::{Path, PathBuf};

/// The crate root: the binary runs there so that paths in messages are relative and stable.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every invalid spec, as paths relative to the crate root, sorted.
fn invalid_specs() -> Vec<PathBuf> {
    let dir = root().join("tests/specs/invalid");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/specs/invalid exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("spec under the crate root")
                .to_path_buf()
        })
        .collect();
    specs.sort();
    specs
}

/// Runs `schedlab SUBCOMMAND SPEC --db <scratch>/x.db` from the crate root; returns the exit
/// code, stdout and stderr, and asserts the scratch directory stayed empty.
fn run_bad(subcommand: &str, spec: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let scratch = tempfile::tempdir().expect("scratch directory");
    let db = scratch.path().join("x.db");
    let out = schedlab()
        .current_dir(root())
        .arg(subcommand)
        .arg(spec)
        .arg("--db")
        .arg(&db)
        .args(extra)
        .output()
        .expect("schedlab runs");
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .expect("scratch directory")
        .map(|e| e.expect("directory entry").file_name())
        .collect();
    assert!(
        left.is_empty(),
        "`schedlab {subcommand} {}` left {left:?} behind",
        spec.display()
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether `line` reads `error: SPEC:LINE:COL: KEY: message`, with numbers and a key.
fn is_positioned(line: &str, spec: &str) -> bool {
    let Some(rest) = line.strip_prefix(&format!("error: {spec}:")) else {
        return false;
    };
    let mut parts = rest.splitn(4, ": ");
    let place = parts.next().unwrap_or("");
    let key = parts.next().unwrap_or("");
    let message = parts.next().unwrap_or("");
    let numbers: Vec<&str> = place.split(':').collect();
    numbers.len() == 2
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        && !key.is_empty()
        && !key.contains(' ')
        && !message.is_empty()
}

#[test]
fn there_is_a_bad_spec_for_every_class_of_mistake() {
    let names: Vec<String> = invalid_specs()
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    assert!(
        names.len() >= 12,
        "only {} bad specs: {names:?}",
        names.len()
    );
    for class in [
        "syntax_",
        "unknown_key",
        "unknown_policy",
        "wrong_type",
        "tasks_zero",
        "trials_zero",
        "deadline_",
        "nice_",
        "rt_priority_",
        "work_without_unit",
        "cpus_",
        "empty_",
        "work_and_iterations",
        "io_bytes_too_large",
        "iterations_too_large",
        "claim_",
    ] {
        assert!(
            names.iter().any(|n| n.starts_with(class)),
            "no bad spec for {class}: {names:?}"
        );
    }
}

#[test]
fn every_bad_spec_exits_2_with_its_positioned_message_and_stores_nothing() {
    for spec in invalid_specs() {
        let shown = spec.display().to_string();
        let (code, stdout, stderr) = run_bad("plan", &spec, &[]);
        assert_eq!(code, Some(2), "plan {shown}: {stderr}");
        assert_eq!(stdout, "", "plan {shown} printed a plan");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "plan {shown}: one line expected: {stderr}");
        assert!(
            is_positioned(lines[0], &shown),
            "plan {shown}: not `error: PATH:LINE:COL: KEY: message`: {stderr}"
        );

        let (code, stdout, run_stderr) = run_bad("run", &spec, &["--quiet"]);
        assert_eq!(code, Some(2), "run {shown}: {run_stderr}");
        assert_eq!(stdout, "", "run {shown} printed results");
        assert_eq!(run_stderr, stderr, "run and plan disagree on {shown}");

        let name = spec
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        insta::assert_snapshot!(name, stderr);
    }
}

#[test]
fn a_mistake_brought_in_by_a_flag_is_not_blamed_on_the_file() {
    let scratch = tempfile::tempdir().expect("scratch directory");
    let spec = scratch.path().join("good.toml");
    std::fs::write(&spec, "name = \"good\"\n[axes]\ntasks = [4]\n").expect("spec written");
    let (code, _, stderr) = run_bad("plan", &spec, &["--tasks", "0"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "error: axes.tasks[0]: 0 is not a usable task count (accepted: 1..=100000)"
    );
}

#[test]
fn a_mistake_the_file_has_is_positioned_even_when_flags_are_given() {
    let scratch = tempfile::tempdir().expect("scratch directory");
    let spec = scratch.path().join("bad.toml");
    std::fs::write(&spec, "name = \"bad\"\n[settings]\nnice = -30\n").expect("spec written");
    let (code, _, stderr) = run_bad("plan", &spec, &["--trials", "2"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {}:3:8: settings.nice: -30 is out of range (accepted: -20..=19)",
            spec.display()
        )
    );
}

#[test]
fn a_bad_groups_value_names_the_flag_and_the_layout_once() {
    let scratch = tempfile::tempdir().expect("scratch directory");
    let spec = scratch.path().join("good.toml");
    std::fs::write(&spec, "name = \"good\"\n[axes]\ntasks = [2]\n").expect("spec written");
    for (groups, message) in [
        ("a=x", "error: --groups a=x: \"x\" is not a task count"),
        ("a=1,b=x", "error: --groups b=x: \"x\" is not a task count"),
        (
            "a",
            "error: --groups a: write NAME=TASKS for each group, joined with `:`, e.g. a=1:b=3",
        ),
    ] {
        let (code, _, stderr) = run_bad("run", &spec, &["--groups", groups]);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(stderr.trim_end(), message);
    }
}

/// Lines of spec-like TOML: real headers, keys and values of specs, mixed with wrong ones.
fn tomlish() -> impl Strategy<Value = String> {
    let header = prop::sample::select(vec![
        "[axes]",
        "[settings]",
        "[settings.deadline]",
        "[[axes.workloads]]",
        "[axis]",
        "[axes",
        "[[settings]]",
    ])
    .prop_map(str::to_string);
    let key = prop_oneof![
        prop::sample::select(vec![
            "name",
            "description",
            "policies",
            "priorities",
            "workloads",
            "tasks",
            "kind",
            "start",
            "cpus",
            "trials",
            "warmup",
            "work",
            "timeout",
            "seed",
            "nice",
            "rt_priority",
            "runtime",
            "deadline",
            "period",
            "iterations",
            "io_block",
            "io_bytes",
            "io_every",
            "split",
            "cpu_kernel",
            "io_mode",
            "io_dir",
            "axes.tasks",
            "settings.deadline.runtime",
            "\"quoted key\"",
        ])
        .prop_map(str::to_string),
        "[a-z_]{1,8}",
    ];
    let scalar = prop_oneof![
        prop::sample::select(vec![
            "0",
            "1",
            "3",
            "-1",
            "-21",
            "100",
            "100001",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "1.5",
            "true",
            "\"other\"",
            "\"fifo\"",
            "\"deadline\"",
            "\"fast\"",
            "\"cpu\"",
            "\"io\"",
            "\"mixed\"",
            "\"spread\"",
            "\"thread\"",
            "\"staggered\"",
            "\"50ms\"",
            "\"0s\"",
            "\"50\"",
            "\"1e400s\"",
            "\"9999999h\"",
            "\"3-1\"",
            "\"0-1\"",
            "\"\"",
            "1979-05-27T07:32:00Z",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,6}",
    ];
    let value = prop_oneof![
        3 => scalar.clone(),
        2 => prop::collection::vec(scalar.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        1 => prop::collection::vec((key.clone(), scalar), 0..3).prop_map(|kv| {
            let fields: Vec<String> = kv.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("[{{ {} }}]", fields.join(", "))
        }),
    ];
    let line = prop_oneof![
        1 => header,
        4 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => "[ -~]{0,12}",
    ];
    prop::collection::vec(line, 0..10).prop_map(|lines| lines.join("\n"))
}

/// Checks one text: no panic, and any error is one line naming the file first.
fn check_no_panic(text: &str) -> Result<(), TestCaseError> {
    match build_from_text("f.toml", text, 7) {
        Ok((spec, plan)) => {
            prop_assert!(
                !plan.trials.is_empty(),
                "a plan without trials from {text:?}"
            );
            prop_assert!(Spec::from_toml(text).is_ok());
            prop_assert_eq!(
                build(&spec, 7).map(|p| p.trials.len()).ok(),
                Some(plan.trials.len())
            );
        }
        Err(e) => {
            let e = e.to_string();
            prop_assert!(e.starts_with("f.toml"), "{} (from {text:?})", e);
            prop_assert!(!e.contains('\n'), "{} (from {text:?})", e);
        }
    }
    if let Ok(spec) = Spec::from_toml(text) {
        let _ = build(&spec, 7);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_parser_never_panics_on_arbitrary_text(chars in prop::collection::vec(
        prop_oneof![
            2 => any::<char>(),
            1 => prop::sample::select(vec!['\n', '\r', '[', ']', '=', '"', '\'', '{', '}', ',', '.', '#', ' ']),
        ],
        0..80,
    )) {
        let text: String = chars.into_iter().collect();
        check_no_panic(&text)?;
    }

    #[test]
    fn the_parser_and_planner_never_panic_on_spec_like_toml(text in tomlish()) {
        check_no_panic(&text)?;
    }
}
