//! The work queue on a real server: concurrent workers, a worker killed mid-trial, `queue`.

use super::server::Server;
use super::{ok, pg_int, schedlab};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A spec file of one cell with `trials` trials of one task of `work`, deadline `timeout`.
fn spec(dir: &std::path::Path, trials: u32, work: &str, timeout: &str) -> String {
    let path = dir.join("queued.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"queued\"\ndescription = \"queue test\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\n\
             [[axes.workloads]]\nkind = \"cpu\"\ncpu_kernel = \"spin\"\n\
             [settings]\ntrials = {trials}\nwarmup = 0\nwork = \"{work}\"\ntimeout = \"{timeout}\"\nsample_interval = \"off\"\nretries = 0\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn worker(url: &str, spool: &std::path::Path, lease: &str) -> Child {
    schedlab()
        .args(["worker", "--db", url, "--quiet", "--lease", lease])
        .arg("--spool-file")
        .arg(spool)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) {
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "worker failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn four_workers_store_each_of_40_trials_once() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("queue");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 40, "2ms", "10s");
    let submitted = ok(&["submit", &spec, "--db", &url, "--seed", "5"]);
    assert!(submitted.contains("run 1: 40 trials"), "{submitted}");
    let mut c = s.client(&db);
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM queue WHERE state = 'pending'"),
        40
    );
    let queue = ok(&["queue", "--db", &url]);
    let line = queue.lines().find(|l| l.contains("(any)")).unwrap();
    assert!(line.contains("│ 40 "), "40 pending: {queue}");
    let workers: Vec<Child> = (0..4)
        .map(|i| worker(&url, &dir.path().join(format!("spool{i}.db")), "60s"))
        .collect();
    for w in workers {
        finish(w);
    }
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 40);
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(DISTINCT (cell_id, trial_index)) FROM trials"
        ),
        40
    );
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM tasks"), 40);
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM queue WHERE state = 'done'"),
        40
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue q JOIN trials t ON t.trial_id = q.trial_id
                        JOIN cells c ON c.cell_id = t.cell_id
                        WHERE c.cell_index = q.cell_index AND t.trial_index = q.trial_index"
        ),
        40,
        "every queue row points at its trial"
    );
    assert!(
        pg_int(&mut c, "SELECT COUNT(DISTINCT worker) FROM queue") >= 2,
        "the workers shared the queue"
    );
    let status: String = c.query_one("SELECT status FROM runs", &[]).unwrap().get(0);
    assert_eq!(status, "done");
    let host: Option<String> = c.query_one("SELECT host FROM runs", &[]).unwrap().get(0);
    assert!(host.is_some(), "the run took its workers' host");
    let queue = ok(&["queue", "--db", &url]);
    let line = queue.lines().find(|l| l.contains("(any)")).unwrap();
    let cols: Vec<&str> = line.split('│').map(str::trim).collect();
    assert_eq!(
        cols[4..8],
        ["0", "0", "40", "0"],
        "pending, claimed, done, failed: {queue}"
    );
    // The run reads like any other.
    let stats = ok(&["stats", "--db", &url]);
    assert!(stats.contains("queued"), "{stats}");
}

