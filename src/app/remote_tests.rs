//! The spool's place (issue 27 item 2): root making its spool under a `$HOME` another user
//! owns follows none of that user's links and creates nothing there.

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

#[test]
fn a_spool_under_another_users_home_is_refused_and_follows_no_link() {
    if !schedlab_testkit::root("root opens a spool in `nobody`'s home") {
        return;
    }
    let Ok(Some(nobody)) = nix::unistd::User::from_name("nobody") else {
        return schedlab_testkit::skip(schedlab_testkit::Need::User, "no user `nobody`");
    };
    let s = tempfile::tempdir().unwrap();
    std::fs::set_permissions(s.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let victim = s.path().join("root-only");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o700)).unwrap();
    let home = s.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(nobody.uid.as_raw()), Some(nobody.gid.as_raw())).unwrap();
    let planted = std::process::Command::new("ln")
        .arg("-s")
        .arg(&victim)
        .arg(home.join(".local"))
        .uid(nobody.uid.as_raw())
        .gid(nobody.gid.as_raw())
        .status()
        .unwrap();
    assert!(planted.success());
    let db = s.path().join("server.db");
    let location = Location::File(db.clone());
    let spool = home.join(".local/state/schedlab/spool.db");
    let mut remote = Remote::with(&location, Store::open(&db).unwrap(), &spool);
    let e = remote.spool().err().expect("refused");
    let said = e.to_string();
    assert!(
        said.contains("uid 65534") && said.contains("--spool-file"),
        "{said}"
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0, "{said}");
    // Under a directory of root's own, it is made (mode 0700) and opened.
    let mine = s.path().join("mine/state/schedlab/spool.db");
    let mut remote = Remote::with(&location, Store::open(&db).unwrap(), &mine);
    assert!(remote.spool().is_ok());
    let mode = std::fs::metadata(s.path().join("mine/state"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}
