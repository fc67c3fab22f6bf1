//! The layout's invariants. The compiler keeps the layering: each stage is a crate, and a crate
//! can name only the crates its manifest lists, so these tests check the manifests (through
//! `cargo metadata`) rather than `use` lines. What no manifest says is read from the sources
//! parsed as Rust (syn): SQL only in the store crate, `#![forbid(unsafe_code)]` in every crate
//! root but sys and no `unsafe` in the files of test, bench and example targets, files under
//! 600 lines, functions under 80 lines (every one of the 28 longer ones of issue 17 was split),
//! no `Result<_, String>` in production code and no anyhow in a library crate (`errors.rs`),
//! no text formatted in the report's model but in the files still listed (`model_text.rs`).

mod deps;
mod errors;
mod graph;
mod model_text;
mod reach;
mod source;
mod sql;
mod tree;

use graph::{Workspace, STORE, SYS};
use std::path::{Path, PathBuf};

/// The longest files allowed, in lines (files only tests compile are not counted).
const MAX_FILE_LINES: usize = 600;

/// The longest function allowed outside tests, in lines (issue 17, part 3).
const MAX_FUNCTION_LINES: usize = 80;

fn workspace() -> Workspace {
    graph::metadata()
}

fn relative(ws: &Workspace, p: &Path) -> String {
    p.strip_prefix(&ws.root).unwrap_or(p).display().to_string()
}

/// The Rust files of a package's own code: its `src/` and its build script (not the tests
/// and benchmarks of the binary, which check the store with their own SQL).
fn code_files(p: &graph::Package) -> Vec<PathBuf> {
    let mut files = source::rust_files(&p.dir.join("src"));
    files.extend(
        p.targets
            .iter()
            .filter(|t| t.kind == "custom-build")
            .map(|t| t.src_path.clone()),
    );
    files
}

/// The target kinds whose module trees are production code (not tests, benchmarks, examples).
const PRODUCTION: &[&str] = &["lib", "rlib", "bin", "proc-macro", "custom-build"];

/// The files of a package's production code: the module trees of its library, binaries and
/// build script without the modules only tests compile, told by the tree (a `#[cfg(test)]`
/// on the way), not by the files' names: `crates/analyze/src/rank_tests.rs` is production.
fn production_files(p: &graph::Package) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for t in p
        .targets
        .iter()
        .filter(|t| PRODUCTION.contains(&t.kind.as_str()))
    {
        for f in tree::files(&t.src_path) {
            if !f.test_only && !files.contains(&f.path) {
                files.push(f.path);
            }
        }
    }
    files
}

fn read(path: &Path) -> (String, syn::File) {
    let text = std::fs::read_to_string(path).unwrap();
    let file = source::parse(&path.display().to_string(), &text);
    (text, file)
}

#[test]
fn the_crate_graph_points_down_the_pipeline() {
    let wrong = graph::violations(&workspace());
    assert!(wrong.is_empty(), "the crate graph:\n{}", wrong.join("\n"));
}

/// The six ways the old text scan was fooled (`use super::super::store::Store`, nested and
/// multi-line `use crate::{..}` groups, a re-export through lib.rs, ...) were spellings of an
/// import. A crate can only name what its manifest lists, so no spelling reaches the store
/// from the run crate: this is the whole check.
#[test]
fn the_run_crate_cannot_name_the_store() {
    let ws = workspace();
    let run = ws
        .packages
        .iter()
        .find(|p| p.name == "schedlab-run")
        .unwrap();
    let names: Vec<&str> = run.deps.iter().map(|d| d.name.as_str()).collect();
    assert!(names.contains(&"schedlab-spec"), "read the real manifest");
    for later in [STORE, "schedlab-analyze", "schedlab-report", "schedlab"] {
        assert!(
            !names.contains(&later),
            "schedlab-run depends on {later}: {names:?}"
        );
    }
}

