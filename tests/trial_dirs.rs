//! Trial directories in shared places: root running an io spec never writes through a link
//! another user planted, whether in a sticky shared directory like /var/tmp or in an
//! `--io-dir` that user owns. Needs root and the user `nobody`; skips otherwise.

mod common;

use common::{root, skip, Need, Scratch};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The uid and gid of `nobody`, or None (the test skipped).
fn nobody_or_skip() -> Option<(u32, u32)> {
    if !root("root runs the io spec, `nobody` plants the links") {
        return None;
    }
    match nix::unistd::User::from_name("nobody") {
        Ok(Some(u)) => Some((u.uid.as_raw(), u.gid.as_raw())),
        _ => {
            skip(Need::User, "no user `nobody` to plant the links");
            None
        }
    }
}

/// Root-owned 0600 files with distinct contents in a private directory: what must not change.
fn victims(s: &Scratch) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = s.path().join("victims");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    (0..2u8)
        .map(|i| {
            let path = dir.join(format!("secret-{i}"));
            let bytes: Vec<u8> = (0..1000u32).map(|b| (b as u8) ^ (i * 85)).collect();
            std::fs::write(&path, &bytes).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            (path, bytes)
        })
        .collect()
}

/// As `uid`: plants `IO/schedlab-PID-TAG/{input,out-0,out-1}` for the names schedlab used to
/// give its trial directories (calibration, then run 1's trials), as links to the victims.
fn plant(io: &Path, pid: u32, victims: &[(PathBuf, Vec<u8>)], (uid, gid): (u32, u32)) {
    let (a, b) = (victims[0].0.display(), victims[1].0.display());
    let mut script = String::from("set -e\n");
    for tag in ["calibration", "r1-t0", "r1-t1"] {
        let d = io.join(format!("schedlab-{pid}-{tag}"));
        let d = d.display();
        script.push_str(&format!(
            "mkdir '{d}'\nln -s '{a}' '{d}/input'\nln -s '{b}' '{d}/out-0'\nln -s '{b}' '{d}/out-1'\n"
        ));
    }
    let st = Command::new("sh")
        .args(["-c", &script])
        .uid(uid)
        .gid(gid)
        .status()
        .unwrap();
    assert!(st.success(), "nobody could not plant the links");
}

/// Runs an io spec as root with `--io-dir io`, its pid known in advance: a shell that waits for
/// a line on stdin, then execs schedlab; the links are planted for that pid in between.
fn run_attacked(
    s: &Scratch,
    io: &Path,
    victims: &[(PathBuf, Vec<u8>)],
    nobody: (u32, u32),
) -> String {
    let spec = s.path().join("io.toml");
    std::fs::write(
        &spec,
        r#"
name = "clobber"
[axes]
tasks = [2]
workloads = [{ kind = "io", io_bytes = 65536, io_block = 4096, iterations = 8 }]
[settings]
trials = 2
"#,
    )
    .unwrap();
    let mut child = Command::new("sh")
        .args(["-c", "read go; exec \"$@\"", "sh"])
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .arg("run")
        .args(common::NO_RETRIES)
        .arg(&spec)
        .arg("--db")
        .arg(s.db())
        .arg("--io-dir")
        .arg(io)
        .arg("--quiet")
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    plant(io, child.id(), victims, nobody);
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the run failed: {text}");
    text
}

/// The victims are byte for byte as they were, the run's trials are ok, the planted links are
/// still there (another user's files are not schedlab's to remove), and nothing else is left.
fn check_after(s: &Scratch, io: &Path, victims: &[(PathBuf, Vec<u8>)]) {
    for (path, bytes) in victims {
        let now = std::fs::read(path).unwrap();
        assert!(
            now == *bytes,
            "{} was overwritten through a planted link ({} bytes now)",
            path.display(),
            now.len()
        );
    }
    let statuses: Vec<String> = {
        let c = s.conn();
        let mut st = c.prepare("SELECT status FROM trials").unwrap();
        let rows = st.query_map([], |r| r.get(0)).unwrap();
        rows.map(|r| r.unwrap()).collect()
    };
    assert_eq!(statuses, ["ok", "ok"], "the run works despite the links");
    let mut left: Vec<String> = std::fs::read_dir(io)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left.len(),
        3,
        "only the 3 planted directories are left: {left:?}"
    );
    for name in &left {
        let d = io.join(name);
        assert_eq!(
            std::fs::symlink_metadata(&d).unwrap().uid(),
            65534,
            "{name}"
        );
        assert!(d.join("input").is_symlink(), "{name}/input was removed");
    }
}

#[test]
fn links_planted_at_the_old_names_in_a_sticky_shared_dir_redirect_no_write() {
    let Some(nobody) = nobody_or_skip() else {
        return;
    };
    let s = Scratch::new();
    // Reachable by nobody; like /var/tmp: mode 1777.
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let io = s.path().join("shared");
    std::fs::create_dir(&io).unwrap();
    std::fs::set_permissions(&io, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let v = victims(&s);
    let out = run_attacked(&s, &io, &v, nobody);
    assert!(
        !out.contains("I/O directory"),
        "a sticky directory is fine: {out}"
    );
    check_after(&s, &io, &v);
}

#[test]
fn an_io_dir_owned_by_another_user_redirects_no_write_and_is_warned_about() {
    let Some(nobody) = nobody_or_skip() else {
        return;
    };
    let s = Scratch::new();
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let io = s.path().join("theirs");
    std::fs::create_dir(&io).unwrap();
    std::os::unix::fs::chown(&io, Some(nobody.0), Some(nobody.1)).unwrap();
    std::fs::set_permissions(&io, std::fs::Permissions::from_mode(0o755)).unwrap();
    let v = victims(&s);
    let out = run_attacked(&s, &io, &v, nobody);
    check_after(&s, &io, &v);
    assert!(
        out.contains(&format!(
            "the I/O directory {} belongs to uid",
            io.display()
        )),
        "no warning about the directory: {out}"
    );
    let warned: i64 = s
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM warnings WHERE code = 'io_dir_shared'
             AND json_extract(params, '$.owner_uid') = ?1",
            [nobody.0],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(warned, 1, "the warning is stored with the run");
}
