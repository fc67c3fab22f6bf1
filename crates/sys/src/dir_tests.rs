use super::*;
use std::io::{Read, Write};
use std::os::unix::fs::{symlink, MetadataExt};

/// A scratch directory with a "victim" file outside the private directory.
fn scratch() -> (tempfile::TempDir, OwnedFd, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let parent = open_dir(t.path()).unwrap();
    (t, parent, victim)
}

#[test]
fn a_private_directory_has_a_random_name_and_mode_0700_whatever_the_umask() {
    let (t, parent, _) = scratch();
    let old = nix::sys::stat::umask(Mode::empty());
    let made = make_private_dir(parent.as_fd(), "schedlab-1-x.");
    nix::sys::stat::umask(old);
    let (name, fd) = made.unwrap();
    let (other, _fd2) = make_private_dir(parent.as_fd(), "schedlab-1-x.").unwrap();
    assert_ne!(name, other, "two directories, two random names");
    assert!(name.starts_with("schedlab-1-x.") && name.len() == "schedlab-1-x.".len() + 10);
    let md = std::fs::symlink_metadata(t.path().join(&name)).unwrap();
    assert!(md.is_dir());
    assert_eq!(md.mode() & 0o7777, 0o700);
    assert_eq!(md.uid(), crate::euid());
    assert_eq!(meta(fd.as_fd()).unwrap().id.ino, md.ino());
}

