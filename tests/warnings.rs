//! Warnings are stored with their stable code and parameters beside their sentence, and `push`
//! tells a run's warnings apart by code and parameters, never by their text.

mod common;

use common::*;
use schedlab_core::Warning;
use schedlab_store::Store;

/// A warning about `vm.swappiness`, which was `original` before the run.
fn knob(original: &str) -> Warning {
    Warning::KnobVaried {
        name: "vm.swappiness".into(),
        file: "/proc/sys/vm/swappiness".into(),
        original: original.into(),
        journal: None,
    }
}

/// (code, params, message) of every warning of run 1 at `db`, in order.
fn warnings(db: &std::path::Path) -> Vec<(Option<String>, Option<String>, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT code, params, message FROM warnings WHERE run_id = 1 ORDER BY warning_id")
        .unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_run_stores_its_warning_with_the_code_and_the_parameters_it_was_made_from() {
    let shm = std::path::Path::new("/dev/shm");
    if !shm.is_dir() || !schedlab_sys::is_tmpfs(shm) {
        eprintln!("skipped: /dev/shm is not a tmpfs here, so no run warns about one");
        return;
    }
    let s = Scratch::new();
    let io = tempfile::tempdir_in(shm).unwrap();
    let dir = io.path().to_str().unwrap();
    run_ok(
        &s,
        &[
            "--workload",
            "io",
            "--io-dir",
            dir,
            "--tasks",
            "1",
            "--work",
            "2ms",
            "--trials",
            "1",
        ],
    );
    let stored = warnings(&s.db());
    let tmpfs: Vec<_> = stored
        .iter()
        .filter(|w| w.0.as_deref() == Some("io_dir_tmpfs"))
        .collect();
    assert_eq!(tmpfs.len(), 1, "{stored:?}");
    let (_, params, message) = tmpfs[0];
    let params: serde_json::Value = serde_json::from_str(params.as_deref().unwrap()).unwrap();
    assert_eq!(params, serde_json::json!({ "dir": dir }));
    // Code and parameters give the warning back, and with it the stored sentence.
    let mut tagged = params.clone();
    tagged["code"] = "io_dir_tmpfs".into();
    let back: Warning = serde_json::from_value(tagged).unwrap();
    assert_eq!(&back.to_string(), message);
}

#[test]
fn push_tells_a_runs_warnings_apart_by_code_and_parameters_not_by_text() {
    let s = Scratch::new();
    run_ok(&s, &["--tasks", "1", "--work", "2ms", "--trials", "1"]);
    let (src, dst) = (s.db(), s.path().join("target.db"));
    let push = || {
        let o = schedlab()
            .args(["push", src.to_str().unwrap(), "--to", dst.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    Store::open(src.as_path())
        .unwrap()
        .add_warning(1, None, &knob("60"))
        .unwrap();
    push();
    let knob_rows = |db: &std::path::Path| {
        warnings(db)
            .into_iter()
            .filter(|w| w.0.as_deref() == Some("knob_varied"))
            .collect::<Vec<_>>()
    };
    assert_eq!(knob_rows(&dst).len(), 1);
    // The target words it otherwise (another schedlab version); the source gains a warning of
    // the same code with other parameters.
    rusqlite::Connection::open(&dst)
        .unwrap()
        .execute(
            "UPDATE warnings SET message = 'reworded' WHERE code = 'knob_varied'",
            [],
        )
        .unwrap();
    Store::open(src.as_path())
        .unwrap()
        .add_warning(1, None, &knob("10"))
        .unwrap();
    push();
    let rows = knob_rows(&dst);
    assert_eq!(
        rows.len(),
        2,
        "the reworded warning is not copied again: {rows:?}"
    );
    assert_eq!(rows[0].2, "reworded");
    assert_eq!(
        rows[1].1.as_deref(),
        Some(
            r#"{"name":"vm.swappiness","file":"/proc/sys/vm/swappiness","original":"10","journal":null}"#
        )
    );
    assert_eq!(rows[1].2, knob("10").to_string());
}

#[test]
fn the_readme_lists_every_warning_code_and_no_other() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    // Rows of the warning-code table: | `code` | run or trial | parameters |.
    let listed: Vec<&str> = readme
        .lines()
        .filter(|l| l.contains("| run |") || l.contains("| trial |"))
        .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
        .collect();
    assert_eq!(listed, schedlab_core::warning::CODES);
}
