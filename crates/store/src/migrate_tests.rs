//! Tests of the schema upgrades: 8 -> 9 gives every stored run the spec hash `--spec-hash`
//! computed from its stored spec before 9, and the selection by hash in SQL picks the runs
//! the old filter picked.

use crate::query::{runs, runs_of_spec};
use crate::{NewRun, Store};
use rusqlite::Connection;

/// Specs as stored with runs: one experiment at two seeds, a spec written short, and a text
/// this version does not read.
const SPECS: [(&str, u64); 4] = [
    (ADAPTIVE, 9),
    (ADAPTIVE, 10),
    ("name = \"synthetic\"", 1),
    ("not toml [", 1),
];

const ADAPTIVE: &str = "name = \"adaptive\"\n[axes]\npolicies = [\"fifo\", \"other\"]\n[settings]\n\
                        trials = 3\nprecision = \"2.5%\"\nprecision_metric = \"turnaround\"\nmax_time = \"10m\"\n";

/// The hash each run got before schema 9, computed on every `--spec-hash` from its stored
/// spec (the function is kept as it was).
fn hashes_before_9() -> Vec<String> {
    SPECS
        .iter()
        .map(|(text, _)| schedlab_spec::as_run::spec_hash(text))
        .collect()
}

/// A database of schema 8 at `path` holding [`SPECS`]' runs.
fn schema_8(path: &std::path::Path) {
    let mut store = Store::open(path).unwrap();
    for (spec_toml, seed) in SPECS {
        let run = NewRun {
            name: "x",
            seed,
            spec_toml,
            argv: "schedlab run x.toml",
            env_json: None,
            trials_planned: 0,
        };
        store.create_run(&run, &[]).unwrap();
    }
    drop(store);
    Connection::open(path)
        .unwrap()
        .execute_batch("ALTER TABLE runs DROP COLUMN spec_hash; PRAGMA user_version = 8;")
        .unwrap();
}

#[test]
fn the_hashes_before_9_are_the_known_ones() {
    let old = hashes_before_9();
    // FNV-1a 64 of the text itself, by hand (Python): a text that is no spec.
    assert_eq!(old[3], "f3de72d37025f8d7");
    assert_eq!(old[0], old[1], "the seed is left out");
    assert_ne!(old[0], old[2]);
}

#[test]
fn upgrading_from_8_gives_each_run_the_hash_it_had_and_selects_the_same_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    schema_8(&path);
    let old = hashes_before_9();
    let bytes = std::fs::read(&path).unwrap();
    // Read only: upgraded in a copy in memory; the file keeps its bytes.
    let store = Store::open_read(&path).unwrap();
    let listed: Vec<String> = runs(&store, None)
        .unwrap()
        .into_iter()
        .map(|r| r.spec_hash)
        .collect();
    assert_eq!(listed, old);
    assert_eq!(runs_of_spec(&store, &old[0][..6]).unwrap(), vec![1, 2]);
    assert_eq!(
        runs_of_spec(&store, &old[0].to_ascii_uppercase()).unwrap(),
        vec![1, 2]
    );
    assert_eq!(runs_of_spec(&store, &old[3][..4]).unwrap(), vec![4]);
    assert_eq!(runs_of_spec(&store, "%%%%").unwrap(), Vec::<i64>::new());
    assert_eq!(runs_of_spec(&store, "____").unwrap(), Vec::<i64>::new());
    assert!(runs_of_spec(&store, "abc").is_err(), "too short");
    for (id, hash) in old.iter().enumerate() {
        let info = crate::query::run_info(&store, id as i64 + 1).unwrap();
        assert_eq!(info.spec_hash(), hash.as_str());
    }
    drop(store);
    assert!(std::fs::read(&path).unwrap() == bytes, "read only");
    // Written: upgraded in place, the hashes stored.
    let mut store = Store::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 9);
    let stored: Vec<String> = conn
        .prepare("SELECT spec_hash FROM runs ORDER BY run_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(stored, old);
    // A run stored now gets its hash with its row.
    let run = NewRun {
        name: "x",
        seed: 11,
        spec_toml: ADAPTIVE,
        argv: "schedlab run x.toml",
        env_json: None,
        trials_planned: 0,
    };
    assert_eq!(store.create_run(&run, &[]).unwrap(), 5);
    assert_eq!(runs_of_spec(&store, &old[0]).unwrap(), vec![1, 2, 5]);
}