#[test]
fn files_are_created_exclusively_and_never_through_a_link() {
    let (_t, parent, victim) = scratch();
    let (_, dir) = make_private_dir(parent.as_fd(), "d.").unwrap();
    let d = dir.as_fd();
    let mut f = create_file_at(d, "out-0", OFlag::empty()).unwrap();
    f.write_all(b"x").unwrap();
    assert_eq!(f.metadata().unwrap().mode() & 0o777, 0o600);
    // An existing name is refused: a file, or a link to a file outside.
    let e = create_file_at(d, "out-0", OFlag::empty()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    nix::unistd::symlinkat(victim.as_path(), Some(d.as_raw_fd()), "input").unwrap();
    let e = create_file_at(d, "input", OFlag::empty()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    // Reading refuses the link too.
    let e = open_file_at(d, "input", OFlag::empty()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn a_moved_directory_replaced_by_a_link_redirects_nothing() {
    let (t, parent, _) = scratch();
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let (name, dir) = make_private_dir(parent.as_fd(), "d.").unwrap();
    let path = t.path().join(&name);
    let id = meta(dir.as_fd()).unwrap().id;
    // What an owner of the parent directory can do: move ours away, put a link in its place.
    std::fs::rename(&path, t.path().join("moved")).unwrap();
    symlink(&elsewhere, &path).unwrap();
    // Files created through the fd land in the moved directory, not behind the link.
    create_file_at(dir.as_fd(), "out-0", OFlag::empty())
        .unwrap()
        .write_all(b"data")
        .unwrap();
    assert!(t.path().join("moved/out-0").exists());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Found again by path, the link is refused (O_DIRECTORY | O_NOFOLLOW on a link to a
    // directory: ENOTDIR), and so is another directory.
    let e = open_dir_checked(&path, id).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTDIR));
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let e = open_dir_checked(&path, id).unwrap_err();
    assert!(e.to_string().contains("moved or replaced"), "{e}");
    // Removal leaves the replacement alone and empties the moved directory.
    std::fs::write(path.join("theirs"), b"keep").unwrap();
    remove_dir_at(parent.as_fd(), &name, dir.as_fd()).unwrap();
    assert!(path.join("theirs").exists());
    assert_eq!(
        std::fs::read_dir(t.path().join("moved")).unwrap().count(),
        0
    );
    // The unmoved case: found again by path, and removed entirely.
    let (name, dir) = make_private_dir(parent.as_fd(), "d.").unwrap();
    let id = meta(dir.as_fd()).unwrap().id;
    let again = open_dir_checked(&t.path().join(&name), id).unwrap();
    let mut s = String::new();
    create_file_at(again.as_fd(), "f", OFlag::empty()).unwrap();
    open_file_at(dir.as_fd(), "f", OFlag::empty())
        .unwrap()
        .read_to_string(&mut s)
        .unwrap();
    remove_dir_at(parent.as_fd(), &name, dir.as_fd()).unwrap();
    assert!(!t.path().join(&name).exists());
}

#[test]
fn removing_a_tree_follows_no_link() {
    let (t, parent, victim) = scratch();
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep"), b"keep").unwrap();
    let (name, dir) = make_private_dir(parent.as_fd(), "d.").unwrap();
    let path = t.path().join(&name);
    std::fs::create_dir_all(path.join("a/b/c")).unwrap();
    std::fs::write(path.join("a/b/c/file"), b"1").unwrap();
    symlink(&outside, path.join("a/dirlink")).unwrap();
    symlink(&victim, path.join("a/b/filelink")).unwrap();
    remove_dir_at(parent.as_fd(), &name, dir.as_fd()).unwrap();
    assert!(!path.exists());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(outside.join("keep").exists());
}

#[test]
fn free_bytes_matches_df() {
    // statvfs's f_bavail * f_frsize, as `df -B1 --output=avail` prints it (GNU coreutils).
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail", "/"])
        .output();
    let Ok(out) = out else {
        return schedlab_testkit::skip(
            schedlab_testkit::Need::Program,
            "`df` is not installed (Debian package coreutils)",
        );
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(df) = text
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse::<u64>().ok())
    else {
        panic!("df printed no number of bytes: {text}");
    };
    let ours = free_bytes(Path::new("/")).unwrap().unwrap();
    assert_eq!(
        free_bytes(Path::new("/proc")).unwrap(),
        None,
        "procfs has no size"
    );
    // Other engineers write to the same disk meanwhile: within 1 GiB.
    assert!(ours.abs_diff(df) < 1 << 30, "statvfs {ours} vs df {df}");
}

#[test]
fn a_name_under_a_held_directory_is_one_component_never_a_path_out_of_it() {
    // Every call that takes a name under a held directory fd takes one path component: a
    // name with `/` or a `..` would reach outside the private directory, around the fd.
    let (t, parent, victim) = scratch();
    let (_, dir) = make_private_dir(parent.as_fd(), "d.").unwrap();
    let d = dir.as_fd();
    let einval = |r: io::Result<()>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{what}: {e}");
    };
    for name in ["../escape", "..", ".", "", "a/b", "a\0b"] {
        einval(create_file_at(d, name, OFlag::empty()).map(drop), name);
        einval(open_file_at(d, name, OFlag::empty()).map(drop), name);
        einval(open_dir_at(d, name).map(drop), name);
        einval(meta_at(d, name).map(drop), name);
    }
    einval(unlink_at(d, "../victim"), "unlink ../victim");
    assert!(!t.path().join("escape").exists(), "created outside");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn a_symbolic_link_is_never_followed() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("target");
    std::fs::write(&target, "keep").unwrap();
    let inner = d.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::os::unix::fs::symlink(&target, inner.join("planted")).unwrap();
    std::os::unix::fs::symlink(&inner, d.path().join("dirlink")).unwrap();
    // The directory itself through a link: refused (ENOTDIR: with O_DIRECTORY the link is
    // seen as what it is, no directory).
    let e = DirFd::open(&d.path().join("dirlink")).unwrap_err();
    assert!(
        matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)),
        "{e}"
    );
    let dir = DirFd::open(&inner).unwrap();
    // Creating over a planted link: EEXIST, the target untouched.
    let e = dir.create_new("planted", 0o600).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
    let e = dir.open_read("planted").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    dir.remove("planted").unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    // A new file gets exactly the mode asked for, and renames stay in the directory.
    let mut f = dir.create_new("a.tmp", 0o600).unwrap();
    f.write_all(b"x").unwrap();
    dir.rename("a.tmp", "a").unwrap();
    let (_, info) = dir.open_read("a").unwrap();
    assert_eq!(
        (info.kind, info.mode, info.nlink),
        (FileKind::Regular, 0o600, 1)
    );
    assert_eq!(dir.names().unwrap(), ["a"]);
    assert!(dir.create_new("../escape", 0o600).is_err());
    assert_eq!(
        lstat(&d.path().join("dirlink")).unwrap().kind,
        FileKind::Symlink
    );
}
