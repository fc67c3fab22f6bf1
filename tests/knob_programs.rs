//! Knobs that make the kernel run a program, and knobs that alias another axis (issue 27
//! item 5): `release_agent` and `notify_on_release` are refused whatever `--allow-knob`
//! says, as is a core_pattern that pipes to a program, and a planted journal naming them is
//! not obeyed; one file is never set by two axes (a knob on the I/O scheduler's file, or on
//! the root cpuset's `cpuset.sched_load_balance` a partition holds).
//!
//! Refusals are shown with `plan`, which changes nothing; the journal test needs root.

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn plan(s: &Scratch, args: &[&str]) -> Output {
    schedlab()
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .args(["plan", "--db", s.db().to_str().unwrap(), "--tasks", "1"])
        .args(["--work", "2ms", "--trials", "1"])
        .args(args)
        .output()
        .unwrap()
}

/// The v1 `cpu` hierarchy's root, where `release_agent` lives; None (skipped) elsewhere.
fn v1_cpu_root() -> Option<PathBuf> {
    let root = PathBuf::from("/sys/fs/cgroup/cpu");
    if root.join("release_agent").exists() {
        Some(root)
    } else {
        skip(
            Need::Cgroup,
            "no cgroup v1 hierarchy with a release_agent at /sys/fs/cgroup/cpu",
        );
        None
    }
}

#[test]
fn knobs_that_make_the_kernel_run_a_program_are_refused_even_when_allowed() {
    let Some(cpu) = v1_cpu_root() else {
        return;
    };
    let s = Scratch::new();
    let agent = cpu.join("release_agent").display().to_string();
    let notify = cpu.join("notify_on_release").display().to_string();
    for (knob, allow) in [
        (format!("{agent}=/tmp/x"), agent.clone()),
        (format!("{notify}=1"), notify.clone()),
        (
            "/sys/fs/cgroup/cpu/release_agen*=/tmp/x".to_string(),
            agent.clone(),
        ),
        (
            "kernel.core_pattern=|/tmp/x %p".to_string(),
            "kernel.core_pattern".to_string(),
        ),
    ] {
        let out = plan(&s, &["--knob", &knob]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{knob}: {said}");
        assert!(said.contains("run"), "{knob}: {said}");
        let out = plan(&s, &["--knob", &knob, "--allow-knob", &allow]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{knob} allowed: {said}");
        assert!(said.contains("no flag allows"), "{knob}: {said}");
    }
    // A core pattern that names a file is still only denied, and allowed by name.
    let out = plan(
        &s,
        &[
            "--knob",
            "kernel.core_pattern=core",
            "--allow-knob",
            "kernel.core_pattern",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_planted_journal_for_release_agent_is_not_obeyed() {
    if !root("the state directory and journals are root's") {
        return;
    }
    let Some(cpu) = v1_cpu_root() else {
        return;
    };
    let _turn = rt_turn();
    let agent = cpu.join("release_agent");
    let notify = cpu.join("notify_on_release");
    // Put back even when the journal was obeyed (the failure this test is about).
    let (guard_agent, guard_notify) = (
        Restore::new(agent.to_str().unwrap()),
        Restore::new(notify.to_str().unwrap()),
    );
    let (agent_now, notify_now) = (guard_agent.original(), guard_notify.original());
    let s = Scratch::new();
    let state = s.state_dir();
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let entry = |p: &Path, v: &str| {
        format!(
            "{{\"name\":\"{0}\",\"path\":\"{0}\",\"original\":\"{v}\"}}",
            p.display()
        )
    };
    let journal = state.join("restore-999999.json");
    std::fs::write(
        &journal,
        format!(
            "{{\"version\":1,\"owner\":{{\"pid\":{},\"start_ticks\":1,\"boot_id\":\"{}\"}},\
             \"command\":\"schedlab run\",\"created_at\":\"2026-01-01T00:00:00Z\",\
             \"entries\":[{},{}],\"scx\":null}}",
            std::process::id(),
            boot_id.trim(),
            entry(&agent, "/tmp/t27-agent"),
            entry(&notify, if notify_now == "1" { "0" } else { "1" })
        ),
    )
    .unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = schedlab()
        .env("SCHEDLAB_STATE_DIR", &state)
        .arg("restore")
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("deny list"), "{said}");
    assert_eq!(value(agent.to_str().unwrap()), agent_now, "{said}");
    assert_eq!(value(notify.to_str().unwrap()), notify_now, "{said}");
    assert!(journal.exists(), "{said}");
}

#[test]
fn a_knob_on_the_io_schedulers_file_is_refused_as_the_same_file() {
    let Some(dev) = std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|d| Path::new(&format!("/sys/block/{d}/queue/scheduler")).exists())
    else {
        return skip(Need::Kernel, "no block device with an I/O scheduler");
    };
    let s = Scratch::new();
    let file = format!("/sys/block/{dev}/queue/scheduler");
    let out = plan(
        &s,
        &[
            "--device",
            &dev,
            "--io-schedulers",
            "none,mq-deadline",
            "--knob",
            &format!("{file}=kyber"),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("same file") && said.contains("io_scheduler"),
        "{said}"
    );
}

#[test]
fn a_knob_on_the_load_balancing_a_partition_holds_is_refused() {
    let root = Path::new("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance");
    if !root.exists() {
        return skip(
            Need::Cgroup,
            "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset",
        );
    }
    if schedlab_sys_cpus() < 2 {
        return skip(Need::Kernel, "a partition on CPU 1 needs two CPUs");
    }
    let s = Scratch::new();
    let out = plan(
        &s,
        &[
            "--cpuset",
            "1",
            "--partition",
            "--knob",
            &format!("{}=1", root.display()),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("partition"), "{said}");
}

/// CPUs this process may use.
fn schedlab_sys_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
