//! Tests across the policies of each group, and the findings drawn from them: the best policy
//! per group and metric, whether it is significantly better, and a sentence saying so.

use super::{fmt_p, fmt_with_unit, CellReport, Group, Metric};
use crate::analyze::{Comparison, ALPHAS};
use serde::Serialize;

/// The best policy of one group on one metric, and how sure that is.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Index of the group in [`super::Report::groups`].
    pub group: usize,
    /// Which metric.
    pub metric: Metric,
    /// Number of policies compared.
    pub policies: usize,
    /// The policy with the best median.
    pub best: String,
    /// Its median, in the metric's unit.
    pub best_median: f64,
    /// The policy with the next best median.
    pub runner_up: String,
    /// Its median, in the metric's unit.
    pub runner_up_median: f64,
    /// How many times better the best median is than the runner-up's (>= 1), if defined.
    pub ratio: Option<f64>,
    /// Largest Holm-adjusted Mann-Whitney p-value of the best against any other policy.
    pub p_holm: Option<f64>,
    /// Better than every other policy at alpha 0.05.
    pub better_at_05: bool,
    /// Better than every other policy at alpha 0.01.
    pub better_at_01: bool,
    /// One-way ANOVA p-value across the policies.
    pub anova_p: Option<f64>,
    /// Kruskal-Wallis p-value across the policies.
    pub kruskal_p: Option<f64>,
    /// The finding as one sentence.
    pub sentence: String,
}

/// Compares the policies of a group on `metric`; `None` unless two or more have data.
pub fn compare_metric(
    g: &Group,
    metric: Metric,
    cells: &[CellReport],
    samples: &[Vec<Vec<f64>>],
) -> Option<Comparison> {
    let named: Vec<(&str, &[f64])> = g
        .cells
        .iter()
        .filter(|&&c| !samples[c][metric.index()].is_empty())
        .map(|&c| {
            (
                cells[c].key.policy.as_str(),
                samples[c][metric.index()].as_slice(),
            )
        })
        .collect();
    Comparison::new(named, metric.lower_is_better())
}

/// One finding per group and compared metric, in group order, then metric order.
pub fn findings(groups: &[Group]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        for (metric, c) in &g.tests {
            out.push(finding(gi, &g.label, *metric, c));
        }
    }
    out
}

/// The finding of one comparison.
fn finding(group: usize, label: &str, metric: Metric, c: &Comparison) -> Finding {
    let sign = if c.lower_is_better { 1.0 } else { -1.0 };
    let best_i = c
        .groups
        .iter()
        .position(|g| g.name == c.best.name && g.median == c.best.median)
        .unwrap_or(0);
    let runner_i = (0..c.groups.len())
        .filter(|&i| i != best_i)
        .min_by(|&a, &b| (sign * c.groups[a].median).total_cmp(&(sign * c.groups[b].median)))
        .unwrap_or(best_i);
    let (best, runner) = (&c.groups[best_i], &c.groups[runner_i]);
    let (num, den) = if c.lower_is_better {
        (runner.median, best.median)
    } else {
        (best.median, runner.median)
    };
    let ratio = (den > 0.0 && num.is_finite()).then(|| num / den);
    let mut f = Finding {
        group,
        metric,
        policies: c.groups.len(),
        best: best.name.clone(),
        best_median: best.median,
        runner_up: runner.name.clone(),
        runner_up_median: runner.median,
        ratio,
        p_holm: c.best.max_p_holm,
        better_at_05: c.best.better_than_all_at_05,
        better_at_01: c.best.better_than_all_at_01,
        anova_p: c.anova.map(|t| t.p_value),
        kruskal_p: c.kruskal_wallis.map(|t| t.p_value),
        sentence: String::new(),
    };
    f.sentence = sentence(label, &f, c.lower_is_better);
    f
}

/// "1.42x"; "133x" for large ratios, "0.012x" for small ones.
pub fn fmt_ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}x")
    } else if r >= 0.1 || r == 0.0 {
        format!("{r:.2}x")
    } else {
        format!("{}x", super::fmt_num(r))
    }
}

/// "p = 0.004" or "p < 0.001".
fn p_clause(p: f64) -> String {
    match fmt_p(p) {
        s if s.starts_with('<') => format!("p {s}"),
        s => format!("p = {s}"),
    }
}

