//! The kernel's view in a report: wake-up latency of periodic work (merged HDR histograms per
//! cell: CDF plots and a percentile table) and the scheduler trace (a per-CPU Gantt chart of
//! one trial per cell).

use super::plot_data::{Cdfs, Figure, GanttBar, Plot};
use super::Panel;
use hdrhistogram::Histogram;
use schedlab_core::workload::periodic;
use schedlab_store::kernel::KernelCellRows;

/// Points drawn per latency CDF (evenly spaced quantiles of the merged histogram).
const CDF_POINTS: usize = 1000;

/// Wake-up latencies of one cell: the histograms of all its measured tasks, merged.
#[derive(Debug, Clone)]
pub struct LatencyCell {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// Policy name.
    pub policy: String,
    /// Workload label.
    pub workload: String,
    /// The cell's axes without its workload, e.g. "fifo x1 +2 antagonists".
    pub label: String,
    /// Every wake-up latency of every measured task of every ok trial, ns.
    pub hist: Histogram<u64>,
}

/// One traced trial of a cell: which task ran on which CPU when.
#[derive(Debug, Clone)]
pub struct TraceTrial {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// Policy name.
    pub policy: String,
    /// Workload label.
    pub workload: String,
    /// The cell's axes without its workload.
    pub label: String,
    /// Measured tasks of the cell; task indices from here on are antagonists.
    pub tasks: i64,
    /// (task index, CPU, start, end); times in ns after the trial's release.
    pub slices: Vec<(i64, i64, i64, i64)>,
}

/// What the kernel measured, as far as the run recorded it.
#[derive(Debug, Clone, Default)]
pub struct KernelView {
    /// Cells with periodic work, in cell order.
    pub latency: Vec<LatencyCell>,
    /// The first traced ok trial of every traced cell, in cell order.
    pub traces: Vec<TraceTrial>,
}

fn cell_label(policy: &str, tasks: i64, antagonists: i64, settings: Option<&str>) -> String {
    let mut s = format!("{policy} x{tasks}");
    if antagonists > 0 {
        s.push_str(&format!(" +{antagonists} antagonists"));
    }
    if let Some(settings) = settings {
        s.push(' ');
        s.push_str(settings);
    }
    s
}

/// The kernel's view of a run from its stored rows: merged latency histograms per periodic
/// cell, and one traced trial per traced cell.
pub fn build(rows: &[KernelCellRows]) -> KernelView {
    let mut view = KernelView::default();
    for c in rows {
        let label = cell_label(&c.policy, c.tasks, c.antagonists, c.settings.as_deref());
        let mut merged: Option<Histogram<u64>> = None;
        for h in c
            .latency_hdr_v2
            .iter()
            .filter_map(|b| periodic::deserialize(b))
        {
            match merged.as_mut() {
                Some(m) => {
                    let _ = m.add(&h);
                }
                None => merged = Some(h),
            }
        }
        if let Some(hist) = merged.filter(|h| !h.is_empty()) {
            view.latency.push(LatencyCell {
                cell_index: c.cell_index,
                policy: c.policy.clone(),
                workload: c.workload.clone(),
                label: label.clone(),
                hist,
            });
        }
        if let Some(slices) = &c.trace_slices {
            view.traces.push(TraceTrial {
                cell_index: c.cell_index,
                policy: c.policy.clone(),
                workload: c.workload.clone(),
                label,
                tasks: c.tasks,
                slices: slices.clone(),
            });
        }
    }
    view
}

/// The wake-up latency percentiles of one periodic cell, ns (from its merged histogram,
/// relative error <= 1%).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyRow {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// Workload label.
    pub workload: String,
    /// The cell's axes without its workload ([`LatencyCell::label`]).
    pub label: String,
    /// Wake-ups recorded.
    pub wakeups: u64,
    /// Smallest latency, ns.
    pub min_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
}

/// The wake-up latency percentiles of every periodic cell, in cell order (empty: none).
pub fn latency_rows(v: &KernelView) -> Vec<LatencyRow> {
    v.latency
        .iter()
        .map(|c| {
            let h = &c.hist;
            LatencyRow {
                cell_index: c.cell_index,
                workload: c.workload.clone(),
                label: c.label.clone(),
                wakeups: h.len(),
                min_ns: h.min(),
                p50_ns: h.value_at_quantile(0.5),
                p90_ns: h.value_at_quantile(0.9),
                p99_ns: h.value_at_quantile(0.99),
                p999_ns: h.value_at_quantile(0.999),
                max_ns: h.max(),
            }
        })
        .collect()
}

/// The panel a workload's figures belong to (the first whose label starts with it).
fn panel_of(panels: &[Panel], workload: &str) -> usize {
    panels
        .iter()
        .position(|p| p.label.starts_with(workload))
        .unwrap_or(0)
}

