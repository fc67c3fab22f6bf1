//! Study 004's analysis: the system-wide samples (vmstat's columns and PSI) per I/O scheduler,
//! one box plot of the pooled samples per column and a one-way ANOVA / Kruskal-Wallis table
//! across the schedulers on per-trial means (the samples of one trial, 100 ms apart, are not
//! independent; the trial is the unit of replication).

use super::plot_data::{BoxGroup, Figure, Plot};
use super::Panel;
use schedlab_analyze::{anova_oneway, kruskal_wallis, TestResult, ALPHAS};
use schedlab_store::kernel::SchedulerSample;
use std::collections::BTreeMap;

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
    /// `values[s][c]`: every sample of column `c` under scheduler `s`, pooled over its trials
    /// (for the box plots only).
    pub values: Vec<Vec<Vec<f64>>>,
    /// `trial_means[s][c]`: one value per trial of scheduler `s` (in trial id order) that has
    /// samples of column `c`: the mean of that trial's samples. The tests use these.
    pub trial_means: Vec<Vec<Vec<f64>>>,
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

/// Groups stored samples per (pooled) workload, scheduler and column, and averages each
/// trial's samples per column; `rows` hold the [`COLUMNS`] in order.
pub fn build(rows: &[SchedulerSample]) -> Vec<SchedulerSamples> {
    let mut out: Vec<SchedulerSamples> = Vec::new();
    // (workload, scheduler, trial id) -> per column (sum, samples).
    let mut sums: BTreeMap<(usize, usize, i64), Vec<(f64, usize)>> = BTreeMap::new();
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
        let trial = sums
            .entry((wi, si, r.trial_id))
            .or_insert_with(|| vec![(0.0, 0); COLUMNS.len()]);
        for (c, v) in r.values.iter().enumerate().take(COLUMNS.len()) {
            if let Some(v) = v {
                ws.values[si][c].push(*v);
                trial[c].0 += *v;
                trial[c].1 += 1;
            }
        }
    }
    for w in &mut out {
        w.trial_means = vec![vec![Vec::new(); COLUMNS.len()]; w.schedulers.len()];
    }
    for ((wi, si, _trial), cols) in sums {
        for (c, (sum, n)) in cols.into_iter().enumerate() {
            if n > 0 {
                out[wi].trial_means[si][c].push(sum / n as f64);
            }
        }
    }
    out
}

/// The names of [`COLUMNS`], to read them from the store.
pub fn column_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(c, _)| *c).collect()
}

/// How far below the alphas ([`ALPHAS`]) a p-value lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Significance {
    /// p >= 0.05.
    None,
    /// 0.01 <= p < 0.05.
    Alpha05,
    /// p < 0.01.
    Alpha01,
}

impl Significance {
    /// The level `p` reaches.
    pub fn of(p: f64) -> Significance {
        if p < ALPHAS.1 {
            Significance::Alpha01
        } else if p < ALPHAS.0 {
            Significance::Alpha05
        } else {
            Significance::None
        }
    }
}

/// One test's result in the tests table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tested {
    /// The statistic (F or H).
    pub statistic: f64,
    /// Its p-value, unadjusted.
    pub p: f64,
    /// The level p reaches.
    pub significance: Significance,
}

impl Tested {
    fn of(t: &TestResult) -> Tested {
        Tested {
            statistic: t.statistic,
            p: t.p_value,
            significance: Significance::of(t.p_value),
        }
    }
}

/// One workload and column of the tests across schedulers.
#[derive(Debug, Clone, PartialEq)]
pub struct IoTestRow {
    /// Workload label (pooled, [`SchedulerSamples::workload`]).
    pub workload: String,
    /// Index of the column in [`COLUMNS`].
    pub column: usize,
    /// Trials with the column per scheduler, in scheduler order.
    pub trials: Vec<usize>,
    /// One-way ANOVA on the per-trial means; `None` where it cannot run.
    pub anova: Option<Tested>,
    /// Kruskal-Wallis on the per-trial means; `None` where it cannot run.
    pub kruskal: Option<Tested>,
    /// Pooled samples of the column per scheduler, in scheduler order.
    pub samples: Vec<usize>,
}

