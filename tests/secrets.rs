//! Passwords in `--db` and `SCHEDLAB_DB` never reach a message, even when clap or the
//! PostgreSQL client reject them (no server needed; tests/pg checks a real server's runs).

mod common;

use common::*;

const PASSWORD: &str = "S3cretPW";

/// Runs schedlab with `args` and `env`; returns its exit code and everything it printed.
fn output(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let s = Scratch::new();
    std::fs::write(
        s.path().join("spec.toml"),
        "name = \"s\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\n[settings]\ntrials = 1\nwork = \"2ms\"\n",
    )
    .unwrap();
    let mut c = schedlab();
    c.args(args)
        .current_dir(s.path())
        .env("HOME", s.path())
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .env_remove("SCHEDLAB_DB")
        .env_remove("PGPASSWORD");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), text)
}

/// Every command that takes the database, with `--db URL` (or without it, for SCHEDLAB_DB).
fn commands(url: Option<&str>) -> Vec<Vec<String>> {
    let with = |a: &[&str]| {
        let mut v: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        if let Some(u) = url {
            v.extend(["--db".to_string(), u.to_string()]);
        }
        v
    };
    let mut all = vec![
        with(&["runs"]),
        with(&["show"]),
        with(&["export"]),
        with(&["stats"]),
        with(&["report"]),
        with(&["compare", "1", "2"]),
        with(&["queue"]),
        with(&["run", "--work", "2ms", "--trials", "1"]),
        with(&["plan"]),
        with(&["worker"]),
        with(&["submit", "spec.toml"]),
    ];
    let push: Vec<String> = match url {
        Some(u) => vec!["push".into(), "x.db".into(), "--to".into(), u.into()],
        None => vec!["push".into(), "x.db".into()],
    };
    all.push(push);
    all
}

#[test]
fn a_bad_db_value_is_refused_without_repeating_its_password() {
    let mysql = format!("mysql://alice:{PASSWORD}@h/d");
    for (url, env) in [
        (Some(mysql.as_str()), vec![]),
        (None, vec![("SCHEDLAB_DB", mysql.as_str())]),
    ] {
        for args in commands(url) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, text) = output(&args, &env);
            assert_eq!(code, Some(2), "{args:?}: {text}");
            assert!(!text.contains(PASSWORD), "{args:?} {env:?}: {text}");
            assert!(
                text.contains("mysql://alice:***@h/d is neither a file path nor a postgres:// URL"),
                "{args:?} {env:?}: {text}"
            );
        }
    }
    // A password that holds `/` unencoded: refused, and not a piece of it shown.
    // (From SCHEDLAB_DB: on the command line any password is refused before it is read.)
    let (code, text) = output(
        &["runs"],
        &[("SCHEDLAB_DB", "postgres://alice:S3c/retPW@h/d")],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(!text.contains("S3c") && !text.contains("retPW"), "{text}");
    assert!(text.contains("percent-encode"), "{text}");
    let (code, text) = output(&["runs", "--db", "postgres://alice:S3c/retPW@h/d"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(!text.contains("S3c") && !text.contains("retPW"), "{text}");
    assert!(text.contains("--db-password-file"), "{text}");
    // A URL where clap expects nothing: clap repeats the argument, masked.
    let (code, text) = output(&["runs", "mysql://alice@h/d"], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("unexpected argument"), "{text}");
    // A key=value connection string is not taken for a file name.
    let (code, text) = output(
        &["runs", "--db", &format!("host=h password={PASSWORD}")],
        &[],
    );
    assert_eq!(code, Some(2), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
}

#[test]
fn a_password_on_the_command_line_is_refused_with_the_ways_to_give_it() {
    // Issue 27 item 7: `ps` shows every process's arguments to every user, the launcher's
    // (a fork) too; by the time a process could rewrite them they were readable already.
    let url = format!("postgres://alice:{PASSWORD}@127.0.0.1:1/lab");
    let query = format!("postgres://alice@127.0.0.1:1/lab?password={PASSWORD}");
    let flag = format!("--db={url}");
    let mut all = commands(Some(&url));
    all.extend(commands(Some(&query)));
    all.push(vec!["runs".into(), flag]);
    all.push(vec!["runs".into(), url.clone()]);
    all.push(vec![
        "compare".into(),
        "1".into(),
        "2".into(),
        "--db-b".into(),
        url.clone(),
    ]);
    for args in all {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, text) = output(&args, &[]);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(!text.contains(PASSWORD), "{args:?}: {text}");
        for remedy in ["PGPASSWORD", "~/.pgpass", "--db-password-file"] {
            assert!(text.contains(remedy), "{args:?}: {text}");
        }
    }
}

#[test]
fn a_server_out_of_reach_is_reported_without_the_password() {
    // Port 1 on the loopback: nothing listens, the connection is refused at once. The
    // password from SCHEDLAB_DB (the environment is the process's own).
    let url = format!("postgres://alice:{PASSWORD}@127.0.0.1:1/lab");
    // (push opens its source file first: not a server's error.)
    for args in commands(None).into_iter().filter(|a| a[0] != "push") {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, text) = output(&args, &[("SCHEDLAB_DB", &url)]);
        assert_eq!(code, Some(1), "{args:?}: {text}");
        assert!(!text.contains(PASSWORD), "{args:?}: {text}");
        assert!(text.contains("alice:***@127.0.0.1:1"), "{args:?}: {text}");
    }
    let (code, text) = output(
        &["runs", "--db", "postgres://alice@127.0.0.1:1/lab"],
        &[("PGPASSWORD", PASSWORD)],
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(!text.contains(PASSWORD), "{text}");
}
