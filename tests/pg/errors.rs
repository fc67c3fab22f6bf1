//! Mistakes in the store's address: each gets a clear error, and nothing is written anywhere.

use super::server::{Server, PASSWORD, USER};
use super::{ok, pg_int};

/// Every file under `dir`, relative.
fn files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        }
        v.push(p);
    }
    v
}

/// Runs schedlab in `cwd` with HOME there too (the default spool's place); expects exit
/// `code` and returns stderr.
fn fails(cwd: &std::path::Path, args: &[&str], code: i32) -> String {
    fails_with(cwd, args, code, PASSWORD)
}

/// [`fails`], with `password` in PGPASSWORD.
fn fails_with(cwd: &std::path::Path, args: &[&str], code: i32, password: &str) -> String {
    let o = super::schedlab()
        .env("PGPASSWORD", password)
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env_remove("SCHEDLAB_DB")
        .env_remove("SCHEDLAB_SPOOL")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?} should fail: {err}");
    err
}

#[test]
fn bad_urls_wrong_passwords_and_missing_schemas_are_clear_and_write_nothing() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let empty = s.fresh_db("noschema");
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    // A file to push, and a spec to submit.
    let local = dir.path().join("offline.db");
    ok(&[
        "run",
        "--retries",
        "0",
        "--db",
        local.to_str().unwrap(),
        "--policy",
        "other",
        "--tasks",
        "1",
    ]
    .iter()
    .chain(&["--work", "2ms", "--trials", "1", "--quiet"])
    .copied()
    .collect::<Vec<_>>());
    let local_bytes = std::fs::read(&local).unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, "name = \"s\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\n[settings]\ntrials = 1\nwork = \"2ms\"\nretries = 0\n").unwrap();
    let spec = spec.to_str().unwrap();
    let port = s.port;
    // The wrong password comes in PGPASSWORD (on the command line it is refused unread).
    let wrong_password = format!("postgres://{USER}@127.0.0.1:{port}/{empty}");
    let no_such_db = format!("postgres://{USER}@127.0.0.1:{port}/nosuchdb");
    let bad_url = format!("postgres://{USER}@127.0.0.1:notaport/{empty}");
    // A port where nothing listens: the server's own port + 1 is very likely free.
    let nobody = format!("postgres://{USER}@127.0.0.1:1/{empty}");
    let commands = |db: &str| -> Vec<Vec<String>> {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        vec![
            v(&["runs", "--db", db]),
            v(&["show", "--db", db]),
            v(&["export", "--db", db]),
            v(&["stats", "--db", db]),
            v(&["report", "--format", "csv", "--out", "rep", "--db", db]),
            v(&["compare", "1", "2", "--db", db]),
            v(&["queue", "--db", db]),
            v(&["worker", "--db", db, "--quiet"]),
            v(&[
                "run", "--db", db, "--policy", "other", "--tasks", "1", "--work", "2ms",
                "--trials", "1", "--quiet",
            ]),
            v(&["submit", spec, "--db", db]),
            v(&["push", local.to_str().unwrap(), "--to", db]),
        ]
    };
    // What the URL names is bad input (exit 2); a server out of reach is a failure (1).
    let cases: [(&str, &str, i32, &[&str]); 4] = [
        (
            &wrong_password,
            "not-the-password",
            2,
            &["refused user schedlab", "password"],
        ),
        (
            &no_such_db,
            PASSWORD,
            2,
            &["has no database nosuchdb", "createdb"],
        ),
        (
            &bad_url,
            PASSWORD,
            2,
            &["not a valid PostgreSQL URL", "postgres://USER"],
        ),
        (
            &nobody,
            PASSWORD,
            1,
            &["cannot connect", "check that the server is running"],
        ),
    ];
    for (url, password, code, expected) in cases {
        for args in commands(url) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let err = fails_with(&cwd, &args, code, password);
            for e in expected {
                assert!(err.contains(e), "{args:?}: expected {e:?} in: {err}");
            }
            assert!(
                !err.contains("not-the-password"),
                "the password is never shown: {err}"
            );
        }
    }
    // A database without the schema: reading commands and workers say so and create nothing.
    let url = s.url(&empty);
    for args in commands(&url).into_iter().take(8) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&cwd, &args, 2);
        assert!(err.contains("has no schedlab schema"), "{args:?}: {err}");
    }
    let mut c = s.client(&empty);
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        0,
        "nothing was created in the database"
    );
    assert_eq!(
        files(&cwd),
        Vec::<String>::new(),
        "nothing was written locally"
    );
    assert!(
        std::fs::read(&local).unwrap() == local_bytes,
        "the pushed file is unchanged"
    );
    // Another program's tables: refused, left alone.
    let other = s.fresh_db("other");
    let mut c = s.client(&other);
    c.batch_execute("CREATE TABLE runs (id INT, athlete TEXT); INSERT INTO runs VALUES (1, 'x')")
        .unwrap();
    let other_url = s.url(&other);
    for args in [
        vec!["runs", "--db", &other_url],
        vec![
            "run", "--db", &other_url, "--quiet", "--trials", "1", "--work", "2ms", "--tasks", "1",
        ],
    ] {
        let err = fails(&cwd, &args, 2);
        assert!(
            err.contains("not a schedlab results database"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"
        ),
        1
    );
}
