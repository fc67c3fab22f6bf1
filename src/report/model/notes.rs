//! The report's prose about the run: the methods section and the warnings.

use super::{CellReport, Group, Methods, ReportInput, LARGE_N};
use crate::analyze::{CI_LEVEL, DEFAULT_RESAMPLES};

/// The methods section: what was computed and how, with the seed.
pub fn methods(seed: u64, any_analytic: bool, include_warmup: bool) -> Methods {
    let mut notes = vec![
        format!(
            "Summaries per cell: n, mean, sd, median, min, max, range, 5th and 95th percentiles (linear interpolation), and {:.0}% CIs of the median and the mean by percentile bootstrap with {} resamples, seeded with the run's seed {seed}.",
            CI_LEVEL * 100.0,
            DEFAULT_RESAMPLES
        ),
        "Per-trial metrics have one value per trial; per-task metrics one value per task of every trial. Times are in ms. Run span = turnaround - response. \"/ tasks\" metrics divide a trial's total by its task count (study 002's per-process view). Jain's index of CPU share is computed within each trial (1 = equal CPU times).".into(),
        "Policies are compared within each group (cells that share every axis but the policy): one-way ANOVA and Kruskal-Wallis across all policies; Welch's t and Mann-Whitney U for every pair with Holm's adjustment over the pairs; Cohen's d and Cliff's delta as effect sizes.".into(),
        "The best policy has the lowest median (highest for Jain's index). It is called better at alpha when its Holm-adjusted Mann-Whitney p-value against every other policy is below alpha and Cliff's delta favours it against each.".into(),
        "Per-task tests treat the tasks of a cell as independent samples. Tasks of one trial share its conditions, so their p-values are optimistic; the per-trial tests (makespan, totals, Jain) are the conservative ones.".into(),
    ];
    if any_analytic {
        notes.push(format!(
            "Samples of more than {LARGE_N} values use analytic {:.0}% CIs instead of the bootstrap: mean ± 1.96·sd/√n, and for the median the distribution-free order-statistic interval (ranks n/2 ± 0.98·√n). At this size they agree with the bootstrap, which would cost n draws per resample.",
            CI_LEVEL * 100.0
        ));
    }
    notes.push(if include_warmup {
        "Warm-up trials are included (--include-warmup).".into()
    } else {
        "Warm-up trials are excluded.".into()
    });
    Methods {
        seed,
        resamples: DEFAULT_RESAMPLES,
        ci_level: CI_LEVEL,
        large_n: LARGE_N,
        any_analytic,
        notes,
    }
}

/// The run's status, cells with trials not ok, timeouts and failures, thin cells, then the
/// stored warnings.
pub fn warnings(input: &ReportInput, cells: &[CellReport], groups: &[Group]) -> Vec<String> {
    let mut out = Vec::new();
    let cell_label = |c: &CellReport| format!("{}, {}", c.key.policy, groups[c.group].label);
    if input.run.status != "done" {
        let stored: i64 = cells.iter().map(|c| c.trials_total).sum();
        out.push(format!(
            "The run's status is '{}': this report covers the {stored} trials stored of {} planned.",
            input.run.status, input.run.trials_planned
        ));
    }
    for c in cells {
        let bad: Vec<String> = c
            .statuses
            .iter()
            .filter(|(s, _)| s != "ok")
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        if !bad.is_empty() {
            out.push(format!(
                "{}: {} of {} trials not ok ({}){}",
                cell_label(c),
                c.trials_total - c.trials_ok,
                c.trials_total,
                bad.join(", "),
                c.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!(": {r}"))
            ));
        }
        if c.trials_ok == 1 {
            out.push(format!(
                "{}: only 1 ok trial, so per-trial metrics have no spread and no CI.",
                cell_label(c)
            ));
        }
    }
    const LISTED: usize = 20;
    for p in input.problems.iter().take(LISTED) {
        if let Some(c) = input
            .cells
            .iter()
            .position(|c| c.cell_index == p.cell_index)
        {
            out.push(format!(
                "Trial {} of {}: {}{}",
                p.trial_index,
                cell_label(&cells[c]),
                p.status,
                p.reason
                    .as_ref()
                    .map_or(String::new(), |r| format!(": {r}"))
            ));
        }
    }
    if input.problems.len() > LISTED {
        out.push(format!(
            "... and {} more timed-out or failed trials (`schedlab export --table trials` lists them all).",
            input.problems.len() - LISTED
        ));
    }
    // Stored warnings last: they are many (one per trial run on a busy machine) and the
    // outputs show only the first few of a long list.
    out.extend(input.warnings.iter().cloned());
    out
}
