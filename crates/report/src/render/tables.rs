//! The report's tables as rows of formatted text, shared by the terminal, Markdown and HTML
//! outputs (CSV writes the same tables with full-precision numbers; LaTeX has its own layout).

use crate::model::exploratory::ExploratoryComparison;
use crate::model::{tasks_phrase, CellReport, Metric, MetricSummary, Report, TestUnit};
use crate::render::fmt::{
    fmt_ci, fmt_effect, fmt_median_ci, fmt_num, fmt_opt_p, fmt_value, fmt_with_unit,
};
use crate::render::text_table::Table;

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// "0.87x [0.86, 0.89]", "-45.0 ms [-50.0, -40.0] (90.0% CI)" where a value is <= 0, or "-".
fn effect_with_ci(f: &ExploratoryComparison) -> String {
    f.effect
        .as_ref()
        .map_or_else(|| "-".into(), |e| fmt_effect(e, Some(f.metric)))
}

/// What the exploratory comparisons' result column says, in two halves (the verdicts of a
/// test; the cases without one); in one line they are joined by a space.
pub const VERDICT_LEGEND: [&str; 2] = [
    "result: lower or higher than the baseline at alpha 0.05 (*) or 0.01 (**) by the unadjusted p; n.s. not significant;",
    "too few: these trials cannot reach p < 0.05; no test: fewer than 2 trials a side, or all values equal",
];

/// Every policy against its group's baseline, per group and tested metric, with every
/// number behind the exploratory comparison.
pub fn exploratory_table(r: &Report) -> Table {
    let rows = r
        .exploratory
        .iter()
        .map(|f| {
            vec![
                r.groups[f.group].label.clone(),
                format!("{} ({})", f.metric.label(), f.metric.level()),
                f.policy.clone(),
                f.baseline.clone(),
                fmt_with_unit(f.median, f.metric),
                fmt_with_unit(f.baseline_median, f.metric),
                effect_with_ci(f),
                fmt_opt_p(f.p),
                format!("{} vs {} {}", f.n_policy, f.n_baseline, f.unit.plural()),
                f.method.map_or("-".into(), |m| m.label().to_string()),
                super::exploratory::verdict(f),
                f.trials_needed.map_or("-".into(), |n| n.to_string()),
            ]
        })
        .collect();
    Table {
        title: format!("Exploratory: every policy against its group's baseline (medians of the trial values; effect = Hodges-Lehmann ratio policy / baseline, or the difference where a value is <= 0, with its 95% CI or the coverage it has; p: two-sided Mann-Whitney, unadjusted; {} {})", VERDICT_LEGEND[0], VERDICT_LEGEND[1]),
        header: strings(&[
            "group",
            "metric",
            "policy",
            "baseline",
            "median",
            "baseline median",
            "effect [95% CI]",
            "p (unadjusted)",
            "n",
            "p method",
            "result",
            "trials for p < 0.05",
        ]),
        rows,
    }
}

/// One line per group: the primary metric's ([`Report::primary_metric`]) median of the
/// trial values for each policy of the run (a column each, in the run's order) and, for every
/// policy but the group's baseline, its effect against the baseline with the CI and the
/// exploratory result;
/// `None` without a group.
pub fn primary_table(r: &Report) -> Option<Table> {
    let m = r.primary_metric;
    let mut policies: Vec<&str> = Vec::new();
    for c in &r.cells {
        if !policies.contains(&c.key.policy.as_str()) {
            policies.push(&c.key.policy);
        }
    }
    let rows: Vec<Vec<String>> = (0..r.groups.len())
        .map(|g| {
            std::iter::once(r.groups[g].label.clone())
                .chain(policies.iter().map(|p| primary_cell(r, g, p, m)))
                .collect()
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        title: format!(
            "{} per group: median of the {} per policy (effect against the group's baseline [95% CI], exploratory result by the unadjusted p)",
            m.with_unit(),
            TestUnit::of(m).plural()
        ),
        header: std::iter::once("group")
            .chain(policies.iter().copied())
            .map(String::from)
            .collect(),
        rows,
    })
}

