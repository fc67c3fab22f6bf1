//! What a worker lets a queued run do (issue 27 item 6): a partition needs `--allow-knobs
//! partition`; a run's `io_dir` that another user can change is refused; a run no worker can
//! start is counted per attempt and, after three, refused with the reason, while the runs
//! behind it go on; programs run only from `--allow-commands`' list of absolute paths, as
//! `--command-user` (nobody by default), with only the spec's environment.

use super::server::Server;
use super::{ok, pg_int, schedlab};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Writes spec `name` with `body` (axes and settings after the name) into `dir`.
fn spec(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, format!("name = \"{name}\"\n{body}")).unwrap();
    p.to_str().unwrap().to_string()
}

/// A worker on `url` with `args`, run to its end (no --wait): its output.
fn work(url: &str, dir: &Path, args: &[&str]) -> Output {
    schedlab()
        .env("SCHEDLAB_STATE_DIR", dir.join("state"))
        .args(["worker", "--db", url, "--spool-file"])
        .arg(dir.join("spool.db"))
        .args(args)
        .output()
        .unwrap()
}

/// (status, reason) of the trials of the run named `name`, first attempts only (a trial
/// disturbed on a busy machine is run again and stored again, with its retry).
fn trials(c: &mut postgres::Client, name: &str) -> Vec<(String, String)> {
    c.query(
        "SELECT t.status, COALESCE(t.reason, '') FROM trials t JOIN runs r USING (run_id)
         WHERE r.name = $1 AND t.retry = 0 ORDER BY t.trial_id",
        &[&name],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect()
}

const PLAIN: &str = "[axes]\npolicies = [\"other\"]\ntasks = [1]\n[settings]\ntrials = 1\nwarmup = 0\nwork = \"5ms\"\nsample_interval = \"off\"\n";

#[test]
fn a_run_no_worker_can_start_is_counted_refused_after_three_and_blocks_nothing() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let db = s.fresh_db("unfit");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    // 2 x 40 channel descriptors + 64 for schedlab: 144, more than a 120-descriptor worker has.
    let unfit = spec(
        dir.path(),
        "unfit",
        "[axes]\npolicies = [\"other\"]\n[[axes.workloads]]\nkind = \"messaging\"\ngroups = 1\nfds = 40\nloops = 2\n\
         [settings]\ntrials = 1\nwarmup = 0\nsample_interval = \"off\"\n",
    );
    ok(&["submit", &unfit, "--db", &url]);
    let plain = spec(dir.path(), "plain", PLAIN);
    ok(&["submit", &plain, "--db", &url]);
    let mut c = s.client(&db);
    for attempt in 1..=3 {
        let o = Command::new("prlimit")
            .arg("--nofile=120:120")
            .arg(assert_cmd::cargo::cargo_bin("schedlab"))
            .args(["worker", "--db", &url, "--quiet", "--spool-file"])
            .arg(dir.path().join("spool.db"))
            .env("PGPASSWORD", super::server::PASSWORD)
            .output()
            .unwrap();
        let said = text(&o);
        assert_eq!(o.status.code(), Some(0), "worker {attempt}: {said}");
        assert!(
            said.contains("file descriptors"),
            "worker {attempt}: {said}"
        );
        // The run behind it was not held up.
        assert_eq!(trials(&mut c, "plain").len(), 1, "worker {attempt}: {said}");
        let (state, attempts, reason): (String, i64, Option<String>) = c
            .query_one(
                "SELECT state, attempts, reason FROM queue WHERE run_id = 1",
                &[],
            )
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .unwrap();
        let reason = reason.unwrap_or_default();
        assert_eq!(attempts, attempt, "{state} {reason}");
        assert!(reason.contains("file descriptors"), "{reason}");
        if attempt < 3 {
            assert_eq!(state, "pending", "{reason}");
        } else {
            assert_eq!(state, "failed", "{reason}");
            assert!(reason.contains("no worker could run it"), "{reason}");
        }
    }
    let status: String = c
        .query_one("SELECT status FROM runs WHERE run_id = 1", &[])
        .unwrap()
        .get(0);
    assert_eq!(status, "failed");
    // A fourth worker finds nothing to do and says so.
    let o = work(&url, dir.path(), &["--quiet"]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_partition_needs_allow_knobs_partition() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    let balance = Path::new("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance");
    if !schedlab_testkit::root("a partition changes the root cpuset") {
        return;
    }
    if !balance.exists() {
        return schedlab_testkit::skip(
            schedlab_testkit::Need::Cgroup,
            "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset",
        );
    }
    let guard = super::common::Restore::new(balance.to_str().unwrap());
    let db = s.fresh_db("partition");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let part = spec(
        dir.path(),
        "part",
        "[axes]\npolicies = [\"other\"]\ntasks = [1]\ncpuset = [\"1\"]\npartition = [true]\n\
         [settings]\ntrials = 1\nwarmup = 0\nwork = \"5ms\"\nsample_interval = \"off\"\n",
    );
    ok(&["submit", &part, "--db", &url]);
    let o = work(
        &url,
        dir.path(),
        &["--quiet", "--allow-knobs", "vm.swappiness"],
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut c = s.client(&db);
    let t = trials(&mut c, "part");
    assert_eq!(t.len(), 1, "{}", text(&o));
    assert_eq!(t[0].0, "skipped", "{t:?}");
    assert!(t[0].1.contains("--allow-knobs partition"), "{t:?}");
    assert_eq!(
        pg_int(&mut c, "SELECT COUNT(*) FROM queue WHERE state = 'done'"),
        1
    );
    assert_eq!(
        super::common::value(balance.to_str().unwrap()),
        guard.original()
    );
    // Allowed, it runs, and the root cpuset balances load again after it.
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        ok(&["submit", &part, "--db", &url]);
        let o = work(&url, dir.path(), &["--quiet", "--allow-knobs", "partition"]);
        assert!(o.status.success(), "{}", text(&o));
        let t = trials(&mut c, "part");
        assert_eq!(t[1].0, "ok", "{t:?} {}", text(&o));
        assert_eq!(
            super::common::value(balance.to_str().unwrap()),
            guard.original()
        );
    }
}

#[test]
fn an_io_dir_another_user_can_change_is_refused() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    if !schedlab_testkit::root("root runs the queued run, `nobody` owns its io_dir") {
        return;
    }
    let Ok(Some(nobody)) = nix::unistd::User::from_name("nobody") else {
        return schedlab_testkit::skip(schedlab_testkit::Need::User, "no user `nobody`");
    };
    let db = s.fresh_db("theirs");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    let io = dir.path().join("io");
    let theirs = io.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::os::unix::fs::chown(
        &theirs,
        Some(nobody.uid.as_raw()),
        Some(nobody.gid.as_raw()),
    )
    .unwrap();
    let body = |io_dir: &Path| {
        format!(
            "[axes]\npolicies = [\"other\"]\ntasks = [1]\nworkloads = [{{ kind = \"io\", io_bytes = 65536 }}]\n\
             [settings]\ntrials = 1\nwarmup = 0\nwork = \"5ms\"\nsample_interval = \"off\"\nio_dir = \"{}\"\n",
            io_dir.display()
        )
    };
    ok(&[
        "submit",
        &spec(dir.path(), "theirs", &body(&theirs)),
        "--db",
        &url,
    ]);
    let o = work(
        &url,
        dir.path(),
        &["--quiet", "--io-dir", io.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut c = s.client(&db);
    let t = trials(&mut c, "theirs");
    assert_eq!(t[0].0, "skipped", "{t:?}");
    assert!(t[0].1.contains("uid 65534"), "{t:?}");
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
}

#[test]
fn programs_come_from_the_allow_list_and_run_as_the_command_user_with_the_specs_env_only() {
    let Some(pg) = super::server::shared() else {
        return;
    };
    let s: &Server = &pg;
    if !schedlab_testkit::root("a root worker drops to `nobody` for its programs") {
        return;
    }
    if nix::unistd::User::from_name("nobody")
        .ok()
        .flatten()
        .is_none()
    {
        return schedlab_testkit::skip(schedlab_testkit::Need::User, "no user `nobody`");
    }
    let db = s.fresh_db("commands");
    let url = s.url(&db);
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let command = |name: &str, argv: &str| {
        spec(
            dir.path(),
            name,
            &format!(
                "[axes]\npolicies = [\"other\"]\n[[axes.workloads]]\nkind = \"command\"\n\
                 commands = [{{ argv = {argv}, env = {{ OUT = \"{}\" }} }}]\n\
                 [settings]\ntrials = 1\nwarmup = 0\nsample_interval = \"off\"\n",
                out.display()
            ),
        )
    };
    let sh = command(
        "sh",
        "[\"/bin/sh\", \"-c\", \"id -u > $OUT/uid; env > $OUT/env\"]",
    );
    let other = command("other", "[\"/usr/bin/id\"]");
    let relative = command("relative", "[\"sh\", \"-c\", \"true\"]");
    for spec in [&sh, &other, &relative] {
        ok(&["submit", spec, "--db", &url]);
    }
    let o = schedlab()
        .args(["worker", "--db", &url, "--quiet", "--spool-file"])
        .arg(dir.path().join("spool.db"))
        .args(["--allow-commands", "/bin/sh"])
        .env("SCHEDLAB_DB_EXTRA", "worker-only")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let mut c = s.client(&db);
    assert_eq!(trials(&mut c, "sh")[0].0, "ok", "{}", text(&o));
    let uid = std::fs::read_to_string(out.join("uid")).unwrap();
    assert_eq!(uid.trim(), "65534", "the program ran as nobody");
    let env = std::fs::read_to_string(out.join("env")).unwrap();
    for leaked in ["PGPASSWORD", "SCHEDLAB_DB_EXTRA", "HOME=", "PATH="] {
        assert!(!env.contains(leaked), "{leaked} reached the program: {env}");
    }
    assert!(env.contains("OUT="), "{env}");
    for name in ["other", "relative"] {
        let t = trials(&mut c, name);
        assert_eq!(t[0].0, "skipped", "{name}: {t:?}");
        assert!(t[0].1.contains("--allow-commands"), "{name}: {t:?}");
    }
}
