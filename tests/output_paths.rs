//! Every file schedlab writes where a user points it (issue 27 item 2): the report tree, the
//! export's `-o` file and the SQLite database, as root, with links planted by a real other
//! user (`nobody`). A directory others may write is refused as an output's or a database's
//! parent, with the reason and the remedy; an existing database must be a regular file of
//! schedlab's user, never a link; and a link at an output's name in a trusted directory is
//! replaced (the file is written anew and renamed over it), never followed. Needs root and the
//! user `nobody`; skips otherwise.

mod common;
mod report_db;

use common::{root, schedlab, skip, Need, Scratch};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The uid and gid of `nobody`, or None (the test skipped).
fn nobody_or_skip() -> Option<(u32, u32)> {
    if !root("root writes the outputs, `nobody` plants the links") {
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

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A root-owned 0600 file in a private directory: what must not change.
struct Victim {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl Victim {
    fn new(s: &Scratch) -> Victim {
        let dir = s.path().join("victims");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.join("secret");
        let bytes: Vec<u8> = (0..1000u32).map(|b| (b * 7) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Victim { path, bytes }
    }

    fn check(&self, what: &str) {
        let now = std::fs::read(&self.path).unwrap();
        assert!(now == self.bytes, "{what}: the victim was overwritten");
    }
}

/// A scratch directory nobody can reach, with `shared` in it: mode 1777 like /tmp.
fn shared(s: &Scratch) -> PathBuf {
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let d = s.path().join("shared");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Runs `script` as `nobody` (sh -c), which must succeed.
fn as_nobody((uid, gid): (u32, u32), script: &str) {
    let st = Command::new("sh")
        .args(["-c", &format!("set -e\n{script}")])
        .uid(uid)
        .gid(gid)
        .status()
        .unwrap();
    assert!(st.success(), "nobody could not plant: {script}");
}

/// A database of one synthetic run in a root-only directory.
fn database(s: &Scratch) -> PathBuf {
    let dir = s.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    report_db::synthetic_db(&dir, "a.db", 1.0)
}

#[test]
fn the_report_tree_is_never_written_through_a_planted_link() {
    let Some(nobody) = nobody_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let v = Victim::new(&s);
    let db = database(&s);
    let shared = shared(&s);
    let (tree, victim) = (shared.join("schedlab-report/1"), v.path.display());
    as_nobody(
        nobody,
        &format!(
            "mkdir -p '{t}'\nln -s '{victim}' '{t}/index.html'\nln -s '{victim}' '{t}/report.md'",
            t = tree.display()
        ),
    );
    // `cd /tmp && schedlab report`: the default --out, in the shared directory.
    let o = schedlab()
        .current_dir(&shared)
        .args(["report", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--out") && said.contains("uid 65534"),
        "{said}"
    );
    v.check("report in a planted tree");
    // In the shared directory itself (nothing planted there): refused as others may write it.
    let o = schedlab()
        .args(["report", "--db", db.to_str().unwrap(), "--out"])
        .arg(shared.join("fresh"))
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("mode 1777") && said.contains("--out"),
        "{said}"
    );
    assert!(!shared.join("fresh").exists());
    // A link at an output's name in a directory of root's own is replaced, not followed.
    let mine = s.path().join("mine/1");
    std::fs::create_dir_all(&mine).unwrap();
    std::os::unix::fs::symlink(&v.path, mine.join("report.tex")).unwrap();
    let o = schedlab()
        .args(["report", "--db", db.to_str().unwrap(), "--out"])
        .arg(s.path().join("mine"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    v.check("report over a link");
    assert!(!mine.join("report.tex").is_symlink());
    assert!(std::fs::read_to_string(mine.join("report.tex"))
        .unwrap()
        .contains("schedlab report"));
}

#[test]
fn export_o_is_never_written_through_a_planted_link() {
    let Some(nobody) = nobody_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let v = Victim::new(&s);
    let db = database(&s);
    let shared = shared(&s);
    let out = shared.join("tasks.csv");
    as_nobody(
        nobody,
        &format!("ln -s '{}' '{}'", v.path.display(), out.display()),
    );
    let o = schedlab()
        .args(["export", "--db", db.to_str().unwrap(), "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("-o") && said.contains("mode 1777"), "{said}");
    v.check("export in a shared directory");
    // In root's own directory, a link at the name is replaced.
    let mine = s.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::os::unix::fs::symlink(&v.path, mine.join("tasks.csv")).unwrap();
    let o = schedlab()
        .args(["export", "--db", db.to_str().unwrap(), "-o"])
        .arg(mine.join("tasks.csv"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    v.check("export over a link");
    assert!(!mine.join("tasks.csv").is_symlink());
    assert!(std::fs::read_to_string(mine.join("tasks.csv"))
        .unwrap()
        .starts_with("run_id"));
}

/// `schedlab run` of one short trial with `--db db`, in `cwd`.
fn run_into(cwd: &Path, db: &Path, state: &Path) -> Output {
    schedlab()
        .current_dir(cwd)
        .env("SCHEDLAB_STATE_DIR", state)
        .args(["run", "--db", db.to_str().unwrap(), "--quiet"])
        .args(["--policy", "other", "--tasks", "1", "--work", "2ms"])
        .args(["--trials", "1", "--sample-interval", "off"])
        .output()
        .unwrap()
}

#[test]
fn the_database_file_is_never_opened_through_a_link_or_in_a_shared_directory() {
    let Some(nobody) = nobody_or_skip() else {
        return;
    };
    let s = Scratch::new();
    let v = Victim::new(&s);
    let shared = shared(&s);
    as_nobody(
        nobody,
        &format!(
            "ln -s '{}' '{}'",
            v.path.display(),
            shared.join("schedlab.db").display()
        ),
    );
    // `cd /tmp && schedlab run`: the default --db, schedlab.db, in the shared directory.
    let o = run_into(&shared, Path::new("schedlab.db"), &s.state_dir());
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--db") && said.contains("symbolic link"),
        "{said}"
    );
    v.check("run in a shared directory");
    // A new database there: refused as others may write the directory; nothing is made.
    let o = run_into(&shared, Path::new("fresh.db"), &s.state_dir());
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--db") && said.contains("mode 1777"),
        "{said}"
    );
    assert!(!shared.join("fresh.db").exists());
    // A link at the database's name in root's own directory: refused, not followed.
    let mine = s.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::os::unix::fs::symlink(&v.path, mine.join("t.db")).unwrap();
    let o = run_into(&mine, &mine.join("t.db"), &s.state_dir());
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("symbolic link"), "{said}");
    v.check("run through a link");
    // A database file another user owns.
    std::fs::remove_file(mine.join("t.db")).unwrap();
    let o = run_into(&mine, &mine.join("t.db"), &s.state_dir());
    assert!(o.status.success(), "{}", text(&o));
    std::os::unix::fs::chown(mine.join("t.db"), Some(nobody.0), None).unwrap();
    let o = run_into(&mine, &mine.join("t.db"), &s.state_dir());
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("uid 65534"), "{said}");
    // Reading commands refuse a link too.
    std::os::unix::fs::symlink(mine.join("t.db"), mine.join("link.db")).unwrap();
    let o = schedlab()
        .args(["runs", "--db"])
        .arg(mine.join("link.db"))
        .output()
        .unwrap();
    let said = text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(said.contains("symbolic link"), "{said}");
}
