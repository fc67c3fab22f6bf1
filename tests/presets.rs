//! The presets in examples/: each plans cleanly with the real binary, has the cells its axes
//! give, documents itself, and (quick.toml) equals the built-in quick experiment.

use assert_cmd::Command;
use schedlab_spec::plan;
use schedlab_spec::Spec;
use std::path::{Path, PathBuf};

/// Cells each preset must expand to, computed by hand from its axes
/// (policies x priorities x workloads x tasks x kind x start x cpus x antagonists x knobs x
/// cgroup axes).
const EXPECTED_CELLS: &[(&str, usize)] = &[
    // 3 policies x 1 x 1 workload x 1 task count x 1 x 1 x 1 CPU list
    ("quick", 3),
    // 3 policies x 1 x 3 workloads x 3 task counts (10, 50, 100)
    ("policies-by-workload", 27),
    // 3 policies x 1 x 3 workloads x 3 task counts (10, 50, 250)
    ("response-turnaround", 27),
    // 3 policies x 2 priority modes x 3 workloads x 3 task counts: the study's 54 vectors
    ("priority-spread", 54),
    // 5 policies x 1 x 1 workload x 10 thread counts (1..=10)
    ("thread-scaling", 50),
    // 1 policy x 2 workloads x 1 task count x 4 I/O schedulers
    ("io-schedulers-synthetic", 8),
    // 6 start orders x 4 I/O schedulers
    ("io-schedulers", 24),
    // 1 policy x 1 periodic workload x 3 slices
    ("eevdf-slice", 3),
    // 1 policy x 1 workload x 3 quanta
    ("rr-quantum", 3),
    // 1 policy x 1 workload x 2 antagonist counts x 2 throttling values
    ("rt-throttling", 4),
    // 1 policy x 1 periodic workload x 7 cpu.max values (3 limits x 2 periods, and max)
    ("cpu-limit-tail", 7),
    // 1 policy x 1 workload x 2 group layouts x 3 weight pairs
    ("group-weights", 6),
    // 1 policy x 1 workload x 2 antagonist counts x 2 cpusets (partitioned CPU 1, unpinned)
    ("deadline-partition", 4),
    // 3 policies x 6 messaging workloads (1, 2, 4 groups x pipe, socket)
    ("hackbench", 18),
    // 2 policies x 1 workload x 2 CPU lists
    ("pipe", 4),
    // 1 policy x 3 request workloads (2, 4, 8 workers) x 3 slices
    ("schbench-slice", 9),
    // 3 policies x 6 periodic workloads (run 2..15 ms) x 1 task count
    ("rt-app-periodic", 18),
];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Names (without .toml) of every preset in examples/, sorted.
fn preset_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .expect("examples/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_preset(name: &str) -> String {
    std::fs::read_to_string(examples_dir().join(format!("{name}.toml"))).unwrap()
}

/// The numbers of the `plan` summary line: (cells, trials per cell, warm-up, total trials).
fn summary_numbers(stdout: &str) -> (usize, usize, usize, usize) {
    let line = stdout
        .lines()
        .find(|l| l.contains(" cells x ") && l.contains("estimated duration"))
        .unwrap_or_else(|| panic!("no summary line in the plan output:\n{stdout}"));
    // "54 cells x 4 trials (0 warm-up) = 216 trials; estimated duration ...", or for an
    // adaptive plan "27 cells x 5..20 trials (0 warm-up) = 135..540 trials; ...": the
    // first rounds are read (the planned ones; the rest are added while it runs).
    let line = line
        .split("..")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.trim_start_matches(|c: char| c.is_ascii_digit())
            }
        })
        .collect::<String>();
    let nums: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(nums.len(), 4, "unexpected summary line: {line}");
    (nums[0], nums[1], nums[2], nums[3])
}

#[test]
fn every_preset_plans_with_the_real_binary_and_has_the_cells_its_axes_give() {
    let names = preset_names();
    let mut expected: Vec<String> = EXPECTED_CELLS.iter().map(|(n, _)| n.to_string()).collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "examples/*.toml and EXPECTED_CELLS in this test must list the same presets"
    );
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("p.db");
    for &(name, cells) in EXPECTED_CELLS {
        let assert = Command::cargo_bin("schedlab")
            .unwrap()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["plan", &format!("examples/{name}.toml"), "--db"])
            .arg(&db)
            .assert();
        let out = assert.get_output();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "schedlab plan examples/{name}.toml failed ({:?}):\n{stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let (got_cells, per_cell, warmup, total) = summary_numbers(&stdout);
        assert_eq!(
            got_cells, cells,
            "{name}: cells in `plan` output:\n{stdout}"
        );
        let spec = Spec::from_toml(&read_preset(name)).unwrap();
        let s = &spec.settings;
        assert_eq!(
            per_cell,
            (s.trials + s.warmup) as usize,
            "{name}: trials per cell"
        );
        assert_eq!(warmup, s.warmup as usize, "{name}: warm-up trials");
        assert_eq!(total, cells * per_cell, "{name}: total trials");
    }
}

#[test]
fn the_quick_preset_is_exactly_the_built_in_quick_experiment() {
    let spec = Spec::from_toml(&read_preset("quick")).expect("quick.toml parses");
    assert_eq!(spec, Spec::default_quick());
}

