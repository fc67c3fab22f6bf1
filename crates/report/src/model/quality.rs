//! How far a run's numbers can be trusted, from its stored trials: the precision an adaptive
//! run reached per cell, the machine's drift over the run (the reference loop before and
//! after every trial, steal), noisy trials (and leaving them out), and RT throttling.

use super::warning::{CellName, LeftOut, MethodNote, Warning};
use super::{trial_values, CellReport, Group, ReportInput};
use schedlab_core::precision::Adaptive;
use schedlab_core::records::TrialStatus;
use schedlab_store::quality::TrialQuality;
use schedlab_store::query::{CellView, LeftOut as Reason, RunInfo, Tally};
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
    /// The cell.
    pub label: CellName,
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
    /// Per cell with judged trials: (cell, judged, throttled).
    pub throttling: Vec<(CellName, usize, usize)>,
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
        .map(|c| drop_trials(c, &noisy, Reason::Noisy))
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
        drop_trials(c, &ex.disturbed, Reason::Disturbed);
        drop_trials(c, &ex.slowed, Reason::Slowed);
        drop_trials(c, &ex.superseded, Reason::Rerun);
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

/// Removes the ok trials `drop` from `c`, counted in its statuses as left out `why`; returns
/// how many it had.
fn drop_trials(c: &mut CellView, drop: &HashSet<i64>, why: Reason) -> usize {
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
    let label = |i: usize| CellName {
        policy: cells[i].key.policy.clone(),
        group: groups[cells[i].group].label.clone(),
    };
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

/// A sample's median and range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

/// The median and range of `v`; `None` when it is empty.
fn spread(v: &[f64]) -> Option<Spread> {
    Some(Spread {
        median: schedlab_analyze::median(v)?,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Consecutive trials of the run (in run order, those with a reference speed), pooled: one
/// row of the drift table.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftSegment {
    /// The first trial's position among the measured trials, from 1.
    pub first: usize,
    /// The last trial's position, from 1.
    pub last: usize,
    /// The first and last round of the segment's trials.
    pub rounds: (i64, i64),
    /// Reference-loop speed just before the trials (1 = as calibrated).
    pub speed_before: Option<Spread>,
    /// Reference-loop speed just after the trials.
    pub speed_after: Option<Spread>,
    /// The run's steady speed stored with the trials.
    pub speed_steady: Option<Spread>,
    /// Steal on the trials' CPUs, percent: median and largest.
    pub steal_pct: Option<(f64, f64)>,
    /// Trials flagged noisy.
    pub noisy: usize,
}

/// The machine's drift over the run: the reference speed before and after the trials and the
/// steal during them, over at most [`DRIFT_ROWS`] segments of consecutive trials in run order;
/// empty when no trial has a reference speed.
pub fn drift(q: &Quality) -> Vec<DriftSegment> {
    let measured: Vec<&TrialQuality> = q
        .trials
        .iter()
        .filter(|t| t.speed_before.is_some() || t.speed_after.is_some())
        .collect();
    if measured.is_empty() {
        return Vec::new();
    }
    let size = measured.len().div_ceil(DRIFT_ROWS);
    measured
        .chunks(size)
        .enumerate()
        .map(|(i, seg)| {
            let col = |f: fn(&TrialQuality) -> Option<f64>| -> Vec<f64> {
                seg.iter().filter_map(|t| f(t)).collect()
            };
            let steal = col(|t| t.steal_pct);
            DriftSegment {
                first: i * size + 1,
                last: i * size + seg.len(),
                rounds: (
                    seg.iter().map(|t| t.round).min().unwrap_or(0),
                    seg.iter().map(|t| t.round).max().unwrap_or(0),
                ),
                speed_before: spread(&col(|t| t.speed_before)),
                speed_after: spread(&col(|t| t.speed_after)),
                speed_steady: spread(&col(|t| t.speed_steady)),
                steal_pct: schedlab_analyze::median(&steal)
                    .map(|m| (m, steal.iter().copied().fold(0.0, f64::max))),
                noisy: seg.iter().filter(|t| t.noisy).count(),
            }
        })
        .collect()
}

/// Warnings about the run as a whole: noisy trials kept or left out, throttled trials, cells
/// short of an adaptive run's precision.
pub fn warnings(q: &Quality) -> Vec<Warning> {
    let mut out = Vec::new();
    let noisy = q.trials.iter().filter(|t| t.noisy).count();
    let measured = q.trials.iter().filter(|t| t.speed_before.is_some()).count();
    if noisy > 0 && !q.exclude_noisy {
        out.push(Warning::Noisy { noisy, measured });
    }
    out.extend(left_out(&q.left_out).map(Warning::LeftOut));
    let throttled: usize = q.throttling.iter().map(|(_, _, hit)| hit).sum();
    if throttled > 0 {
        out.push(Warning::Throttled(throttled));
    }
    if let Some((t, cells)) = &q.precision {
        let short: Vec<CellName> = cells
            .iter()
            .filter(|c| !c.met && c.trials > 0)
            .map(|c| c.label.clone())
            .collect();
        if !short.is_empty() {
            out.push(Warning::ShortOfPrecision {
                cells: short,
                precision: t.precision,
                metric: t.adaptive.metric,
            });
        }
    }
    out
}

/// How many trials were run again and how many are left out of summaries and verdicts, and
/// why; None when none was either.
pub fn left_out(ex: &Excluded) -> Option<LeftOut> {
    (!ex.ids.is_empty() || ex.retried > 0).then_some(LeftOut {
        retried: ex.retried,
        left_out: ex.ids.len(),
        disturbed: ex.disturbed.len(),
        slowed: ex.slowed.len(),
        superseded: ex.superseded.len(),
    })
}

/// The methods section's notes on noise, exclusion and adaptive trial counts.
pub fn notes(q: &Quality) -> Vec<MethodNote> {
    let mut out = Vec::new();
    if q.trials.iter().any(|t| t.speed_before.is_some()) {
        out.push(MethodNote::Noise);
        out.push(MethodNote::Interference);
    }
    if q.exclude_noisy {
        out.push(MethodNote::NoisyLeftOut(q.excluded));
    }
    if let Some((t, _)) = &q.precision {
        out.push(MethodNote::Adaptive {
            metric: t.adaptive.metric,
            min_trials: t.adaptive.min_trials,
            rule: schedlab_analyze::AnytimeStoppingRule {
                min_trials: t.adaptive.min_trials.max(2) as usize,
                max_trials: t.adaptive.max_trials.max(2) as usize,
                precision: t.precision,
                alpha: schedlab_analyze::ALPHA,
            },
        });
    }
    out
}

#[cfg(test)]
#[path = "quality_tests.rs"]
mod tests;
