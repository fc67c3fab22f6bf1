//! Every exit path removes a trial's cgroups: Ctrl-C (SIGINT to the whole process group, as a
//! terminal sends it), SIGTERM and SIGHUP mid-trial, and a trial killed at its deadline (its
//! groups are gone before the next trial's exist). The root cgroups' settings, which schedlab
//! did not create, are the same after each run as before it.

use super::*;

/// The root cgroups' settings: every writable file at the top of each hierarchy but the task
/// lists and the usage counter (which others change), with its value.
fn root_settings() -> Vec<(PathBuf, String)> {
    let moving = ["tasks", "cgroup.procs", "cpuacct.usage"];
    let mut out = Vec::new();
    for m in MOUNTS {
        for e in std::fs::read_dir(m).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(meta) = e.metadata() else { continue };
            let writable =
                std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o200 != 0;
            if meta.is_file() && writable && !moving.contains(&name.as_str()) {
                let value = std::fs::read_to_string(e.path()).unwrap_or_else(|e| format!("({e})"));
                out.push((e.path(), value));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn ctrl_c_sigterm_and_sighup_remove_the_trials_cgroups() {
    if !ready("ctrl_c_sigterm_and_sighup_remove_the_trials_cgroups") {
        return;
    }
    let _turn = rt_turn();
    let before = root_settings();
    assert!(
        before
            .iter()
            .any(|(p, _)| p.ends_with("cpuset.sched_load_balance")),
        "{before:?}"
    );
    // (signal, sent to the process group, exit code)
    for (sig, group, code) in [
        (Signal::SIGINT, true, 130),
        (Signal::SIGTERM, false, 130),
        (Signal::SIGHUP, false, 129),
    ] {
        let s = Scratch::new();
        let child = spawn_until_trial(&s, &LONG_PARTITION_TRIAL);
        let pid = child.id();
        assert_eq!(common::value(LOAD_BALANCE), "0", "the partition trial runs");
        assert_eq!(trial_dirs(pid).len(), 3, "{:?}", trial_dirs(pid));
        if group {
            signal_group(pid, sig);
        } else {
            signal(pid, sig);
        }
        let o = child.wait_with_output().unwrap();
        println!("    signal {sig}: {:?}", o.status);
        assert_eq!(o.status.code(), Some(code), "signal {sig}: {}", text(&o));
        assert!(!group_alive(pid as i32), "signal {sig}: processes left");
        let left = cgroups_of(pid);
        assert!(left.is_empty(), "signal {sig} left {left:?}");
        assert_eq!(
            root_settings(),
            before,
            "signal {sig}: the root cgroups changed"
        );
        let stored = ints(&s.conn(), "SELECT COUNT(*) FROM trials WHERE status = 'ok'");
        assert_eq!(stored, [0], "the stopped trial is not stored as ok");
    }
    assert_nothing_left();
}

#[test]
fn a_trial_killed_at_its_deadline_has_its_cgroups_removed_before_the_next() {
    if !ready("a_trial_killed_at_its_deadline_has_its_cgroups_removed_before_the_next") {
        return;
    }
    let _turn = rt_turn();
    let before = root_settings();
    let s = Scratch::new();
    let mut child = schedlab_in(&s)
        .arg("run")
        .args(NO_RETRIES)
        .args(["--db", s.db().to_str().unwrap(), "--quiet"])
        .args([
            "--tasks",
            "1",
            "--work",
            "20s",
            "--timeout",
            "1s",
            "--trials",
            "3",
        ])
        .args(["--cpu-max", "50ms/100ms"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Watch the trial directories until the run ends: which trials had groups, and how many
    // trials had them at once.
    let mut seen = std::collections::BTreeSet::new();
    let mut most_at_once = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        let mut now: Vec<String> = trial_dirs(pid)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        now.sort();
        now.dedup();
        most_at_once = most_at_once.max(now.len());
        seen.extend(now);
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(10));
    };
    println!("    trials with groups: {seen:?}; at most {most_at_once} at once; {status:?}");
    let statuses = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM trials WHERE status = 'timeout'",
    );
    assert_eq!(statuses, [3], "every trial killed at its deadline");
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(most_at_once, 1, "a killed trial's groups outlived it");
    assert!(cgroups_of(pid).is_empty(), "{:?}", cgroups_of(pid));
    assert_eq!(root_settings(), before, "the root cgroups changed");
    assert_nothing_left();
}
