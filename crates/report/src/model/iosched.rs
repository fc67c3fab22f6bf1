//! Study 004's analysis: the system-wide samples (vmstat's columns) per I/O scheduler, one
//! box plot per column and a one-way ANOVA / Kruskal-Wallis table across the schedulers.

use super::figures::{Figure, Plot};
use super::plot_data::BoxGroup;
use super::tables::Table;
use super::Panel;
use schedlab_analyze::{anova_oneway, kruskal_wallis, ALPHAS};
use schedlab_store::kernel::SchedulerSample;

/// The sampled columns compared, with their labels (unit included).
pub const COLUMNS: [(&str, &str); 11] = [
    ("r", "r: runnable tasks"),
    ("b", "b: tasks blocked on I/O"),
    ("in_per_s", "in: interrupts per s"),
    ("cs_per_s", "cs: context switches per s"),
    ("us_pct", "us: user CPU (%)"),
    ("sy_pct", "sy: system CPU (%)"),
    ("id_pct", "id: idle CPU (%)"),
    ("wa_pct", "wa: I/O wait (%)"),
    ("st_pct", "st: stolen CPU (%)"),
    ("bo_kib_s", "bo: written KiB per s"),
    ("psi_io_some_pct", "PSI io some (% of time)"),
];

/// The samples of one workload, per I/O scheduler and column.
#[derive(Debug, Clone, Default)]
pub struct SchedulerSamples {
    /// Workload label.
    pub workload: String,
    /// Schedulers in cell order.
    pub schedulers: Vec<String>,
    /// `values[s][c]`: every sample of column `c` under scheduler `s`.
    pub values: Vec<Vec<Vec<f64>>>,
}

/// The label samples are pooled under: programs started in different orders are one mix, as
/// study 004 pooled its six orders per scheduler ("command:writer,browser" and
/// "command:browser,writer" both become "command:browser,writer (any order)").
fn pooled_label(workload: &str) -> String {
    match workload.strip_prefix("command:") {
        Some(names) if names.contains(',') => {
            let mut v: Vec<&str> = names.split(',').collect();
            v.sort_unstable();
            format!("command:{} (any order)", v.join(","))
        }
        _ => workload.to_string(),
    }
}

/// Groups stored samples per (pooled) workload, scheduler and column; `rows` hold the
/// [`COLUMNS`] in order.
pub fn build(rows: &[SchedulerSample]) -> Vec<SchedulerSamples> {
    let mut out: Vec<SchedulerSamples> = Vec::new();
    for r in rows {
        let w = pooled_label(&r.workload);
        let wi = match out.iter().position(|x| x.workload == w) {
            Some(i) => i,
            None => {
                out.push(SchedulerSamples {
                    workload: w,
                    ..Default::default()
                });
                out.len() - 1
            }
        };
        let ws = &mut out[wi];
        let si = match ws.schedulers.iter().position(|x| *x == r.io_scheduler) {
            Some(i) => i,
            None => {
                ws.schedulers.push(r.io_scheduler.clone());
                ws.values.push(vec![Vec::new(); COLUMNS.len()]);
                ws.schedulers.len() - 1
            }
        };
        for (c, v) in r.values.iter().enumerate().take(COLUMNS.len()) {
            if let Some(v) = v {
                ws.values[si][c].push(*v);
            }
        }
    }
    out
}

/// The names of [`COLUMNS`], to read them from the store.
pub fn column_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(c, _)| *c).collect()
}

/// Significance mark: `**` below 0.01, `*` below 0.05.
fn stars(p: f64) -> &'static str {
    if p < ALPHAS.1 {
        "**"
    } else if p < ALPHAS.0 {
        "*"
    } else {
        ""
    }
}

/// A p-value with its mark, e.g. `0.0031 **`.
fn with_stars(p: f64) -> String {
    match stars(p) {
        "" => format!("{p:.4}"),
        s => format!("{p:.4} {s}"),
    }
}

