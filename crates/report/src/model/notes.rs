//! The report's prose about the run: the methods section and the warnings.

use super::warning::MethodNote;
use super::warning::{CellName, Warning};
use super::{CellReport, ExploratoryComparison, Group, Methods, ReportInput, StoredWarning};
use schedlab_analyze::{PValueMethod, CI_LEVEL};
use schedlab_core::records::{RunStatus, TrialStatus};
use schedlab_store::query::Tally;

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
    let p_methods = count_methods(exploratory);
    let notes = vec![
        MethodNote::Summaries { ci_level: CI_LEVEL },
        MethodNote::Metrics,
        MethodNote::TrialUnit,
        MethodNote::Exploratory {
            ci_level: CI_LEVEL,
            baseline: m.baseline.clone(),
        },
        MethodNote::PValues(p_methods.clone()),
        MethodNote::WhyMannWhitney,
        MethodNote::TooFewTrials,
        MethodNote::Pairwise,
        MethodNote::Warmup {
            included: m.include_warmup,
        },
    ];
    Methods {
        seed: m.seed,
        ci_level: CI_LEVEL,
        baseline: m.baseline.clone(),
        p_methods,
        notes,
    }
}

/// The warning for a run whose spec as run does not read (written by another version).
fn spec_warning(input: &ReportInput) -> Option<Warning> {
    input.run.spec_read().err().map(Warning::SpecUnreadable)
}

/// The warning for a run whose declared claims do not check against its spec as run.
fn claims_warning(input: &ReportInput) -> Option<Warning> {
    crate::claims::declared_problem(&input.run).map(Warning::ClaimsUnchecked)
}

/// The run's status, cells with trials not ok, timeouts and failures, thin cells, then the
/// stored warnings.
pub fn warnings(input: &ReportInput, cells: &[CellReport], groups: &[Group]) -> Vec<Warning> {
    let mut out = Vec::new();
    let cell_name = |c: &CellReport| CellName {
        policy: c.key.policy.clone(),
        group: groups[c.group].label.clone(),
    };
    if input.run.status != RunStatus::Done {
        out.push(Warning::RunNotDone {
            status: input.run.status,
            stored: cells.iter().map(|c| c.trials_total).sum(),
            planned: input.run.trials_planned,
        });
    }
    out.extend(spec_warning(input));
    out.extend(claims_warning(input));
    for c in cells {
        let statuses = not_ok(&c.statuses);
        if !statuses.is_empty() {
            out.push(Warning::NotOk {
                cell: cell_name(c),
                not_ok: c.trials_total - c.trials_ok,
                total: c.trials_total,
                statuses,
                reason: c.reason.clone(),
            });
        }
        if c.trials_ok == 1 {
            out.push(Warning::OneOkTrial(cell_name(c)));
        }
    }
    for g in groups.iter().filter(|g| g.cells.len() > 1) {
        match (g.baseline, &input.baseline) {
            (None, Some(b)) => out.push(Warning::NoBaselineCell {
                group: g.label.clone(),
                baseline: b.clone(),
            }),
            (Some(b), _) if cells[b].trials_ok == 0 => out.push(Warning::BaselineWithoutOk {
                group: g.label.clone(),
                baseline: cells[b].key.policy.clone(),
            }),
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
            out.push(Warning::Problem {
                trial_index: p.trial_index,
                cell: cell_name(&cells[c]),
                status: p.status,
                reason: p.reason.clone(),
            });
        }
    }
    if input.problems.len() > LISTED {
        out.push(Warning::MoreProblems(input.problems.len() - LISTED));
    }
    // Stored warnings last: they are many (one per trial run on a busy machine) and the
    // outputs show only the first few of a long list.
    out.extend(
        input
            .warnings
            .iter()
            .map(|w| Warning::Stored(w.message.clone())),
    );
    out
}

/// One kind of warning in a run: a stored code with how many warnings have it and the first
/// as an example, or one warning the report made itself (no code, count 1).
#[derive(Debug, Clone)]
pub struct WarningKind {
    /// The stored code ([`schedlab_core::warning::Warning::code`]); None for the report's own
    /// warnings and those stored before codes.
    pub code: Option<String>,
    /// How many warnings are of this kind.
    pub count: usize,
    /// The first of them.
    pub example: Warning,
}

/// The report's own warnings (`made`), one kind each, then the stored ones grouped by code in
/// order of first appearance (those without a code one kind each).
pub fn warning_kinds(made: &[Warning], stored: &[StoredWarning]) -> Vec<WarningKind> {
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
                example: Warning::Stored(w.message.clone()),
            }),
        }
    }
    out
}

/// A cell's (status, count) pairs other than ok.
pub(super) fn not_ok(statuses: &[(Tally, i64)]) -> Vec<(Tally, i64)> {
    statuses
        .iter()
        .filter(|(s, _)| *s != Tally::Status(TrialStatus::Ok))
        .cloned()
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
        let thin = Warning::MoreProblems(3);
        let kinds = warning_kinds(
            &[thin.clone(), thin],
            &[
                stored(Some("machine_busy"), "before trial 1: busy"),
                stored(Some("trial_noisy"), "trial 2: noisy"),
                stored(Some("machine_busy"), "before trial 3: busy"),
                stored(None, "old warning"),
                stored(None, "old warning"),
                stored(Some("machine_busy"), "before trial 4: busy"),
            ],
        );
        let got: Vec<(Option<&str>, usize, Option<&str>)> = kinds
            .iter()
            .map(|k| {
                let example = match &k.example {
                    Warning::Stored(m) => Some(m.as_str()),
                    _ => None,
                };
                (k.code.as_deref(), k.count, example)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (None, 1, None),
                (None, 1, None),
                (Some("machine_busy"), 3, Some("before trial 1: busy")),
                (Some("trial_noisy"), 1, Some("trial 2: noisy")),
                (None, 1, Some("old warning")),
                (None, 1, Some("old warning")),
            ]
        );
        assert!(matches!(kinds[0].example, Warning::MoreProblems(3)));
    }

    #[test]
    fn a_spec_as_run_this_version_cannot_read_is_a_warning_with_the_error() {
        let mut input = ReportInput::default();
        input
            .run
            .set_spec_toml("[axes]\npolicies = [\"other\"]\n".into());
        assert!(spec_warning(&input).is_none());
        input
            .run
            .set_spec_toml("[axes]\npolicies = [\"other\"]\nquantum = 4\n".into());
        let Some(Warning::SpecUnreadable(e)) = spec_warning(&input) else {
            panic!("no SpecUnreadable warning");
        };
        let e = e.to_string();
        assert!(
            e.contains("axes.quantum") && e.contains("does not read"),
            "{e}"
        );
    }

    #[test]
    fn the_methods_keep_the_warm_up_choice_and_the_p_value_counts() {
        let m = methods(
            &MethodsInput {
                seed: 7,
                include_warmup: true,
                baseline: None,
            },
            &[],
        );
        assert_eq!(m.seed, 7);
        assert!(m.p_methods.is_empty());
        assert!(m.notes.contains(&MethodNote::PValues(Vec::new())));
        assert_eq!(m.notes.last(), Some(&MethodNote::Warmup { included: true }));
    }
}
