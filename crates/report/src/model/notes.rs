//! The report's prose about the run: the methods section and the warnings.

use super::{CellReport, ExploratoryComparison, Group, Methods, ReportInput, StoredWarning};
use schedlab_analyze::{PValueMethod, CI_LEVEL, MEAN_CI_LABEL};
use schedlab_core::records::RunStatus;
use serde::Serialize;

/// The heading of the comparisons nobody declared: exploratory, no verdicts.
pub const EXPLORATORY_HEADING: &str = "Exploratory comparisons (not declared as claims)";

/// What the exploratory section is, in one line under its heading.
pub const EXPLORATORY_NOTE: &str = "Exploratory, not confirmatory: every policy against its group's baseline, screened after the data; only claims declared in the spec before the run ([[claims]]) get verdicts.";

/// What the methods section depends on besides the exploratory comparisons.
#[derive(Debug, Clone, Default)]
pub struct MethodsInput {
    /// The run's seed (its trial order).
    pub seed: u64,
    /// Whether warm-up trials were included.
    pub include_warmup: bool,
    /// The baseline named with `--baseline`, if any.
    pub baseline: Option<String>,
}

/// How many exploratory comparisons used each p-value method, in a fixed order.
fn count_methods(exploratory: &[ExploratoryComparison]) -> Vec<(PValueMethod, usize)> {
    [
        PValueMethod::Exact,
        PValueMethod::Permutation,
        PValueMethod::MonteCarlo,
        PValueMethod::Asymptotic,
    ]
    .into_iter()
    .map(|m| {
        (
            m,
            exploratory.iter().filter(|f| f.method == Some(m)).count(),
        )
    })
    .filter(|&(_, n)| n > 0)
    .collect()
}

