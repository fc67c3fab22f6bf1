//! Tests of the state directory's checks in scratch directories.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn mode_of(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_missing_directory_is_created_0700_under_0755_parents() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("a/b/state");
    assert!(StateDir::open(&state, false).unwrap().is_none());
    assert!(
        !d.path().join("a").exists(),
        "nothing created without create"
    );
    let dir = StateDir::open(&state, true).unwrap().unwrap();
    assert_eq!(dir.path(), state);
    assert_eq!(mode_of(&state), 0o700);
    assert_eq!(mode_of(&d.path().join("a")) & 0o022, 0);
    // An older schedlab's 0755 is tightened; the directory is trusted.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    StateDir::open(&state, false).unwrap().unwrap();
    assert_eq!(mode_of(&state), 0o700);
}

#[test]
fn a_parent_others_may_write_is_refused_unless_sticky() {
    let d = tempfile::tempdir().unwrap();
    let open = d.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = StateDir::open(&open.join("state"), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("mode 0777, not sticky"), "{e}");
    assert!(!open.join("state").exists());
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    StateDir::open(&open.join("state"), true).unwrap().unwrap();
}

#[test]
fn a_link_anywhere_on_the_path_or_a_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, d.path().join("via")).unwrap();
    let e = StateDir::open(&d.path().join("via/state"), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("symbolic link") && e.contains("via ->"), "{e}");
    assert!(!real.join("state").exists());
    std::fs::write(d.path().join("file"), "").unwrap();
    let e = StateDir::open(&d.path().join("file"), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a directory"), "{e}");
    let e = StateDir::open(&d.path().join("real/../real"), true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`..`"), "{e}");
}

#[test]
fn a_directory_of_another_user_is_refused() {
    if !schedlab_testkit::root("chown to another user") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
    let e = StateDir::open(&state, true).unwrap_err().to_string();
    assert!(
        e.contains("owned by uid 65534") && e.contains("chown 0"),
        "{e}"
    );
    // A journal of another user in a trusted directory: refused.
    std::os::unix::fs::chown(&state, Some(0), None).unwrap();
    let dir = StateDir::open(&state, true).unwrap().unwrap();
    dir.write("restore-1.json", "{}").unwrap();
    std::os::unix::fs::chown(state.join("restore-1.json"), Some(65534), None).unwrap();
    let e = dir.read("restore-1.json").unwrap_err().to_string();
    assert!(e.contains("owned by uid 65534"), "{e}");
}