/// One policy's entry in [`primary_table`]: "59.7 (0.53x [0.50, 0.62] (90.0% CI), too few)", "112
/// (baseline)", or "-" where the group has no such cell or no value.
fn primary_cell(r: &Report, g: usize, policy: &str, m: Metric) -> String {
    let Some(s) = r.cell_of(g, policy).and_then(|c| c.summary(m)) else {
        return "-".into();
    };
    let median = fmt_value(s.summary.median, m);
    let baseline = r.groups[g].baseline.map(|b| r.cells[b].key.policy.as_str());
    if baseline == Some(policy) {
        return format!("{median} (baseline)");
    }
    match r
        .exploratory
        .iter()
        .find(|f| f.group == g && f.metric == m && f.policy == policy)
    {
        Some(f) => format!(
            "{median} ({}, {})",
            effect_with_ci(f),
            super::exploratory::verdict(f)
        ),
        None => median,
    }
}

/// Summaries of one metric over the trial values, one row per cell with data: per-trial
/// metrics as they are, per-task metrics as each trial's median over its tasks (the medians
/// every headline shows).
pub fn summary_table(r: &Report, metric: Metric) -> Table {
    let title = if metric.per_task() {
        format!(
            "{}, per trial: each trial's median over its tasks (n: trials)",
            metric.with_unit()
        )
    } else {
        format!("{}, per trial", metric.with_unit())
    };
    summaries(r, metric, title, |c| c.summary(metric))
}

/// Summaries of a per-task metric with every task of every trial pooled, one row per cell
/// with data (descriptive: the tests and headlines use the trial medians); empty for a
/// per-trial metric.
pub fn pooled_table(r: &Report, metric: Metric) -> Table {
    let title = format!(
        "{}, pooled: every task of every trial (descriptive; n: tasks, no CI: the tasks of a trial are correlated)",
        metric.with_unit()
    );
    let mut t = summaries(r, metric, title, |c| c.pooled(metric));
    // Drop the two interval columns (median's and mean's).
    for row in std::iter::once(&mut t.header).chain(t.rows.iter_mut()) {
        row.remove(6);
        row.remove(4);
    }
    t
}

/// A summary table titled `title`, with what `pick` gives for each cell.
fn summaries(
    r: &Report,
    metric: Metric,
    title: String,
    pick: impl Fn(&CellReport) -> Option<&MetricSummary>,
) -> Table {
    let rows = r
        .cells
        .iter()
        .filter_map(|c| {
            let s = &pick(c)?.summary;
            Some(vec![
                r.groups[c.group].label.clone(),
                c.key.policy.clone(),
                s.n.to_string(),
                fmt_value(s.median, metric),
                fmt_median_ci(s, metric),
                fmt_value(s.mean, metric),
                fmt_ci(s.mean_ci, metric),
                fmt_value(s.sd, metric),
                fmt_value(s.p5, metric),
                fmt_value(s.p95, metric),
                fmt_value(s.min, metric),
                fmt_value(s.max, metric),
                fmt_value(s.range, metric),
            ])
        })
        .collect();
    Table {
        title,
        header: strings(&[
            "group", "policy", "n", "median", "95% CI", "mean", "95% CI", "sd", "p5", "p95", "min",
            "max", "range",
        ]),
        rows,
    }
}

/// Every pair of policies per group and tested metric.
pub fn pairs_table(r: &Report) -> Table {
    let mut rows = Vec::new();
    for g in &r.groups {
        for (metric, c) in &g.tests {
            for p in &c.pairs {
                rows.push(vec![
                    g.label.clone(),
                    metric.label().to_string(),
                    format!("{} vs {}", p.a, p.b),
                    p.welch
                        .map_or("-".into(), |t| format!("{:.2}", t.statistic)),
                    fmt_opt_p(p.welch.map(|t| t.p_value)),
                    p.mann_whitney.map_or("-".into(), |t| fmt_num(t.statistic)),
                    fmt_opt_p(p.mann_whitney.map(|t| t.p_value)),
                    p.cohen_d.map_or("-".into(), |d| format!("{d:.2}")),
                    p.cliff_delta.map_or("-".into(), |d| format!("{d:.2}")),
                ]);
            }
        }
    }
    Table {
        title: "Exploratory: pairwise tests on the trial values (p unadjusted, as in the comparisons with the baseline; csv/pairs.csv adds Holm over the pairs of a group; effect sizes positive when the first policy is larger)".into(),
        header: strings(&[
            "group",
            "metric",
            "pair",
            "Welch t",
            "Welch p (unadjusted)",
            "Mann-Whitney U",
            "Mann-Whitney p (unadjusted)",
            "Cohen's d",
            "Cliff's delta",
        ]),
        rows,
    }
}

