//! Tests of opening a store: the schema of a new SQLite file is created once, whoever opens
//! it at the same moment.

use super::*;

#[test]
fn two_stores_opening_one_new_file_at_once_both_see_the_whole_schema() {
    // Issue 27: two runs creating one new file failed 1 time in 5 with "schema version 0",
    // one seeing the other's half-made tables. 40 rounds of two openers racing.
    let dir = tempfile::tempdir().unwrap();
    for round in 0..40 {
        let path = dir.path().join(format!("race-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let openers: Vec<_> = (0..2)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|s| s.latest_run().is_ok())
                })
            })
            .collect();
        for o in openers {
            match o.join().unwrap() {
                Ok(readable) => assert!(readable, "round {round}"),
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION, "round {round}");
    }
}

#[test]
fn an_unsafe_file_is_refused_with_its_reason_as_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.db");
    Store::open(&file).unwrap();
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let e = Store::open_read(&link).err().expect("a link is refused");
    assert!(
        matches!(
            &e,
            StoreError::Unsafe {
                why: UnsafeFile::Symlink,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "the results database {} is a symbolic link; pass --db a file of your own in a directory only you can write",
            link.display()
        )
    );
    let second = dir.path().join("b.db");
    std::fs::hard_link(&file, &second).unwrap();
    let e = Store::open(&second)
        .err()
        .expect("a file with two names is refused");
    assert!(
        matches!(
            &e,
            StoreError::Unsafe {
                why: UnsafeFile::NotOwn(schedlab_sys::NotOwnFile::HardLinks { links: 2 }),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().ends_with(
            "b.db has 2 hard links; pass --db a file of your own in a directory only you can write"
        ),
        "{e}"
    );
}

#[test]
fn a_database_this_schedlab_cannot_use_says_what_it_is_as_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let newer = dir.path().join("newer.db");
    Store::open(&newer).unwrap();
    Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let e = Store::open_read(&newer)
        .err()
        .expect("a newer schema is refused");
    assert!(
        matches!(&e, StoreError::NotSchedlab { why: NotSchedlab::Newer { version }, .. } if *version == SCHEMA_VERSION + 1),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{} was written by a newer schedlab (schema {}, this one knows up to {SCHEMA_VERSION}); use a newer schedlab or another --db",
            newer.display(),
            SCHEMA_VERSION + 1
        )
    );
    let other = dir.path().join("other.db");
    let conn = Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE runs (x INTEGER); CREATE TABLE cells (y INTEGER);")
        .unwrap();
    drop(conn);
    let e = Store::open_read(&other)
        .err()
        .expect("another program's database is refused");
    assert!(
        matches!(&e, StoreError::NotSchedlab { why: NotSchedlab::Unusable { version: 0, missing }, .. } if missing.len() == TABLES.len() - 2),
        "{e:?}"
    );
    assert!(
        e.to_string().ends_with("(schema version 0, no table trials, tasks, histograms, samples, trace_slices, calibrations, warnings); pass the database `schedlab run` wrote with --db, or a new one"),
        "{e}"
    );
}

#[test]
fn a_password_file_others_may_read_is_refused_with_its_mode_as_a_value() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw");
    std::fs::write(&file, "secret\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = crate::pg::read_password_file(&file).unwrap_err();
    assert!(
        matches!(
            &e,
            StoreError::PasswordFile {
                why: BadPasswordFile::OpenToOthers { mode: 0o644 },
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("pw may be read or written by others (mode 0644); chmod 0600 it; give --db-password-file"),
        "{e}"
    );
    std::fs::write(&file, "\nsecret\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let e = crate::pg::read_password_file(&file).unwrap_err();
    assert!(
        matches!(
            &e,
            StoreError::PasswordFile {
                why: BadPasswordFile::Empty,
                ..
            }
        ),
        "{e:?}"
    );
}
