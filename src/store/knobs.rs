//! The kernel settings read back before each trial (`knob_readings`), written with the trial.

use crate::records::KnobReading;
use anyhow::Result;
use rusqlite::{params, Transaction};

/// Stores the settings read back before trial `trial_id`, in the trial's transaction.
pub(super) fn insert_readings(
    tx: &Transaction,
    trial_id: i64,
    readings: &[KnobReading],
) -> Result<()> {
    let mut st = tx.prepare(
        "INSERT INTO knob_readings (trial_id, name, path, requested, read_back) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for r in readings {
        st.execute(params![trial_id, r.name, r.path, r.requested, r.read_back])?;
    }
    Ok(())
}
