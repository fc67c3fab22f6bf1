//! The password of the `--db` URL reaches neither storage nor output: every command against a
//! real server, with a password full of URL delimiters, then a search of everything written.

use super::server::Server;
use super::{ok, schedlab};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// The role's password: every character a pattern tends to miss, and a literal `%2F`.
const RAW: &str = "Sq/K?t@9#z%2Fw";
/// As it goes into the URL.
const ENCODED: &str = "Sq%2FK%3Ft%409%23z%252Fw";
/// Pieces of either form that must not appear anywhere.
const NEEDLES: [&str; 6] = [RAW, ENCODED, "Sq/K", "Sq%2FK", "9#z", "%409%23"];
const ROLE: &str = "lab_secret";

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(files(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// The needle found in `bytes`, if any.
fn leak(bytes: &[u8]) -> Option<&'static str> {
    NEEDLES.into_iter().find(|n| {
        bytes
            .windows(n.len())
            .any(|w| w.eq_ignore_ascii_case(n.as_bytes()))
    })
}

#[test]
fn no_output_file_or_stored_row_holds_the_database_password() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("secrets");
    let mut admin = s.client("postgres");
    admin
        .batch_execute(&format!(
            "CREATE ROLE {ROLE} LOGIN PASSWORD '{RAW}'; ALTER DATABASE {db} OWNER TO {ROLE}"
        ))
        .unwrap();
    let port = s.port;
    let url = format!("postgres://{ROLE}:{ENCODED}@127.0.0.1:{port}/{db}");
    let query_url = format!("postgres://{ROLE}@127.0.0.1:{port}/{db}?password={ENCODED}");
    let bare_url = format!("postgres://{ROLE}@127.0.0.1:{port}/{db}");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    // The password's three ways in: a file of its own, ~/.pgpass, PGPASSWORD (and the whole
    // URL in SCHEDLAB_DB); on the command line it is refused.
    let password_file = dir.path().join("password");
    std::fs::write(&password_file, format!("{RAW}\n")).unwrap();
    std::fs::write(
        home.join(".pgpass"),
        format!("127.0.0.1:{port}:{db}:{ROLE}:{}\n", RAW.replace(':', "\\:")),
    )
    .unwrap();
    for f in [&password_file, &home.join(".pgpass")] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let password_file = password_file.to_str().unwrap().to_string();
    let command = |args: &[&str]| {
        let mut c = schedlab();
        c.args(args)
            .current_dir(dir.path())
            .env("HOME", &home)
            .env("SCHEDLAB_STATE_DIR", &state)
            .env("SCHEDLAB_SPOOL", dir.path().join("spool.db"))
            .env_remove("SCHEDLAB_DB")
            .env_remove("PGPASSWORD");
        c
    };
    let mut outputs: Vec<(String, Output)> = Vec::new();
    let mut record = |what: String, o: Output, must_succeed: bool| {
        if must_succeed {
            assert!(
                o.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        outputs.push((what, o));
    };
    let tiny = ["--policy", "other,batch", "--tasks", "1", "--work", "2ms"];
    fn run(db: &str) -> Vec<&str> {
        let tiny = ["--policy", "other,batch", "--tasks", "1", "--work", "2ms"];
        [
            &["run", "--db", db][..],
            &tiny,
            &["--trials", "2", "--retries", "0"],
        ]
        .concat()
    }
    // On the command line, in the user part or the query: refused before anything is read.
    for db in [&url, &query_url] {
        let args = run(db);
        let o = command(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        record(format!("{args:?}"), o, false);
    }
    // Runs 1 and 2: the password from --db-password-file, then from ~/.pgpass.
    let mut args = run(&bare_url);
    args.extend(["--db-password-file", password_file.as_str()]);
    record(format!("{args:?}"), command(&args).output().unwrap(), true);
    let args = run(&bare_url);
    record(
        format!("{args:?} (~/.pgpass)"),
        command(&args).output().unwrap(),
        true,
    );
    // Run 3 from SCHEDLAB_DB, varying a kernel setting (kept at its value), so that a restore
    // journal is written; it is read while the run goes on.
    let mut journals: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut knob_run =
        command(&[&["run"][..], &tiny, &["--trials", "6", "--retries", "0"]].concat());
    knob_run.env("SCHEDLAB_DB", &url);
    if nix::unistd::geteuid().is_root() {
        let interval = std::fs::read_to_string("/proc/sys/vm/stat_interval").unwrap();
        knob_run.args(["--knob", &format!("vm.stat_interval={}", interval.trim())]);
    } else {
        schedlab_testkit::skip(
            schedlab_testkit::Need::Root,
            "not root: run 3 varies no kernel setting, so no restore journal is read",
        );
    }
    let child = knob_run
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let pid = child.id();
    let mut cmdlines = 0;
    while Path::new(&format!("/proc/{pid}/stat")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
    {
        // What `ps` shows every user: the process's and its launcher's command lines.
        for p in std::iter::once(pid.to_string()).chain(children(pid)) {
            if let Ok(b) = std::fs::read(format!("/proc/{p}/cmdline")) {
                cmdlines += 1;
                if let Some(n) = leak(&b) {
                    panic!("the command line of process {p} holds {n:?}");
                }
            }
        }
        for f in files(&state) {
            if let Ok(b) = std::fs::read(&f) {
                if !journals.iter().any(|(p, _)| *p == f) {
                    journals.push((f, b));
                }
            }
        }
        assert!(t.elapsed() < Duration::from_secs(120), "run 3 never ends");
        std::thread::sleep(Duration::from_millis(5));
    }
    record(
        "run 3 (SCHEDLAB_DB, knob)".into(),
        child.wait_with_output().unwrap(),
        true,
    );
    if nix::unistd::geteuid().is_root() {
        assert!(!journals.is_empty(), "the knob run wrote a restore journal");
    }
    assert!(cmdlines > 0, "no command line was read");
    // A queued run, a worker, a pushed file.
    let spec = dir.path().join("queued.toml");
    std::fs::write(&spec, "name = \"q\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\n[settings]\ntrials = 1\nwork = \"2ms\"\nsample_interval = \"off\"\nretries = 0\n").unwrap();
    let local = dir.path().join("local.db");
    let local_run = run(local.to_str().unwrap());
    ok(&local_run);
    let spec = spec.to_str().unwrap();
    let local = local.to_str().unwrap();
    let report = dir.path().join("report");
    let report = report.to_str().unwrap();
    // The password from ~/.pgpass.
    let url = &bare_url;
    let mut reading: Vec<Vec<&str>> = vec![
        vec!["submit", spec, "--db", url],
        vec!["worker", "--db", url],
        vec!["queue", "--db", url],
        vec!["push", local, "--to", url],
        vec!["runs", "--db", url],
        vec!["compare", "1", "2", "--db", url],
        vec!["compare", "1", "3", "--db", url, "--db-b", url],
        vec!["stats", "--db", url],
        vec!["stats", "--runs", "1,2", "--db", url],
        vec!["report", "--out", report, "--db", url],
        vec!["report", "--runs", "1,2", "--out", report, "--db", url],
    ];
    let ids: Vec<String> = (1..=5).map(|i| i.to_string()).collect();
    for id in &ids {
        reading.push(vec!["show", id, "--db", url]);
    }
    for table in ["tasks", "trials", "samples"] {
        for format in ["csv", "json"] {
            reading.push(vec![
                "export", "--table", table, "--format", format, "--db", url,
            ]);
        }
    }
    for args in &reading {
        record(format!("{args:?}"), command(args).output().unwrap(), true);
    }
    // The password from PGPASSWORD, and a command that fails after connecting.
    let o = command(&["show", "--db", &bare_url])
        .env("PGPASSWORD", RAW)
        .output()
        .unwrap();
    record("show with PGPASSWORD".into(), o, true);
    let nosuch = bare_url.replace(&format!("/{db}"), "/nosuchdb");
    let o = command(&["runs", "--db", &nosuch])
        .env("PGPASSWORD", RAW)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "a database the server lacks is a bad --db"
    );
    record("runs of a missing database".into(), o, false);
    // The masking is there to see, not the command line left out.
    let show = outputs
        .iter()
        .find(|(w, _)| w.contains("\"show\", \"1\""))
        .map(|(_, o)| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap();
    assert!(
        show.contains(&format!("{ROLE}@127.0.0.1")) && show.contains("--db-password-file"),
        "{show}"
    );
    // Now search: every stream, every file written, every row stored.
    for (what, o) in &outputs {
        for (name, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if let Some(n) = leak(bytes) {
                panic!(
                    "{what}: {name} holds {n:?}:\n{}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
    }
    for (file, bytes) in &journals {
        if let Some(n) = leak(bytes) {
            panic!("the restore journal {} holds {n:?}", file.display());
        }
    }
    let written = files(dir.path());
    assert!(
        written.iter().any(|f| f.ends_with("index.html"))
            && written.iter().any(|f| f.ends_with("report.md"))
            && written.iter().any(|f| f.ends_with("report.tex"))
            && written
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == "csv")),
        "every report format was written: {written:?}"
    );
    // (But the two files that hold it on purpose.)
    let inputs = [PathBuf::from(&password_file), home.join(".pgpass")];
    for f in written.iter().filter(|f| !inputs.contains(f)) {
        if let Some(n) = leak(&std::fs::read(f).unwrap()) {
            panic!("{} holds {n:?}", f.display());
        }
    }
    let mut c = s.client(&db);
    let tables: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.len() >= 9, "{tables:?}");
    for t in &tables {
        let rows: String = c
            .query_one(
                &format!("SELECT COALESCE(string_agg(t::text, E'\\n'), '') FROM {t} t"),
                &[],
            )
            .unwrap()
            .get(0);
        if let Some(n) = leak(rows.as_bytes()) {
            panic!("table {t} holds {n:?}");
        }
    }
    let argv: String = c
        .query_one("SELECT string_agg(argv, ' ') FROM runs", &[])
        .unwrap()
        .get(0);
    assert!(argv.contains("--db-password-file"), "{argv}");
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}
