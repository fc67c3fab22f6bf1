//! Exit codes come from error types: every bad input below exits 2 and names the flag, key or
//! value to fix; what the machine or a server fails at exits 1. One table, run through the
//! real binary (each case fails before running anything, so the table takes seconds).

mod common;
mod report_db;

use common::schedlab;
use std::path::Path;

/// A dead PostgreSQL server: nothing listens on port 1.
const NO_SERVER: &str = "postgres://lab@127.0.0.1:1/lab";

struct Case {
    /// The command line.
    args: Vec<String>,
    /// The exit code it must give.
    code: i32,
    /// Text the error must hold: the flag, key or value to fix.
    names: &'static str,
}

fn case(args: &[&str], code: i32, names: &'static str) -> Case {
    Case {
        args: args.iter().map(|a| a.to_string()).collect(),
        code,
        names,
    }
}

/// Every case, on the databases and specs of `dir`.
fn cases(dir: &Path) -> Vec<Case> {
    let ok = report_db::synthetic_db(dir, "ok.db", 1.0);
    let junk = dir.join("junk.db");
    std::fs::write(&junk, "these are notes, not a database\n".repeat(50)).unwrap();
    let other = dir.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE runs (id INTEGER, athlete TEXT);")
        .unwrap();
    let spec = dir.join("spec.toml");
    std::fs::write(&spec, "name = \"x\"\n[axes]\ntasks = [1]\n").unwrap();
    let adaptive = dir.join("adaptive.toml");
    std::fs::write(
        &adaptive,
        "name = \"x\"\n[axes]\ntasks = [1]\n[settings]\nprecision = \"5%\"\n",
    )
    .unwrap();
    let p = |p: &Path| p.to_str().unwrap().to_string();
    let (ok, junk, other, spec, adaptive) = (p(&ok), p(&junk), p(&other), p(&spec), p(&adaptive));
    let missing = p(&dir.join("missing.db"));
    let no_dir = p(&dir.join("no/such/dir/x.db"));
    let out = p(&dir.join("report"));
    let db = |args: &[&str], code, names| {
        let mut v: Vec<&str> = args.to_vec();
        v.extend(["--db", ok.as_str()]);
        case(&v, code, names)
    };
    vec![
        // A --db that is no schedlab database, or no database at all.
        case(&["runs", "--db", &junk], 2, "--db"),
        case(&["runs", "--db", &other], 2, "--db"),
        case(&["runs", "--db", &missing], 2, "--db"),
        case(&["stats", "--db", &junk], 2, "--db"),
        case(&["run", "--db", &no_dir, "--quiet"], 2, "--db"),
        case(&["runs", "--db", "mysql://u@h/d"], 2, "--db"),
        // Run ids and selections that are not stored.
        db(&["show", "99"], 2, "show 99"),
        db(&["export", "--run", "99"], 2, "--run 99"),
        db(&["stats", "--run", "99"], 2, "--run 99"),
        db(&["report", "--run", "99", "--out", &out], 2, "--run 99"),
        db(&["stats", "--runs", "1,99"], 2, "--runs 99"),
        db(&["stats", "--spec-hash", "ffff"], 2, "--spec-hash ffff"),
        db(&["stats", "--spec-hash", "ff"], 2, "--spec-hash"),
        db(
            &["stats", "--baseline", "deadline"],
            2,
            "--baseline deadline",
        ),
        db(&["compare", "1", "99"], 2, "run B (99)"),
        db(&["run", "--resume", "99"], 2, "--resume 99"),
        db(&["run", "--resume"], 2, "--resume"),
        db(&["run", "--resume", "1", &spec], 2, "--resume"),
        case(
            &["push", &ok, "--to", &missing, "--runs", "99"],
            2,
            "--runs 99",
        ),
        case(&["push", &ok, "--to", &ok], 2, "--to"),
        // Flags and specs.
        case(
            &["worker", "--db", NO_SERVER, "--lease", "soon"],
            2,
            "--lease soon",
        ),
        case(
            &["worker", "--db", NO_SERVER, "--allow-knobs", "/etc/passwd"],
            2,
            "--allow-knobs /etc/passwd",
        ),
        case(
            &["plan", "--knob", "vm.swappiness"],
            2,
            "--knob vm.swappiness",
        ),
        case(
            &["plan", "--knob", "kernel.core_pattern=core"],
            2,
            "--allow-knob /proc/sys/kernel/core_pattern",
        ),
        case(&["plan", "--nice", "50"], 2, "settings.nice"),
        case(&["plan", "--work", "fast"], 2, "settings.work"),
        case(&["plan", "--tasks", "0"], 2, "axes.tasks"),
        case(
            &[
                "plan",
                "--workload",
                "io",
                "--io-dir",
                &p(&dir.join("nowhere")),
            ],
            2,
            "settings.io_dir",
        ),
        case(&["plan", &p(&dir.join("missing.toml"))], 2, "missing.toml"),
        case(
            &["submit", &spec, "--db", NO_SERVER, "--repeat", "0"],
            2,
            "--repeat 0",
        ),
        case(
            &["submit", &adaptive, "--db", NO_SERVER],
            2,
            "settings.precision",
        ),
        case(&["report", "--format", "pdf", "--db", &ok], 2, "--format"),
        // Not the user's input: a server out of reach is a failure.
        case(&["runs", "--db", NO_SERVER], 1, "cannot connect"),
        case(&["submit", &spec, "--db", NO_SERVER], 1, "cannot connect"),
    ]
}

#[test]
fn bad_input_exits_2_naming_what_to_fix_and_failures_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut wrong = Vec::new();
    for c in cases(dir.path()) {
        let out = schedlab()
            .args(&c.args)
            .env("SCHEDLAB_STATE_DIR", &state)
            .env_remove("SCHEDLAB_DB")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(c.code) || !said.contains(c.names) {
            wrong.push(format!(
                "schedlab {}: exit {:?}, wanted {} naming {:?}: {}",
                c.args.join(" "),
                out.status.code(),
                c.code,
                c.names,
                said.trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(
        !dir.path().join("missing.db").exists(),
        "bad input creates no database"
    );
}
