//! Task groups (CPU cgroups) in a report: per cell and group, the medians over its ok trials of
//! the kernel's figures (CPU share while every group ran, against the weight share; throttled
//! periods and time, against the bandwidth limit; the tasks' p99 wake-up latency), as typed
//! rows (a table in `render::sections`) and two or three figures.

use super::plot_data::{Figure, Plot};
use schedlab_analyze::median;
use schedlab_store::groups::GroupRow;
use schedlab_store::query::CellView;

/// The default `cpu.weight`.
const DEFAULT_WEIGHT: i64 = 100;

/// One group of one cell, summarised over the cell's ok trials.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupSummary {
    /// Index of the cell in its run.
    pub cell_index: i64,
    /// The cell without its groups, e.g. "other cpu:pi x2 +2 antagonists".
    pub cell: String,
    /// The group's name.
    pub name: String,
    /// Its measured tasks.
    pub tasks: i64,
    /// Its `cpu.weight` (100 when not set).
    pub weight: i64,
    /// Its weight over the sum of its cell's groups' weights.
    pub weight_share: f64,
    /// Its bandwidth limit in CPUs (quota / period; None: no limit).
    pub limit_cpus: Option<f64>,
    /// Its `cpu.max` as written: (quota, period), µs; None: no limit.
    pub cpu_max_us: Option<(i64, i64)>,
    /// Its bandwidth period, ms.
    pub period_ms: Option<f64>,
    /// Its CPUs as written (`cpuset.cpus`, e.g. "1"); None: not set.
    pub cpus: Option<String>,
    /// Its CPUs were a partition of their own.
    pub partition: bool,
    /// Ok trials.
    pub trials: usize,
    /// Median share of the CPU time its cell's groups used while every group's tasks ran.
    pub share: Option<f64>,
    /// Median CPU time of its tasks over the measured period, ms.
    pub usage_ms: Option<f64>,
    /// Median bandwidth periods with runnable tasks.
    pub nr_periods: Option<f64>,
    /// Median throttled periods.
    pub nr_throttled: Option<f64>,
    /// Median throttled time, ms.
    pub throttled_ms: Option<f64>,
    /// Median of the largest p99 wake-up latency of its tasks (periodic work), µs.
    pub p99_us: Option<f64>,
}

/// Every group of a run's cells, in cell and group order.
#[derive(Debug, Clone, Default)]
pub struct CgroupView {
    /// The groups.
    pub groups: Vec<GroupSummary>,
}

