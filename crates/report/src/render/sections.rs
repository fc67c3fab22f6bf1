//! The workloads', the kernel's, the I/O schedulers' and the task groups' tables as rows of
//! text, formatted from the model's typed rows (terminal, Markdown, HTML and CSV print them).

use crate::model::cgroups::{CgroupView, GroupSummary};
use crate::model::iosched::{self, SchedulerSamples, Significance, Tested, COLUMNS};
use crate::model::kernel::{self, KernelView};
use crate::model::workload::{self, WorkloadTable};
use crate::model::{Metric, Report};
use crate::render::fmt::{fmt_num, fmt_value};
use crate::render::text_table::Table;

fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// Whether a workload table's column is shown within 120 columns or only by `stats --all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// Always shown.
    Key,
    /// Only with `--all` (the p90 columns).
    Wide,
}

/// A metric's compact column heading in the workload tables ("wake p99", "req p50", "msg/s",
/// "miss %"), and whether the narrow table keeps it.
fn column(m: Metric) -> (&'static str, Width) {
    use Metric as M;
    use Width::{Key, Wide};
    match m {
        M::Makespan => ("time (ms)", Key),
        M::MessagesPerS => ("msg/s", Key),
        M::MessageP50 => ("msg p50", Key),
        M::MessageP99 => ("msg p99", Key),
        M::Rps => ("req/s", Key),
        M::WakeupP50 => ("wake p50", Key),
        M::WakeupP90 => ("wake p90", Wide),
        M::WakeupP99 => ("wake p99", Key),
        M::WakeupP999 => ("wake p99.9", Key),
        M::RequestP50 => ("req p50", Key),
        M::RequestP90 => ("req p90", Wide),
        M::RequestP99 => ("req p99", Key),
        M::RequestP999 => ("req p99.9", Key),
        M::RoundTrip => ("us/round trip", Key),
        M::SwitchTime => ("us/switch", Key),
        M::TrialVcsw => ("vol. switches", Key),
        M::TrialIvcsw => ("invol. switches", Key),
        M::MissPct => ("miss %", Key),
        M::Misses => ("misses", Key),
        M::SlackP1 => ("slack p1", Key),
        M::SlackP50 => ("slack p50", Key),
        M::SlackP99 => ("slack p99", Key),
        M::LatenessMax => ("max late", Key),
        M::Response
        | M::Turnaround
        | M::RunSpan
        | M::Cpu
        | M::Vcsw
        | M::Ivcsw
        | M::RqWait
        | M::TrialCpu
        | M::MakespanPerTask
        | M::CpuPerTask
        | M::CswPerTask
        | M::JainCpu
        | M::EndGroups => (m.label(), Key),
    }
}

/// The workload tables `stats` prints; without `all`, within 120 columns (no p90 columns).
pub fn workload_tables(r: &Report, all: bool) -> Vec<Table> {
    workload::tables(r)
        .iter()
        .map(|t| workload_table(t, all))
        .collect()
}

/// One workload's table: policy, the parameter behind the task count, the other axes (only
/// when some cell has any), ok trials and the medians; `all`: the p90 columns too.
pub fn workload_table(t: &WorkloadTable, all: bool) -> Table {
    let axis = t.rows.first().map_or("tasks", |r| r.axis.0);
    let other = t.rows.iter().any(|r| r.other_axes.is_some());
    let shown: Vec<usize> = (0..t.metrics.len())
        .filter(|&i| all || column(t.metrics[i]).1 == Width::Key)
        .collect();
    let mut header = strings(&["policy", axis]);
    if other {
        header.push("other axes".into());
    }
    header.push("n".into());
    header.extend(shown.iter().map(|&i| column(t.metrics[i]).0.to_string()));
    let rows = t
        .rows
        .iter()
        .map(|row| {
            let mut out = vec![row.policy.clone(), row.axis.1.to_string()];
            if other {
                out.push(row.other_axes.clone().unwrap_or_else(|| "-".into()));
            }
            out.push(row.trials.to_string());
            out.extend(shown.iter().map(|&i| {
                row.medians[i].map_or_else(|| "-".into(), |v| fmt_value(v, t.metrics[i]))
            }));
            out
        })
        .collect();
    Table {
        title: format!(
            "{}: the workload's figures, medians over trials (latencies and slack in us)",
            t.workload
        ),
        header,
        rows,
    }
}

