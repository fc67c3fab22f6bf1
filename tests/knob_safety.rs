//! Kernel settings stay safe to vary as root, with the real binary: SIGHUP restores a run's
//! settings and exits 129; two names for one file are refused naming both; knobs on the deny
//! list need `--allow-knob`; a restore journal someone else could have written is refused, not
//! obeyed.
//!
//! Tests that change a setting need root, take turns (`rt_turn`), keep their journals in a
//! scratch directory and put every setting back when they end, even on a panic ([`Restore`]).
//! No test writes a denied setting: refusals are shown with `plan`, which changes nothing, or
//! on the harmless firmware fallback timeout.

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";
/// Denied (it feeds firmware to the fallback loader), harmless to write: a timeout in seconds.
const FIRMWARE_TIMEOUT: &str = "/sys/class/firmware/timeout";

/// `schedlab` with its restore journal in `state`.
fn schedlab_in(state: &Path) -> Command {
    let mut c = schedlab();
    c.env("SCHEDLAB_STATE_DIR", state);
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A value of vm.swappiness other than `original`.
fn other_than(original: &str) -> &'static str {
    if original == "10" {
        "11"
    } else {
        "10"
    }
}

/// The restore journals in `state`.
fn journals(state: &Path) -> Vec<String> {
    std::fs::read_dir(state)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("restore-"))
                .collect()
        })
        .unwrap_or_default()
}

// Restore journals that someone other than schedlab could have written.

/// A journal as a killed schedlab run (a dead process) would have left it: it says
/// vm.swappiness was `original`, and, when `firmware`, the firmware timeout was 61.
fn dead_journal(original: &str, firmware: bool) -> String {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let mut entries = vec![format!(
        "{{\"name\":\"vm.swappiness\",\"path\":\"{SWAPPINESS}\",\"original\":\"{original}\"}}"
    )];
    if firmware {
        entries.push(format!(
            "{{\"name\":\"{FIRMWARE_TIMEOUT}\",\"path\":\"{FIRMWARE_TIMEOUT}\",\"original\":\"61\"}}"
        ));
    }
    format!(
        "{{\"version\":1,\"owner\":{{\"pid\":{},\"start_ticks\":1,\"boot_id\":\"{}\"}},\
         \"command\":\"schedlab run --knob vm.swappiness=10\",\"created_at\":\"2026-01-01T00:00:00Z\",\
         \"entries\":[{}],\"scx\":null}}",
        std::process::id(),
        boot_id.trim(),
        entries.join(",")
    )
}

/// `schedlab restore` with the state directory `state`: its exit code and output.
fn restore(state: &Path) -> (Option<i32>, String) {
    let out = schedlab_in(state).arg("restore").output().unwrap();
    (out.status.code(), text(&out))
}

#[test]
fn a_planted_journal_is_refused_unless_only_root_could_have_written_it() {
    if !root("the state directory and journals are root's") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let firmware = Path::new(FIRMWARE_TIMEOUT).exists();
    let _fw = firmware.then(|| Restore::new(FIRMWARE_TIMEOUT));
    let original = guard.original().to_string();
    // As a killed run would have left it.
    let changed = other_than(&original);
    std::fs::write(SWAPPINESS, changed).unwrap();
    let s = Scratch::new();
    let state = s.state_dir();
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let journal = state.join("restore-999999.json");
    std::fs::write(&journal, dead_journal(&original, false)).unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
    let chown = |p: &Path, uid: u32| std::os::unix::fs::chown(p, Some(uid), None).unwrap();
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    let link = s.path().join("state-link");
    std::os::unix::fs::symlink(&state, &link).unwrap();
    // Each untrusted case: refused with its cause, nothing written, the journal kept.
    type Case<'a> = (&'a str, &'a dyn Fn(), &'a dyn Fn(), &'a Path);
    let cases: [Case; 4] = [
        (
            "owned by uid 65534",
            &|| chown(&journal, 65534),
            &|| chown(&journal, 0),
            &state,
        ),
        (
            "mode 0666",
            &|| mode(&journal, 0o666),
            &|| mode(&journal, 0o600),
            &state,
        ),
        ("symbolic link", &|| {}, &|| {}, &link),
        (
            "state directory",
            &|| chown(&state, 65534),
            &|| chown(&state, 0),
            &state,
        ),
    ];
    for (why, spoil, mend, dir) in cases {
        spoil();
        let (code, said) = restore(dir);
        assert_eq!(code, Some(1), "{why}: {said}");
        assert!(said.contains(why), "{why}: {said}");
        assert_eq!(value(SWAPPINESS), changed, "{why}: obeyed: {said}");
        // Any other command does not obey it either.
        let out = schedlab_in(dir)
            .args(["runs", "--db", s.db().to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(value(SWAPPINESS), changed, "{why}: obeyed: {}", text(&out));
        assert!(journal.exists(), "{why}");
        mend();
    }
    // Trusted, but naming a denied setting: that one is not written, the rest is.
    if firmware {
        std::fs::write(&journal, dead_journal(&original, true)).unwrap();
        let fw = value(FIRMWARE_TIMEOUT);
        let (code, said) = restore(&state);
        assert_eq!(code, Some(1), "{said}");
        assert!(said.contains("deny list"), "{said}");
        assert_eq!(value(FIRMWARE_TIMEOUT), fw, "{said}");
        assert_eq!(value(SWAPPINESS), original, "{said}");
        std::fs::write(SWAPPINESS, changed).unwrap();
        std::fs::remove_file(&journal).unwrap();
        std::fs::write(&journal, dead_journal(&original, false)).unwrap();
    }
    // Trusted: obeyed, and it says what it found and did.
    let (code, said) = restore(&state);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "restored vm.swappiness ({SWAPPINESS}): {changed} -> {original}"
        )),
        "{said}"
    );
    assert_eq!(value(SWAPPINESS), original);
    assert!(!journal.exists());
}

