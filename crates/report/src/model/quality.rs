//! How far a run's numbers can be trusted, from its stored trials: the precision an adaptive
//! run reached per cell, the machine's drift over the run (the reference loop before and
//! after every trial, steal), noisy trials (and leaving them out), and RT throttling.

use super::tables::Table;
use super::{trial_values, CellReport, Group, ReportInput};
use schedlab_core::precision::Adaptive;
use schedlab_store::quality::TrialQuality;
use schedlab_store::query::{CellView, RunInfo};
use serde::Serialize;
use std::collections::HashSet;

/// At most this many rows in the drift table: consecutive trials are pooled into segments.
const DRIFT_ROWS: usize = 10;

/// What an adaptive run with a precision asked for, read from its spec as run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    /// Wanted half-width of the 95 % interval, as a fraction of the median (the settings'
    /// precision, which a target always has).
    pub precision: f64,
    /// The run's adaptive settings: key metric and limits.
    pub adaptive: Adaptive,
}

/// The precision one cell reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellPrecision {
    /// "other, cpu:pi with 4 tasks".
    pub label: String,
    /// Its ok trials (the values judged).
    pub trials: usize,
    /// Median of its per-trial key-metric values, in the metric's unit.
    pub median: Option<f64>,
    /// Half-width of the 95 % t-interval relative to the median, percent.
    pub half_width_pct: Option<f64>,
    /// Whether the half-width is within the target.
    pub met: bool,
}

/// Everything the report says about the run's trustworthiness.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Quality {
    /// Every trial's conditions, in run order.
    pub trials: Vec<TrialQuality>,
    /// Noisy trials were left out (`--exclude-noisy`).
    pub exclude_noisy: bool,
    /// Trials left out as noisy.
    pub excluded: usize,
    /// An adaptive run's target, and the precision each cell reached.
    pub precision: Option<(Target, Vec<CellPrecision>)>,
    /// Per cell label with judged trials: (label, judged, throttled).
    pub throttling: Vec<(String, usize, usize)>,
}

/// The target of an adaptive run from its spec as run (`settings.precision` with its limits
/// and key metric), if it asked for a precision and its spec reads.
pub fn target(run: &RunInfo) -> Option<Target> {
    let adaptive = run.spec().ok()?.adaptive()?;
    Some(Target {
        precision: adaptive.precision?,
        adaptive,
    })
}

/// Leaves the trials flagged noisy out of `input`'s cells (their makespans and tasks) and
/// notes it; returns how many ok trials were left out.
pub fn exclude_noisy(input: &mut ReportInput) -> usize {
    let noisy: HashSet<i64> = input
        .quality
        .iter()
        .filter(|t| t.noisy)
        .map(|t| t.trial_id)
        .collect();
    input.exclude_noisy = true;
    input.cells.iter_mut().map(|c| drop_trials(c, &noisy)).sum()
}

/// Removes the ok trials `drop` from `c`; returns how many it had.
fn drop_trials(c: &mut CellView, drop: &HashSet<i64>) -> usize {
    let keep: Vec<bool> = c.trial_ids.iter().map(|id| !drop.contains(id)).collect();
    let removed = keep.iter().filter(|k| !**k).count();
    let pick = |v: &mut Vec<i64>| {
        let mut k = keep.iter();
        v.retain(|_| *k.next().unwrap_or(&true));
    };
    pick(&mut c.makespans_ns);
    pick(&mut c.trial_rounds);
    pick(&mut c.trial_ids);
    c.task_rows.retain(|r| !drop.contains(&r.trial_id));
    c.figures.retain(|f| !drop.contains(&f.trial_id));
    if removed > 0 {
        for (status, n) in &mut c.statuses {
            if status == "ok" {
                *n -= removed as i64;
            }
        }
        c.statuses.push(("noisy, left out".into(), removed as i64));
    }
    removed
}

