//! The layout's invariants, read from the source: stages import one way, SQL only in the store,
//! unsafe code only in src/sys, and no source file over 600 lines.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every module at the top of the crate and the modules it may import from. The stages run
/// spec -> plan -> run -> store -> analyze -> report, with cli and app on top; the neutral
/// modules below them (records, policy, workload, machine, procfs, sys) import no stage.
const ALLOWED: &[(&str, &[&str])] = &[
    ("sys", &[]),
    ("procfs", &["sys"]),
    ("policy", &["sys"]),
    ("workload", &["sys", "procfs"]),
    ("records", &["policy", "workload"]),
    ("machine", &["procfs", "sys", "policy"]),
    ("spec", &["records", "policy", "workload", "procfs", "sys"]),
    (
        "plan",
        &["spec", "records", "policy", "workload", "procfs", "sys"],
    ),
    (
        "run",
        &[
            "plan", "records", "policy", "workload", "procfs", "sys", "machine",
        ],
    ),
    (
        "store",
        &["plan", "records", "policy", "workload", "procfs", "machine"],
    ),
    ("analyze", &[]),
    (
        "report",
        &[
            "analyze", "store", "records", "policy", "workload", "procfs",
        ],
    ),
    (
        "cli",
        &[
            "report", "analyze", "store", "run", "plan", "spec", "records", "policy", "workload",
            "procfs",
        ],
    ),
    (
        "app",
        &[
            "cli", "report", "analyze", "store", "run", "plan", "spec", "records", "policy",
            "workload", "procfs", "sys", "machine",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The top-level module a file belongs to (`src/run/trial.rs` -> `run`).
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The code of a line without its `//` comment (doc comments name other stages freely).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Top-level modules named by `crate::X` paths and `use crate::{X, Y::..}` groups in `text`.
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = code(line);
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push((n + 1, name));
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.push((n + 1, name));
            }
        }
    }
    out
}

#[test]
fn no_module_imports_from_a_stage_above_it() {
    let known: BTreeSet<&str> = ALLOWED.iter().map(|(m, _)| *m).collect();
    let mut wrong = Vec::new();
    for file in rust_files(&src()) {
        let top = top_module(&file);
        if top == "lib" || top == "main" {
            continue;
        }
        let Some((_, allowed)) = ALLOWED.iter().find(|(m, _)| *m == top) else {
            wrong.push(format!(
                "{}: module `{top}` is not in the architecture test's list; add it with its allowed imports",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, m) in imports(&text) {
            if m != top && known.contains(m.as_str()) && !allowed.contains(&m.as_str()) {
                wrong.push(format!("{}:{line}: {top} imports {m}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the pipeline's direction:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_reader_sees_paths_and_groups_but_not_comments() {
    let text = "use crate::store::Store;\nuse crate::{plan, run::sink::Sink};\n// crate::report in a comment\nlet x = crate::sys::now_ns();";
    let got: Vec<String> = imports(text).into_iter().map(|(_, m)| m).collect();
    assert_eq!(got, ["store", "plan", "run", "sys"]);
}

#[test]
fn sql_lives_only_in_the_store() {
    let mut wrong = Vec::new();
    for file in rust_files(&src()) {
        if top_module(&file) == "store" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = code(line);
            let sql = [
                "SELECT ",
                "INSERT INTO",
                "UPDATE ",
                "DELETE FROM",
                "CREATE TABLE",
            ]
            .iter()
            .any(|k| line.contains(k));
            if sql || line.contains("rusqlite") || line.contains("postgres::") {
                wrong.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "SQL outside src/store:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn unsafe_code_lives_only_in_sys() {
    let mut wrong = Vec::new();
    for file in rust_files(&src()) {
        if top_module(&file) == "sys" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = code(line);
            let words = line.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if words.into_iter().any(|w| w == "unsafe") {
                wrong.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "unsafe outside src/sys:\n{}",
        wrong.join("\n")
    );
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    assert!(
        lib.contains("#![deny(unsafe_code)]"),
        "the crate root denies unsafe code"
    );
}

#[test]
fn no_source_file_is_longer_than_600_lines() {
    let long: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            !(name == "tests.rs" || name.ends_with("_tests.rs"))
        })
        .filter_map(|f| {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            (n > 600).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over 600 lines (split them by job; tests may move to a tests.rs):\n{}",
        long.join("\n")
    );
}