#[test]
fn every_scaled_size_names_its_original_one_edit_away_and_the_original_still_plans() {
    let mut scaled = 0;
    for name in preset_names() {
        let text = read_preset(&name);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("# original:") else {
                continue;
            };
            scaled += 1;
            // "# original: KEY = VALUE   (remark)" -> "KEY = VALUE"
            let original = rest
                .split("  ")
                .map(str::trim)
                .find(|s| !s.is_empty())
                .unwrap();
            let key = original
                .split(" = ")
                .next()
                .filter(|k| original.contains(" = ") && !k.contains(' '))
                .unwrap_or_else(|| panic!("{name}.toml:{}: not `KEY = VALUE`: {line}", i + 1));
            let scaled_line = lines[..i]
                .iter()
                .rposition(|l| !l.trim_start().starts_with('#'))
                .map(|j| (j, lines[j]))
                .unwrap();
            assert!(
                scaled_line.1.starts_with(&format!("{key} = ")),
                "{name}.toml:{}: the line before `# original: {key} = ...` must set {key}, found {:?}",
                i + 1,
                scaled_line.1
            );
            assert_ne!(
                scaled_line.1.trim(),
                original,
                "{name}.toml:{}: the original equals the value in use",
                i + 1
            );
            let mut edited: Vec<&str> = lines.clone();
            edited[scaled_line.0] = original;
            let edited = edited.join("\n");
            let as_run = plan::build(&Spec::from_toml(&text).unwrap(), 1).unwrap();
            let original_spec = Spec::from_toml(&edited)
                .unwrap_or_else(|e| panic!("{name}.toml with `{original}`: {e}"));
            let original_plan = plan::build(&original_spec, 1)
                .unwrap_or_else(|e| panic!("{name}.toml with `{original}`: {e}"));
            assert_eq!(original_plan.cells.len(), as_run.cells.len(), "{name}");
            assert_ne!(
                original_plan.cells, as_run.cells,
                "{name}.toml: `{original}` must change the work of some cell"
            );
        }
    }
    // policies-by-workload (cpu iterations), response-turnaround (work), thread-scaling (work),
    // io-schedulers-synthetic (io_bytes), io-schedulers (duration).
    assert_eq!(scaled, 5, "scaled values with an `# original:` line");
}

#[test]
fn every_preset_header_says_what_it_is_and_the_command_that_runs_it() {
    for name in preset_names() {
        let text = read_preset(&name);
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        assert!(
            header.len() >= 10,
            "{name}.toml: a comment header of at least 10 lines is expected, found {}",
            header.len()
        );
        assert!(
            header[0].starts_with(&format!("# {name} ")),
            "{name}.toml: the header starts with the preset's name: {:?}",
            header[0]
        );
        let header = header.join("\n");
        assert!(
            header.contains(&format!("schedlab run examples/{name}.toml")),
            "{name}.toml: the header gives the command that runs it"
        );
        if name != "quick" {
            // A study's preset names it; a kernel-knob preset says it is not one of them.
            assert!(
                (header.contains("study 0") || header.contains("Not one of the studies"))
                    && header.contains("What it found"),
                "{name}.toml: the header names its study (or says it has none) and what it found"
            );
        }
        let spec = Spec::from_toml(&text).unwrap();
        assert_eq!(spec.name, name, "{name}.toml: `name` matches the file name");
        assert!(!spec.description.is_empty(), "{name}.toml: a description");
    }
}

/// The study presets and the fewest claims each must declare (issue 18: the findings each
/// study states, or for 001, which states none, what its design tests).
const STUDY_CLAIMS: &[(&str, usize)] = &[
    ("policies-by-workload", 4),    // 000
    ("response-turnaround", 3),     // 001
    ("priority-spread", 4),         // 002
    ("thread-scaling", 2),          // 003
    ("io-schedulers-synthetic", 1), // 004, built-in workloads
    ("io-schedulers", 1),           // 004
];

#[test]
fn every_study_preset_declares_its_findings_as_claims_that_check_against_its_axes() {
    for &(name, fewest) in STUDY_CLAIMS {
        let spec = Spec::from_toml(&read_preset(name)).unwrap();
        let checked = spec
            .validate()
            .unwrap_or_else(|p| panic!("{name}.toml: {p:?}"));
        assert!(
            checked.claims.len() >= fewest,
            "{name}.toml: {} claims, at least {fewest} expected",
            checked.claims.len()
        );
        let mut names: Vec<&str> = checked.claims.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            checked.claims.len(),
            "{name}.toml: claim names repeat"
        );
        for c in &checked.claims {
            assert_ne!(
                c.text, c.name,
                "{name}.toml: claim {} says in words what it claims",
                c.name
            );
        }
    }
    // Presets without a study declare nothing (their headers say "Not one of the studies"),
    // but the quick experiment, whose two claims theory settles (tested below).
    for name in preset_names() {
        if name != "quick" && STUDY_CLAIMS.iter().all(|(n, _)| *n != name) {
            let spec = Spec::from_toml(&read_preset(&name)).unwrap();
            assert!(
                spec.claims.is_empty(),
                "{name}.toml is no study, yet declares claims"
            );
        }
    }
}