#[test]
fn the_graph_check_refuses_dependencies_up_the_pipeline_and_databases_outside_the_store() {
    let ws = workspace();
    let mut bad = ws.packages.clone();
    for p in &mut bad {
        let add = |name: &str, kind: &str| graph::Dep {
            name: name.to_string(),
            kind: kind.to_string(),
        };
        match p.name.as_str() {
            "schedlab-run" => p.deps.push(add(STORE, "normal")),
            "schedlab-spec" => p.deps.push(add("schedlab-run", "dev")),
            "schedlab-report" => p.deps.push(add("rusqlite", "normal")),
            "schedlab-analyze" => p.deps.push(add("postgres", "dev")),
            "schedlab-core" => p.deps.push(add(graph::TEST_SUPPORT, "normal")),
            "schedlab-procfs" => p.deps.push(add(graph::TEST_SUPPORT, "dev")),
            _ => {}
        }
    }
    bad.push(graph::Package {
        name: "schedlab-extra".into(),
        ..bad[0].clone()
    });
    let wrong = graph::violations(&Workspace {
        packages: bad,
        root: ws.root.clone(),
        members: vec![],
        default_members: vec![],
    });
    let expect = [
        "schedlab-run depends on schedlab-store",
        "schedlab-spec depends on schedlab-run",
        "schedlab-report depends on rusqlite",
        "schedlab-analyze depends on postgres",
        "schedlab-core depends on schedlab-testkit (normal): test support is a dev-dependency only",
        "crate `schedlab-extra` is not in",
    ];
    for e in expect {
        assert!(
            wrong.iter().any(|w| w.contains(e)),
            "{e} not reported: {wrong:#?}"
        );
    }
    assert_eq!(wrong.len(), expect.len(), "{wrong:#?}");
}

/// `cargo build` and `cargo test` at the root build and test every crate.
#[test]
fn the_root_commands_build_every_crate() {
    let ws = workspace();
    let mut members = ws.members.clone();
    let mut defaults = ws.default_members.clone();
    members.sort();
    defaults.sort();
    assert_eq!(members.len(), graph::ALLOWED.len());
    assert_eq!(defaults, members, "workspace.default-members");
}

/// `env!("CARGO_PKG_VERSION")` in any crate is schedlab's version (the workspace's).
#[test]
fn every_crate_has_schedlab_s_version() {
    let ws = workspace();
    let root = ws.packages.iter().find(|p| p.name == "schedlab").unwrap();
    for p in &ws.packages {
        assert_eq!(p.version, root.version, "{}'s version", p.name);
    }
}

#[test]
fn every_crate_root_but_sys_forbids_unsafe_code() {
    let ws = workspace();
    let mut wrong = Vec::new();
    let mut roots = 0;
    for p in &ws.packages {
        for t in &p.targets {
            if !["lib", "bin", "custom-build"].contains(&t.kind.as_str()) {
                continue;
            }
            let (_, file) = read(&t.src_path);
            let forbids = source::forbids_unsafe(&file);
            roots += 1;
            if forbids == (p.name == SYS && t.kind == "lib") {
                wrong.push(format!(
                    "{} ({}): {}",
                    relative(&ws, &t.src_path),
                    t.kind,
                    if forbids {
                        "sys is the crate of the unsafe code"
                    } else {
                        "no #![forbid(unsafe_code)]"
                    }
                ));
            }
        }
    }
    assert!(roots > graph::ALLOWED.len(), "read every crate root");
    assert!(wrong.is_empty(), "crate roots:\n{}", wrong.join("\n"));
}

#[test]
fn the_forbid_check_reads_the_attribute_not_the_text() {
    let forbids = |text: &str| source::forbids_unsafe(&source::parse("t.rs", text));
    assert!(forbids("//! Doc.\n\n#![forbid(unsafe_code)]\n"));
    assert!(forbids("#![forbid(missing_docs, unsafe_code)]\n"));
    assert!(
        !forbids("#![deny(unsafe_code)]\n"),
        "deny can be allowed again"
    );
    assert!(!forbids("// #![forbid(unsafe_code)]\n"));
    assert!(
        !forbids("#[forbid(unsafe_code)]\nfn f() {}\n"),
        "an outer attribute"
    );
    assert!(!forbids(
        "fn f() { let _ = \"#![forbid(unsafe_code)]\"; }\n"
    ));
}