/// ANOVA and Kruskal-Wallis across the schedulers of `w` on column `c`'s per-trial means
/// (n = trials per scheduler); `None` where a test cannot run (e.g. one trial per scheduler).
pub fn column_tests(w: &SchedulerSamples, c: usize) -> (Option<TestResult>, Option<TestResult>) {
    let groups: Vec<&[f64]> = w.trial_means.iter().map(|v| v[c].as_slice()).collect();
    (anova_oneway(&groups), kruskal_wallis(&groups))
}

/// One row per workload with two schedulers or more and column: ANOVA and Kruskal-Wallis
/// across schedulers on the per-trial means of the column (empty: no workload has two
/// schedulers).
pub fn tests(all: &[SchedulerSamples]) -> Vec<IoTestRow> {
    let mut rows = Vec::new();
    for w in all.iter().filter(|w| w.schedulers.len() >= 2) {
        for c in 0..COLUMNS.len() {
            let (a, k) = column_tests(w, c);
            let count = |v: &[Vec<Vec<f64>>]| v.iter().map(|g| g[c].len()).collect();
            rows.push(IoTestRow {
                workload: w.workload.clone(),
                column: c,
                trials: count(&w.trial_means),
                anova: a.as_ref().map(Tested::of),
                kruskal: k.as_ref().map(Tested::of),
                samples: count(&w.values),
            });
        }
    }
    rows
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
                title: format!("{}: {label} per I/O scheduler (pooled samples)", w.workload),
                caption: format!("Pooled samples: every system-wide sample of {label} taken during the trials, all trials together, per block-device I/O scheduler (study 004's box plots). Samples within a trial are not independent; the tests use per-trial means."),
                x_label: "I/O scheduler".into(),
                y_label: label.to_string(),
                plot: Plot::Boxes(vec![BoxGroup::of(w.workload.clone(), series)]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored rows: per scheduler, one trial per level, `per_trial` samples each, every
    /// column `level + 0.01 * ((7 i) mod 11)` for sample i (nearly constant within a trial).
    fn rows(levels: &[(&str, [f64; 3])], per_trial: usize) -> Vec<SchedulerSample> {
        let mut out = Vec::new();
        let mut trial_id = 0;
        for (scheduler, ls) in levels {
            for level in ls {
                trial_id += 1;
                for i in 0..per_trial {
                    let v = level + 0.01 * ((7 * i) % 11) as f64;
                    out.push(SchedulerSample {
                        trial_id,
                        workload: "io:sync-copy".into(),
                        io_scheduler: scheduler.to_string(),
                        values: vec![Some(v); COLUMNS.len()],
                    });
                }
            }
        }
        out
    }

    fn samples() -> Vec<SchedulerSamples> {
        build(&rows(
            &[("none", [0.0, 0.1, 0.2]), ("bfq", [10.0, 10.1, 10.2])],
            20,
        ))
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
        let t = tests(&samples());
        assert_eq!(t.len(), COLUMNS.len());
        assert_eq!(t[0].trials, vec![3, 3], "trials per scheduler");
        assert_eq!(t[0].samples, vec![60, 60], "samples per scheduler");
        // ANOVA on 3 vs 3 trial means this far apart: p < 0.01; Kruskal-Wallis on 3 vs 3
        // cannot go below 0.0495 (its chi-squared approximation), so it reaches 0.05 only.
        assert!(
            t.iter().all(|r| {
                r.anova.map(|a| a.significance) == Some(Significance::Alpha01)
                    && r.kruskal.map(|k| k.significance) == Some(Significance::Alpha05)
            }),
            "{:?}",
            t[0]
        );
    }

    #[test]
    fn correlated_samples_are_tested_on_trial_means_as_scipy_does() {
        // Three schedulers, 3 trials x 50 samples each; the trials' levels interleave (0, 3, 6
        // / 1, 4, 7 / 2, 5, 8) and samples within a trial barely move.
        let w = build(&rows(
            &[
                ("none", [0.0, 3.0, 6.0]),
                ("mq-deadline", [1.0, 4.0, 7.0]),
                ("bfq", [2.0, 5.0, 8.0]),
            ],
            50,
        ));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].trial_means[1][0].len(), 3);
        assert!((w[0].trial_means[1][0][0] - 1.0496).abs() < 1e-12);
        // Testing every sample as if independent (what this table did before): scipy's
        // f_oneway and kruskal on the 150 pooled samples per scheduler give F = 24.829,
        // p = 5.95e-11 and H = 44.35, p = 2.34e-10.
        let pooled: Vec<&[f64]> = w[0].values.iter().map(|v| v[0].as_slice()).collect();
        assert!(anova_oneway(&pooled).unwrap().p_value < 1e-9);
        assert!(kruskal_wallis(&pooled).unwrap().p_value < 1e-9);
        // On the trial means, the references are (scipy 1.17.1):
        //   m = [[l + 0.0496 for l in ls] for ls in ([0,3,6], [1,4,7], [2,5,8])]
        //   scipy.stats.f_oneway(*m) -> F = 0.3333333333333336, p = 0.7289999999999999
        //   scipy.stats.kruskal(*m)  -> H = 0.8000000000000007, p = 0.6703200460356391
        for c in 0..COLUMNS.len() {
            let (a, k) = column_tests(&w[0], c);
            let (a, k) = (a.unwrap(), k.unwrap());
            assert!((a.statistic - 0.3333333333333336).abs() < 1e-9, "{a:?}");
            assert!((a.p_value - 0.7289999999999999).abs() < 1e-9, "{a:?}");
            assert!((k.statistic - 0.8000000000000007).abs() < 1e-9, "{k:?}");
            assert!((k.p_value - 0.6703200460356391).abs() < 1e-9, "{k:?}");
        }
        let t = tests(&w);
        assert_eq!(t[0].trials, vec![3, 3, 3]);
        assert_eq!((t[0].workload.as_str(), t[0].column), ("io:sync-copy", 0));
        let (a, k) = (t[0].anova.unwrap(), t[0].kruskal.unwrap());
        assert!((a.p - 0.7289999999999999).abs() < 1e-9, "{a:?}");
        assert!((k.p - 0.6703200460356391).abs() < 1e-9, "{k:?}");
        assert_eq!(a.significance, Significance::None);
    }

    #[test]
    fn p_values_reach_the_alphas_strictly_below_them() {
        assert_eq!(Significance::of(0.05), Significance::None);
        assert_eq!(Significance::of(0.0499), Significance::Alpha05);
        assert_eq!(Significance::of(0.01), Significance::Alpha05);
        assert_eq!(Significance::of(0.0099), Significance::Alpha01);
    }

    #[test]
    fn a_trial_mean_averages_only_the_samples_that_have_the_column() {
        let mut r = rows(&[("none", [1.0, 2.0, 3.0]), ("bfq", [4.0, 5.0, 6.0])], 4);
        // Trial 1's samples of column 0: 1.0, 1.07, 1.03, 1.10; drop the last two.
        r[2].values[0] = None;
        r[3].values[0] = None;
        let w = build(&r);
        assert!((w[0].trial_means[0][0][0] - 1.035).abs() < 1e-12);
        assert!((w[0].trial_means[0][1][0] - 1.05).abs() < 1e-12);
        assert_eq!(w[0].values[0][0].len(), 10);
    }

    #[test]
    fn one_scheduler_gives_no_test_and_figures_have_one_box_per_scheduler_of_pooled_samples() {
        let mut one = samples();
        one[0].schedulers.truncate(1);
        one[0].values.truncate(1);
        one[0].trial_means.truncate(1);
        assert!(tests(&one).is_empty());
        let figs = figures(&samples(), &[]);
        assert_eq!(figs.len(), COLUMNS.len());
        assert!(
            figs[1].title.ends_with("(pooled samples)"),
            "{}",
            figs[1].title
        );
        match &figs[1].plot {
            Plot::Boxes(g) => {
                assert_eq!(g[0].series.len(), 2);
                assert_eq!(g[0].series[0].1.as_ref().map(|b| b.n), Some(60));
            }
            other => panic!("{other:?}"),
        }
    }
}
