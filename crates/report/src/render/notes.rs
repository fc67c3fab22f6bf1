//! The report's warnings and methods notes in words, one sentence (or paragraph) each for every output (terminal, Markdown,
//! HTML, CSV, the table after a run); what they are about is found in [`crate::model`].

use crate::model::warning::{CellName, LeftOut, MethodNote, Warning};
use crate::model::{Report, WarningKind};
use schedlab_analyze::{PValueMethod, MEAN_CI_LABEL};

/// A cell as warnings and tables name it: "other, cpu:pi with 4 tasks".
pub fn cell_name(c: &CellName) -> String {
    format!("{}, {}", c.policy, c.group)
}

/// ": REASON", or nothing.
fn reason(r: &Option<String>) -> String {
    r.as_ref().map_or(String::new(), |r| format!(": {r}"))
}

/// The warning as the sentence every output prints.
pub fn warning(w: &Warning) -> String {
    match w {
        Warning::RunNotDone { status, stored, planned } => format!(
            "The run's status is '{status}': this report covers the {stored} trials stored of {planned} planned."
        ),
        Warning::SpecUnreadable(e) => format!(
            "{e}. The baseline follows the cell order, the primary metric is makespan, an adaptive run's precision is not shown, and no declared claim is judged."
        ),
        Warning::ClaimsUnchecked(why) => format!(
            "{}. No declared claim is judged.",
            crate::claims::DeclaredProblem(why)
        ),
        Warning::NotOk { cell, not_ok, total, statuses, reason: why } => {
            let bad: Vec<String> = statuses
                .iter()
                .map(|(s, n)| format!("{n} {}", s.name()))
                .collect();
            format!(
                "{}: {not_ok} of {total} trials not ok ({}){}",
                cell_name(cell),
                bad.join(", "),
                reason(why)
            )
        }
        Warning::OneOkTrial(cell) => format!(
            "{}: only 1 ok trial, so per-trial metrics have no spread and no CI.",
            cell_name(cell)
        ),
        Warning::NoBaselineCell { group, baseline } => format!(
            "{group}: no cell has the baseline {baseline}, so its policies are not compared (choose another with --baseline)."
        ),
        Warning::BaselineWithoutOk { group, baseline } => format!(
            "{group}: the baseline {baseline} has no ok trial, so its policies are not compared (choose another with --baseline)."
        ),
        Warning::Problem { trial_index, cell, status, reason: why } => format!(
            "Trial {trial_index} of {}: {}{}",
            cell_name(cell),
            status.name(),
            reason(why)
        ),
        Warning::MoreProblems(n) => format!(
            "... and {n} more timed-out or failed trials (`schedlab export --table trials` lists them all)."
        ),
        Warning::Noisy { noisy, measured } => format!(
            "{noisy} of {measured} trials were flagged noisy (the reference loop ran more than 10% off the run's steady speed before or after them) and are included; --exclude-noisy leaves them out."
        ),
        Warning::LeftOut(l) => left_out(l),
        Warning::Throttled(n) => format!(
            "{n} trials were cut short by RT throttling (the kernel's RT budget per CPU); their RT tasks' turnarounds include throttled time (table \"RT throttling\")."
        ),
        Warning::ShortOfPrecision { cells, precision, metric } => {
            let names: Vec<String> = cells.iter().map(cell_name).collect();
            format!(
                "{} did not reach ±{}% precision of their {}: {}.",
                match cells.len() {
                    1 => "1 cell".to_string(),
                    n => format!("{n} cells"),
                },
                precision * 100.0,
                metric.label(),
                names.join("; ")
            )
        }
        Warning::Stored(message) => message.clone(),
    }
}

/// How many trials were run again and how many are left out of summaries and verdicts, and
/// why (also the line after a run).
pub fn left_out(l: &LeftOut) -> String {
    let mut why = Vec::new();
    for (n, what) in [
        (l.disturbed, "disturbed (other processes above 10% of their CPUs' time; --include-disturbed keeps them)"),
        (l.slowed, "slowed (calibrated work over 10% slower than the run's steady in-trial speed; --include-slowed keeps them)"),
        (l.superseded, "attempts not used (another attempt at the same trial is)"),
    ] {
        if n > 0 {
            why.push(format!("{n} {what}"));
        }
    }
    format!(
        "{} contaminated trials were run again at the end of their rounds (kept, flagged); {} trials are left out of summaries and verdicts{}{}.",
        l.retried,
        l.left_out,
        if why.is_empty() { "" } else { ": " },
        why.join("; ")
    )
}