#[test]
fn a_killed_workers_trial_is_rerun_by_another_once() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("kill");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    // Trials of ~1 s with a 3 s deadline: a lease of 1 s lapses ~4 s after the trial started.
    let spec = spec(dir.path(), 3, "1s", "3s");
    ok(&["submit", &spec, "--db", &url, "--seed", "9"]);
    let mut a = worker(&url, &dir.path().join("a.db"), "1s");
    let mut c = s.client(&db);
    let t = Instant::now();
    // Mid-trial: the claim's lease was extended to the trial's deadline.
    while pg_int(
        &mut c,
        "SELECT COUNT(*) FROM queue WHERE state = 'claimed'
         AND lease_until_ms > CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 2000",
    ) == 0
    {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "worker A never started a trial"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    a.kill().unwrap();
    a.wait().unwrap();
    let killed: i64 = pg_int(&mut c, "SELECT queue_id FROM queue WHERE state = 'claimed'");
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM trials"),
        0,
        "A stored nothing"
    );
    let b = worker(&url, &dir.path().join("b.db"), "1s");
    finish(b);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 3);
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(DISTINCT (cell_id, trial_index)) FROM trials"
        ),
        3
    );
    // Every row is finished: 'done', or 'failed' for a trial that ran past its 3 s deadline
    // (1 s of work gets a seventh of a CPU at load 14 on 2 cores, as measured here on
    // 2026-11-25); either way it was stored once, which is what this test is about.
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE state IN ('done', 'failed') AND trial_id IS NOT NULL"
        ),
        3
    );
    assert_eq!(
        pg_int(
            &mut c,
            &format!("SELECT attempts FROM queue WHERE queue_id = {killed}")
        ),
        2,
        "the killed trial was claimed twice and stored once"
    );
    // No process of worker A is left (its launcher and trial die with it).
    std::thread::sleep(Duration::from_millis(200));
    let left = schedlab_testkit::processes_matching(&format!(
        "--spool-file {}",
        dir.path().join("a.db").display()
    ));
    assert!(left.is_empty(), "worker A left processes behind: {left:?}");
}

#[test]
fn host_labels_route_trials_and_the_runs_report_together() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("labels");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 2, "2ms", "10s");
    let out = ok(&[
        "submit",
        &spec,
        "--db",
        &url,
        "--hosts",
        "alpha,beta",
        "--repeat",
        "2",
    ]);
    assert!(out.contains("--runs 1,2,3,4"), "{out}");
    let mut c = s.client(&db);
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(DISTINCT seed) FROM runs"),
        1,
        "every submitted run has the same trial order"
    );
    let alpha = schedlab()
        .args(["worker", "--db", &url, "--quiet", "--labels", "alpha"])
        .arg("--spool-file")
        .arg(dir.path().join("spool.db"))
        .output()
        .unwrap();
    assert!(
        alpha.status.success(),
        "{}",
        String::from_utf8_lossy(&alpha.stderr)
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE label = 'alpha' AND state = 'done'"
        ),
        4
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE label = 'beta' AND state = 'pending'"
        ),
        4,
        "a worker takes only its labels' trials"
    );
    let runs = ok(&["runs", "--db", &url]);
    assert!(runs.contains("queued"), "{runs}");
    ok(&["worker", "--db", &url, "--quiet", "--labels", "beta,gamma"]);
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM runs WHERE status = 'done'"),
        4
    );
    let host = nix::sys::utsname::uname()
        .unwrap()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let mine = ok(&["runs", "--db", &url, "--host", &host]);
    assert_eq!(mine.matches("queued").count(), 4, "{mine}");
    let none = ok(&["runs", "--db", &url, "--host", "no-such-host"]);
    assert!(!none.contains("queued"), "{none}");
    let report = dir.path().join("report");
    let printed = ok(&[
        "report",
        "--runs",
        "1,2,3,4",
        "--format",
        "csv",
        "--db",
        &url,
        "--out",
        report.to_str().unwrap(),
    ]);
    assert!(printed.contains("report of runs 1, 2, 3, 4"), "{printed}");
    let cells = std::fs::read_to_string(report.join("runs-1-2-3-4/csv/cells.csv")).unwrap();
    assert_eq!(
        cells.lines().count(),
        2,
        "one host, one kernel: the runs pool into one cell: {cells}"
    );
}

#[test]
fn a_worker_spools_while_the_server_is_away_and_nothing_is_lost() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("wspool");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 14, "20ms", "10s");
    ok(&["submit", &spec, "--db", &url, "--seed", "4"]);
    let spool = dir.path().join("spool.db");
    let w = worker(&url, &spool, "60s");
    let t = Instant::now();
    let stored = || {
        postgres::Client::connect(&s.client_url(&db), postgres::NoTls)
            .ok()
            .and_then(|mut c| c.query_one("SELECT COUNT(*) FROM trials", &[]).ok())
            .map_or(0, |r| r.get::<_, i64>(0))
    };
    while stored() < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the worker stores nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s.stop();
    std::thread::sleep(Duration::from_millis(1500));
    s.start_again().unwrap();
    let o = w.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("cannot reach the server") && err.contains("is back"),
        "the worker noticed the outage and the return: {err}"
    );
    ok(&[
        "push",
        "--spool",
        "--spool-file",
        spool.to_str().unwrap(),
        "--to",
        &url,
    ]);
    let mut c = s.client(&db);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 14, "{err}");
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(DISTINCT (cell_id, trial_index)) FROM trials"
        ),
        14
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE state = 'done' AND trial_id IS NOT NULL"
        ),
        14,
        "every queue row is done and points at its trial: {err}"
    );
    let status: String = c.query_one("SELECT status FROM runs", &[]).unwrap().get(0);
    assert_eq!(status, "done");
}

