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