/// The cell's settings other than its groups (those are the table's columns), in the order
/// of the cell's settings line: `slice=`, each knob `NAME=VALUE`, `scx=`; None when it has none.
fn settings_without_groups(c: &CellView) -> Option<String> {
    let parts: Vec<String> = c
        .slice
        .iter()
        .map(|s| format!("slice={s}"))
        .chain(c.knobs.iter().map(|(k, v)| format!("{k}={v}")))
        .chain(c.scx.iter().map(|x| format!("scx={x}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The cell's label without its groups (those are the table's columns).
fn cell_label(c: &CellView) -> String {
    let settings = settings_without_groups(c);
    let mut out = format!("{} {} x{}", c.policy, c.workload, c.tasks);
    if c.kind == schedlab_core::records::TaskKind::Thread {
        out.push_str(" thread");
    }
    if c.antagonists > 0 {
        out.push_str(&format!(" +{} antagonists", c.antagonists));
    }
    if let Some(s) = settings {
        out.push(' ');
        out.push_str(&s);
    }
    out
}

/// The median of the values `f` gives, None when none.
fn med(rows: &[&GroupRow], f: impl Fn(&GroupRow) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = rows.iter().filter_map(|r| f(r)).collect();
    median(&v)
}

/// The view of a run's groups from its stored rows and cells.
pub fn build(rows: &[GroupRow], cells: &[CellView]) -> CgroupView {
    let mut out = Vec::new();
    for c in cells {
        let mine: Vec<&GroupRow> = rows
            .iter()
            .filter(|r| r.cell_index == c.cell_index)
            .collect();
        let Some(first_trial) = mine.first().map(|r| r.trial_id) else {
            continue;
        };
        let layout: Vec<&GroupRow> = mine
            .iter()
            .copied()
            .filter(|r| r.trial_id == first_trial)
            .collect();
        let total_weight: i64 = layout
            .iter()
            .map(|r| r.weight.unwrap_or(DEFAULT_WEIGHT))
            .sum();
        for g in &layout {
            let of_group: Vec<&GroupRow> = mine
                .iter()
                .copied()
                .filter(|r| r.group_index == g.group_index)
                .collect();
            let shares: Vec<f64> = of_group
                .iter()
                .filter_map(|r| {
                    let all: Vec<&GroupRow> = mine
                        .iter()
                        .copied()
                        .filter(|o| o.trial_id == r.trial_id)
                        .collect();
                    let sum: i64 = all
                        .iter()
                        .map(|o| o.usage_contended_ns)
                        .sum::<Option<i64>>()?;
                    (sum > 0).then(|| r.usage_contended_ns.unwrap_or(0) as f64 / sum as f64)
                })
                .collect();
            let weight = g.weight.unwrap_or(DEFAULT_WEIGHT);
            let limit_cpus = g
                .quota_us
                .zip(g.period_us)
                .map(|(q, p)| q as f64 / p as f64);
            let ms = |v: Option<i64>| v.map(|v| v as f64 / 1e6);
            out.push(GroupSummary {
                cell_index: c.cell_index,
                cell: cell_label(c),
                name: g.name.clone(),
                tasks: g.tasks,
                weight,
                weight_share: weight as f64 / total_weight.max(1) as f64,
                limit_cpus,
                cpu_max_us: g.quota_us.zip(g.period_us),
                period_ms: g.period_us.map(|p| p as f64 / 1e3),
                cpus: g.cpus.clone(),
                partition: g.partition,
                trials: of_group.len(),
                share: median(&shares),
                usage_ms: med(&of_group, |r| ms(r.usage_ns)),
                nr_periods: med(&of_group, |r| r.nr_periods.map(|v| v as f64)),
                nr_throttled: med(&of_group, |r| r.nr_throttled.map(|v| v as f64)),
                throttled_ms: med(&of_group, |r| ms(r.throttled_ns)),
                p99_us: med(&of_group, |r| r.lat_p99_ns.map(|v| v as f64 / 1e3)),
            });
        }
    }
    CgroupView { groups: out }
}

/// Measured CPU share against weight share (cells with two groups or more), throttled time
/// against the bandwidth limit, and p99 wake-up latency against it (periodic work).
pub fn figures(v: &CgroupView) -> Vec<Figure> {
    let mut out = Vec::new();
    let by_name = |f: &dyn Fn(&GroupSummary) -> Option<(f64, f64)>| {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for g in &v.groups {
            let Some(p) = f(g) else { continue };
            match series.iter_mut().find(|(n, _)| *n == g.name) {
                Some((_, pts)) => pts.push(p),
                None => series.push((g.name.clone(), vec![p])),
            }
        }
        series
    };
    let mut shares = by_name(&|g| g.share.map(|s| (g.weight_share, s)));
    if !shares.is_empty() {
        let prediction: Vec<(f64, f64)> = v
            .groups
            .iter()
            .filter(|g| g.share.is_some())
            .map(|g| (g.weight_share, g.weight_share))
            .collect();
        shares.push(("weight share (prediction)".into(), prediction));
        out.push(Figure {
            id: "cgroup-share-vs-weight".into(),
            panel: 0,
            title: "CPU share of each task group against its weight share".into(),
            caption: "Each point is one group of one cell: the median over ok trials of its part of the groups' CPU time from release to the first task's end (every group running), against its cpu.weight over the sum of its cell's weights; the prediction points lie on y = x.".into(),
            x_label: "weight share".into(),
            y_label: "measured CPU share".into(),
            plot: Plot::Scatter(shares),
        });
    }
    let limited = |f: &dyn Fn(&GroupSummary) -> Option<f64>| {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for g in &v.groups {
            let (Some(x), Some(y), Some(p)) = (g.limit_cpus, f(g), g.period_ms) else {
                continue;
            };
            let name = format!("{} (period {p} ms)", g.name);
            match series.iter_mut().find(|(n, _)| *n == name) {
                Some((_, pts)) => pts.push((x, y)),
                None => series.push((name, vec![(x, y)])),
            }
        }
        series
    };
    let throttled = limited(&|g| g.throttled_ms);
    if !throttled.is_empty() {
        out.push(Figure {
            id: "cgroup-throttled-vs-limit".into(),
            panel: 0,
            title: "Throttled time against the CPU limit".into(),
            caption: "Median over ok trials of the time each limited group's tasks were throttled (cpu.stat throttled_usec, v1 throttled_time) over the measured period, against its cpu.max quota / period in CPUs.".into(),
            x_label: "cpu.max (CPUs)".into(),
            y_label: "throttled (ms)".into(),
            plot: Plot::Scatter(throttled),
        });
    }
    let p99 = limited(&|g| g.p99_us);
    if !p99.is_empty() {
        out.push(Figure {
            id: "cgroup-p99-vs-limit".into(),
            panel: 0,
            title: "p99 wake-up latency against the CPU limit".into(),
            caption: "Median over ok trials of the largest p99 wake-up latency of each limited group's periodic tasks, against its cpu.max in CPUs.".into(),
            x_label: "cpu.max (CPUs)".into(),
            y_label: "p99 wake-up latency (us)".into(),
            plot: Plot::Scatter(p99),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(trial: i64, g: i64, weight: i64, contended_ms: i64) -> GroupRow {
        GroupRow {
            cell_index: 0,
            trial_id: trial,
            group_index: g,
            name: ["a", "b"][g as usize].into(),
            tasks: 1,
            weight: Some(weight),
            usage_contended_ns: Some(contended_ms * 1_000_000),
            quota_us: (g == 0).then_some(20_000),
            period_us: (g == 0).then_some(100_000),
            throttled_ns: Some(5_000_000 * (g + 1)),
            ..GroupRow::default()
        }
    }

    #[test]
    fn shares_are_medians_of_each_trials_parts_and_weights_share_by_cell() {
        let cells = [CellView {
            cell_index: 0,
            policy: schedlab_core::policy::PolicyKind::Other,
            workload: "cpu:pi".into(),
            tasks: 2,
            settings: Some("slice=3ms cg[a:1 w=100 | b:1 w=300]".into()),
            slice: Some("3ms".into()),
            ..CellView::default()
        }];
        // Trial 1: 25/100 and 75/100; trial 2: 30/90 and 60/90; trial 3: 20/80 and 60/80.
        let rows = [
            row(1, 0, 100, 25),
            row(1, 1, 300, 75),
            row(2, 0, 100, 30),
            row(2, 1, 300, 60),
            row(3, 0, 100, 20),
            row(3, 1, 300, 60),
        ];
        let v = build(&rows, &cells);
        assert_eq!(v.groups.len(), 2);
        let (a, b) = (&v.groups[0], &v.groups[1]);
        assert_eq!(a.cell, "other cpu:pi x2 slice=3ms");
        assert_eq!((a.weight_share, b.weight_share), (0.25, 0.75));
        // a: 0.25, 1/3, 0.25 -> median 0.25; b: 0.75, 2/3, 0.75 -> 0.75.
        assert_eq!(a.share, Some(0.25));
        assert_eq!(b.share, Some(0.75));
        assert_eq!(
            (a.cpu_max_us, a.limit_cpus),
            (Some((20_000, 100_000)), Some(0.2))
        );
        assert_eq!((b.cpu_max_us, b.limit_cpus), (None, None));
        assert_eq!(a.throttled_ms, Some(5.0));
        assert_eq!(a.trials, 3);
        assert_eq!(
            (b.weight, b.cpus.as_deref(), b.partition),
            (300, None, false)
        );
        let figs = figures(&v);
        assert_eq!(figs.len(), 2, "share and throttling; no latency");
    }

    #[test]
    fn a_cells_label_tells_threads_and_antagonists_apart() {
        let c = CellView {
            policy: schedlab_core::policy::PolicyKind::Deadline,
            workload: "cpu:pi".into(),
            tasks: 2,
            kind: schedlab_core::records::TaskKind::Thread,
            antagonists: 2,
            settings: Some("cg[2 cpus=1 partition]".into()),
            ..CellView::default()
        };
        assert_eq!(cell_label(&c), "deadline cpu:pi x2 thread +2 antagonists");
    }

    #[test]
    fn settings_are_the_typed_ones_even_when_a_value_reads_like_a_group() {
        // A knob value and a BPF scheduler command containing "cg[": cutting the settings
        // line at "cg[" would lose them.
        let c = CellView {
            policy: schedlab_core::policy::PolicyKind::Other,
            workload: "cpu:pi".into(),
            tasks: 1,
            settings: Some("slice=0.1ms a.b=cg[x scx=lavd --cg[1 cg[1]".into()),
            slice: Some("0.1ms".into()),
            knobs: vec![("a.b".into(), "cg[x".into())],
            scx: Some("lavd --cg[1".into()),
            ..CellView::default()
        };
        assert_eq!(
            cell_label(&c),
            "other cpu:pi x1 slice=0.1ms a.b=cg[x scx=lavd --cg[1"
        );
        let none = CellView {
            settings: Some("cg[1]".into()),
            ..CellView::default()
        };
        assert_eq!(settings_without_groups(&none), None);
    }
}
