//! The report's warnings in words, one sentence each for every output (terminal, Markdown,
//! HTML, CSV, the table after a run); what they are about is found in [`crate::model`].

use crate::model::warning::{CellName, LeftOut, Warning};
use crate::model::{Report, WarningKind};

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
        Warning::NotOk { cell, not_ok, total, statuses, reason: why } => {
            let bad: Vec<String> = statuses.iter().map(|(s, n)| format!("{n} {s}")).collect();
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
            "Trial {trial_index} of {}: {status}{}",
            cell_name(cell),
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
}
