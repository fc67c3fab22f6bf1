//! Text from outside reaching a terminal, LaTeX or Markdown (issue 27 item 8): names,
//! descriptions and labels with control characters are refused when a spec or flag gives
//! them, and what is stored already (by an older schedlab, or written into the database by
//! hand) is shown through one printable filter on a terminal, escaped completely in LaTeX,
//! and with `<` and `>` escaped in Markdown.

use rusqlite::params;
use std::path::Path;
use std::process::Output;

mod common;
mod report_db;

use common::{schedlab, Scratch};
use report_db::synthetic_db;

/// A run name that ends a LaTeX comment line, runs a shell escape, and sets a terminal's
/// window title and clears its screen.
const EVIL_NAME: &str =
    "x\r\\immediate\\write18{id}\\input{/etc/hostname}\u{1b}]0;owned\u{7}\u{1b}[2J<script>alert(1)</script>";

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn run_in(db: &Path, args: &[&str]) -> Output {
    schedlab()
        .args(args)
        .args(["--db", db.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn stored_hostile_text_is_escaped_in_every_output() {
    let s = Scratch::new();
    let db = synthetic_db(s.path(), "a.db", 1.0);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE runs SET name = ?1", params![EVIL_NAME])
        .unwrap();
    c.execute(
        "UPDATE warnings SET message = ?1",
        params![format!("warned {EVIL_NAME}")],
    )
    .unwrap();
    drop(c);
    let out = s.path().join("out");
    let o = schedlab()
        .args(["report", "--db", db.to_str().unwrap(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let dir = out.join("1");
    let tex = std::fs::read_to_string(dir.join("report.tex")).unwrap();
    for line in tex.split(['\n', '\r']) {
        assert!(
            !line.trim_start().starts_with("\\immediate") && !line.contains("\\write18"),
            "LaTeX runs it: {line:?}"
        );
    }
    assert!(!tex.contains(['\r', '\u{1b}', '\u{7}']), "{tex:?}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        !md.contains("<script>") && !md.contains("</script>"),
        "{md}"
    );
    assert!(!md.contains(['\r', '\u{1b}', '\u{7}']), "{md:?}");
    for args in [
        &["runs"][..],
        &["stats"],
        &["show"],
        &["export", "--table", "trials"],
    ] {
        let o = run_in(&db, args);
        let said = text(&o);
        if args[0] != "export" {
            assert!(o.status.success(), "{args:?}: {said}");
            assert!(
                !said.contains(['\u{1b}', '\u{7}', '\r']),
                "{args:?}: {said:?}"
            );
        }
    }
}

#[test]
fn names_descriptions_and_labels_with_control_characters_are_refused() {
    let s = Scratch::new();
    for (key, line) in [
        ("name", "name = \"a\\rb\"\n"),
        ("description", "name = \"a\"\ndescription = \"x\\u001b[2Jy\"\n"),
        (
            "claims",
            "name = \"a\"\n[axes]\npolicies = [\"other\", \"fifo\"]\n[[claims]]\nname = \"c\\u001b]0;t\\u0007\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\n",
        ),
    ] {
        let spec = s.path().join(format!("{key}.toml"));
        std::fs::write(&spec, line).unwrap();
        let o = schedlab()
            .args(["plan", spec.to_str().unwrap(), "--db", s.db().to_str().unwrap()])
            .output()
            .unwrap();
        let said = text(&o);
        assert_eq!(o.status.code(), Some(2), "{key}: {said}");
        assert!(said.contains("control character"), "{key}: {said}");
        assert!(!said.contains(['\u{1b}', '\r']), "{key}: {said:?}");
    }
    // Host labels of `submit` and `worker`.
    let spec = s.path().join("ok.toml");
    std::fs::write(&spec, "name = \"ok\"\n").unwrap();
    for args in [
        vec!["submit", spec.to_str().unwrap(), "--hosts", "web\u{1b}[2J"],
        vec!["worker", "--labels", "web\u{1b}[2J"],
    ] {
        let o = schedlab()
            .args(&args)
            .args(["--db", s.db().to_str().unwrap()])
            .output()
            .unwrap();
        let said = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains("control character"), "{args:?}: {said}");
    }
}