/// The finding as a sentence, e.g. "For cpu:pi with 10 tasks, fifo has the lowest median
/// makespan (201 ms vs 285 ms for other, 1.42x); better than every other policy at alpha
/// 0.01 (Holm-adjusted Mann-Whitney p = 0.004)."
fn sentence(label: &str, f: &Finding, lower_is_better: bool) -> String {
    let dir = if lower_is_better { "lowest" } else { "highest" };
    let (b, r) = (
        fmt_with_unit(f.best_median, f.metric),
        fmt_with_unit(f.runner_up_median, f.metric),
    );
    let head = if f.best_median == f.runner_up_median {
        format!(
            "For {label}, {} and {} share the {dir} median {} ({b})",
            f.best,
            f.runner_up,
            f.metric.phrase()
        )
    } else {
        let ratio = f
            .ratio
            .map_or(String::new(), |x| format!(", {}", fmt_ratio(x)));
        format!(
            "For {label}, {} has the {dir} median {} ({b} vs {r} for {}{ratio})",
            f.best,
            f.metric.phrase(),
            f.runner_up
        )
    };
    let other = if f.policies == 2 {
        f.runner_up.clone()
    } else {
        "every other policy".into()
    };
    let test = if f.policies == 2 {
        "Holm-adjusted Mann-Whitney"
    } else {
        "largest Holm-adjusted Mann-Whitney"
    };
    let (a05, a01) = ALPHAS;
    let tail = match f.p_holm {
        Some(p) if f.better_at_01 => {
            format!("better than {other} at alpha {a01} ({test} {})", p_clause(p))
        }
        Some(p) if f.better_at_05 => format!(
            "better than {other} at alpha {a05} but not at {a01} ({test} {})",
            p_clause(p)
        ),
        Some(p) if f.best_median == f.runner_up_median => format!(
            "no policy is better than the others at alpha {a05} ({test} {})",
            p_clause(p)
        ),
        Some(p) if p < a05 => format!(
            "not better than {other} at alpha {a05}: although {test} {}, Cliff's delta does not favour it against each",
            p_clause(p)
        ),
        Some(p) => format!(
            "not significantly better than {other} at alpha {a05} ({test} {})",
            p_clause(p)
        ),
        None => "no significance test was possible (a policy has fewer than 2 values, or no values differ)".into(),
    };
    format!("{head}; {tail}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(centre: f64, n: usize) -> Vec<f64> {
        (0..n).map(|i| centre + i as f64 * 0.1).collect()
    }

    #[test]
    fn a_clearly_faster_policy_gets_a_sentence_with_medians_ratio_and_alpha_001() {
        let c = Comparison::new(
            [
                ("other", spread(285.0, 10)),
                ("fifo", spread(201.0, 10)),
                ("rr", spread(290.0, 10)),
            ],
            true,
        )
        .expect("comparison");
        let f = finding(0, "cpu:pi with 10 tasks", Metric::Makespan, &c);
        assert_eq!(f.best, "fifo");
        assert_eq!(f.runner_up, "other");
        assert!(f.better_at_01);
        assert!(
            f.sentence.starts_with(
                "For cpu:pi with 10 tasks, fifo has the lowest median makespan (201 ms vs 285 ms for other, 1.42x); better than every other policy at alpha 0.01 (largest Holm-adjusted Mann-Whitney p"
            ),
            "{}",
            f.sentence
        );
    }

    #[test]
    fn overlapping_policies_are_called_not_significantly_better() {
        let c = Comparison::new(
            [
                ("other", vec![1.0, 2.0, 3.0]),
                ("fifo", vec![1.1, 2.1, 3.1]),
            ],
            true,
        )
        .expect("comparison");
        let f = finding(0, "io with 2 tasks", Metric::Turnaround, &c);
        assert!(!f.better_at_05);
        assert!(
            f.sentence
                .contains("; not significantly better than fifo at alpha 0.05 (Holm-adjusted Mann-Whitney p = "),
            "{}",
            f.sentence
        );
    }

    #[test]
    fn equal_medians_are_reported_as_shared_and_untestable_groups_say_so() {
        let c = Comparison::new([("a", vec![0.0, 0.0]), ("b", vec![0.0, 0.0])], true)
            .expect("comparison");
        let f = finding(0, "g", Metric::Ivcsw, &c);
        assert_eq!(f.ratio, None);
        assert_eq!(
            f.sentence,
            "For g, a and b share the lowest median per-task involuntary switch count (0); no significance test was possible (a policy has fewer than 2 values, or no values differ)."
        );
    }

    #[test]
    fn higher_is_better_metrics_name_the_highest_median_and_invert_the_ratio() {
        let c = Comparison::new([("a", spread(0.5, 8)), ("b", spread(0.9, 8))], false)
            .expect("comparison");
        let f = finding(0, "g", Metric::JainCpu, &c);
        assert_eq!(f.best, "b");
        assert!(f.ratio.expect("ratio") > 1.0);
        assert!(
            f.sentence.contains("b has the highest median Jain"),
            "{}",
            f.sentence
        );
        assert_eq!(fmt_ratio(133.3), "133x");
        assert_eq!(fmt_ratio(0.0123), "0.012x");
    }
}