/// One row per workload and column: ANOVA F and p, Kruskal-Wallis H and p, across schedulers.
pub fn tests_table(all: &[SchedulerSamples]) -> Option<Table> {
    if all.iter().all(|w| w.schedulers.len() < 2) {
        return None;
    }
    let mut rows = Vec::new();
    for w in all.iter().filter(|w| w.schedulers.len() >= 2) {
        for (c, (_, label)) in COLUMNS.iter().enumerate() {
            let groups: Vec<&[f64]> = w.values.iter().map(|v| v[c].as_slice()).collect();
            let a = anova_oneway(&groups);
            let k = kruskal_wallis(&groups);
            let fmt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
            rows.push(vec![
                w.workload.clone(),
                label.to_string(),
                groups
                    .iter()
                    .map(|g| g.len().to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
                fmt(a.as_ref().map(|t| t.statistic)),
                a.as_ref().map_or("-".into(), |t| with_stars(t.p_value)),
                fmt(k.as_ref().map(|t| t.statistic)),
                k.as_ref().map_or("-".into(), |t| with_stars(t.p_value)),
            ]);
        }
    }
    let header = [
        "workload",
        "column",
        "samples per scheduler",
        "ANOVA F",
        "ANOVA p",
        "Kruskal-Wallis H",
        "Kruskal-Wallis p",
    ];
    Some(Table {
        title: "System-wide samples across I/O schedulers (study 004): one-way ANOVA and Kruskal-Wallis per column; * p < 0.05, ** p < 0.01. Samples within a trial are not independent, so p-values are optimistic.".into(),
        header: header.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

/// One box plot per workload and column, one box per scheduler.
pub fn figures(all: &[SchedulerSamples], panels: &[Panel]) -> Vec<Figure> {
    let mut out = Vec::new();
    for (wi, w) in all.iter().enumerate() {
        let panel = panels
            .iter()
            .position(|p| p.label.starts_with(&w.workload))
            .unwrap_or(0);
        for (c, (col, label)) in COLUMNS.iter().enumerate() {
            let series: Vec<(String, Vec<f64>)> = w
                .schedulers
                .iter()
                .zip(&w.values)
                .map(|(s, v)| (s.clone(), v[c].clone()))
                .collect();
            if series.iter().all(|(_, v)| v.is_empty()) {
                continue;
            }
            out.push(Figure {
                id: format!("iosched-{wi}-{}", col.replace('_', "-")),
                panel,
                title: format!("{}: {label} per I/O scheduler", w.workload),
                caption: format!("Every system-wide sample of {label} taken during the trials, per block-device I/O scheduler (study 004's box plots)."),
                x_label: "I/O scheduler".into(),
                y_label: label.to_string(),
                plot: Plot::Boxes(vec![BoxGroup { category: w.workload.clone(), series }]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<SchedulerSamples> {
        let col = |base: f64| {
            (0..COLUMNS.len())
                .map(|c| (0..20).map(|i| base + c as f64 + (i % 5) as f64).collect())
                .collect()
        };
        vec![SchedulerSamples {
            workload: "io:sync-copy".into(),
            schedulers: vec!["none".into(), "bfq".into()],
            values: vec![col(0.0), col(10.0)],
        }]
    }

    #[test]
    fn program_mixes_pool_their_start_orders_and_other_workloads_keep_their_label() {
        assert_eq!(
            pooled_label("command:writer,browser,player"),
            pooled_label("command:browser,player,writer")
        );
        assert_eq!(
            pooled_label("command:writer,browser"),
            "command:browser,writer (any order)"
        );
        assert_eq!(pooled_label("command:flac"), "command:flac");
        assert_eq!(pooled_label("io:sync-copy"), "io:sync-copy");
    }

    #[test]
    fn clearly_different_schedulers_are_marked_significant() {
        let t = tests_table(&samples()).unwrap();
        assert_eq!(t.rows.len(), COLUMNS.len());
        assert_eq!(t.rows[0][2], "20/20");
        assert!(
            t.rows
                .iter()
                .all(|r| r[4].ends_with("**") && r[6].ends_with("**")),
            "{:?}",
            t.rows[0]
        );
    }

    #[test]
    fn one_scheduler_gives_no_test_and_figures_have_one_box_per_scheduler() {
        let mut one = samples();
        one[0].schedulers.truncate(1);
        one[0].values.truncate(1);
        assert!(tests_table(&one).is_none());
        let figs = figures(&samples(), &[]);
        assert_eq!(figs.len(), COLUMNS.len());
        match &figs[1].plot {
            Plot::Boxes(g) => assert_eq!(g[0].series.len(), 2),
            other => panic!("{other:?}"),
        }
    }
}
