//! Read-side queries of what the kernel measured: latency histograms, trace slices, samples.

use super::db::params;
use super::Store;
use crate::error::{Result, StoreError};

/// The kernel's records of one cell: its latency histograms and one traced trial.
#[derive(Debug, Clone, Default)]
pub struct KernelCellRows {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// Policy name.
    pub policy: String,
    /// Workload label.
    pub workload: String,
    /// Measured tasks per trial.
    pub tasks: i64,
    /// Antagonists per trial.
    pub antagonists: i64,
    /// The cell's kernel settings in one line (slice, knobs, BPF scheduler), if any.
    pub settings: Option<String>,
    /// Wake-up latency histograms (HdrHistogram V2) of every measured task of every ok trial.
    pub latency_hdr_v2: Vec<Vec<u8>>,
    /// The first traced ok trial: (task index, CPU, start, end), times in ns after its release.
    pub trace_slices: Option<Vec<(i64, i64, i64, i64)>>,
}

/// The latency histograms and first traced trial of every cell of `run_id`; warm-up trials
/// only if `warmup`.
pub fn kernel_rows(store: &Store, run_id: i64, warmup: bool) -> Result<Vec<KernelCellRows>> {
    let db = &store.db;
    let cells: Vec<(i64, KernelCellRows)> = db.query(
        "SELECT cell_id, cell_index, policy, workload, tasks, antagonists, slice_ns, knobs, scx, cgroups
         FROM cells WHERE run_id = ?1 ORDER BY cell_index",
        params![run_id],
        |r| {
            Ok((
                r.get(0)?,
                KernelCellRows {
                    cell_index: r.get(1)?,
                    policy: r.get(2)?,
                    workload: r.get(3)?,
                    tasks: r.get(4)?,
                    antagonists: r.get(5)?,
                    settings: super::query::settings_label(
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                        r.get(9)?,
                    ),
                    ..Default::default()
                },
            ))
        },
    )?;
    let mut out = Vec::with_capacity(cells.len());
    for (cell_id, mut cell) in cells {
        cell.latency_hdr_v2 = db.query(
            "SELECT h.hdr_v2 FROM histograms h JOIN trials t ON t.trial_id = h.trial_id
             JOIN tasks k ON k.trial_id = h.trial_id AND k.task_index = h.task_index
             WHERE t.cell_id = ?1 AND t.status = 'ok' AND (t.warmup = 0 OR ?2) AND k.role = 'task'
               AND h.metric = 'wakeup_latency_ns'
             ORDER BY h.trial_id, h.task_index",
            params![cell_id, warmup],
            |r| r.get::<Vec<u8>>(0),
        )?;
        let first: Option<(i64, i64)> = db.query_opt(
            "SELECT t.trial_id, MIN(k.t_release_ns) FROM trials t JOIN tasks k ON k.trial_id = t.trial_id
             WHERE t.cell_id = ?1 AND t.status = 'ok' AND (t.warmup = 0 OR ?2)
               AND EXISTS (SELECT 1 FROM trace_slices s WHERE s.trial_id = t.trial_id)
             GROUP BY t.trial_id ORDER BY t.trial_id LIMIT 1",
            params![cell_id, warmup],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        if let Some((trial_id, release)) = first {
            cell.trace_slices = Some(db.query(
                "SELECT task_index, cpu, start_ns, end_ns FROM trace_slices WHERE trial_id = ?1 ORDER BY start_ns, task_index",
                params![trial_id],
                |r| {
                    Ok((
                        r.get::<i64>(0)?,
                        r.get::<i64>(1)?,
                        r.get::<i64>(2)? - release,
                        r.get::<i64>(3)? - release,
                    ))
                },
            )?);
        }
        out.push(cell);
    }
    Ok(out)
}

/// The columns of the `samples` table that [`scheduler_samples`] may read: every measured
/// column of a sample (not its trial or time).
fn readable(column: &str) -> bool {
    super::rows::SAMPLE_COLUMNS[2..].contains(&column)
}

/// One sample of a cell that varied the I/O scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerSample {
    /// The trial the sample was taken in (samples of one trial are not independent: tests
    /// summarise them per trial).
    pub trial_id: i64,
    /// Workload label of the cell.
    pub workload: String,
    /// The cell's I/O scheduler.
    pub io_scheduler: String,
    /// The requested columns, in the order asked.
    pub values: Vec<Option<f64>>,
}

/// `columns` (measured columns of the `samples` table) of every sample of the ok trials of the cells of
/// `run_id` that set an I/O scheduler, in cell, trial and time order; warm-ups only if `warmup`.
pub fn scheduler_samples(
    store: &Store,
    run_id: i64,
    warmup: bool,
    columns: &[&str],
) -> Result<Vec<SchedulerSample>> {
    if let Some(c) = columns.iter().find(|c| !readable(c)) {
        return Err(StoreError::NoSampleColumn {
            column: c.to_string(),
            known: super::rows::SAMPLE_COLUMNS[2..].join(", "),
        });
    }
    let cols: Vec<String> = columns.iter().map(|c| format!("s.{c}")).collect();
    let sql = format!(
        "SELECT s.trial_id, c.workload, c.io_scheduler, {} FROM samples s JOIN trials t ON t.trial_id = s.trial_id
         JOIN cells c ON c.cell_id = t.cell_id
         WHERE t.run_id = ?1 AND t.status = 'ok' AND (t.warmup = 0 OR ?2) AND c.io_scheduler IS NOT NULL
         ORDER BY c.cell_index, s.trial_id, s.t_ns",
        cols.join(", ")
    );
    store.db.query(&sql, params![run_id, warmup], |r| {
        Ok(SchedulerSample {
            trial_id: r.get(0)?,
            workload: r.get(1)?,
            io_scheduler: r.get(2)?,
            values: (0..columns.len())
                .map(|c| r.get::<Option<f64>>(3 + c))
                .collect::<Result<_>>()?,
        })
    })
}