/// Nanoseconds as microseconds with three significant figures.
fn us(ns: u64) -> String {
    let v = ns as f64 / 1e3;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The wake-up latency percentiles of every periodic cell (None when there is none).
pub fn latency_table(v: &KernelView) -> Option<Table> {
    let rows = kernel::latency_rows(v);
    if rows.is_empty() {
        return None;
    }
    let header = strings(&[
        "workload",
        "cell",
        "wake-ups",
        "min (us)",
        "p50 (us)",
        "p90 (us)",
        "p99 (us)",
        "p99.9 (us)",
        "max (us)",
    ]);
    let rows = rows
        .into_iter()
        .map(|c| {
            vec![
                c.workload,
                c.label,
                c.wakeups.to_string(),
                us(c.min_ns),
                us(c.p50_ns),
                us(c.p90_ns),
                us(c.p99_ns),
                us(c.p999_ns),
                us(c.max_ns),
            ]
        })
        .collect();
    Some(Table {
        title: "Wake-up latency (actual - intended wake time) of periodic tasks, all measured tasks and ok trials merged; HDR histograms, relative error <= 1%".into(),
        header,
        rows,
    })
}

/// A p-value with its mark, e.g. `0.0031 **`.
fn with_mark(t: &Tested) -> String {
    match t.significance {
        Significance::None => format!("{:.4}", t.p),
        Significance::Alpha05 => format!("{:.4} *", t.p),
        Significance::Alpha01 => format!("{:.4} **", t.p),
    }
}

/// The tests across I/O schedulers ([`iosched::tests`]); None when no workload has two.
pub fn io_tests_table(all: &[SchedulerSamples]) -> Option<Table> {
    let rows = iosched::tests(all);
    if rows.is_empty() {
        return None;
    }
    let counts = |v: &[usize]| {
        v.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    let statistic = |t: Option<Tested>| t.map_or("-".into(), |t| format!("{:.3}", t.statistic));
    let p = |t: Option<Tested>| t.as_ref().map_or("-".into(), with_mark);
    let rows = rows
        .into_iter()
        .map(|r| {
            vec![
                r.workload,
                COLUMNS[r.column].1.to_string(),
                counts(&r.trials),
                statistic(r.anova),
                p(r.anova),
                statistic(r.kruskal),
                p(r.kruskal),
                counts(&r.samples),
            ]
        })
        .collect();
    Some(Table {
        title: "System-wide samples across I/O schedulers (study 004): one-way ANOVA and Kruskal-Wallis per column on per-trial means (each trial's samples averaged to one value; n = trials per scheduler, since samples 100 ms apart within a trial are not independent); * p < 0.05, ** p < 0.01, not adjusted across columns.".into(),
        header: strings(&[
            "workload",
            "column",
            "trials per scheduler",
            "ANOVA F",
            "ANOVA p",
            "Kruskal-Wallis H",
            "Kruskal-Wallis p",
            "samples per scheduler",
        ]),
        rows,
    })
}

/// µs as written in `cpu.max` flags: "20ms", "1500us".
fn duration(us: i64) -> String {
    if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// A group's `cpu.max` as written, "20ms/100ms", or "-".
fn limit(g: &GroupSummary) -> String {
    g.cpu_max_us.map_or("-".into(), |(q, p)| {
        format!("{}/{}", duration(q), duration(p))
    })
}

/// A group's CPUs, "1 (partition)", "0-1", or "-" (also in `groups.csv`).
pub fn cpus(g: &GroupSummary) -> String {
    match (&g.cpus, g.partition) {
        (Some(c), true) => format!("{c} (partition)"),
        (Some(c), false) => c.clone(),
        (None, _) => "-".into(),
    }
}

/// A number with three significant figures, or "-".
fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), fmt_num)
}

/// The table of every task group (None without groups).
pub fn groups_table(v: &CgroupView) -> Option<Table> {
    if v.groups.is_empty() {
        return None;
    }
    let rows = v
        .groups
        .iter()
        .map(|g| {
            vec![
                g.cell.clone(),
                g.name.clone(),
                g.tasks.to_string(),
                format!("{} ({:.3})", g.weight, g.weight_share),
                g.share.map_or_else(|| "-".into(), |s| format!("{s:.3}")),
                limit(g),
                cpus(g),
                format!("{} / {}", num(g.nr_throttled), num(g.nr_periods)),
                num(g.throttled_ms),
                num(g.usage_ms),
                num(g.p99_us),
                g.trials.to_string(),
            ]
        })
        .collect();
    Some(Table {
        title: "Task groups (CPU cgroups): medians over ok trials of the kernel's cpu.stat figures over the measured period (release to the last task's end); CPU share: the group's part of its cell's groups' CPU time from release to the first task's end, while every group ran (compare with the weight share when the groups share CPUs)".into(),
        header: strings(&[
            "cell",
            "group",
            "tasks",
            "weight (share)",
            "CPU share while all ran",
            "cpu.max",
            "cpus",
            "throttled / periods",
            "throttled (ms)",
            "CPU (ms)",
            "p99 wake-up (us)",
            "trials",
        ]),
        rows,
    })
}

#[cfg(test)]
#[path = "sections_tests.rs"]
mod tests;