/// The methods section: what was computed, on which unit, how and why, with the seed.
pub fn methods(m: &MethodsInput, exploratory: &[ExploratoryComparison]) -> Methods {
    let seed = m.seed;
    let baseline = match &m.baseline {
        Some(b) => format!("{b}, chosen with --baseline"),
        None => "the first policy of the run's policy axis (passed over in a group where it has no ok trial)".into(),
    };
    let p_methods = count_methods(exploratory);
    let used = if p_methods.is_empty() {
        "No comparison had a test.".to_string()
    } else {
        let parts: Vec<String> = p_methods
            .iter()
            .map(|(method, n)| {
                format!(
                    "{} for {n} comparison{}",
                    method.label(),
                    if *n == 1 { "" } else { "s" }
                )
            })
            .collect();
        format!("In this report: {}.", parts.join(", "))
    };
    let mut notes = vec![
        format!(
            "Summaries per cell (descriptive): n, mean, sd, median, min, max, range, 5th and 95th percentiles (linear interpolation), and {:.0}% CIs. The median's is the distribution-free order-statistic interval [x(k), x(n+1-k)] with the widest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least 95%, for any continuous distribution. Below 6 values no such interval reaches 95%: it is then [min, max], shown with the coverage it has, 1 - 2 x 0.5^n (75% at 3 values, 87.5% at 4, 93.75% at 5). The mean's is the {MEAN_CI_LABEL}. They are over the trial values (n = trials), as the tests are: per-task metrics through each trial's median over its tasks. The tables titled as pooled and the figures' distributions (box plots, densities, CDFs) pool every task of every trial instead (n = tasks).",
            CI_LEVEL * 100.0,
        ),
        "Per-trial metrics have one value per trial; per-task metrics one value per task of every trial. Times are in ms. Run span = turnaround - response. \"/ tasks\" metrics divide a trial's total by its task count (study 002's per-process view). Jain's index of CPU share is computed within each trial (1 = equal CPU times).".into(),
        "Tests run on the trial, the unit of replication: one value per trial, the trial's own for per-trial metrics and the median of its tasks for per-task metrics. Tasks of one trial share its conditions (machine state, co-runners, start), so pooling them across trials would count dependent values as independent and overstate significance.".into(),
        format!(
            "The exploratory comparisons (everything not declared as a claim) compare every other policy of a group (the cells that share every axis but the policy) with the group's baseline, {baseline}: the medians of their trial values; the effect policy / baseline as the Hodges-Lehmann ratio (the median of the pairwise ratios of trial values), or where a trial value is 0 or below the difference policy - baseline (no ratio of a side that is 0), with its {:.0}% interval from the exact Mann-Whitney distribution (Moses), whose achieved coverage is shown where no such interval reaches 95% (90% at 3 vs 3 trials); and the two-sided Mann-Whitney U test, its p unadjusted for the other comparisons (shown as p (unadjusted)). A policy is called lower or higher than the baseline at alpha when that p is below alpha; Cliff's delta gives the direction. They are exploratory: screened after the data and not adjusted for their number, so some are below 0.05 by chance; they give no verdicts. Declared claims are the confirmatory family, adjusted together.",
            CI_LEVEL * 100.0,
        ),
        format!("Mann-Whitney p-values are exact (the exact null distribution of U, as scipy's default) with at most 8 trials a side and no ties; with ties, an exact permutation p (Monte Carlo when counting every relabeling is too costly); beyond 8 trials a side, the normal approximation with tie and continuity corrections. {used}"),
        "Why Mann-Whitney on trials rather than a permutation test stratified by round: every round runs each cell once in a shuffled order, so drift between rounds falls on all policies alike and adds noise, not bias; and with one trial per policy and round the stratified test's smallest p is 2 / 2^rounds, so it needs 6 rounds to go below 0.05 where Mann-Whitney needs 4 trials per policy (2 / C(8, 4) = 0.029).".into(),
        "Too few trials: with n trials per policy the smallest two-sided Mann-Whitney p is 2 / C(2n, n) (0.1 for 3 vs 3); a comparison whose trials cannot go below 0.05 says so and from how many trials it becomes possible (possible, not likely: that is no power statement). The exploratory comparisons state no power: power and trials needed are given for declared claims, for the test they run. csv/exploratory.csv keeps min_detectable, the difference of means a two-sided t-test at unadjusted alpha 0.05 would detect with 80% power ((t(0.975, df) + t(0.8, df)) * s_p * sqrt(1/n1 + 1/n2)); it is not the power of the Mann-Whitney test the comparisons use.".into(),
        "The pairwise table tests every pair of policies on the same trial values: Welch's t and Mann-Whitney U, unadjusted as every exploratory p (csv/pairs.csv also gives them with Holm's adjustment over all pairs of a group), Cohen's d and Cliff's delta as effect sizes; ANOVA and Kruskal-Wallis test all policies of a group at once (in the CSV tables). Their p-values come from the F distribution (exact only for normal data) and the chi-squared approximation, which with few trials is too small for two groups (Kruskal-Wallis gives 0.0495 for 3 vs 3 trials that do not overlap, where the exact Mann-Whitney p is 0.1) but too large, i.e. conservative, for three or more groups (0.027 for three groups of 3 that do not overlap, where the exact permutation p is 0.0036), so no comparison or verdict rests on them.".into(),
    ];
    notes.push(if m.include_warmup {
        "Warm-up trials are included (--include-warmup).".into()
    } else {
        "Warm-up trials are excluded.".into()
    });
    Methods {
        seed,
        ci_level: CI_LEVEL,
        baseline: m.baseline.clone(),
        p_methods,
        notes,
    }
}

/// The warning for a run whose spec as run does not read (written by another version).
fn spec_warning(input: &ReportInput) -> Option<String> {
    let e = input.run.spec().err()?;
    Some(format!(
        "{e}. The baseline follows the cell order, the primary metric is makespan, an adaptive run's precision is not shown, and no declared claim is judged."
    ))
}

/// The warning for a run whose declared claims do not check against its spec as run.
fn claims_warning(input: &ReportInput) -> Option<String> {
    let why = crate::claims::declared_problem(&input.run)?;
    Some(format!(
        "{}. No declared claim is judged.",
        crate::claims::DeclaredProblem(&why)
    ))
}