/// The quality part of the report of `input`, whose cells are `cells` in `groups`.
pub fn build(input: &ReportInput, cells: &[CellReport], groups: &[Group]) -> Quality {
    let label = |i: usize| format!("{}, {}", cells[i].key.policy, groups[cells[i].group].label);
    let precision = target(&input.run).map(|t| {
        let per_cell = input
            .cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let values = super::trials::values(&trial_values(c)[t.adaptive.metric.index()]);
                // The rule the run stopped on: a confidence sequence, in trial order.
                let p = schedlab_analyze::sequential_precision(
                    &values,
                    t.precision,
                    schedlab_analyze::SEQUENCE_ALPHA,
                );
                CellPrecision {
                    label: label(i),
                    trials: values.len(),
                    median: p
                        .map(|p| p.median)
                        .or_else(|| schedlab_analyze::median(&values)),
                    half_width_pct: p
                        .map(|p| p.relative_half_width * 100.0)
                        .filter(|h| h.is_finite()),
                    met: p.is_some_and(|p| p.within),
                }
            })
            .collect();
        (t, per_cell)
    });
    let throttling = input
        .cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let judged: Vec<bool> = input
                .quality
                .iter()
                .filter(|t| t.cell_index == c.cell_index)
                .filter_map(|t| t.rt_throttled)
                .collect();
            let hit = judged.iter().filter(|&&b| b).count();
            (!judged.is_empty()).then(|| (label(i), judged.len(), hit))
        })
        .collect();
    Quality {
        trials: input.quality.clone(),
        exclude_noisy: input.exclude_noisy,
        excluded: if input.exclude_noisy {
            input.quality.iter().filter(|t| t.noisy).count()
        } else {
            0
        },
        precision,
        throttling,
    }
}

/// "0.98 [0.91, 1.02]": median and range of `v`, or "-".
fn spread(v: &[f64]) -> String {
    let Some(m) = schedlab_analyze::median(v) else {
        return "-".into();
    };
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{m:.2} [{lo:.2}, {hi:.2}]")
}