/// The line a kind of warning shows: the warning alone, or for several of one code the code,
/// the count and the first as an example.
pub fn kind_line(k: &WarningKind) -> String {
    match (&k.code, k.count) {
        (Some(code), n) if n > 1 => format!("{code} ({n} warnings), e.g. {}", warning(&k.example)),
        _ => warning(&k.example),
    }
}

/// Every warning of the report, in order, as sentences.
pub fn warnings(r: &Report) -> Vec<String> {
    r.warnings.iter().map(warning).collect()
}

/// The methods note as the paragraph every output prints.
pub fn method_note(n: &MethodNote) -> String {
    match n {
        MethodNote::Summaries { ci_level } => format!(
            "Summaries per cell (descriptive): n, mean, sd, median, min, max, range, 5th and 95th percentiles (linear interpolation), and {:.0}% CIs. The median's is the distribution-free order-statistic interval [x(k), x(n+1-k)] with the widest k whose coverage 1 - 2 P(Binomial(n, 1/2) < k) is at least 95%, for any continuous distribution. Below 6 values no such interval reaches 95%: it is then [min, max], shown with the coverage it has, 1 - 2 x 0.5^n (75% at 3 values, 87.5% at 4, 93.75% at 5). The mean's is the {MEAN_CI_LABEL}. They are over the trial values (n = trials), as the tests are: per-task metrics through each trial's median over its tasks. The tables titled as pooled and the figures' distributions (box plots, densities, CDFs) pool every task of every trial instead (n = tasks).",
            ci_level * 100.0,
        ),
        MethodNote::Metrics => "Per-trial metrics have one value per trial; per-task metrics one value per task of every trial. Times are in ms. Run span = turnaround - response. \"/ tasks\" metrics divide a trial's total by its task count (study 002's per-process view). Jain's index of CPU share is computed within each trial (1 = equal CPU times).".into(),
        MethodNote::TrialUnit => "Tests run on the trial, the unit of replication: one value per trial, the trial's own for per-trial metrics and the median of its tasks for per-task metrics. Tasks of one trial share its conditions (machine state, co-runners, start), so pooling them across trials would count dependent values as independent and overstate significance.".into(),
        MethodNote::Exploratory { ci_level, baseline } => {
            let baseline = match baseline {
                Some(b) => format!("{b}, chosen with --baseline"),
                None => "the first policy of the run's policy axis (passed over in a group where it has no ok trial)".into(),
            };
            format!(
                "The exploratory comparisons (everything not declared as a claim) compare every other policy of a group (the cells that share every axis but the policy) with the group's baseline, {baseline}: the medians of their trial values; the effect policy / baseline as the Hodges-Lehmann ratio (the median of the pairwise ratios of trial values), or where a trial value is 0 or below the difference policy - baseline (no ratio of a side that is 0), with its {:.0}% interval from the exact Mann-Whitney distribution (Moses), whose achieved coverage is shown where no such interval reaches 95% (90% at 3 vs 3 trials); and the two-sided Mann-Whitney U test, its p unadjusted for the other comparisons (shown as p (unadjusted)). A policy is called lower or higher than the baseline at alpha when that p is below alpha; Cliff's delta gives the direction. They are exploratory: screened after the data and not adjusted for their number, so some are below 0.05 by chance; they give no verdicts. Declared claims are the confirmatory family, adjusted together.",
                ci_level * 100.0,
            )
        }
        MethodNote::PValues(p_methods) => {
            let used = p_values_used(p_methods);
            format!("Mann-Whitney p-values are exact (the exact null distribution of U, as scipy's default) with at most 8 trials a side and no ties; with ties, an exact permutation p (Monte Carlo when counting every relabeling is too costly); beyond 8 trials a side, the normal approximation with tie and continuity corrections. {used}")
        }
        MethodNote::WhyMannWhitney => "Why Mann-Whitney on trials rather than a permutation test stratified by round: every round runs each cell once in a shuffled order, so drift between rounds falls on all policies alike and adds noise, not bias; and with one trial per policy and round the stratified test's smallest p is 2 / 2^rounds, so it needs 6 rounds to go below 0.05 where Mann-Whitney needs 4 trials per policy (2 / C(8, 4) = 0.029).".into(),
        MethodNote::TooFewTrials => "Too few trials: with n trials per policy the smallest two-sided Mann-Whitney p is 2 / C(2n, n) (0.1 for 3 vs 3); a comparison whose trials cannot go below 0.05 says so and from how many trials it becomes possible (possible, not likely: that is no power statement). The exploratory comparisons state no power: power and trials needed are given for declared claims, for the test they run. csv/exploratory.csv keeps min_detectable, the difference of means a two-sided t-test at unadjusted alpha 0.05 would detect with 80% power ((t(0.975, df) + t(0.8, df)) * s_p * sqrt(1/n1 + 1/n2)); it is not the power of the Mann-Whitney test the comparisons use.".into(),
        MethodNote::Pairwise => "The pairwise table tests every pair of policies on the same trial values: Welch's t and Mann-Whitney U, unadjusted as every exploratory p (csv/pairs.csv also gives them with Holm's adjustment over all pairs of a group), Cohen's d and Cliff's delta as effect sizes; ANOVA and Kruskal-Wallis test all policies of a group at once (in the CSV tables). Their p-values come from the F distribution (exact only for normal data) and the chi-squared approximation, which with few trials is too small for two groups (Kruskal-Wallis gives 0.0495 for 3 vs 3 trials that do not overlap, where the exact Mann-Whitney p is 0.1) but too large, i.e. conservative, for three or more groups (0.027 for three groups of 3 that do not overlap, where the exact permutation p is 0.0036), so no comparison or verdict rests on them.".into(),
        MethodNote::Warmup { included: true } => "Warm-up trials are included (--include-warmup).".into(),
        MethodNote::Warmup { included: false } => "Warm-up trials are excluded.".into(),
        MethodNote::Noise => "Noise: just before and just after every trial, schedlab runs a reference loop of spin units (6 chunks of about 0.5 ms on each of the trial's CPUs, at most 4; the median chunk per CPU, the slowest CPU) outside the measured region and stores its speed relative to the loop's own calibration (1 = as calibrated; the calibration is the 90% quantile of 10 measurements of every CPU spread over about 2 s, its spread stored), and the steal share of the trial's CPUs during the trial. A trial whose speed before or after is more than 10% off the run's steady speed (the median of its reference speeds so far, stored with each trial as speed_steady against the calibration) is flagged noisy. This is speed drift (frequency, steal, a slower machine): the loop's median chunk ignores preemption by design, so it does not see other work sharing the trial's CPUs; that interference is measured apart.".into(),
        MethodNote::Interference => INTERFERENCE_NOTE.into(),
        MethodNote::NoisyLeftOut(excluded) => format!(
            "Noisy trials are left out (--exclude-noisy): {} flagged noisy {} in no summary, test or comparison (the latency histograms and traces still include them).",
            match excluded {
                1 => "1 trial".to_string(),
                n => format!("{n} trials"),
            },
            if *excluded == 1 { "is" } else { "are" }
        ),
        MethodNote::Adaptive { metric, min_trials, rule } => format!(
            "Adaptive trial count (per-trial {}): after the first {} rounds, whole rounds (every cell once, shuffled) were added until the target was met, or the time limit was near. {} The precision table recomputes this from the stored trials.",
            metric.label(),
            min_trials,
            rule.methods_text(),
        ),
        MethodNote::Claims(text) => text.clone(),
    }
}