/// The run's status, cells with trials not ok, timeouts and failures, thin cells, then the
/// stored warnings.
pub fn warnings(input: &ReportInput, cells: &[CellReport], groups: &[Group]) -> Vec<String> {
    let mut out = Vec::new();
    let cell_label = |c: &CellReport| format!("{}, {}", c.key.policy, groups[c.group].label);
    if input.run.status != RunStatus::Done {
        let stored: i64 = cells.iter().map(|c| c.trials_total).sum();
        out.push(format!(
            "The run's status is '{}': this report covers the {stored} trials stored of {} planned.",
            input.run.status, input.run.trials_planned
        ));
    }
    out.extend(spec_warning(input));
    out.extend(claims_warning(input));
    for c in cells {
        let bad = not_ok_counts(&c.statuses);
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
    for g in groups.iter().filter(|g| g.cells.len() > 1) {
        match (g.baseline, &input.baseline) {
            (None, Some(b)) => out.push(format!(
                "{}: no cell has the baseline {b}, so its policies are not compared (choose another with --baseline).",
                g.label
            )),
            (Some(b), _) if cells[b].trials_ok == 0 => out.push(format!(
                "{}: the baseline {} has no ok trial, so its policies are not compared (choose another with --baseline).",
                g.label, cells[b].key.policy
            )),
            _ => {}
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
    out.extend(input.warnings.iter().map(|w| w.message.clone()));
    out
}

/// One kind of warning in a run: a stored code with how many warnings have it and the first
/// as an example, or one warning the report made itself (no code, count 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WarningKind {
    /// The stored code ([`schedlab_core::warning::Warning::code`]); None for the report's own
    /// warnings and those stored before codes.
    pub code: Option<String>,
    /// How many warnings are of this kind.
    pub count: usize,
    /// The first of them.
    pub example: String,
}

impl WarningKind {
    /// The line text outputs show: the warning alone, or for several of one code the code,
    /// the count and the first as an example.
    pub fn line(&self) -> String {
        match (&self.code, self.count) {
            (Some(code), n) if n > 1 => format!("{code} ({n} warnings), e.g. {}", self.example),
            _ => self.example.clone(),
        }
    }
}

/// The report's own warnings (`made`), one kind each, then the stored ones grouped by code in
/// order of first appearance (those without a code one kind each).
pub fn warning_kinds(made: &[String], stored: &[StoredWarning]) -> Vec<WarningKind> {
    let mut out: Vec<WarningKind> = made
        .iter()
        .map(|w| WarningKind {
            code: None,
            count: 1,
            example: w.clone(),
        })
        .collect();
    let first_stored = out.len();
    for w in stored {
        let same = w.code.as_ref().and_then(|code| {
            out[first_stored..]
                .iter_mut()
                .find(|k| k.code.as_ref() == Some(code))
        });
        match same {
            Some(k) => k.count += 1,
            None => out.push(WarningKind {
                code: w.code.clone(),
                count: 1,
                example: w.message.clone(),
            }),
        }
    }
    out
}

/// A cell's trial statuses other than ok, as "N status" (e.g. "2 timeout"), from its
/// (status, count) pairs.
pub(super) fn not_ok_counts(statuses: &[(String, i64)]) -> Vec<String> {
    statuses
        .iter()
        .filter(|(s, _)| s != "ok")
        .map(|(s, n)| format!("{n} {s}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_warnings_group_by_code_and_the_reports_own_stay_apart() {
        let stored = |code: Option<&str>, message: &str| StoredWarning {
            code: code.map(str::to_string),
            message: message.into(),
        };
        let kinds = warning_kinds(
            &["thin cell".to_string(), "thin cell".to_string()],
            &[
                stored(Some("machine_busy"), "before trial 1: busy"),
                stored(Some("trial_noisy"), "trial 2: noisy"),
                stored(Some("machine_busy"), "before trial 3: busy"),
                stored(None, "old warning"),
                stored(None, "old warning"),
                stored(Some("machine_busy"), "before trial 4: busy"),
            ],
        );
        let got: Vec<(Option<&str>, usize, &str)> = kinds
            .iter()
            .map(|k| (k.code.as_deref(), k.count, k.example.as_str()))
            .collect();
        assert_eq!(
            kinds[2].line(),
            "machine_busy (3 warnings), e.g. before trial 1: busy"
        );
        assert_eq!(kinds[3].line(), "trial 2: noisy");
        assert_eq!(
            got,
            vec![
                (None, 1, "thin cell"),
                (None, 1, "thin cell"),
                (Some("machine_busy"), 3, "before trial 1: busy"),
                (Some("trial_noisy"), 1, "trial 2: noisy"),
                (None, 1, "old warning"),
                (None, 1, "old warning"),
            ]
        );
    }

    #[test]
    fn a_spec_as_run_this_version_cannot_read_is_a_warning_that_says_why() {
        let mut input = ReportInput::default();
        input
            .run
            .set_spec_toml("[axes]\npolicies = [\"other\"]\n".into());
        assert_eq!(spec_warning(&input), None);
        input
            .run
            .set_spec_toml("[axes]\npolicies = [\"other\"]\nquantum = 4\n".into());
        let w = spec_warning(&input).unwrap();
        assert!(
            w.contains("axes.quantum") && w.contains("does not read"),
            "{w}"
        );
        assert!(w.contains("baseline follows the cell order"), "{w}");
    }
}
