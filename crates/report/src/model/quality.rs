//! How far a run's numbers can be trusted, from its stored trials: the precision an adaptive
//! run reached per cell, the machine's drift over the run (the reference loop before and
//! after every trial, steal), noisy trials (and leaving them out), and RT throttling.

use super::tables::Table;
use super::{trial_values, CellReport, Group, ReportInput};
use schedlab_core::precision::Adaptive;
use schedlab_core::records::TrialStatus;
use schedlab_store::quality::TrialQuality;
use schedlab_store::query::{CellView, LeftOut, RunInfo, Tally};
use serde::Serialize;
use std::collections::HashSet;

/// How interference, in-trial speed and re-runs are measured and used, for the methods.
const INTERFERENCE_NOTE: &str = "Interference: at each trial's boundaries (outside the measured region) schedlab reads its CPUs' busy time (cgroup cpuacct per CPU in ns where there is no /proc/schedstat) and the process table (each process's CPU time: ns per live thread from its schedstat, 10 ms ticks for ended threads and for children reaped, known by pid and start time; kernel threads by PF_KTHREAD), and the CPUs' interrupt ticks (/proc/stat, 10 ms; tick samples unless the kernel accounts interrupt time). Outside CPU time is split into other processes (the smaller of the busy time left after the kernel's and those processes' own CPU time), kernel threads (per-CPU ones on their CPU, unbound ones by their share of CPUs) and interrupts. Kernel threads' and interrupts' work beyond the rate of the 100 ms settle window before the trial is the trial's own kernel cost (kernel_cpu_ns), not disturbance; a trial is disturbed when other processes took more than 10% of its CPUs' time. For calibrated CPU work each trial also stores its in-trial speed (its tasks' units per CPU second against the calibration): a trial more than 10% slower than the run's steady in-trial speed (the median of its cell's, of the run's for a cell's first trials) is slowed, a slowdown no busy-time counter shows. A disturbed or slowed trial is run again at the end of its round, up to --retries times (default 2), and kept, flagged; summaries and verdicts use one clean attempt per trial, so rounds stay complete and paired.";

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
    /// The trials left out of verdicts and summaries, by reason.
    pub left_out: Excluded,
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
    input
        .cells
        .iter_mut()
        .map(|c| drop_trials(c, &noisy, LeftOut::Noisy))
        .sum()
}

/// The stored trials verdicts and summaries leave out, by reason. Each planned trial (run,
/// cell, trial index) keeps at most one of its attempts: the first that is ok and clean
/// (neither disturbed nor slowed, unless `--include-disturbed` or `--include-slowed` keep
/// such), so a round keeps one trial per cell and stays paired; every other ok attempt is left
/// out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Excluded {
    /// Every ok trial left out.
    pub ids: HashSet<i64>,
    /// Left out as disturbed (other processes above the threshold).
    pub disturbed: HashSet<i64>,
    /// Left out as slowed (calibrated work more than 10 % slower than the run's steady speed).
    pub slowed: HashSet<i64>,
    /// Left out because another attempt at the same trial is used (a re-run of a trial the
    /// flags keep, or a later one of a trial with a clean re-run).
    pub superseded: HashSet<i64>,
    /// Trials run again because they were contaminated (kept, flagged).
    pub retried: usize,
    /// Disturbed trials were kept (`--include-disturbed`).
    pub include_disturbed: bool,
    /// Slowed trials were kept (`--include-slowed`).
    pub include_slowed: bool,
}

/// Which of `input`'s stored trials verdicts and summaries leave out (see [`Excluded`]); the
/// one place that decides it.
pub fn excluded_trials(
    input: &ReportInput,
    include_disturbed: bool,
    include_slowed: bool,
) -> Excluded {
    excluded_of(&input.quality, include_disturbed, include_slowed)
}

/// [`excluded_trials`] of the trials `quality`.
pub fn excluded_of(
    quality: &[TrialQuality],
    include_disturbed: bool,
    include_slowed: bool,
) -> Excluded {
    let usable = |q: &TrialQuality| {
        q.status == TrialStatus::Ok
            && (include_disturbed || !q.disturbed)
            && (include_slowed || q.slowed != Some(true))
    };
    let mut slots: std::collections::BTreeMap<(i64, i64, i64), Vec<&TrialQuality>> =
        std::collections::BTreeMap::new();
    for q in quality {
        slots
            .entry((q.run_id, q.cell_index, q.trial_index))
            .or_default()
            .push(q);
    }
    let mut ex = Excluded {
        retried: quality.iter().filter(|q| q.retried).count(),
        include_disturbed,
        include_slowed,
        ..Excluded::default()
    };
    for attempts in slots.values_mut() {
        attempts.sort_by_key(|q| (q.retry, q.trial_id));
        let kept = attempts.iter().position(|q| usable(q));
        for (i, q) in attempts.iter().enumerate() {
            if Some(i) == kept || q.status != TrialStatus::Ok {
                continue;
            }
            ex.ids.insert(q.trial_id);
            let why = if usable(q) {
                &mut ex.superseded
            } else if q.disturbed && !include_disturbed {
                &mut ex.disturbed
            } else {
                &mut ex.slowed
            };
            why.insert(q.trial_id);
        }
    }
    ex
}