#[test]
fn labels_match_exactly_so_percent_and_underscore_are_plain() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("likelabels");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(dir.path(), 1, "2ms", "10s");
    let out = ok(&["submit", &spec, "--db", &url, "--hosts", "w_b,%"]);
    assert!(out.contains("--runs 1,2"), "{out}");
    let mut c = s.client(&db);
    let spool = dir.path().join("spool.db");
    let work = |labels: &str| {
        ok(&[
            "worker",
            "--db",
            &url,
            "--quiet",
            "--labels",
            labels,
            "--spool-file",
            spool.to_str().unwrap(),
        ])
    };
    let done = |c: &mut postgres::Client, label: &str| {
        c.query_one(
            "SELECT COUNT(*) FROM queue WHERE label = $1 AND state = 'done'",
            &[&label],
        )
        .unwrap()
        .get::<_, i64>(0)
    };
    // `_` and `%` would be wildcards under LIKE: a worker labelled wxb matched both runs.
    work("wxb");
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM trials"),
        0,
        "a worker labelled wxb runs neither w_b's nor %'s trials"
    );
    work("w_b");
    assert_eq!(done(&mut c, "w_b"), 1);
    assert_eq!(done(&mut c, "%"), 0, "label w_b does not take label %");
    work("%");
    assert_eq!(done(&mut c, "%"), 1);
    assert_eq!(pg_int(&mut c, "SELECT COUNT(*) FROM trials"), 2);
}

#[test]
fn a_queued_command_runs_only_on_a_worker_started_with_allow_commands() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("allow");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    // The program runs as nobody: it writes where nobody may.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::set_permissions(
            dir.path().join("out"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
    }
    let written = dir.path().join("out/written-by-the-queue");
    let spec = dir.path().join("command.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"cmd\"\n[axes]\npolicies = [\"other\"]\n[[axes.workloads]]\nkind = \"command\"\n\
             commands = [{{ argv = [\"/bin/sh\", \"-c\", \"id > {}\"] }}]\n\
             [settings]\ntrials = 1\nwarmup = 0\nsample_interval = \"off\"\nretries = 0\n",
            written.display()
        ),
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let spool = dir.path().join("spool.db");
    let worker = |allow: &[&str]| {
        let o = schedlab()
            .args(["worker", "--db", &url, "--spool-file"])
            .arg(&spool)
            .args(allow)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        err
    };
    ok(&["submit", spec, "--db", &url]);
    let err = worker(&[]);
    assert!(
        !written.exists(),
        "a default worker ran the queued command: {err}"
    );
    assert!(err.contains("--allow-commands"), "{err}");
    let mut c = s.client(&db);
    let (status, reason): (String, Option<String>) = c
        .query_one("SELECT status, reason FROM trials WHERE run_id = 1", &[])
        .map(|r| (r.get(0), r.get(1)))
        .unwrap();
    assert_eq!(status, "skipped");
    let reason = reason.unwrap_or_default();
    assert!(
        reason.contains("--allow-commands") && reason.contains("/bin/sh"),
        "{reason}"
    );
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM queue WHERE run_id = 1 AND state = 'done' AND attempts = 1"
        ),
        1,
        "the refused trial's queue row ended after one claim"
    );
    // A worker allowed to run programs runs it.
    ok(&["submit", spec, "--db", &url]);
    worker(&["--allow-commands", "/bin/sh", "--quiet"]);
    let id = std::fs::read_to_string(&written).expect("the allowed worker ran the command");
    if nix::unistd::geteuid().is_root() {
        assert!(
            id.contains("uid=65534"),
            "run as --command-user nobody: {id}"
        );
    } else {
        assert!(id.contains("uid="), "{id}");
    }
    let status: String = c
        .query_one("SELECT status FROM trials WHERE run_id = 2", &[])
        .unwrap()
        .get(0);
    assert_eq!(status, "ok");
}