/// Latency CDFs (one per periodic workload, one curve per cell) and trace timelines (one per
/// traced cell).
pub fn figures(v: &KernelView, panels: &[Panel]) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut workloads: Vec<&str> = v.latency.iter().map(|c| c.workload.as_str()).collect();
    workloads.dedup();
    for (i, w) in workloads.iter().enumerate() {
        let cells: Vec<&LatencyCell> = v.latency.iter().filter(|c| c.workload == *w).collect();
        // Name curves by policy (and so colour them as every other plot does) when that is unique.
        let mut policies: Vec<&str> = cells.iter().map(|c| c.policy.as_str()).collect();
        policies.sort_unstable();
        policies.dedup();
        let by_policy = policies.len() == cells.len();
        let series: Vec<(String, Vec<f64>)> = cells
            .iter()
            .map(|c| {
                let pts = (0..CDF_POINTS)
                    .map(|k| {
                        c.hist.value_at_quantile(k as f64 / (CDF_POINTS - 1) as f64) as f64 / 1e3
                    })
                    .collect();
                (
                    if by_policy {
                        c.policy.clone()
                    } else {
                        c.label.clone()
                    },
                    pts,
                )
            })
            .collect();
        out.push(Figure {
            id: format!("latency-cdf-{i}"),
            panel: panel_of(panels, w),
            title: format!("{w}: wake-up latency CDF"),
            caption: "Empirical CDF of every wake-up latency (actual - intended wake time) per cell, from the merged HDR histograms of its measured tasks.".into(),
            x_label: "wake-up latency (us)".into(),
            y_label: "fraction of wake-ups".into(),
            plot: Plot::Cdf(Cdfs::of(&series)),
        });
    }
    for t in &v.traces {
        let bars: Vec<GanttBar> = t
            .slices
            .iter()
            .map(|&(task, cpu, s, e)| {
                let who = if task < t.tasks {
                    format!("task {task}")
                } else {
                    format!("antagonist {}", task - t.tasks)
                };
                GanttBar {
                    lane: format!("CPU {cpu}"),
                    label: who.clone(),
                    start: s as f64 / 1e6,
                    end: e as f64 / 1e6,
                    series: who,
                }
            })
            .collect();
        out.push(Figure {
            id: format!("timeline-cell-{}", t.cell_index),
            panel: panel_of(panels, &t.workload),
            title: format!("{} {}: which task ran where (trace)", t.workload, t.label),
            caption: "Per-CPU timeline of one traced trial from the kernel's sched_switch events: FIFO runs tasks to completion, RR rotates them every timeslice, OTHER interleaves them.".into(),
            x_label: "time after release (ms)".into(),
            y_label: String::new(),
            plot: Plot::Gantt(bars),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> KernelView {
        let mut h = periodic::new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        KernelView {
            latency: vec![LatencyCell {
                cell_index: 0,
                policy: "fifo".into(),
                workload: "periodic:1000us/100us".into(),
                label: "fifo x1".into(),
                hist: h,
            }],
            traces: vec![TraceTrial {
                cell_index: 0,
                policy: "fifo".into(),
                workload: "periodic:1000us/100us".into(),
                label: "fifo x1".into(),
                tasks: 1,
                slices: vec![(0, 0, 0, 2_000_000), (1, 1, 500_000, 3_000_000)],
            }],
        }
    }

    #[test]
    fn latency_rows_give_the_merged_histograms_percentiles_in_ns() {
        let rows = latency_rows(&view());
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.cell_index, r.label.as_str()), (0, "fifo x1"));
        assert_eq!((r.wakeups, r.min_ns), (1000, 1000));
        // 1..1000 us recorded once each: p50 is 500 us, p99 990 us and the largest 1000 us,
        // each within the histogram's 1%.
        let near = |v: u64, want: f64| (v as f64 - want).abs() <= want * 0.01;
        assert!(near(r.p50_ns, 500_000.0), "{r:?}");
        assert!(near(r.p99_ns, 990_000.0), "{r:?}");
        assert!(near(r.max_ns, 1_000_000.0), "{r:?}");
        assert!(latency_rows(&KernelView::default()).is_empty());
    }

    #[test]
    fn figures_give_one_cdf_per_workload_and_one_timeline_per_traced_cell() {
        let figs = figures(&view(), &[]);
        assert_eq!(figs.len(), 2);
        match &figs[0].plot {
            Plot::Cdf(c) => {
                let steps = &c.steps[0].1;
                assert!(steps.len() >= 2, "{steps:?}");
                assert!(steps
                    .windows(2)
                    .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
                assert_eq!(steps.last().map(|s| s.1), Some(1.0));
            }
            other => panic!("{other:?}"),
        }
        match &figs[1].plot {
            Plot::Gantt(b) => {
                assert_eq!(b[1].lane, "CPU 1");
                assert_eq!(b[1].label, "antagonist 0");
                assert_eq!((b[1].start, b[1].end), (0.5, 3.0));
            }
            other => panic!("{other:?}"),
        }
    }
}