/// `input` as summaries see it: the trials [`excluded_trials`] names (under its claims
/// request's `include_*` flags) left out of its cells, each cell's statuses counting them.
pub fn clean(input: &ReportInput) -> ReportInput {
    let ex = excluded_trials(
        input,
        input.claims.include_disturbed,
        input.claims.include_slowed,
    );
    let mut out = input.clone();
    for c in &mut out.cells {
        drop_trials(c, &ex.disturbed, LeftOut::Disturbed);
        drop_trials(c, &ex.slowed, LeftOut::Slowed);
        drop_trials(c, &ex.superseded, LeftOut::Rerun);
    }
    out
}

/// `cells` of a run whose trials are `quality` as summaries see them by default ([`clean`]),
/// and what was left out: the table after a run, an adaptive run's judge.
pub fn clean_cells(cells: Vec<CellView>, quality: Vec<TrialQuality>) -> (Vec<CellView>, Excluded) {
    let input = ReportInput {
        cells,
        quality,
        ..ReportInput::default()
    };
    (clean(&input).cells, excluded_trials(&input, false, false))
}

/// One line on what [`clean_cells`] left out, or None.
pub fn left_out_line(ex: &Excluded) -> Option<String> {
    left_out_warning(ex)
}

/// Removes the ok trials `drop` from `c`, counted in its statuses as left out `why`; returns
/// how many it had.
fn drop_trials(c: &mut CellView, drop: &HashSet<i64>, why: LeftOut) -> usize {
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
            if *status == Tally::Status(TrialStatus::Ok) {
                *n -= removed as i64;
            }
        }
        c.statuses.push((Tally::LeftOut(why), removed as i64));
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
                    schedlab_analyze::ALPHA,
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
        left_out: excluded_trials(
            input,
            input.claims.include_disturbed,
            input.claims.include_slowed,
        ),
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
                spread(&col(|t| t.speed_steady)),
                schedlab_analyze::median(&steal).map_or("-".into(), |m| {
                    let max = steal.iter().copied().fold(0.0, f64::max);
                    format!("{m:.1} (max {max:.1})")
                }),
                seg.iter().filter(|t| t.noisy).count().to_string(),
            ]
        })
        .collect();
    Some(Table {
        title: "Drift over the run: reference-loop speed just before and after the trials and the run's steady speed (median [min, max]; 1 = as calibrated), steal on their CPUs (%), trials flagged noisy (speed over 10% off the steady speed)".into(),
        header: ["trials", "rounds", "speed before", "speed after", "steady", "steal %", "noisy"]
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
            "{noisy} of {measured} trials were flagged noisy (the reference loop ran more than 10% off the run's steady speed before or after them) and are included; --exclude-noisy leaves them out."
        ));
    }
    out.extend(left_out_warning(&q.left_out));
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

/// How many trials were run again and how many are left out of summaries and verdicts, and
/// why; None when none was either.
fn left_out_warning(ex: &Excluded) -> Option<String> {
    if ex.ids.is_empty() && ex.retried == 0 {
        return None;
    }
    let mut why = Vec::new();
    for (set, what) in [
        (&ex.disturbed, "disturbed (other processes above 10% of their CPUs' time; --include-disturbed keeps them)"),
        (&ex.slowed, "slowed (calibrated work over 10% slower than the run's steady in-trial speed; --include-slowed keeps them)"),
        (&ex.superseded, "attempts not used (another attempt at the same trial is)"),
    ] {
        if !set.is_empty() {
            why.push(format!("{} {what}", set.len()));
        }
    }
    Some(format!(
        "{} contaminated trials were run again at the end of their rounds (kept, flagged); {} trials are left out of summaries and verdicts{}{}.",
        ex.retried,
        ex.ids.len(),
        if why.is_empty() { "" } else { ": " },
        why.join("; ")
    ))
}

/// The methods section's sentences on noise, exclusion and adaptive trial counts.
pub fn notes(q: &Quality) -> Vec<String> {
    let mut out = Vec::new();
    if q.trials.iter().any(|t| t.speed_before.is_some()) {
        out.push("Noise: just before and just after every trial, schedlab runs a reference loop of spin units (6 chunks of about 0.5 ms on each of the trial's CPUs, at most 4; the median chunk per CPU, the slowest CPU) outside the measured region and stores its speed relative to the loop's own calibration (1 = as calibrated; the calibration is the 90% quantile of 10 measurements of every CPU spread over about 2 s, its spread stored), and the steal share of the trial's CPUs during the trial. A trial whose speed before or after is more than 10% off the run's steady speed (the median of its reference speeds so far, stored with each trial as speed_steady against the calibration) is flagged noisy. This is speed drift (frequency, steal, a slower machine): the loop's median chunk ignores preemption by design, so it does not see other work sharing the trial's CPUs; that interference is measured apart.".into());
        out.push(INTERFERENCE_NOTE.into());
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
                alpha: schedlab_analyze::ALPHA,
            }
            .methods_text(),
        ));
    }
    out
}

#[cfg(test)]
#[path = "quality_tests.rs"]
mod tests;
