//! What a measured task recorded besides its counters, read back from its slot and its share
//! of the trial's histogram buffer once the trial is over: the wake-up latency (summary and raw
//! histogram) and the workload's figures ([`TaskFigures`]).

use super::super::task::{Slot, TaskPlan};
use schedlab_core::records::TaskRecord;
use schedlab_core::workload::periodic::{self, HIST_BYTES};
use schedlab_core::workload::record::{recorded, HistKind, HISTS};
use schedlab_core::workload::{TaskFigures, WorkloadKind};
use std::sync::atomic::{AtomicU8, Ordering::SeqCst};

/// Bytes of the histogram buffer each task gets (one part per histogram kind).
pub(super) const TASK_HIST_BYTES: usize = HISTS * HIST_BYTES;

/// Bytes of histogram buffer a trial of `plan` with `n` tasks needs (0 if its work records no
/// histogram).
pub(super) fn hist_buffer_len(plan: &TaskPlan, n: usize) -> usize {
    match recorded(&plan.workload).contains(&true) {
        true => n * TASK_HIST_BYTES,
        false => 0,
    }
}

/// Task `i`'s share of the trial's histogram buffer (empty when its work records none).
pub(in super::super) fn hist_chunk(hists: &[AtomicU8], i: usize) -> &[AtomicU8] {
    hists
        .get(i * TASK_HIST_BYTES..(i + 1) * TASK_HIST_BYTES)
        .unwrap_or(&[])
}

/// Fills in `r.latency` and `r.figures` for measured task `i` from its slot `s`.
pub(super) fn attach(r: &mut TaskRecord, i: usize, s: &Slot, hists: &[AtomicU8], plan: &TaskPlan) {
    let w = &plan.workload;
    if r.antagonist || !(w.kind.communicates() || w.kind == WorkloadKind::Periodic) {
        return;
    }
    let chunk = hist_chunk(hists, i);
    let mut others = Vec::new();
    for kind in HistKind::ALL {
        let len = s.hist_lens[kind.slot()].load(SeqCst) as usize;
        let start = kind.slot() * HIST_BYTES;
        let Some(part) = chunk.get(start..start + len).filter(|_| len > 0) else {
            continue;
        };
        let bytes: Vec<u8> = part.iter().map(|b| b.load(SeqCst)).collect();
        // Tasks whose role records nothing in a kind (a sender's message latency) leave it out.
        let Some(hist) = periodic::deserialize(&bytes).filter(|h| !h.is_empty()) else {
            continue;
        };
        match kind {
            HistKind::Wakeup => r.latency = periodic::summarize(&hist).map(|l| (l, bytes)),
            _ => others.push((kind, hist, bytes)),
        }
    }
    r.figures = Some(TaskFigures::summarize(
        w.role(i),
        s.bytes.load(SeqCst),
        s.misses.load(SeqCst),
        others,
    ));
}