/// The roots of test, bench and example targets are not checked for `#![forbid(unsafe_code)]`
/// (above): their files are read instead, in every crate but sys, and hold no `unsafe` at all.
/// Unsafe code and raw syscalls live in sys; a test signals through `tests/common::signal`,
/// limits a child through `prlimit`, and has the pg server stopped by a watchdog.
#[test]
fn no_test_bench_or_example_file_has_unsafe() {
    let ws = workspace();
    let mut dirs = std::collections::BTreeSet::new();
    for p in ws.packages.iter().filter(|p| p.name != SYS) {
        for t in &p.targets {
            if ["test", "bench", "example"].contains(&t.kind.as_str()) {
                dirs.insert(t.src_path.parent().unwrap().to_path_buf());
            }
        }
    }
    let files: std::collections::BTreeSet<PathBuf> =
        dirs.iter().flat_map(|d| source::rust_files(d)).collect();
    // The modules of the tests too, not only their roots.
    for module in [
        "tests/common/mod.rs",
        "tests/pg/server.rs",
        "bench/launch.rs",
    ] {
        assert!(
            files.contains(&ws.root.join(module)),
            "{module} not read: {files:?}"
        );
    }
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for line in source::unsafe_lines(&f.display().to_string(), &text) {
            wrong.push(format!("{}:{line}", relative(&ws, f)));
        }
    }
    assert!(
        wrong.is_empty(),
        "`unsafe` outside the sys crate (move it into sys behind a safe function):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_unsafe_check_reads_the_keyword_not_the_text() {
    // The inputs write the keyword as `@`, so that this file holds no line of code-like
    // `unsafe` text for a reader that greps for it.
    const KEYWORD: &str = concat!("un", "safe");
    let lines = |text: &str| source::unsafe_lines("t.rs", &text.replace('@', KEYWORD));
    assert_eq!(lines("fn f() {\n    @ { g() };\n}\n"), [2]);
    assert_eq!(
        lines("fn f(pid: i32) {\n    assert_eq!(@ { kill(pid, 0) }, 0);\n}\n"),
        [2],
        "inside a macro call"
    );
    assert_eq!(
        lines("@ fn f() {}\nstruct S;\n@ impl Send for S {}\n@ trait T {}\n"),
        [1, 3, 4]
    );
    assert_eq!(
        lines("@ extern \"C\" {\n    fn atexit(f: extern \"C\" fn()) -> i32;\n}\n"),
        [1]
    );
    assert_eq!(
        lines("fn f() {\n    let g = || @ { h() };\n}\n"),
        [2],
        "in a closure"
    );
    let none: [usize; 0] = [];
    for prose in [
        "// @ { g() }\nfn f() {}\n",
        "/// Never `@ { g() }`.\nfn f() {}\n",
        "/* @ { g() } */\nfn f() {}\n",
        "fn f() { let _ = \"@ { g() }\"; }\n",
        "fn f() { let _ = r#\"@\"#; }\n",
        "#![forbid(@_code)]\nfn is_@() { let r#@ = 1; }\n",
        "fn f() { assert!(!text.contains(\"@\")); }\n",
    ] {
        assert_eq!(lines(prose), none, "{}", prose.replace('@', KEYWORD));
    }
}

#[test]
fn sql_lives_only_in_the_store_crate() {
    let ws = workspace();
    let (mut wrong, mut in_store) = (Vec::new(), 0);
    for p in &ws.packages {
        for f in code_files(p) {
            let (_, file) = read(&f);
            let sql = source::sql_in(&file);
            if p.name == STORE {
                in_store += sql.len();
                continue;
            }
            for (line, text) in sql {
                wrong.push(format!("{}:{line}: {text:?}", relative(&ws, &f)));
            }
        }
        if p.name != STORE {
            for f in files_named(&p.dir, "sql") {
                wrong.push(format!("{}: an SQL file", relative(&ws, &f)));
            }
        }
    }
    // The reader is not blind: it finds the store's own statements.
    assert!(in_store >= 40, "SQL found in the store: {in_store}");
    assert!(
        wrong.is_empty(),
        "SQL outside {STORE}:\n{}",
        wrong.join("\n")
    );
}

/// Files with extension `ext` under `dir`, not under `target/` or another crate's directory.
fn files_named(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if !matches!(name.to_str(), Some("target" | "crates" | ".git")) {
                out.extend(files_named(&p, ext));
            }
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}

