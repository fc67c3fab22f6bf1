//! The kernel settings read back before each trial (`knob_readings`), written with the trial.

use super::db::{params, Db};
use crate::error::Result;
use schedlab_core::records::KnobReading;

/// Stores the settings read back before trial `trial_id`, in the trial's transaction.
pub(super) fn insert_readings(db: &Db, trial_id: i64, readings: &[KnobReading]) -> Result<()> {
    let rows: Vec<_> = readings
        .iter()
        .map(|r| {
            params![
                trial_id,
                r.name.as_str(),
                r.path.as_str(),
                r.requested.as_str(),
                r.read_back.as_str()
            ]
            .to_vec()
        })
        .collect();
    db.insert_rows(
        "knob_readings",
        &["trial_id", "name", "path", "requested", "read_back"],
        &rows,
    )
}