/// "In this report: exact for 3 comparisons, ...", or that no comparison had a test.
fn p_values_used(p_methods: &[(PValueMethod, usize)]) -> String {
    if p_methods.is_empty() {
        return "No comparison had a test.".to_string();
    }
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
}

/// Every note of the methods section, in order, as paragraphs.
pub fn method_notes(r: &Report) -> Vec<String> {
    r.methods.notes.iter().map(method_note).collect()
}

/// How interference, in-trial speed and re-runs are measured and used, for the methods.
const INTERFERENCE_NOTE: &str = "Interference: at each trial's boundaries (outside the measured region) schedlab reads its CPUs' busy time (cgroup cpuacct per CPU in ns where there is no /proc/schedstat) and the process table (each process's CPU time: ns per live thread from its schedstat, 10 ms ticks for ended threads and for children reaped, known by pid and start time; kernel threads by PF_KTHREAD), and the CPUs' interrupt ticks (/proc/stat, 10 ms; tick samples unless the kernel accounts interrupt time). Outside CPU time is split into other processes (the smaller of the busy time left after the kernel's and those processes' own CPU time), kernel threads (per-CPU ones on their CPU, unbound ones by their share of CPUs) and interrupts. Kernel threads' and interrupts' work beyond the rate of the 100 ms settle window before the trial is the trial's own kernel cost (kernel_cpu_ns), not disturbance; a trial is disturbed when other processes took more than 10% of its CPUs' time. For calibrated CPU work each trial also stores its in-trial speed (its tasks' units per CPU second against the calibration): a trial more than 10% slower than the run's steady in-trial speed (the median of its cell's, of the run's for a cell's first trials) is slowed, a slowdown no busy-time counter shows. A disturbed or slowed trial is run again at the end of its round, up to --retries times (default 2), and kept, flagged; summaries and verdicts use one clean attempt per trial, so rounds stay complete and paired.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::warning::LeftOut;
    use schedlab_store::query::RunInfo;

    #[test]
    fn a_kind_of_several_warnings_shows_its_code_count_and_first() {
        let kind = |code: Option<&str>, count, example: &str| WarningKind {
            code: code.map(str::to_string),
            count,
            example: Warning::Stored(example.into()),
        };
        assert_eq!(
            kind_line(&kind(Some("machine_busy"), 3, "before trial 1: busy")),
            "machine_busy (3 warnings), e.g. before trial 1: busy"
        );
        assert_eq!(
            kind_line(&kind(Some("trial_noisy"), 1, "trial 2: noisy")),
            "trial 2: noisy"
        );
        assert_eq!(
            warning(&Warning::MoreProblems(3)),
            "... and 3 more timed-out or failed trials (`schedlab export --table trials` lists them all)."
        );
    }

    #[test]
    fn an_unreadable_spec_says_why_and_what_it_costs() {
        let mut run = RunInfo::default();
        run.set_spec_toml("[axes]\npolicies = [\"other\"]\nquantum = 4\n".into());
        let w = warning(&Warning::SpecUnreadable(run.spec_read().unwrap_err()));
        assert!(
            w.contains("axes.quantum") && w.contains("does not read"),
            "{w}"
        );
        assert!(w.contains("baseline follows the cell order"), "{w}");
    }

    #[test]
    fn the_left_out_line_names_each_reason_with_its_count() {
        let w = left_out(&LeftOut {
            retried: 3,
            left_out: 4,
            disturbed: 3,
            slowed: 1,
            superseded: 0,
        });
        assert!(
            w.starts_with("3 contaminated trials were run again at the end of their rounds (kept, flagged); 4 trials are left out of summaries and verdicts: 3 disturbed"),
            "{w}"
        );
        assert!(w.contains("; 1 slowed ("), "{w}");
        assert!(!w.contains("attempts not used"), "{w}");
    }

    #[test]
    fn the_p_value_note_counts_each_way_in_its_plural() {
        let note = method_note(&MethodNote::PValues(vec![
            (PValueMethod::Exact, 1),
            (PValueMethod::Asymptotic, 2),
        ]));
        assert!(note.contains("for 1 comparison, "), "{note}");
        assert!(note.ends_with("for 2 comparisons."), "{note}");
        let none = method_note(&MethodNote::PValues(Vec::new()));
        assert!(none.ends_with("No comparison had a test."), "{none}");
        assert_eq!(
            method_note(&MethodNote::NoisyLeftOut(1)),
            "Noisy trials are left out (--exclude-noisy): 1 trial flagged noisy is in no summary, test or comparison (the latency histograms and traces still include them)."
        );
        assert!(method_note(&MethodNote::Exploratory {
            ci_level: 0.95,
            baseline: Some("fifo".into())
        })
        .contains("baseline, fifo, chosen with --baseline: the medians"));
    }
}
