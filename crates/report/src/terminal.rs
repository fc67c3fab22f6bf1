//! The per-cell summary table printed after a run, computed from the stored rows.

use super::model::tables::Table;
use schedlab_store::query::CellView;
use tabled::settings::Style;

/// Median of integers (mean of the two middle values for even counts); None when empty.
fn median(values: impl IntoIterator<Item = i64>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().map(|x| x as f64).collect();
    schedlab_analyze::median(&v)
}

/// A duration in ns, printed with a unit that keeps 3-4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".into(), f)
}

/// The workload with the axes that only some runs have (antagonists, I/O scheduler, kernel
/// settings).
fn workload_cell(c: &CellView) -> String {
    let mut s = c.workload.clone();
    if c.antagonists > 0 {
        s.push_str(&format!(" +{} antagonists", c.antagonists));
    }
    if let Some(io) = &c.io_scheduler {
        s.push_str(&format!(" io={io}"));
    }
    if let Some(settings) = &c.settings {
        s.push(' ');
        s.push_str(settings);
    }
    s
}

/// Renders one row per cell: medians over trials (makespan) and over tasks (the rest).
/// `wide`: every column; else the key ones (the axes that vary in the run, makespan,
/// response, turnaround and its maximum, run-queue wait, involuntary switches), which fit
/// 120 columns for typical runs.
pub fn render(cells: &[CellView], wide: bool) -> String {
    let varies = |f: &dyn Fn(&CellView) -> String| cells.iter().any(|c| f(c) != f(&cells[0]));
    // (heading, shown without --wide, value); the short heading is used without --wide.
    type Column = (&'static str, bool, Box<dyn Fn(&CellView) -> String>);
    let short = |heading: &'static str| match heading {
        "makespan p50" => "makespan",
        "response p50" => "response",
        "turnaround p50" => "turnaround",
        "turnaround max" => "max turnaround",
        "ivcsw/task p50" => "ivcsw",
        "rq wait/task p50" => "rq wait",
        other => other,
    };
    let resp =
        |c: &CellView| -> Vec<i64> { c.task_rows.iter().filter_map(|r| r.response_ns).collect() };
    let turn =
        |c: &CellView| -> Vec<i64> { c.task_rows.iter().filter_map(|r| r.turnaround_ns).collect() };
    let columns: Vec<Column> = vec![
        ("policy", true, Box::new(|c| c.policy.clone())),
        (
            "prio",
            varies(&|c| c.priorities.clone()),
            Box::new(|c| c.priorities.clone()),
        ),
        ("workload", true, Box::new(workload_cell)),
        ("tasks", true, Box::new(|c| c.tasks.to_string())),
        (
            "kind",
            varies(&|c| c.kind.clone()),
            Box::new(|c| c.kind.clone()),
        ),
        (
            "start",
            varies(&|c| c.start.clone()),
            Box::new(|c| c.start.clone()),
        ),
        (
            "cpus",
            varies(&|c| c.cpus.clone().unwrap_or_default()),
            Box::new(|c| c.cpus.clone().unwrap_or_else(|| "all".into())),
        ),
        (
            "ok/trials",
            true,
            Box::new(|c| {
                format!(
                    "{}/{}",
                    c.count("ok"),
                    c.statuses.iter().map(|(_, n)| n).sum::<i64>()
                )
            }),
        ),
        (
            "makespan p50",
            true,
            Box::new(|c| opt(median(c.makespans_ns.iter().copied()), fmt_ns)),
        ),
        (
            "response p50",
            true,
            Box::new(move |c| opt(median(resp(c)), fmt_ns)),
        ),
        (
            "response max",
            false,
            Box::new(move |c| opt(resp(c).iter().max().map(|&v| v as f64), fmt_ns)),
        ),
        (
            "turnaround p50",
            true,
            Box::new(move |c| opt(median(turn(c)), fmt_ns)),
        ),
        (
            "turnaround max",
            true,
            Box::new(move |c| opt(turn(c).iter().max().map(|&v| v as f64), fmt_ns)),
        ),
        (
            "cpu/task p50",
            false,
            Box::new(|c| opt(median(c.task_rows.iter().map(|r| r.cpu_ns)), fmt_ns)),
        ),
        (
            "vcsw/task p50",
            false,
            Box::new(|c| {
                opt(median(c.task_rows.iter().map(|r| r.nvcsw)), |v| {
                    format!("{v:.0}")
                })
            }),
        ),
        (
            "ivcsw/task p50",
            true,
            Box::new(|c| {
                opt(median(c.task_rows.iter().map(|r| r.nivcsw)), |v| {
                    format!("{v:.0}")
                })
            }),
        ),
        (
            "rq wait/task p50",
            true,
            Box::new(|c| opt(median(c.task_rows.iter().map(|r| r.run_delay_ns)), fmt_ns)),
        ),
    ];
    let shown: Vec<&Column> = columns.iter().filter(|(_, key, _)| wide || *key).collect();
    let mut b = tabled::builder::Builder::default();
    b.push_record(
        shown
            .iter()
            .map(|(h, _, _)| if wide { h } else { short(h) }.to_string()),
    );
    let mut notes = Vec::new();
    for c in cells {
        b.push_record(shown.iter().map(|(_, _, value)| value(c)));
        if let Some(r) = &c.reason {
            let bad: Vec<String> = c
                .statuses
                .iter()
                .filter(|(s, _)| s != "ok")
                .map(|(s, n)| format!("{n} {s}"))
                .collect();
            notes.push(format!(
                "{} {} x{}: {}: {}",
                c.policy,
                c.workload,
                c.tasks,
                bad.join(", "),
                r
            ));
        }
    }
    let mut out = b.build().with(Style::sharp()).to_string();
    out.push('\n');
    if !wide {
        out.push_str("medians over trials (makespan) or over every task of every trial (response, turnaround, ivcsw: involuntary\nswitches per task, rq wait: run-queue wait per task); max turnaround: the slowest task; --wide shows every column\n");
    }
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// A table drawn with box characters, its title above.
pub fn terminal_table(t: &Table) -> String {
    let mut b = tabled::builder::Builder::default();
    b.push_record(t.header.clone());
    for row in &t.rows {
        b.push_record(row.clone());
    }
    format!(
        "{}\n{}\n",
        t.title,
        b.build().with(tabled::settings::Style::sharp())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_store::query::TaskRow;

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert_eq!(median([3, 1, 2]), Some(2.0));
        assert_eq!(median([4, 1, 2, 3]), Some(2.5));
        assert_eq!(median(Vec::<i64>::new()), None);
    }

    #[test]
    fn durations_get_readable_units() {
        assert_eq!(fmt_ns(1_500_000_000.0), "1.500 s");
        assert_eq!(fmt_ns(2_345_000.0), "2.35 ms");
        assert_eq!(fmt_ns(12_300.0), "12.3 us");
        assert_eq!(fmt_ns(80.0), "80 ns");
    }

    #[test]
    fn table_shows_medians_and_skip_reasons() {
        let ok = CellView {
            policy: "other".into(),
            priorities: "same".into(),
            workload: "cpu:pi".into(),
            tasks: 2,
            statuses: vec![("ok".into(), 2)],
            makespans_ns: vec![10_000_000, 30_000_000],
            task_rows: vec![
                TaskRow {
                    response_ns: Some(1000),
                    turnaround_ns: Some(5_000_000),
                    nivcsw: 4,
                    ..Default::default()
                },
                TaskRow {
                    response_ns: Some(3000),
                    turnaround_ns: Some(9_000_000),
                    nivcsw: 6,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let skipped = CellView {
            policy: "fifo".into(),
            workload: "cpu:pi".into(),
            tasks: 2,
            statuses: vec![("skipped".into(), 3)],
            reason: Some("SCHED_FIFO refused (EPERM)".into()),
            ..Default::default()
        };
        let text = render(&[ok.clone(), skipped.clone()], true);
        assert!(text.contains("20.00 ms"), "{text}");
        assert!(text.contains("3.0 us"), "{text}");
        assert!(text.contains("0/3"), "{text}");
        assert!(
            text.contains("fifo cpu:pi x2: 3 skipped: SCHED_FIFO refused (EPERM)"),
            "{text}"
        );
    }
}