#[test]
fn a_refused_run_is_said_once_and_each_of_its_trials_is_stored_skipped() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("refusedonce");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("command.toml");
    std::fs::write(
        &spec,
        "name = \"cmd\"\n[axes]\npolicies = [\"other\"]\n[[axes.workloads]]\nkind = \"command\"\n\
         commands = [{ argv = [\"/bin/true\"] }]\n\
         [settings]\ntrials = 3\nwarmup = 0\nsample_interval = \"off\"\nretries = 0\n",
    )
    .unwrap();
    ok(&["submit", spec.to_str().unwrap(), "--db", &url]);
    let o = schedlab()
        .args(["worker", "--db", &url, "--quiet", "--spool-file"])
        .arg(dir.path().join("spool.db"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        err.matches("refuses queued run 1").count(),
        1,
        "the refusal is said once for the run, not once per trial: {err}"
    );
    let mut c = s.client(&db);
    assert_eq!(
        pg_int(
            &mut c,
            "SELECT COUNT(*) FROM trials WHERE status = 'skipped' AND reason LIKE '%--allow-commands%'"
        ),
        3,
        "each trial is stored skipped with the reason: {err}"
    );
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM queue WHERE state = 'done'"),
        3
    );
}

#[test]
fn a_queued_runs_files_go_only_under_the_workers_io_dir_and_stale_trial_dirs_go() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("iodir");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let (allowed, outside) = (dir.path().join("io"), dir.path().join("outside"));
    let inside = allowed.join("disk");
    for d in [&inside, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    // A trial directory a killed schedlab left (its pid cannot exist) where the run writes:
    // the worker clears it before the run's trials, as a local run does.
    let stale = inside.join("schedlab-2147483646-r1-t1.AbCdEfGhIj");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("input"), "left").unwrap();
    let spec = |name: &str, io_dir: &std::path::Path| {
        let p = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &p,
            format!(
                "name = \"{name}\"\n[axes]\npolicies = [\"other\"]\ntasks = [1]\nworkloads = [{{ kind = \"io\", io_bytes = 65536 }}]\n\
                 [settings]\ntrials = 1\nwarmup = 0\nwork = \"5ms\"\nsample_interval = \"off\"\nio_dir = \"{}\"\nretries = 0\n",
                io_dir.display()
            ),
        )
        .unwrap();
        p
    };
    let (away, within) = (spec("away", &outside), spec("within", &inside));
    ok(&["submit", away.to_str().unwrap(), "--db", &url]);
    ok(&["submit", within.to_str().unwrap(), "--db", &url]);
    let o = schedlab()
        .args(["worker", "--db", &url, "--spool-file"])
        .arg(dir.path().join("spool.db"))
        .arg("--io-dir")
        .arg(&allowed)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    let mut c = s.client(&db);
    let trial = |c: &mut postgres::Client, name: &str| -> (String, Option<String>) {
        c.query_one(
            "SELECT t.status, t.reason FROM trials t JOIN runs r USING (run_id) WHERE r.name = $1",
            &[&name],
        )
        .map(|r| (r.get(0), r.get(1)))
        .unwrap()
    };
    let (status, reason) = trial(&mut c, "away");
    assert_eq!(status, "skipped", "{err}");
    let reason = reason.unwrap_or_default();
    assert!(
        reason.contains(&format!("--io-dir {}", outside.display()))
            && reason.contains(&allowed.display().to_string()),
        "{reason}"
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let (status, reason) = trial(&mut c, "within");
    assert_eq!(status, "ok", "{reason:?} {err}");
    assert!(!stale.exists(), "the stale trial directory is left: {err}");
    assert_eq!(std::fs::read_dir(&inside).unwrap().count(), 0, "{err}");
}
