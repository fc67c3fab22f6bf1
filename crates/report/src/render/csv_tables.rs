//! Every table of a report as CSV (csv/*.csv), with full-precision numbers and one column
//! per axis, for spreadsheets and scripts. Empty fields mean "not computed".

use super::tables::env_rows;
use crate::error::RenderError;
use crate::model::{Metric, MetricSummary, Report};

type Result<T, E = RenderError> = std::result::Result<T, E>;

/// The axis columns that identify a group.
const GROUP_AXES: [&str; 6] = ["workload", "tasks", "priorities", "kind", "start", "cpus"];

/// The axis values of group `g`, in [`GROUP_AXES`] order.
fn group_axes(r: &Report, g: usize) -> Vec<String> {
    let k = &r.cells[r.groups[g].cells[0]].key;
    vec![
        k.workload.clone(),
        k.tasks.to_string(),
        k.priorities.name().to_string(),
        k.kind.name().to_string(),
        k.start.name().to_string(),
        k.cpus.clone().unwrap_or_default(),
    ]
}

/// A number with 10 significant digits, trailing zeros dropped: full precision for any
/// measurement, without the last-bit noise of binary floating point (23.459999999999997);
/// below 1e-4 in scientific notation.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            String::new()
        } else {
            format!("{}", v + 0.0)
        };
    }
    if v.abs() < 1e-4 {
        // Tiny p-values: scientific notation, which every CSV reader parses.
        let s = format!("{v:.9e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (10 - v.abs().log10().ceil() as i32).clamp(0, 17) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, num)
}

/// One CSV document from a header and rows.
fn document(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for row in rows {
        w.write_record(&row)?;
    }
    Ok(String::from_utf8(
        w.into_inner().map_err(|e| e.into_error())?,
    )?)
}

/// A header of the group axes followed by `rest`.
fn with_axes(rest: &[&'static str]) -> Vec<&'static str> {
    GROUP_AXES.iter().chain(rest).copied().collect()
}

fn summaries(r: &Report) -> Result<String> {
    let header = with_axes(&[
        "policy",
        "metric",
        "unit",
        "level",
        "n",
        "mean",
        "sd",
        "median",
        "min",
        "max",
        "range",
        "p5",
        "p95",
        "median_ci_lo",
        "median_ci_hi",
        "median_ci_coverage",
        "mean_ci_lo",
        "mean_ci_hi",
        "values",
    ]);
    let mut rows = Vec::new();
    for c in &r.cells {
        let over = |m: &MetricSummary| {
            if m.metric.per_task() {
                "trial_medians"
            } else {
                "trials"
            }
        };
        let headline = c.summaries.iter().map(|m| (m, over(m)));
        let pooled = c.pooled.iter().map(|m| (m, "tasks_pooled"));
        for (m, values) in headline.chain(pooled) {
            let s = &m.summary;
            let mut row = group_axes(r, c.group);
            row.extend([
                c.key.policy.clone(),
                m.metric.key().into(),
                m.metric.unit().into(),
                m.metric.level().into(),
                s.n.to_string(),
                num(s.mean),
                num(s.sd),
                num(s.median),
                num(s.min),
                num(s.max),
                num(s.range),
                num(s.p5),
                num(s.p95),
                num(s.median_ci.0),
                num(s.median_ci.1),
                num(s.median_ci_coverage),
                num(s.mean_ci.0),
                num(s.mean_ci.1),
                values.to_string(),
            ]);
            rows.push(row);
        }
    }
    document(&header, rows)
}

fn exploratory(r: &Report) -> Result<String> {
    let header = with_axes(&[
        "metric",
        "policies",
        "baseline",
        "policy",
        "baseline_median",
        "median",
        "n_baseline",
        "n_policy",
        "unit",
        "effect_scale",
        "effect",
        "ci_lo",
        "ci_hi",
        "ci_coverage",
        "p_unadjusted",
        "method",
        "cliff_delta",
        "significant_at_0.05",
        "significant_at_0.01",
        "min_p",
        "too_few_trials",
        "trials_needed",
        "min_detectable",
        "anova_p",
        "kruskal_wallis_p",
        "sentence",
    ]);
    let label = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let rows = r.exploratory.iter().map(|f| {
        let mut row = group_axes(r, f.group);
        row.extend([
            f.metric.key().into(),
            f.policies.to_string(),
            f.baseline.clone(),
            f.policy.clone(),
            num(f.baseline_median),
            num(f.median),
            f.n_baseline.to_string(),
            f.n_policy.to_string(),
            label(serde_json::to_value(f.unit).unwrap_or_default()),
            f.effect
                .map(|e| label(serde_json::to_value(e.scale).unwrap_or_default()))
                .unwrap_or_default(),
            opt(f.effect.map(|e| e.estimate)),
            opt(f.effect.map(|e| e.lo)),
            opt(f.effect.map(|e| e.hi)),
            opt(f.effect.map(|e| e.coverage)),
            opt(f.p),
            f.method
                .map(|m| label(serde_json::to_value(m).unwrap_or_default()))
                .unwrap_or_default(),
            opt(f.cliff_delta),
            f.significant_at_05.to_string(),
            f.significant_at_01.to_string(),
            opt(f.min_p),
            f.too_few_trials.to_string(),
            f.trials_needed.map_or_else(String::new, |n| n.to_string()),
            opt(f.min_detectable),
            opt(f.anova_p),
            opt(f.kruskal_p),
            super::exploratory::sentence(&r.groups[f.group].label, f),
        ]);
        row
    });
    document(&header, rows)
}

fn tests(r: &Report) -> Result<String> {
    let header = with_axes(&[
        "metric",
        "anova_f",
        "anova_df_between",
        "anova_df_within",
        "anova_p",
        "kruskal_wallis_h",
        "kruskal_wallis_df",
        "kruskal_wallis_p",
    ]);
    let mut rows = Vec::new();
    for (gi, g) in r.groups.iter().enumerate() {
        for (metric, c) in &g.tests {
            let mut row = group_axes(r, gi);
            row.push(metric.key().into());
            row.extend([
                opt(c.anova.map(|t| t.statistic)),
                opt(c.anova.map(|t| t.df.0)),
                opt(c.anova.map(|t| t.df.1)),
                opt(c.anova.map(|t| t.p_value)),
                opt(c.kruskal_wallis.map(|t| t.statistic)),
                opt(c.kruskal_wallis.map(|t| t.df.0)),
                opt(c.kruskal_wallis.map(|t| t.p_value)),
            ]);
            rows.push(row);
        }
    }
    document(&header, rows)
}

fn pairs(r: &Report) -> Result<String> {
    let header = with_axes(&[
        "metric",
        "a",
        "b",
        "welch_t",
        "welch_df",
        "welch_p",
        "welch_p_holm",
        "mann_whitney_u",
        "mann_whitney_p",
        "mann_whitney_p_holm",
        "cohen_d",
        "cliff_delta",
    ]);
    let mut rows = Vec::new();
    for (gi, g) in r.groups.iter().enumerate() {
        for (metric, c) in &g.tests {
            for p in &c.pairs {
                let mut row = group_axes(r, gi);
                row.extend([
                    metric.key().into(),
                    p.a.clone(),
                    p.b.clone(),
                    opt(p.welch.map(|t| t.statistic)),
                    opt(p.welch.map(|t| t.df.0)),
                    opt(p.welch.map(|t| t.p_value)),
                    opt(p.welch_p_holm),
                    opt(p.mann_whitney.map(|t| t.statistic)),
                    opt(p.mann_whitney.map(|t| t.p_value)),
                    opt(p.mann_whitney_p_holm),
                    opt(p.cohen_d),
                    opt(p.cliff_delta),
                ]);
                rows.push(row);
            }
        }
    }
    document(&header, rows)
}

fn cells(r: &Report) -> Result<String> {
    let header = with_axes(&["policy", "trials_ok", "trials_total", "statuses", "reason"]);
    let rows = r.cells.iter().map(|c| {
        let mut row = group_axes(r, c.group);
        row.extend([
            c.key.policy.clone(),
            c.trials_ok.to_string(),
            c.trials_total.to_string(),
            c.statuses
                .iter()
                .map(|(s, n)| format!("{}:{n}", s.name()))
                .collect::<Vec<_>>()
                .join(";"),
            c.reason.clone().unwrap_or_default(),
        ]);
        row
    });
    document(&header, rows)
}

/// Study 001's key tables in long form: one row per panel, measure, policy and task count.
fn key_tables(r: &Report) -> Result<String> {
    let header = [
        "panel",
        "measure",
        "policy",
        "tasks",
        "median_ms",
        "median_ci_lo_ms",
        "median_ci_hi_ms",
    ];
    let mut rows = Vec::new();
    for p in &r.panels {
        for metric in [Metric::Makespan, Metric::Response, Metric::Turnaround] {
            for policy in &p.policies {
                for &g in &p.groups {
                    let found = r.groups[g]
                        .cells
                        .iter()
                        .find(|&&c| r.cells[c].key.policy == *policy)
                        .and_then(|&c| r.cells[c].summary(metric));
                    if let Some(s) = found {
                        rows.push(vec![
                            p.label.clone(),
                            metric.key().into(),
                            policy.clone(),
                            r.groups[g].tasks.to_string(),
                            num(s.summary.median),
                            num(s.summary.median_ci.0),
                            num(s.summary.median_ci.1),
                        ]);
                    }
                }
            }
        }
    }
    document(&header, rows)
}

/// Every trial's conditions at full precision, with whether it is left out.
fn trial_conditions(q: &crate::model::quality::Quality) -> Result<String> {
    let header = [
        "trial_id",
        "cell_index",
        "trial_index",
        "round",
        "status",
        "speed_before",
        "speed_after",
        "trial_steal_pct",
        "noisy",
        "rt_throttled",
        "outside_cpu_ns",
        "outside_share",
        "interference_source",
        "disturbed",
        "outside_process_ns",
        "outside_process_share",
        "outside_kthread_ns",
        "outside_irq_ns",
        "kernel_cpu_ns",
        "speed_steady",
        "speed_in_trial",
        "slowed",
        "retry",
        "retried",
        "left_out",
    ];
    let int = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
    let rows = q.trials.iter().map(|t| {
        let b = |v: Option<bool>| v.map_or(String::new(), |b| u8::from(b).to_string());
        vec![
            t.trial_id.to_string(),
            t.cell_index.to_string(),
            t.trial_index.to_string(),
            t.round.to_string(),
            t.status.name().to_string(),
            opt(t.speed_before),
            opt(t.speed_after),
            opt(t.steal_pct),
            b(Some(t.noisy)),
            b(t.rt_throttled),
            int(t.outside_cpu_ns),
            opt(t.outside_share),
            t.interference_source.clone().unwrap_or_default(),
            b(t.outside_share
                .or(t.outside_process_share)
                .map(|_| t.disturbed)),
            int(t.outside_process_ns),
            opt(t.outside_process_share),
            int(t.outside_kthread_ns),
            int(t.outside_irq_ns),
            int(t.kernel_cpu_ns),
            opt(t.speed_steady),
            opt(t.speed_in_trial),
            b(t.slowed),
            t.retry.to_string(),
            b(Some(t.retried)),
            b(Some(q.left_out.ids.contains(&t.trial_id))),
        ]
    });
    document(&header, rows)
}

/// Runs with reference speeds: every trial's conditions at full precision; adaptive runs:
/// the precision each cell reached.
fn quality(q: &crate::model::quality::Quality) -> Result<Vec<(&'static str, String)>> {
    let mut out = Vec::new();
    if q.trials.iter().any(|t| t.speed_before.is_some()) {
        out.push(("trial_conditions.csv", trial_conditions(q)?));
    }
    if let Some((t, cells)) = &q.precision {
        let header = [
            "cell",
            "metric",
            "trials",
            "median",
            "half_width_pct",
            "target_pct",
            "met",
        ];
        let rows = cells.iter().map(|c| {
            vec![
                super::notes::cell_name(&c.label),
                t.adaptive.metric.key().to_string(),
                c.trials.to_string(),
                opt(c.median),
                opt(c.half_width_pct),
                num(t.precision * 100.0),
                u8::from(c.met).to_string(),
            ]
        });
        out.push(("precision.csv", document(&header, rows)?));
    }
    Ok(out)
}

/// Every table as (file name, CSV text).
pub fn tables(r: &Report) -> Result<Vec<(&'static str, String)>> {
    let mut out = vec![
        ("summaries.csv", summaries(r)?),
        ("exploratory.csv", exploratory(r)?),
        ("tests.csv", tests(r)?),
        ("pairs.csv", pairs(r)?),
        ("cells.csv", cells(r)?),
        ("key_tables.csv", key_tables(r)?),
        (
            "warnings.csv",
            document(
                &["message"],
                r.warnings.iter().map(|w| vec![super::notes::warning(w)]),
            )?,
        ),
        (
            "environment.csv",
            document(
                &["key", "value"],
                env_rows(r.run.env_json.as_deref())
                    .into_iter()
                    .map(|(k, v)| vec![k, v]),
            )?,
        ),
    ];
    if let Some(c) = &r.claims {
        out.insert(0, ("claims.csv", super::claims::csv::document(c)?));
    }
    // Periodic runs: every wake-up latency percentile per cell, in ns at full precision.
    let latency = crate::model::kernel::latency_rows(&r.kernel);
    if !latency.is_empty() {
        let rows = latency.into_iter().map(|c| {
            vec![
                c.cell_index.to_string(),
                c.workload,
                c.label,
                c.wakeups.to_string(),
                c.min_ns.to_string(),
                c.p50_ns.to_string(),
                c.p90_ns.to_string(),
                c.p99_ns.to_string(),
                c.p999_ns.to_string(),
                c.max_ns.to_string(),
            ]
        });
        let header = [
            "cell_index",
            "workload",
            "cell",
            "wakeups",
            "min_ns",
            "p50_ns",
            "p90_ns",
            "p99_ns",
            "p999_ns",
            "max_ns",
        ];
        out.push(("latency.csv", document(&header, rows)?));
    }
    if let Some(t) = super::sections::io_tests_table(&r.iosched) {
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        out.push(("iosched_tests.csv", document(&header, t.rows)?));
    }
    if !r.cgroups.groups.is_empty() {
        out.push(("groups.csv", groups_csv(&r.cgroups)?));
    }
    out.extend(quality(&r.quality)?);
    Ok(out)
}

/// Every task group of every cell, medians at full precision.
fn groups_csv(v: &crate::model::cgroups::CgroupView) -> Result<String> {
    let o = |x: Option<f64>| x.map_or_else(String::new, num);
    let rows = v.groups.iter().map(|g| {
        vec![
            g.cell_index.to_string(),
            g.cell.clone(),
            g.name.clone(),
            g.tasks.to_string(),
            g.weight.to_string(),
            num(g.weight_share),
            o(g.share),
            o(g.limit_cpus),
            super::sections::cpus(g),
            o(g.nr_periods),
            o(g.nr_throttled),
            o(g.throttled_ms),
            o(g.usage_ms),
            o(g.p99_us),
            g.trials.to_string(),
        ]
    });
    let header = [
        "cell_index",
        "cell",
        "group",
        "tasks",
        "weight",
        "weight_share",
        "cpu_share_contended",
        "cpu_max_cpus",
        "cpus",
        "nr_periods",
        "nr_throttled",
        "throttled_ms",
        "usage_ms",
        "p99_wakeup_us",
        "trials",
    ];
    document(&header, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_ten_significant_digits_without_float_noise() {
        assert_eq!(num(23.459999999999997), "23.46");
        assert_eq!(num(0.00007583892821492239), "7.583892821e-5");
        assert_eq!(num(0.0003), "0.0003");
        assert_eq!(num(2e-12), "2e-12");
        assert_eq!(num(1234567.0), "1234567");
        assert_eq!(num(-0.5), "-0.5");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(f64::NAN), "");
    }
}
