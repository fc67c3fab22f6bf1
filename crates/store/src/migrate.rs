//! Schema versions: what changed from one to the next, and the upgrade of an older database
//! (SQLite in place, or in a copy in memory for reading; PostgreSQL in the writer's
//! transaction).

use super::db::{self, Db};
use super::{OLDEST_VERSION, SCHEMA};
use crate::error::Result;
use rusqlite::Connection;

/// Schema changes from one version to the next: `MIGRATIONS[i]` takes version `i + 2` to `i + 3`.
pub(super) const MIGRATIONS: [&str; 7] = [
    // 2 -> 3: who runs a run, to tell a dead run from a running one; which machine ran a run
    // and its trials, and the run's UUID (legacy runs get one here; host, kernel, CPU and
    // commit come from their environment record); warnings get an id to keep their order on
    // every engine; the work queue; indexes for reading a trial's rows.
    // Kernel knobs (issue 12): the cell's slice, knobs and BPF scheduler, the slice read back
    // per task, and every setting read back before each trial.
    // Trust (issue 11): exact task CPU time; each trial's reference speed, steal, noise flag
    // and RT throttling.
    "ALTER TABLE runs ADD COLUMN runner_pid INTEGER;
     ALTER TABLE runs ADD COLUMN runner_boot_id TEXT;
     ALTER TABLE runs ADD COLUMN runner_start_ticks INTEGER;
     ALTER TABLE runs ADD COLUMN uuid TEXT;
     ALTER TABLE runs ADD COLUMN host TEXT;
     ALTER TABLE runs ADD COLUMN machine_id TEXT;
     ALTER TABLE runs ADD COLUMN kernel TEXT;
     ALTER TABLE runs ADD COLUMN cpu_model TEXT;
     ALTER TABLE runs ADD COLUMN git_commit TEXT;
     UPDATE runs SET uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)
                     || '-' || substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)));
     UPDATE runs SET host = json_extract(env_json, '$.hostname'), kernel = json_extract(env_json, '$.kernel_release'),
                     cpu_model = json_extract(env_json, '$.cpu_model'), git_commit = json_extract(env_json, '$.git_commit')
               WHERE json_valid(env_json);
     ALTER TABLE trials ADD COLUMN host TEXT;
     CREATE TABLE warnings_3 (warning_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(run_id),
                              trial_id INTEGER, message TEXT NOT NULL);
     INSERT INTO warnings_3 (warning_id, run_id, trial_id, message) SELECT rowid, run_id, trial_id, message FROM warnings;
     DROP TABLE warnings;
     ALTER TABLE warnings_3 RENAME TO warnings;
     CREATE TABLE IF NOT EXISTS queue (
         queue_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(run_id), cell_index INTEGER NOT NULL,
         trial_index INTEGER NOT NULL, position INTEGER NOT NULL, label TEXT, state TEXT NOT NULL,
         attempts INTEGER NOT NULL DEFAULT 0, worker TEXT, lease_until_ms INTEGER, trial_id INTEGER, reason TEXT,
         UNIQUE (run_id, cell_index, trial_index));
     CREATE INDEX IF NOT EXISTS samples_by_trial ON samples(trial_id);
     CREATE INDEX IF NOT EXISTS slices_by_trial ON trace_slices(trial_id);
     CREATE INDEX IF NOT EXISTS queue_by_state ON queue(state, label);
     CREATE UNIQUE INDEX IF NOT EXISTS runs_by_uuid ON runs(uuid);
     ALTER TABLE cells ADD COLUMN slice_ns INTEGER;
     ALTER TABLE cells ADD COLUMN knobs TEXT;
     ALTER TABLE cells ADD COLUMN scx TEXT;
     ALTER TABLE tasks ADD COLUMN slice_getattr_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN slice_proc_ns INTEGER;
     CREATE TABLE IF NOT EXISTS knob_readings (
         reading_id INTEGER PRIMARY KEY, trial_id INTEGER NOT NULL REFERENCES trials(trial_id), name TEXT NOT NULL,
         path TEXT NOT NULL, requested TEXT NOT NULL, read_back TEXT NOT NULL);
     CREATE INDEX IF NOT EXISTS knob_readings_by_trial ON knob_readings(trial_id);
     ALTER TABLE tasks ADD COLUMN cpu_ns INTEGER;
     ALTER TABLE trials ADD COLUMN speed_before REAL;
     ALTER TABLE trials ADD COLUMN speed_after REAL;
     ALTER TABLE trials ADD COLUMN trial_steal_pct REAL;
     ALTER TABLE trials ADD COLUMN noisy INTEGER;
     ALTER TABLE trials ADD COLUMN rt_throttled INTEGER;",
    // 3 -> 4: interference measured per trial (issue 18): CPU time used on the trial's CPUs
    // by anything outside it, its share, where it was read, and the disturbed flag.
    "ALTER TABLE trials ADD COLUMN outside_cpu_ns INTEGER;
     ALTER TABLE trials ADD COLUMN outside_share REAL;
     ALTER TABLE trials ADD COLUMN interference_source TEXT;
     ALTER TABLE trials ADD COLUMN disturbed INTEGER;",
    // 4 -> 5: task groups in CPU cgroups (issue 20): the cell's groups, each task's group,
    // and each trial's groups with their settings and cpu.stat figures.
    "ALTER TABLE cells ADD COLUMN cgroups TEXT;
     ALTER TABLE tasks ADD COLUMN group_name TEXT;
     CREATE TABLE IF NOT EXISTS task_groups (
         trial_id INTEGER NOT NULL REFERENCES trials(trial_id), group_index INTEGER NOT NULL, name TEXT NOT NULL,
         tasks INTEGER NOT NULL, weight INTEGER, quota_us INTEGER, period_us INTEGER, idle INTEGER, cpus TEXT,
         is_partition INTEGER NOT NULL DEFAULT 0, rt_runtime_us INTEGER, usage_ns INTEGER, nr_periods INTEGER,
         nr_throttled INTEGER, throttled_ns INTEGER, contended_ns INTEGER, usage_contended_ns INTEGER,
         PRIMARY KEY (trial_id, group_index));
     CREATE INDEX IF NOT EXISTS task_groups_by_trial ON task_groups(trial_id);",
    // 5 -> 6: warnings keep their stable code and parameters (issue 17); older rows have
    // neither.
    "ALTER TABLE warnings ADD COLUMN code TEXT;
     ALTER TABLE warnings ADD COLUMN params TEXT;",
    // 6 -> 7: the communicating workloads and rt-app's figures (issue 19): each trial's own
    // figures (operations and their rate, wake-up and operation latency, misses, slack), and
    // each task's role, bytes, misses, operation latency and slack.
    "ALTER TABLE trials ADD COLUMN ops INTEGER;
     ALTER TABLE trials ADD COLUMN ops_per_s REAL;
     ALTER TABLE trials ADD COLUMN wake_p50_ns INTEGER;
     ALTER TABLE trials ADD COLUMN wake_p90_ns INTEGER;
     ALTER TABLE trials ADD COLUMN wake_p99_ns INTEGER;
     ALTER TABLE trials ADD COLUMN wake_p999_ns INTEGER;
     ALTER TABLE trials ADD COLUMN op_p50_ns INTEGER;
     ALTER TABLE trials ADD COLUMN op_p90_ns INTEGER;
     ALTER TABLE trials ADD COLUMN op_p99_ns INTEGER;
     ALTER TABLE trials ADD COLUMN op_p999_ns INTEGER;
     ALTER TABLE trials ADD COLUMN misses INTEGER;
     ALTER TABLE trials ADD COLUMN miss_pct REAL;
     ALTER TABLE trials ADD COLUMN slack_p1_ns INTEGER;
     ALTER TABLE trials ADD COLUMN slack_p50_ns INTEGER;
     ALTER TABLE trials ADD COLUMN slack_p99_ns INTEGER;
     ALTER TABLE trials ADD COLUMN late_max_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN workload_role TEXT;
     ALTER TABLE tasks ADD COLUMN bytes INTEGER;
     ALTER TABLE tasks ADD COLUMN misses INTEGER;
     ALTER TABLE tasks ADD COLUMN op_count INTEGER;
     ALTER TABLE tasks ADD COLUMN op_p50_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN op_p99_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN op_max_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN slack_p1_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN slack_p50_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN slack_p99_ns INTEGER;
     ALTER TABLE tasks ADD COLUMN late_max_ns INTEGER;",
    // 7 -> 8: clean trials on a noisy machine (issue 26): the outside work split by whose it
    // was (other processes, kernel threads, interrupts) and the kernel work a trial caused;
    // the run's steady reference speed and each trial's in-trial speed with its slowed flag;
    // re-runs of contaminated trials (`retry`, the attempt at its cell and trial index, part
    // of the trial's identity, and `retried` on the one run again; a queue row per attempt);
    // the descendants' CPU time; the spread of the reference loop's calibration. The
    // uniqueness of trials and queue rows gains `retry` ([`UNIQUE_8_PG`], [`rebuild`]).
    "ALTER TABLE trials ADD COLUMN outside_process_ns INTEGER;
     ALTER TABLE trials ADD COLUMN outside_process_share REAL;
     ALTER TABLE trials ADD COLUMN outside_kthread_ns INTEGER;
     ALTER TABLE trials ADD COLUMN outside_irq_ns INTEGER;
     ALTER TABLE trials ADD COLUMN kernel_cpu_ns INTEGER;
     ALTER TABLE trials ADD COLUMN speed_steady REAL;
     ALTER TABLE trials ADD COLUMN speed_in_trial REAL;
     ALTER TABLE trials ADD COLUMN speed_in_trial_steady REAL;
     ALTER TABLE trials ADD COLUMN slowed INTEGER;
     ALTER TABLE trials ADD COLUMN retry INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE trials ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE trials ADD COLUMN descendants_cpu_ns INTEGER;
     ALTER TABLE queue ADD COLUMN retry INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE calibrations ADD COLUMN spread REAL;",
    // 8 -> 9: each run's spec hash (`--spec-hash` selects runs by it in SQL instead of reading
    // every stored spec), written with the row; older runs get theirs from their stored spec
    // once, here ([`backfill_spec_hash`]).
    "ALTER TABLE runs ADD COLUMN spec_hash TEXT NOT NULL DEFAULT '';",
];