/// Per cell: trials, median, the 95 % CI's half-width and whether the target was met.
pub fn precision_table(q: &Quality) -> Option<Table> {
    let (t, cells) = q.precision.as_ref()?;
    let rows = cells
        .iter()
        .map(|c| {
            vec![
                c.label.clone(),
                c.trials.to_string(),
                c.median
                    .map_or("-".into(), |m| super::fmt_with_unit(m, t.adaptive.metric)),
                c.half_width_pct
                    .map_or("unbounded".into(), |h| format!("±{h:.2}%")),
                if c.met { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    Some(Table {
        title: format!(
            "Precision of the adaptive run: {} per trial, target ±{}% of the median (95% confidence sequence of the median, unbounded below 10 trials), {}..{} trials",
            t.adaptive.metric.label(),
            t.precision * 100.0,
            t.adaptive.min_trials,
            t.adaptive.max_trials
        ),
        header: ["cell", "trials", "median", "95% CI", "met"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// The machine's drift over the run: the reference speed before and after the trials and
/// the steal during them, over consecutive segments of trials in run order.
pub fn drift_table(q: &Quality) -> Option<Table> {
    let measured: Vec<&TrialQuality> = q
        .trials
        .iter()
        .filter(|t| t.speed_before.is_some() || t.speed_after.is_some())
        .collect();
    if measured.is_empty() {
        return None;
    }
    let size = measured.len().div_ceil(DRIFT_ROWS);
    let rows = measured
        .chunks(size)
        .enumerate()
        .map(|(i, seg)| {
            let col = |f: fn(&TrialQuality) -> Option<f64>| -> Vec<f64> {
                seg.iter().filter_map(|t| f(t)).collect()
            };
            let steal = col(|t| t.steal_pct);
            let rounds = (
                seg.iter().map(|t| t.round).min().unwrap_or(0),
                seg.iter().map(|t| t.round).max().unwrap_or(0),
            );
            vec![
                format!("{}-{}", i * size + 1, i * size + seg.len()),
                if rounds.0 == rounds.1 {
                    rounds.0.to_string()
                } else {
                    format!("{}-{}", rounds.0, rounds.1)
                },
                spread(&col(|t| t.speed_before)),
                spread(&col(|t| t.speed_after)),
                schedlab_analyze::median(&steal).map_or("-".into(), |m| {
                    let max = steal.iter().copied().fold(0.0, f64::max);
                    format!("{m:.1} (max {max:.1})")
                }),
                seg.iter().filter(|t| t.noisy).count().to_string(),
            ]
        })
        .collect();
    Some(Table {
        title: "Drift over the run: reference-loop speed just before and after the trials (median [min, max]; 1 = as calibrated), steal on their CPUs (%), trials flagged noisy (speed over 10% off)".into(),
        header: ["trials", "rounds", "speed before", "speed after", "steal %", "noisy"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// Per cell with CPU-bound RT tasks: trials judged and trials throttled.
pub fn throttling_table(q: &Quality) -> Option<Table> {
    if !q.throttling.iter().any(|(_, _, hit)| *hit > 0) {
        return None;
    }
    Some(Table {
        title: "RT throttling: trials in which the kernel's RT budget (sched_rt_runtime_us per sched_rt_period_us) stopped the CPU-bound RT tasks; their turnarounds include the throttled time".into(),
        header: ["cell", "trials judged", "throttled"].map(String::from).to_vec(),
        rows: q
            .throttling
            .iter()
            .map(|(l, n, hit)| vec![l.clone(), n.to_string(), hit.to_string()])
            .collect(),
    })
}

/// The quality tables that have data: precision, drift, throttling.
pub fn tables(q: &Quality) -> Vec<Table> {
    [precision_table(q), drift_table(q), throttling_table(q)]
        .into_iter()
        .flatten()
        .collect()
}

/// Warnings about the run as a whole: noisy trials kept or left out, throttled trials, cells
/// short of an adaptive run's precision.
pub fn warnings(q: &Quality) -> Vec<String> {
    let mut out = Vec::new();
    let noisy = q.trials.iter().filter(|t| t.noisy).count();
    let measured = q.trials.iter().filter(|t| t.speed_before.is_some()).count();
    if noisy > 0 && !q.exclude_noisy {
        out.push(format!(
            "{noisy} of {measured} trials were flagged noisy (the reference loop ran more than 10% off its calibrated speed before or after them) and are included; --exclude-noisy leaves them out."
        ));
    }
    let throttled: usize = q.throttling.iter().map(|(_, _, hit)| hit).sum();
    if throttled > 0 {
        out.push(format!(
            "{throttled} trials were cut short by RT throttling (the kernel's RT budget per CPU); their RT tasks' turnarounds include throttled time (table \"RT throttling\")."
        ));
    }
    if let Some((t, cells)) = &q.precision {
        let short: Vec<&str> = cells
            .iter()
            .filter(|c| !c.met && c.trials > 0)
            .map(|c| c.label.as_str())
            .collect();
        if !short.is_empty() {
            out.push(format!(
                "{} did not reach ±{}% precision of their {}: {}.",
                match short.len() {
                    1 => "1 cell".to_string(),
                    n => format!("{n} cells"),
                },
                t.precision * 100.0,
                t.adaptive.metric.label(),
                short.join("; ")
            ));
        }
    }
    out
}

/// The methods section's sentences on noise, exclusion and adaptive trial counts.
pub fn notes(q: &Quality) -> Vec<String> {
    let mut out = Vec::new();
    if q.trials.iter().any(|t| t.speed_before.is_some()) {
        out.push("Noise: just before and just after every trial, schedlab runs a reference loop of spin units (6 chunks of about 0.5 ms on each of the trial's CPUs, at most 4; the median chunk per CPU, the slowest CPU) outside the measured region and stores its speed relative to the loop's own calibration (1 = as calibrated), and the steal share of the trial's CPUs during the trial. A trial whose speed before or after is more than 10% off is flagged noisy. This is speed drift (frequency, steal, a slower machine): the loop's median chunk ignores preemption by design, so it does not see other work sharing the trial's CPUs; that interference is measured apart (outside CPU time, the disturbed flag).".into());
    }
    if q.exclude_noisy {
        out.push(format!(
            "Noisy trials are left out (--exclude-noisy): {} flagged noisy {} in no summary, test or comparison (the latency histograms and traces still include them).",
            match q.excluded {
                1 => "1 trial".to_string(),
                n => format!("{n} trials"),
            },
            if q.excluded == 1 { "is" } else { "are" }
        ));
    }
    if let Some((t, _)) = &q.precision {
        out.push(format!(
            "Adaptive trial count (per-trial {}): after the first {} rounds, whole rounds (every cell once, shuffled) were added until the target was met, or the time limit was near. {} The precision table recomputes this from the stored trials.",
            t.adaptive.metric.label(),
            t.adaptive.min_trials,
            schedlab_analyze::AnytimeStoppingRule {
                min_trials: t.adaptive.min_trials.max(2) as usize,
                max_trials: t.adaptive.max_trials.max(2) as usize,
                precision: t.precision,
                alpha: schedlab_analyze::SEQUENCE_ALPHA,
            }
            .methods_text(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::metric::Metric;
    use schedlab_store::query::TaskRow;

    #[test]
    fn the_target_is_read_from_the_spec_as_run() {
        let run = |spec: &str| RunInfo {
            spec_toml: spec.into(),
            ..RunInfo::default()
        };
        let t = target(&run("[settings]\ntrials = 3\nprecision = \"2%\"\nprecision_metric = \"turnaround\"\nmax_trials = 20\n")).unwrap();
        assert_eq!(t.precision, 0.02);
        assert_eq!(t.adaptive.metric, Metric::Turnaround);
        assert_eq!((t.adaptive.min_trials, t.adaptive.max_trials), (3, 20));
        assert_eq!(target(&run("[settings]\ntrials = 3\n")), None);
        // A spec this version cannot read has no target (the report warns about it).
        assert_eq!(
            target(&run("[settings]\nprecision = \"2%\"\nquantum = 1\n")),
            None
        );
    }

    #[test]
    fn excluding_noisy_trials_drops_their_makespans_and_tasks() {
        let row = |trial_id| TaskRow {
            trial_id,
            ..TaskRow::default()
        };
        let mut c = CellView {
            statuses: vec![("ok".into(), 3)],
            makespans_ns: vec![10, 20, 30],
            trial_rounds: vec![0, 1, 2],
            trial_ids: vec![7, 8, 9],
            task_rows: vec![row(7), row(8), row(8), row(9)],
            ..CellView::default()
        };
        assert_eq!(drop_trials(&mut c, &[8].into()), 1);
        assert_eq!(c.makespans_ns, vec![10, 30]);
        assert_eq!(c.trial_rounds, vec![0, 2]);
        assert_eq!(c.task_rows.len(), 2);
        assert_eq!(c.count("ok"), 2);
        assert_eq!(c.count("noisy, left out"), 1);
    }

    #[test]
    fn the_drift_table_pools_consecutive_trials_into_at_most_ten_rows() {
        let trials: Vec<TrialQuality> = (0..25)
            .map(|i| TrialQuality {
                trial_id: i,
                round: i / 5,
                speed_before: Some(1.0 - i as f64 / 100.0),
                speed_after: Some(1.0),
                steal_pct: Some(2.0),
                noisy: i == 24,
                ..TrialQuality::default()
            })
            .collect();
        let q = Quality {
            trials,
            ..Quality::default()
        };
        let t = drift_table(&q).unwrap();
        assert_eq!(t.rows.len(), 9, "25 trials in segments of 3");
        assert_eq!(t.rows[0][0], "1-3");
        assert_eq!(t.rows[0][2], "0.99 [0.98, 1.00]");
        assert_eq!(
            t.rows[8],
            [
                "25-25",
                "4",
                "0.76 [0.76, 0.76]",
                "1.00 [1.00, 1.00]",
                "2.0 (max 2.0)",
                "1"
            ]
        );
        assert!(warnings(&q)[0].starts_with("1 of 25 trials were flagged noisy"));
        assert!(drift_table(&Quality::default()).is_none());
    }
}