/// The six ways a review fooled the old line scan: four were import spellings, which only
/// the manifests decide now (see `the_run_crate_cannot_name_the_store`); these are the rest.
#[test]
fn the_sql_reader_sees_what_the_line_scan_missed() {
    let sql_lines = |text: &str| -> Vec<usize> {
        source::sql_in(&source::parse("t.rs", text))
            .into_iter()
            .map(|(line, _)| line)
            .collect()
    };
    // A URL on the same line used to cut the line off at `//`.
    assert_eq!(
        sql_lines("fn f() { let u = \"http://x\"; let q = \"SELECT id FROM runs\"; }"),
        [1]
    );
    // Lower-case SQL.
    assert_eq!(sql_lines("fn f() { g(\"select id from runs\"); }"), [1]);
    assert_eq!(
        sql_lines("const Q: &str = \"insert into runs (id) values (?1)\";"),
        [1]
    );
    // Split across lines, in one literal and through concat!.
    assert_eq!(
        sql_lines("fn f() {\n    g(\"SELECT id\n         FROM runs\");\n}"),
        [2]
    );
    assert_eq!(
        sql_lines(
            "fn f() {\n    g(concat!(\n        \"SELECT id \",\n        \"FROM runs\"\n    ));\n}"
        ),
        [2]
    );
    assert_eq!(
        sql_lines("const Q: &str = concat!(\"DELETE \", \"FROM trials\");"),
        [1]
    );
    // Inside macro calls and format strings.
    assert_eq!(
        sql_lines("fn f() { println!(\"{}\", format!(\"UPDATE {t} SET lease = ?1\")); }"),
        [1]
    );
    assert_eq!(sql_lines("fn f() { g(r#\"PRAGMA user_version\"#); }"), [1]);
    // Comments and doc comments are prose.
    assert_eq!(
        sql_lines("/// SELECT id FROM runs\nfn f() {} // SELECT id FROM runs\n"),
        [] as [usize; 0]
    );
}

#[test]
fn the_sql_reader_takes_prose_for_prose() {
    for s in [
        "SELECT id FROM runs WHERE x = ?1",
        "select count(*) from trials",
        "SELECT a.x, MAX(b) AS m FROM t a JOIN u b ON a.id = b.id",
        "SELECT CASE WHEN x THEN 1 ELSE 0 END FROM t",
        "INSERT OR IGNORE INTO t(a) VALUES (1)",
        "insert into \"queue\" (run_id) select id from runs",
        "UPDATE queue SET lease_until = ?1",
        "DELETE FROM trials WHERE run_id = ?1",
        "delete from t",
        "CREATE TABLE IF NOT EXISTS runs (id INTEGER)",
        "create index trials_run on trials(run_id)",
        "DROP TABLE IF EXISTS x",
        "ALTER TABLE runs ADD COLUMN uuid TEXT",
        "PRAGMA journal_mode = WAL",
        "COPY samples (a, b) FROM STDIN BINARY",
        "SELECT {cols} FROM {table}",
        "SELECT pg_advisory_xact_lock(?1)",
        "select 1",
    ] {
        assert!(sql::is_sql(s), "SQL not seen: {s}");
    }
    for s in [
        "select the trials from the run",
        "Select a policy from the list below",
        "we select trials from each cell",
        "could not delete from the disk: {e}",
        "delete from disk when done",
        "insert into the queue",
        "update the store and set its flags",
        "Update: set with care",
        "create a table of results",
        "the runs, from the store",
        "pragma",
        "copy the files from the spool",
        "the report's tables (select a format with --format) from stored runs",
        "Select one of the runs",
        "select",
        "cannot insert into {table}",
    ] {
        assert!(!sql::is_sql(s), "prose taken for SQL: {s}");
    }
}