/// The version [`MIGRATIONS`] that changes the uniqueness of trials and queue rows leads to.
const UNIQUE_8: i64 = 8;

/// The version [`MIGRATIONS`] that stores each run's spec hash leads to.
const SPEC_HASH_9: i64 = 9;

/// PostgreSQL's part of 7 -> 8 after the columns: the unique constraints gain `retry` (the
/// old ones have the names PostgreSQL gave them when the schema was created).
const UNIQUE_8_PG: &str = "ALTER TABLE trials DROP CONSTRAINT trials_cell_id_trial_index_key;
     ALTER TABLE trials ADD UNIQUE (cell_id, trial_index, retry);
     ALTER TABLE queue DROP CONSTRAINT queue_run_id_cell_index_trial_index_key;
     ALTER TABLE queue ADD UNIQUE (run_id, cell_index, trial_index, retry);";

/// Applies the migrations from `version` to the current schema to an SQLite database.
pub(super) fn upgrade_sqlite(conn: &Connection, version: i64) -> Result<()> {
    for (i, m) in MIGRATIONS[(version - OLDEST_VERSION) as usize..]
        .iter()
        .enumerate()
    {
        conn.execute_batch(m)?;
        let reached = version + 1 + i as i64;
        if reached == UNIQUE_8 {
            rebuild(conn, "trials")?;
            rebuild(conn, "queue")?;
        }
        if reached == SPEC_HASH_9 {
            let runs: Vec<(i64, String)> = conn
                .prepare("SELECT run_id, spec_toml FROM runs")?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut update = conn.prepare("UPDATE runs SET spec_hash = ?2 WHERE run_id = ?1")?;
            for (run_id, hash) in backfill_spec_hash(runs) {
                update.execute(rusqlite::params![run_id, hash])?;
            }
        }
    }
    Ok(())
}