/// Trials per cell and status.
pub fn cells_table(r: &Report) -> Table {
    const OK: schedlab_store::query::Tally =
        schedlab_store::query::Tally::Status(schedlab_core::records::TrialStatus::Ok);
    let rows = r
        .cells
        .iter()
        .map(|c| {
            let other: Vec<String> = c
                .statuses
                .iter()
                .filter(|(s, _)| *s != OK)
                .map(|(s, n)| format!("{n} {}", s.name()))
                .collect();
            vec![
                r.groups[c.group].label.clone(),
                c.key.policy.clone(),
                format!("{}/{}", c.trials_ok, c.trials_total),
                if other.is_empty() {
                    "-".into()
                } else {
                    other.join(", ")
                },
                c.reason.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    Table {
        title: "Trials per cell".into(),
        header: strings(&["group", "policy", "ok/trials", "not ok", "reason"]),
        rows,
    }
}

/// Study 001's table for one panel: makespan (execution), response and turnaround,
/// median with its 95% CI, one row per measure and policy, one column per task count.
pub fn key_table(r: &Report, panel: usize) -> Table {
    let p = &r.panels[panel];
    let mut header = strings(&["measure", "policy"]);
    header.extend(p.groups.iter().map(|&g| tasks_phrase(r.groups[g].tasks)));
    let mut rows = Vec::new();
    for (metric, name) in [
        (Metric::Makespan, "execution (makespan, ms)"),
        (Metric::Response, "response (ms)"),
        (Metric::Turnaround, "turnaround (ms)"),
    ] {
        for policy in &p.policies {
            let mut row = vec![name.to_string(), policy.clone()];
            let mut any = false;
            for &g in &p.groups {
                let cell = r.groups[g]
                    .cells
                    .iter()
                    .find(|&&c| r.cells[c].key.policy == *policy)
                    .and_then(|&c| r.cells[c].summary(metric));
                any |= cell.is_some();
                row.push(cell.map_or("-".into(), |s| {
                    format!(
                        "{} {}",
                        fmt_num(s.summary.median),
                        fmt_median_ci(&s.summary, metric)
                    )
                }));
            }
            if any {
                rows.push(row);
            }
        }
    }
    Table {
        title: format!(
            "{}: execution, response and turnaround time, median [95% CI] over trials (response and turnaround: each trial's median over its tasks)",
            p.label
        ),
        header,
        rows,
    }
}

/// The environment record (JSON) as key/value rows, nested keys joined with '.'.
pub fn env_rows(env_json: Option<&str>) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            serde_json::Value::Array(a) if a.iter().any(|x| x.is_object()) => {
                for (i, v) in a.iter().enumerate() {
                    walk(&format!("{prefix}[{i}]"), v, out);
                }
            }
            serde_json::Value::String(s) => out.push((prefix.into(), s.clone())),
            serde_json::Value::Null => out.push((prefix.into(), "-".into())),
            other => out.push((prefix.into(), other.to_string())),
        }
    }
    let mut out = Vec::new();
    match env_json.map(serde_json::from_str::<serde_json::Value>) {
        Some(Ok(v)) => walk("", &v, &mut out),
        Some(Err(e)) => out.push(("(unreadable)".into(), e.to_string())),
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_record_flattens_to_dotted_keys() {
        let rows = env_rows(Some(
            r#"{"kernel":"6.1","privileges":{"is_root":true,"rlimit":null},"cpus":[0,1]}"#,
        ));
        assert_eq!(
            rows,
            vec![
                ("kernel".to_string(), "6.1".to_string()),
                ("privileges.is_root".into(), "true".into()),
                ("privileges.rlimit".into(), "-".into()),
                ("cpus".into(), "[0,1]".into()),
            ]
        );
        assert!(env_rows(None).is_empty());
        assert_eq!(env_rows(Some("{")).len(), 1);
    }

    #[test]
    fn the_verdict_legend_is_two_lines_within_120_columns_split_before_too_few() {
        assert!(VERDICT_LEGEND.iter().all(|l| l.chars().count() <= 120));
        assert!(VERDICT_LEGEND[0].ends_with("n.s. not significant;"));
        assert!(VERDICT_LEGEND[1].starts_with("too few:"));
    }
}
