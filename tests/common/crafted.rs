//! A schedlab SQLite file altered to attack `push`: its `runs` table loses `argv` and gains a
//! column whose name is SQL. Pushed by a schedlab that pastes column names into its INSERT,
//! the new run's argv becomes the target's run 1's argv (the attack of issue 16).

use rusqlite::Connection;
use std::path::Path;

/// Alters the schedlab file at `path` (one run) as described above.
pub fn craft_argv_injection(path: &Path) {
    let c = Connection::open(path).unwrap();
    c.execute_batch("ALTER TABLE runs DROP COLUMN argv")
        .unwrap();
    let names: Vec<String> = c
        .prepare("SELECT name FROM pragma_table_info('runs')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|n: &String| n != "run_id")
        .collect();
    let k = names.len();
    let marks: Vec<String> = (1..=k).map(|i| format!("?{i}")).collect();
    let column = format!(
        "argv) VALUES ({}, (SELECT r.argv FROM runs r WHERE r.run_id = 1 AND CAST(?{} AS TEXT) IS NOT NULL)) RETURNING run_id --",
        marks.join(", "),
        k + 1
    );
    c.execute_batch(&format!(
        "ALTER TABLE runs ADD COLUMN \"{}\" TEXT DEFAULT 'x'",
        column.replace('"', "\"\"")
    ))
    .unwrap();
}