/// Applies the migrations from `version` to the current schema to a PostgreSQL store, inside
/// the caller's transaction.
pub(super) fn upgrade_pg(db: &Db, version: i64) -> Result<()> {
    for (i, m) in MIGRATIONS[(version - OLDEST_VERSION) as usize..]
        .iter()
        .enumerate()
    {
        db.batch(&db::translate_ddl(m))?;
        let reached = version + 1 + i as i64;
        if reached == UNIQUE_8 {
            db.batch(UNIQUE_8_PG)?;
        }
        if reached == SPEC_HASH_9 {
            let runs = db.query("SELECT run_id, spec_toml FROM runs", &[], |r| {
                Ok((r.get::<i64>(0)?, r.get::<String>(1)?))
            })?;
            for (run_id, hash) in backfill_spec_hash(runs) {
                db.execute(
                    "UPDATE runs SET spec_hash = ?2 WHERE run_id = ?1",
                    db::params![run_id, hash],
                )?;
            }
        }
    }
    Ok(())
}

/// 8 -> 9 for stored runs (`(run_id, spec_toml)`): each run's spec hash, computed once from
/// its stored spec exactly as `--spec-hash` computed it before 9 (a spec that does not read
/// is hashed as its text).
fn backfill_spec_hash(runs: Vec<(i64, String)>) -> impl Iterator<Item = (i64, String)> {
    runs.into_iter()
        .map(|(run_id, text)| (run_id, schedlab_spec::as_run::spec_hash(&text)))
}

/// Recreates SQLite table `table` as the schema defines it now (SQLite cannot change a
/// table's constraints), with its rows, and the schema's indexes.
fn rebuild(conn: &Connection, table: &str) -> Result<()> {
    let head = format!("CREATE TABLE IF NOT EXISTS {table} (");
    let start = SCHEMA
        .find(&head)
        .ok_or_else(|| crate::StoreError::Internal(format!("no table {table} in the schema")))?;
    let len = SCHEMA[start..]
        .find("\n);")
        .ok_or_else(|| crate::StoreError::Internal(format!("table {table} has no end")))?;
    let create =
        SCHEMA[start..start + len + 3].replacen(&head, &format!("CREATE TABLE {table}_new ("), 1);
    let columns: Vec<String> = conn
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let list = columns
        .iter()
        .map(|c| db::quote_ident(c))
        .collect::<Vec<_>>()
        .join(", ");
    // Other tables' rows refer to this one's: dropping it must not delete them. The caller
    // (`open_sqlite`) turns foreign keys off around its transaction, as the pragma is a no-op
    // inside one; this runs inside it, in a savepoint.
    conn.execute_batch(&format!(
        "SAVEPOINT rebuild;
         {create}
         INSERT INTO {table}_new ({list}) SELECT {list} FROM {table};
         DROP TABLE {table};
         ALTER TABLE {table}_new RENAME TO {table};
         RELEASE rebuild;"
    ))?;
    // The indexes dropped with the old table (every other statement of the schema is a no-op).
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
