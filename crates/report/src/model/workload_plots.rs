//! The report's figures of the workloads' own figures: percentiles across the value of the
//! axis that was swept, one line per policy and percentile (medians over trials).
//!
//! - messaging, request: against the parameter behind the task count (groups, workers), per
//!   panel: time and messages/s; wake-up and request latency p50 and p99, requests/s.
//! - pipe: time per round trip per policy (bars).
//! - periodic: against the utilisation (run / period, %), over every periodic cell of the
//!   run with the same task count and other axes: slack p1/p50/p99 and the missed share.

use super::plot_data::{Bar, BarGroup, Figure, Plot};
use super::workload::task_axis;
use super::{Metric, Report};
use schedlab_core::workload::{Workload, WorkloadKind};

/// (x, median) points of `metric` for the cells `cells`, per policy, with x from `x_of`.
fn series(
    r: &Report,
    cells: &[usize],
    metric: Metric,
    x_of: &dyn Fn(usize) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for &c in cells {
        let cell = &r.cells[c];
        let (Some(x), Some(s)) = (x_of(c), cell.summary(metric)) else {
            continue;
        };
        let name = match metric.label().rsplit_once(' ') {
            Some((_, pct)) if pct.starts_with('p') => format!("{} {pct}", cell.key.policy),
            _ => cell.key.policy.clone(),
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((x, s.summary.median)),
            None => out.push((name, vec![(x, s.summary.median)])),
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// A figure of `metrics` against x, when some series has two points or more.
#[allow(clippy::too_many_arguments)]
fn lines(
    r: &Report,
    cells: &[usize],
    metrics: &[Metric],
    x: (&str, &dyn Fn(usize) -> Option<f64>),
    id: String,
    panel: usize,
    title: String,
    log_y: bool,
) -> Option<Figure> {
    let all: Vec<(String, Vec<(f64, f64)>)> = metrics
        .iter()
        .flat_map(|&m| series(r, cells, m, x.1))
        .collect();
    if all.iter().all(|(_, pts)| pts.len() < 2) {
        return None;
    }
    let names: Vec<&str> = metrics.iter().map(|m| m.label()).collect();
    let unit = metrics[0].unit();
    Some(Figure {
        id,
        panel,
        title,
        caption: format!(
            "Median over trials of each trial's {} per policy, against {}{}.",
            names.join(", "),
            x.0,
            if log_y { "; logarithmic y axis" } else { "" }
        ),
        x_label: x.0.to_string(),
        y_label: {
            // "slack p1" -> "slack": the percentiles are the series.
            let l = metrics[0].label();
            let name = match l.rsplit_once(" p") {
                Some((n, _)) if metrics.len() > 1 => n,
                _ => l,
            };
            match unit {
                "" => name.to_string(),
                u => format!("{name} ({u})"),
            }
        },
        plot: match log_y {
            true => Plot::LogLines(all),
            false => Plot::Lines(all),
        },
    })
}

/// The figures of the panels of messaging, request and pipe cells.
fn panel_figures(r: &Report, out: &mut Vec<Figure>) {
    use Metric as M;
    for (p, panel) in r.panels.iter().enumerate() {
        let cells: Vec<usize> = panel
            .groups
            .iter()
            .flat_map(|&g| r.groups[g].cells.iter().copied())
            .collect();
        let Some(&first) = cells.first() else {
            continue;
        };
        let kind = r.cells[first].work.kind;
        let axis = task_axis(&r.cells[first].work, r.cells[first].key.tasks).0;
        let x_of = |c: usize| -> Option<f64> {
            let cell = &r.cells[c];
            Some(task_axis(&cell.work, cell.key.tasks).1 as f64)
        };
        let id = |what: &str| format!("{}-{}-{what}", p + 1, kind.name());
        let title = |what: &str| format!("{}: {what}", panel.label);
        let plots: &[(&str, &[Metric], bool)] = match kind {
            WorkloadKind::Messaging => &[
                ("time", &[M::Makespan], false),
                ("throughput", &[M::MessagesPerS], false),
                ("message-latency", &[M::MessageP50, M::MessageP99], true),
            ],
            WorkloadKind::Request => &[
                ("wakeup-latency", &[M::WakeupP50, M::WakeupP99], true),
                ("request-latency", &[M::RequestP50, M::RequestP99], true),
                ("rps", &[M::Rps], false),
            ],
            WorkloadKind::Pipe => {
                out.extend(round_trip_bars(r, p, &cells));
                continue;
            }
            WorkloadKind::Cpu
            | WorkloadKind::Io
            | WorkloadKind::Mixed
            | WorkloadKind::Periodic
            | WorkloadKind::Command => continue,
        };
        for &(what, metrics, log) in plots {
            let t = title(
                &metrics
                    .iter()
                    .map(|m| m.label())
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            out.extend(lines(
                r,
                &cells,
                metrics,
                (axis, &x_of),
                id(what),
                p,
                t,
                log,
            ));
        }
    }
}

/// Pipe: the median time per round trip per policy, with its CI, per task count.
fn round_trip_bars(r: &Report, p: usize, cells: &[usize]) -> Option<Figure> {
    let bars: Vec<Bar> = cells
        .iter()
        .filter_map(|&c| {
            let s = &r.cells[c].summary(Metric::RoundTrip)?.summary;
            Some(Bar {
                series: r.cells[c].key.policy.clone(),
                value: s.median,
                ci: Some(s.median_ci),
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    Some(Figure {
        id: format!("{}-pipe-round-trip", p + 1),
        panel: p,
        title: format!("{}: time per round trip", r.panels[p].label),
        caption: "Median over trials of makespan / round trips per policy (perf bench sched pipe's usecs/op); error bars: 95% CI of the median.".into(),
        x_label: "policy".into(),
        y_label: Metric::RoundTrip.with_unit(),
        plot: Plot::Bars(vec![BarGroup {
            category: "pipe".into(),
            bars,
        }]),
    })
}

/// Utilisation of a periodic workload (its busy work per period over its period), percent;
/// None for every other kind.
fn utilisation(work: &Workload) -> Option<f64> {
    (work.kind == WorkloadKind::Periodic)
        .then(|| 100.0 * work.run_ns as f64 / work.period_ns.max(1) as f64)
}

/// Periodic: slack and misses against the utilisation, over the cells that differ only in
/// their workload (and policy).
fn periodic_figures(r: &Report, out: &mut Vec<Figure>) {
    use Metric as M;
    let periodic: Vec<usize> = (0..r.cells.len())
        .filter(|&c| utilisation(&r.cells[c].work).is_some())
        .collect();
    // Cells alike but for workload and policy form one figure.
    let mut sets: Vec<(_, Vec<usize>)> = Vec::new();
    for &c in &periodic {
        let k = &r.cells[c].key;
        let rest = (k.tasks, k.kind, k.start, &k.cpus, k.priorities);
        match sets.iter_mut().find(|(s, _)| *s == rest) {
            Some((_, v)) => v.push(c),
            None => sets.push((rest, vec![c])),
        }
    }
    for (i, (_, cells)) in sets.iter().enumerate() {
        let x_of = |c: usize| utilisation(&r.cells[c].work);
        let panel = r.groups[r.cells[cells[0]].group].panel;
        let what = format!("periodic tasks x{}", r.cells[cells[0]].key.tasks);
        let x = (
            "utilisation (run / period, %)",
            &x_of as &dyn Fn(usize) -> Option<f64>,
        );
        let figs = [
            (&[M::SlackP1, M::SlackP50, M::SlackP99][..], "slack"),
            (&[M::MissPct][..], "missed"),
            (&[M::WakeupP50, M::WakeupP99][..], "wakeup"),
        ];
        for (metrics, name) in figs {
            let title = format!("{what}: {name} vs utilisation");
            let id = format!("periodic-{}-{name}", i + 1);
            out.extend(lines(r, cells, metrics, x, id, panel, title, false));
        }
    }
}

/// Every figure of the workloads' own figures.
pub fn figures(r: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    panel_figures(r, &mut out);
    periodic_figures(r, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::records::TrialStatus;
    use schedlab_store::figures::FigureRow;
    use schedlab_store::query::{CellView, Tally};

    fn periodic(period_ns: u64, run_ns: u64) -> Workload {
        Workload {
            kind: WorkloadKind::Periodic,
            period_ns,
            run_ns,
            ..Workload::default()
        }
    }

    /// A cell of `tasks` tasks of `work` labelled `label`, with one ok trial whose figures
    /// are `figure`.
    fn cell(label: &str, work: Workload, tasks: i64, figure: FigureRow) -> CellView {
        CellView {
            cell_index: tasks,
            workload: label.into(),
            work,
            tasks,
            statuses: vec![(Tally::Status(TrialStatus::Ok), 1)],
            makespans_ns: vec![1_000_000],
            trial_rounds: vec![0],
            trial_ids: vec![tasks],
            figures: vec![FigureRow {
                trial_id: tasks,
                makespan_ns: Some(1_000_000),
                ..figure
            }],
            ..CellView::default()
        }
    }

    /// The x values of the figure `id` of the report of `cells`.
    fn xs(cells: Vec<CellView>, id: &str) -> Vec<f64> {
        let input = crate::model::ReportInput {
            cells,
            ..Default::default()
        };
        let report = crate::model::report::build(&input);
        let figs = figures(&report);
        let fig = figs.iter().find(|f| f.id == id);
        match fig.map(|f| &f.plot) {
            Some(Plot::Lines(series) | Plot::LogLines(series)) => {
                series[0].1.iter().map(|p| p.0).collect()
            }
            _ => panic!(
                "no line figure {id} in {:?}",
                figs.iter().map(|f| &f.id).collect::<Vec<_>>()
            ),
        }
    }

    #[test]
    fn the_figures_take_their_x_from_the_parameters_whatever_the_label_says() {
        use schedlab_core::workload::MessagingParams;
        let messaging = Workload {
            kind: WorkloadKind::Messaging,
            messaging: Some(MessagingParams {
                fds: 20,
                ..MessagingParams::default()
            }),
            ..Workload::default()
        };
        let sent = FigureRow {
            ops_per_s: Some(1e6),
            ..FigureRow::default()
        };
        // A label that says 2 fds per group (read from it, 80 tasks would be 20 groups).
        let label = "messaging:pipe/f2/100B";
        let cells = vec![
            cell(label, messaging.clone(), 80, sent.clone()),
            cell(label, messaging, 160, sent),
        ];
        assert_eq!(xs(cells, "1-messaging-throughput"), [2.0, 4.0]);
        // Periodic cells whose labels say nothing of their utilisation.
        let missed = FigureRow {
            misses: Some(1),
            miss_pct: Some(1.0),
            ..FigureRow::default()
        };
        let cells = vec![
            cell("periodic", periodic(1_000_000, 400_000), 2, missed.clone()),
            cell("periodic", periodic(2_000_000, 200_000), 2, missed),
        ];
        assert_eq!(xs(cells, "periodic-1-missed"), [10.0, 40.0]);
    }

    #[test]
    fn a_periodic_workload_gives_its_utilisation_from_its_parameters() {
        assert_eq!(utilisation(&periodic(1_000_000, 500_000)), Some(50.0));
        assert_eq!(utilisation(&periodic(1_000_000, 1_500_000)), Some(150.0));
        // Below a microsecond, which its label (`periodic:1000us/0us`) rounds away.
        assert_eq!(utilisation(&periodic(1_000_000, 500)), Some(0.05));
        let cpu = Workload {
            period_ns: 1_000_000,
            run_ns: 500_000,
            ..Workload::default()
        };
        assert_eq!(utilisation(&cpu), None, "only a periodic workload has one");
    }
}
