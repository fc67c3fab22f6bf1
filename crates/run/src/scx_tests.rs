//! The BPF scheduler state machine against a fake /sys/kernel/sched_ext: shell scripts play
//! the scheduler, writing `state` and `root/ops` as the kernel would.

use super::*;

/// A fake sched_ext tree in state `disabled`.
fn fake_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("root")).unwrap();
    std::fs::write(dir.path().join("state"), "disabled\n").unwrap();
    std::fs::write(dir.path().join("root/ops"), "").unwrap();
    dir
}

/// A scheduler played by `sh`: it enables itself as `ops` in `root`, and on SIGTERM disables
/// itself (unless `stubborn`, when it ignores SIGTERM and leaves the state as it is).
fn fake_scheduler(root: &Path, ops: &str, stubborn: bool) -> ScxCommand {
    let on_term = if stubborn {
        "''".to_string()
    } else {
        "'printf disabling > \"$0/state\"; : > \"$0/root/ops\"; printf disabled > \"$0/state\"; exit 0'"
            .to_string()
    };
    let script = format!(
        "trap {on_term} TERM; printf enabling > \"$0/state\"; sleep 0.05; printf %s {ops} > \"$0/root/ops\"; printf enabled > \"$0/state\"; while :; do sleep 0.02; done"
    );
    ScxCommand {
        argv: vec!["sh".into(), "-c".into(), script, root.display().to_string()],
        ops: "lavd".into(),
    }
}

fn machine(root: &Path) -> Scx {
    Scx::new(root, Duration::from_secs(5), Duration::from_millis(500))
}

#[test]
fn a_scheduler_is_started_until_enabled_and_stopped_back_to_the_fair_class() {
    let t = fake_tree();
    let mut scx = machine(t.path());
    let cmd = fake_scheduler(t.path(), "lavd_1.0.3", false);
    let mut spawned = Vec::new();
    let ops = scx.start(&cmd, &mut |pid| spawned.push(pid)).unwrap();
    assert_eq!(ops, "lavd_1.0.3");
    assert_eq!(scx.state().state, "enabled");
    assert_eq!(spawned, vec![scx.pid().unwrap()]);
    assert_eq!(scx.running(), Some(&cmd));
    let pid = scx.pid().unwrap();
    scx.stop().unwrap();
    assert_eq!(scx.running(), None);
    let after = scx.state();
    assert_eq!((after.state.as_str(), after.ops), ("disabled", None));
    assert!(!schedlab_sys::group_alive(pid), "its process group is gone");
}

#[test]
fn a_scheduler_that_exits_at_once_is_refused_with_its_output() {
    let t = fake_tree();
    let mut scx = machine(t.path());
    let cmd = ScxCommand {
        argv: vec![
            "sh".into(),
            "-c".into(),
            "echo 'failed to load BPF program: Operation not permitted' >&2; exit 3".into(),
        ],
        ops: "lavd".into(),
    };
    let e = scx.start(&cmd, &mut |_| {}).unwrap_err().to_string();
    assert!(
        e.contains("exited") && e.contains("Operation not permitted"),
        "{e}"
    );
    assert_eq!(scx.running(), None);
}

#[test]
fn a_wrong_ops_name_times_out_and_the_process_is_stopped() {
    let t = fake_tree();
    let mut scx = Scx::new(
        t.path(),
        Duration::from_millis(400),
        Duration::from_millis(500),
    );
    let cmd = fake_scheduler(t.path(), "rusty", false);
    let e = scx.start(&cmd, &mut |_| {}).unwrap_err().to_string();
    assert!(
        e.contains("not enabled as 'lavd'") && e.contains("ops 'rusty'"),
        "{e}"
    );
    assert_eq!(scx.running(), None);
    assert_eq!(scx.state().state, "disabled", "stopped after the timeout");
}

#[test]
fn a_scheduler_that_leaves_sched_ext_enabled_is_an_error_after_stop() {
    let t = fake_tree();
    let mut scx = machine(t.path());
    let cmd = fake_scheduler(t.path(), "lavd", true);
    scx.start(&cmd, &mut |_| {}).unwrap();
    let e = scx.stop().unwrap_err().to_string();
    assert!(e.contains("not back on its fair class"), "{e}");
}

#[test]
fn another_loaded_scheduler_or_a_missing_program_is_refused() {
    let t = fake_tree();
    std::fs::write(t.path().join("state"), "enabled\n").unwrap();
    std::fs::write(t.path().join("root/ops"), "bpfland\n").unwrap();
    let mut scx = machine(t.path());
    let cmd = fake_scheduler(t.path(), "lavd", false);
    let e = scx.start(&cmd, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("another BPF scheduler (bpfland)"), "{e}");
    std::fs::write(t.path().join("state"), "disabled\n").unwrap();
    let missing = ScxCommand {
        argv: vec!["/nonexistent/scx_lavd".into()],
        ops: "lavd".into(),
    };
    let e = scx.start(&missing, &mut |_| {}).unwrap_err().to_string();
    assert!(
        e.contains("cannot start") && e.contains("scx packages"),
        "{e}"
    );
}

#[test]
fn a_link_planted_where_the_log_used_to_go_is_not_followed_and_nothing_is_left() {
    // The log had a predictable name in the shared temp directory, and was created following
    // links: as root, anyone could have made it truncate any file.
    let t = fake_tree();
    let victim_dir = tempfile::tempdir().unwrap();
    let victim = victim_dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let mut cmd = fake_scheduler(t.path(), "plantedlog", false);
    cmd.ops = "plantedlog".into();
    let tmp = std::env::temp_dir();
    let planted = tmp.join(format!(
        "schedlab-scx-{}-plantedlog.log",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&planted);
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let mut scx = machine(t.path());
    let started = scx.start(&cmd, &mut |_| {});
    let log_dir = scx.running.as_ref().map(|r| tmp.join(&r.log.name));
    if let Some(d) = &log_dir {
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::symlink_metadata(d).unwrap();
        assert!(md.is_dir() && md.mode() & 0o7777 == 0o700, "{md:?}");
    }
    scx.stop().unwrap();
    let _ = std::fs::remove_file(&planted);
    started.unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // The log's private directory is gone with the scheduler.
    let log_dir = log_dir.unwrap();
    assert!(!log_dir.exists(), "{} is left", log_dir.display());
}