#[test]
fn no_source_file_is_longer_than_600_lines() {
    let ws = workspace();
    let mut long = Vec::new();
    for p in &ws.packages {
        for f in production_files(p) {
            let n = std::fs::read_to_string(&f).unwrap().lines().count();
            if n > MAX_FILE_LINES {
                long.push(format!("{}: {n} lines", relative(&ws, &f)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them by job; tests may move to a tests.rs):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_function_outside_tests_is_longer_than_80_lines() {
    let ws = workspace();
    let mut long = Vec::new();
    for p in &ws.packages {
        for f in production_files(p) {
            let (_, file) = read(&f);
            for (name, n) in source::functions(&file) {
                if n > MAX_FUNCTION_LINES {
                    long.push((format!("{}: {name}", relative(&ws, &f)), n));
                }
            }
        }
    }
    let wrong: Vec<String> = long
        .iter()
        .map(|(name, n)| format!("{name} is {n} lines"))
        .collect();
    assert!(
        wrong.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines outside tests (split them by meaning):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn function_lengths_are_counted_from_fn_to_the_closing_brace_outside_tests() {
    let body = "    let x = 1;\n".repeat(79);
    let text = format!(
        "/// Doc.\nfn long() {{\n{body}}}\nfn short() {{}}\nstruct S;\nimpl S {{\n    fn method(&self) {{\n{body}    }}\n}}\n#[cfg(test)]\nmod tests {{\n    fn helper() {{\n{body}{body}    }}\n}}\nmod inner {{\n    #[test]\n    fn t() {{\n{body}{body}    }}\n    fn g() {{ fn nested() {{}} }}\n}}\n"
    );
    let got = source::functions(&source::parse("t.rs", &text));
    assert_eq!(
        got,
        [
            ("long".to_string(), 81),
            ("short".to_string(), 1),
            ("S::method".to_string(), 81),
            ("inner::g".to_string(), 1),
        ]
    );
}

/// The report crate's model (what a run showed: `model.rs`, `model/`, `claims/`) is data
/// only: no file of it names the renderers (`crate::render`, `super::render`, ...).
#[test]
fn the_report_model_does_not_use_its_renderers() {
    let ws = workspace();
    let src = ws.root.join("crates/report/src");
    let files: Vec<PathBuf> = std::iter::once(src.join("model.rs"))
        .chain(source::rust_files(&src.join("model")))
        .chain(source::rust_files(&src.join("claims")))
        .collect();
    assert!(files.len() > 10, "{files:?}");
    let mut wrong = Vec::new();
    for f in &files {
        let (_, file) = read(f);
        for (line, path) in source::paths_to_module(&file, "render") {
            wrong.push(format!("{}:{line}: {path}", relative(&ws, f)));
        }
    }
    assert!(
        wrong.is_empty(),
        "the report model names its renderers (move the type into the model, or call the renderer from render/):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_model_check_reads_paths_not_prose() {
    let paths = |text: &str| source::paths_to_module(&source::parse("t.rs", text), "render");
    assert_eq!(paths("use crate::render::plots::Bar;\n").len(), 1);
    assert_eq!(paths("use crate::{model, render::plots};\n").len(), 1);
    assert_eq!(paths("use super::super::render::*;\n").len(), 1);
    assert_eq!(
        paths("fn f() {\n    let s = crate::render::claims::table::line(c);\n}\n"),
        [(2, "crate::render::claims::table::line".to_string())]
    );
    assert_eq!(paths("fn f(b: super::render::Bar) {}\n").len(), 1);
    for clean in [
        "//! Drawn by [`crate::render::plots`].\nfn f() {}\n",
        "fn f() { let _ = \"crate::render\"; }\n",
        "use crate::model::render_time;\n",
        "mod render { pub fn f() {} }\nfn g() { self::render::f(); render::f(); }\n",
    ] {
        assert!(paths(clean).is_empty(), "{clean}");
    }
}

/// The model reaches the renderers by no way round either: no module it names names them, and
/// so on (before issue 28 it did, by `model` -> `pool` -> `cmd` -> `render`).
#[test]
fn the_report_model_reaches_its_renderers_by_no_way_round() {
    let ws = workspace();
    let edges = reach::module_edges(&ws.root.join("crates/report/src/lib.rs"));
    assert!(
        edges.contains_key("render") && edges.contains_key("model"),
        "{edges:?}"
    );
    if let Some(way) = reach::way(&edges, &["model", "claims"], "render") {
        panic!(
            "the report model reaches its renderers: {} (modules naming modules: {edges:?})",
            way.join(" -> ")
        );
    }
}