#[test]
fn a_link_planted_at_the_journals_temp_file_is_not_followed() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let state = s.state_dir();
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = s.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // The shell plants the link at its own pid's temp file, then becomes schedlab (same pid).
    let line = format!(
        "ln -s {} {}/restore-$$.json.tmp && exec {} run --db {} --quiet --tasks 1 --work 2ms --trials 1 --knob vm.swappiness={changed}",
        victim.display(),
        state.display(),
        assert_cmd::cargo::cargo_bin("schedlab").display(),
        s.db().display()
    );
    let out = Command::new("sh")
        .args(["-c", &line])
        .env("SCHEDLAB_STATE_DIR", &state)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(value(SWAPPINESS), guard.original());
    assert!(journals(&state).is_empty(), "{:?}", journals(&state));
}

// Knob names: two names for one file, and the deny list.

/// `schedlab plan ARGS` on a scratch database.
fn plan(s: &Scratch, args: &[&str]) -> Output {
    schedlab_in(&s.state_dir())
        .args(["plan", "--db", s.db().to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn two_names_for_one_file_are_refused_naming_both() {
    let s = Scratch::new();
    // A glob and a sysctl name.
    let out = plan(
        &s,
        &[
            "--knob",
            "vm.swappiness=10",
            "--knob",
            "/proc/sys/vm/swappines*=20",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("vm.swappiness (/proc/sys/vm/swappiness)")
            && said.contains("/proc/sys/vm/swappines*")
            && said.contains("same file"),
        "{said}"
    );
    // A `..` is not a plain path.
    let out = plan(&s, &["--knob", "/proc/sys/vm/../vm/swappiness=10"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // A link under /sys and the file it leads to.
    let dev = std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .map(|e| e.path().join("queue/read_ahead_kb"))
        .find(|p| p.exists());
    if let Some(link) = dev {
        let real = std::fs::canonicalize(&link).unwrap();
        assert_ne!(link, real);
        let out = plan(
            &s,
            &[
                "--knob",
                &format!("{}=128", link.display()),
                "--knob",
                &format!("{}=256", real.display()),
            ],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(
            said.contains(&link.display().to_string())
                && said.contains(&real.display().to_string()),
            "{said}"
        );
    }
    if !root("a run that changes a kernel setting") {
        return;
    }
    // A run is refused before it changes anything.
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let out = schedlab_in(&s.state_dir())
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(NO_RETRIES)
        .args(["--tasks", "1", "--work", "2ms", "--trials", "1"])
        .args([
            "--knob",
            "vm.swappiness=10",
            "--knob",
            "/proc/sys/vm/swappines*=20",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(value(SWAPPINESS), guard.original());
    assert!(journals(&s.state_dir()).is_empty());
}

#[test]
fn denied_knobs_are_refused_with_the_reason_unless_allowed() {
    let s = Scratch::new();
    for (args, reason) in [
        (
            vec!["--knob", "kernel.core_pattern=core"],
            "run that program as root",
        ),
        (
            vec!["--knob", "/proc/sys/kernel/core_patter*=core"],
            "run that program as root",
        ),
        (vec!["--knob", "/sys/power/state=mem"], "powers off"),
    ] {
        let out = plan(&s, &args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(
            said.contains("deny list") && said.contains(reason) && said.contains("--allow-knob"),
            "{args:?}: {said}"
        );
    }
    // Allowed by name: accepted at plan time (plan writes nothing).
    let out = plan(
        &s,
        &[
            "--knob",
            "kernel.core_pattern=core",
            "--allow-knob",
            "kernel.core_pattern",
        ],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("kernel.core_pattern (/proc/sys/kernel/core_pattern): now"),
        "{said}"
    );
    // ... or by the spec's settings.allow_knobs.
    let spec = s.path().join("fw.toml");
    std::fs::write(
        &spec,
        format!(
            "[axes]\npolicies = [\"other\"]\ntasks = [1]\n[[axes.knobs]]\nname = \"{FIRMWARE_TIMEOUT}\"\nvalues = [61]\n\
             [settings]\ntrials = 1\nwork = \"2ms\"\nallow_knobs = [\"{FIRMWARE_TIMEOUT}\"]\n"
        ),
    )
    .unwrap();
    let out = plan(&s, &[spec.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    if !root("a run that changes a kernel setting") {
        return;
    }
    if !Path::new(FIRMWARE_TIMEOUT).exists() {
        return skip(
            Need::Kernel,
            format!("no {FIRMWARE_TIMEOUT} (the firmware loader's setting) on this kernel"),
        );
    }
    // A run is refused before it changes anything.
    let _turn = rt_turn();
    let guard = Restore::new(FIRMWARE_TIMEOUT);
    let out = schedlab_in(&s.state_dir())
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(NO_RETRIES)
        .args(["--tasks", "1", "--work", "2ms", "--trials", "1", "--knob"])
        .arg(format!("{FIRMWARE_TIMEOUT}=61"))
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!("--allow-knob {FIRMWARE_TIMEOUT}")),
        "{said}"
    );
    assert_eq!(value(FIRMWARE_TIMEOUT), guard.original());
}

// Signals: SIGHUP from kill, from a closed terminal, and under nohup.

/// The arguments of a run of two 5 s trials that sets vm.swappiness to `changed`.
fn long_run(s: &Scratch, changed: &str) -> Vec<String> {
    let mut args: Vec<String> = ["run", "--db", s.db().to_str().unwrap(), "--quiet"]
        .iter()
        .chain(&[
            "--policy", "other", "--tasks", "1", "--work", "5s", "--trials", "2",
        ])
        .chain(&["--sample-interval", "off", "--knob"])
        .map(|a| a.to_string())
        .collect();
    args.push(format!("vm.swappiness={changed}"));
    args
}

/// Waits until vm.swappiness is `changed` (the run's trial has started), and a little more.
fn wait_for(changed: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while value(SWAPPINESS) != changed {
        assert!(Instant::now() < deadline, "the knob was never changed");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn sighup_restores_a_runs_settings_and_exits_129() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let child = schedlab_in(&s.state_dir())
        .args(long_run(&s, changed))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(changed);
    // What a closed terminal or a dropped ssh session sends.
    signal(child.id(), Signal::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(129),
        "{:?}: {}",
        out.status,
        text(&out)
    );
    assert_eq!(value(SWAPPINESS), guard.original(), "{}", text(&out));
    assert!(journals(&s.state_dir()).is_empty(), "the journal is gone");
}

#[test]
fn a_closed_terminal_restores_a_runs_settings_without_a_panic() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let err = s.path().join("stderr");
    // A terminal of its own (`script` runs it on a new pseudo-terminal); its table goes there,
    // its messages to a file.
    let bin = assert_cmd::cargo::cargo_bin("schedlab");
    let line = format!(
        "{} {} 2>{}",
        bin.display(),
        long_run(&s, changed).join(" "),
        err.display()
    );
    let mut term = Command::new("script")
        .args(["-q", "-c", &line, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(changed);
    let journal = s.state_dir().join(&journals(&s.state_dir())[0]);
    let journal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(journal).unwrap()).unwrap();
    let pid = journal["owner"]["pid"].as_i64().unwrap() as i32;
    // The terminal goes away: the kernel hangs it up, and schedlab gets SIGHUP.
    term.kill().unwrap();
    term.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while pid_alive(pid) {
        assert!(
            Instant::now() < deadline,
            "schedlab (pid {pid}) did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let said = std::fs::read_to_string(&err).unwrap();
    assert_eq!(value(SWAPPINESS), guard.original(), "{said}");
    assert!(journals(&s.state_dir()).is_empty(), "{said}");
    assert!(
        said.contains("interrupted") && !said.contains("panicked"),
        "{said}"
    );
}

#[test]
fn under_nohup_sighup_is_ignored_and_sigterm_restores() {
    if !root("a run that changes a kernel setting") {
        return;
    }
    let _turn = rt_turn();
    let guard = Restore::new(SWAPPINESS);
    let changed = other_than(guard.original());
    let s = Scratch::new();
    let child = Command::new("nohup")
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(long_run(&s, changed))
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(changed);
    signal(child.id(), Signal::SIGHUP);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        pid_alive(child.id() as i32),
        "nohup's run outlives a SIGHUP"
    );
    assert_eq!(value(SWAPPINESS), changed);
    signal(child.id(), Signal::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_eq!(value(SWAPPINESS), guard.original(), "{}", text(&out));
}
