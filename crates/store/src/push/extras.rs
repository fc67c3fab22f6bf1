//! What a push copies beside a run's rows: its warnings (those of the trials copied, and the
//! run's own ones the target lacks) and the calibrations the target lacks.

use super::{insert_sql, Known, Rows};
use crate::db::{params, Db};
use crate::error::Result;
use std::collections::{HashMap, HashSet};

/// The warnings of a pushed run: those of the trials copied, and the run's own ones the target
/// lacks, for a run it had already. A run's own warnings are told apart by their code and
/// parameters; only those stored before schema 6, which have neither, by their sentence.
pub(super) fn copy_warnings(
    src: &Db,
    dst: &Db,
    run_id: i64,
    dst_run: i64,
    trial_map: &HashMap<i64, i64>,
    merged: bool,
) -> Result<()> {
    type Row = (Option<i64>, Option<String>, Option<String>, String);
    /// What tells two warnings of a run apart.
    fn key((_, code, params, message): &Row) -> (Option<String>, Option<String>, Option<String>) {
        match code {
            Some(_) => (code.clone(), params.clone(), None),
            None => (None, None, Some(message.clone())),
        }
    }
    let read = |db: &Db, id: i64, only_run: bool| -> Result<Vec<Row>> {
        db.query(
            &format!(
                "SELECT trial_id, code, params, message FROM warnings WHERE run_id = ?1{} ORDER BY warning_id",
                if only_run { " AND trial_id IS NULL" } else { "" }
            ),
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
    };
    let known: HashSet<_> = if merged {
        read(dst, dst_run, true)?.iter().map(key).collect()
    } else {
        HashSet::new()
    };
    for row in read(src, run_id, false)? {
        let target = match row.0 {
            Some(t) => match trial_map.get(&t) {
                Some(&id) => Some(id),
                None => continue,
            },
            None if known.contains(&key(&row)) => continue,
            None => None,
        };
        let (_, code, params, message) = row;
        dst.execute(
            "INSERT INTO warnings (run_id, trial_id, code, params, message) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![dst_run, target, code, params, message],
        )?;
    }
    Ok(())
}

/// Calibrations the target lacks (speeds per workload, kernel and CPU model).
pub(super) fn copy_calibrations(src: &Db, dst: &Db, known: &Known) -> Result<()> {
    let rows = Rows::read(
        src,
        known,
        "calibrations",
        "SELECT * FROM calibrations",
        &[],
    )?;
    if rows.rows.is_empty() {
        return Ok(());
    }
    let sql = insert_sql(
        "calibrations",
        &rows.names,
        "ON CONFLICT (key, kernel, cpu_model) DO NOTHING",
    );
    dst.transaction(|| {
        for r in &rows.rows {
            dst.execute(&sql, r)?;
        }
        Ok(())
    })
}
