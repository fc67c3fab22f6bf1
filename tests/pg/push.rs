//! `push` into PostgreSQL from a file that is not what it claims to be.

use super::server::Server;
use super::{ok, out, pg_int};

#[test]
fn a_push_from_a_file_whose_column_names_are_sql_changes_nothing_on_the_server() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("inject");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let tiny = ["--policy", "other", "--tasks", "1", "--work", "2ms"];
    let tiny = [&tiny[..], &["--trials", "1", "--quiet", "--retries", "0"]].concat();
    ok(&[&["run", "--db", &url][..], &tiny].concat());
    let source = dir.path().join("crafted.db");
    ok(&[&["run", "--db", source.to_str().unwrap()][..], &tiny].concat());
    crate::common::crafted::craft_argv_injection(&source);
    let mut c = s.client(&db);
    let argv = |c: &mut postgres::Client| -> Vec<String> {
        c.query("SELECT argv FROM runs ORDER BY run_id", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    let before = argv(&mut c);
    let o = out(&["push", source.to_str().unwrap(), "--to", &url]);
    let err = String::from_utf8_lossy(&o.stderr);
    let after = argv(&mut c);
    assert!(
        !o.status.success(),
        "the crafted push was accepted; the server's argv now: {after:?}"
    );
    assert!(err.contains("has a column"), "{err}");
    assert_eq!(after, before, "the server's runs are unchanged");
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 1);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM cells"), 1);
}
