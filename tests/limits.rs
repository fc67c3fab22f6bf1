//! Sizes and counts beyond what a trial can hold are refused before anything is stored: exit 2,
//! a message naming the key and the limit, no run row, no trial directory; time arithmetic
//! never wraps (a huge count was once planned as "0 s" and stored with timeout_ns = -1).

mod common;

use common::{run_ok, schedlab, Scratch};

/// A scratch database holding one finished run, and an empty I/O directory.
fn with_one_run() -> (Scratch, std::path::PathBuf) {
    let s = Scratch::new();
    let io = s.path().join("io");
    std::fs::create_dir(&io).unwrap();
    run_ok(&s, &["--tasks", "1", "--trials", "1", "--work", "1ms"]);
    (s, io)
}

/// Runs `schedlab SUBCOMMAND SPEC --db DB --io-dir IO [extra]`; returns the exit code and stderr.
fn refused(
    s: &Scratch,
    io: &std::path::Path,
    sub: &str,
    spec: &str,
    extra: &[&str],
) -> (i32, String) {
    let path = s.path().join("spec.toml");
    std::fs::write(&path, spec).unwrap();
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .arg(sub)
        .arg(&path)
        .arg("--db")
        .arg(s.db())
        .arg("--io-dir")
        .arg(io)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What is stored: runs, trials, trials with a negative timeout.
fn stored(s: &Scratch) -> (i64, i64, i64) {
    let c = s.conn();
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    (
        count("SELECT COUNT(*) FROM runs"),
        count("SELECT COUNT(*) FROM trials"),
        count("SELECT COUNT(*) FROM trials WHERE timeout_ns < 0"),
    )
}

#[test]
fn huge_sizes_exit_2_naming_key_and_limit_and_store_nothing() {
    let (s, io) = with_one_run();
    let before = stored(&s);
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "workloads = [{ kind = \"io\", io_bytes = 100000000000000 }]",
            "axes.workloads[0].io_bytes: 100000000000000 bytes is not a usable input file size (accepted: 1..=68719476736 (64 GiB))",
            &[],
        ),
        (
            "workloads = [{ kind = \"io\", io_block = 67108864, iterations = 100000 }]",
            "axes.workloads[0].iterations: 100000 units of io:sync-copy would write 6710886400000 bytes per task (accepted: at most 68719476736 bytes (64 GiB)",
            &[],
        ),
        (
            "workloads = [{ kind = \"periodic\", period = \"1s\", run = \"1ms\", iterations = 1000000 }]",
            "axes.workloads[0].iterations: 1000000 periods of 1000000000 ns last longer than a task's work may (168 h)",
            &[],
        ),
        (
            "tasks = [4]",
            "axes.tasks[0]: 100001 is not a usable task count (accepted: 1..=100000)",
            &["--tasks", "100001"],
        ),
        (
            "tasks = [4]\ncpus = [\"0\"]\n[settings]\nwork = \"100h\"",
            "work = 100.0 h: a trial of `other/same cpu:pi x4 process barrier cpus=0` would last about 400.0 h",
            &[],
        ),
    ];
    for (axes, message, extra) in cases {
        let spec = format!("name = \"huge\"\n[axes]\n{axes}\n");
        for sub in ["plan", "run"] {
            let (code, err) = refused(&s, &io, sub, &spec, extra);
            assert_eq!(code, 2, "{sub} {axes}: {err}");
            assert!(
                err.contains(message),
                "{sub} {axes}: expected `{message}` in: {err}"
            );
            assert_eq!(stored(&s), before, "{sub} {axes} stored something");
            let left: Vec<_> = std::fs::read_dir(&io).unwrap().collect();
            assert!(
                left.is_empty(),
                "{sub} {axes} left {left:?} in the I/O directory"
            );
        }
    }
}

#[test]
fn overflowing_iterations_are_refused_never_planned_as_zero() {
    let (s, io) = with_one_run();
    let before = stored(&s);
    // i64::MAX units: refused by the spec check, which names the key and the limit.
    let spec = "name = \"i\"\n[axes]\nworkloads = [{ kind = \"cpu\", iterations = 9223372036854775807 }]\n";
    for sub in ["plan", "run"] {
        let (code, err) = refused(&s, &io, sub, spec, &[]);
        assert_eq!(code, 2, "{sub}: {err}");
        assert!(
            err.contains("axes.workloads[0].iterations: 9223372036854775807 units of work per task is too many (accepted: 1..=1000000000000000"),
            "{sub}: {err}"
        );
    }
    // 10^15 units (allowed) of 100 tasks on one CPU: years once calibrated, refused with the
    // estimate it would have had, by plan and (before storing a run) by run.
    let spec = "name = \"i\"\n[axes]\ntasks = [100]\ncpus = [\"0\"]\nworkloads = [{ kind = \"cpu\", cpu_kernel = \"spin\", iterations = 1000000000000000 }]\n";
    for sub in ["plan", "run"] {
        let (code, err) = refused(&s, &io, sub, spec, &["--quiet"]);
        assert_eq!(code, 2, "{sub}: {err}");
        assert!(
            err.contains("iterations = 1000000000000000: a trial of `other/same cpu:spin x100")
                && err.contains("a trial may last at most 168.0 h"),
            "{sub}: {err}"
        );
        assert!(!err.contains(" 0 s"), "{sub}: {err}");
    }
    assert_eq!(stored(&s), before, "nothing stored, no timeout_ns = -1");
    assert_eq!(before.2, 0);
}

#[test]
fn a_large_count_is_estimated_without_wrapping() {
    // 10^12 spin units on one task: hours, not "0 s" (the old sum wrapped in release builds
    // and panicked in debug ones). The estimate is checked against the calibrated rate.
    let s = Scratch::new();
    let spec = s.path().join("spec.toml");
    std::fs::write(
        &spec,
        "name = \"big\"\n[axes]\ntasks = [1]\nworkloads = [{ kind = \"cpu\", cpu_kernel = \"spin\", iterations = 1000000000000 }]\n[settings]\ntrials = 2\n",
    )
    .unwrap();
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .arg("plan")
        .arg(&spec)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains("estimated duration"))
        .unwrap_or_else(|| panic!("no estimate in {text}"));
    // "... estimated duration H h MM min (seed ...)": 2 trials of 10^12 units at 10^7..10^10
    // units/s (any build on any machine) last 3.3 min..55 h.
    let est = line.split("estimated duration ").nth(1).unwrap();
    let hours: u64 = if let Some((h, _)) = est.split_once(" h ") {
        h.parse().unwrap()
    } else {
        0
    };
    assert!(
        !est.starts_with("0 s") && hours <= 56,
        "estimate out of range: {line}"
    );
}
