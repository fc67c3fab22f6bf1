//! The per-cell summary table printed after a run, formatted from the model's lines
//! ([`crate::model::run_table::lines`]), and any [`Table`] drawn for a terminal.

use crate::model::run_table::CellLine;
use crate::render::fmt::fmt_ns;
use crate::render::text_table::Table;
use tabled::settings::Style;

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".into(), f)
}

/// A count's median: whole, or with two decimals between whole counts ("2.50").
fn count(v: Option<f64>) -> String {
    opt(v, |v| {
        crate::render::fmt::fmt_value(v, crate::model::Metric::Ivcsw)
    })
}

/// A column of the table after a run: heading (`--wide`), short heading (without it),
/// shown without `--wide`, value.
struct Column {
    heading: &'static str,
    short: &'static str,
    key: bool,
    value: fn(&CellLine) -> String,
}

const fn column(
    heading: &'static str,
    short: &'static str,
    key: bool,
    value: fn(&CellLine) -> String,
) -> Column {
    Column {
        heading,
        short,
        key,
        value,
    }
}

/// Every column; the axes prio, kind, start and cpus are key columns where they vary.
const COLUMNS: [Column; 17] = [
    column("policy", "policy", true, |c| c.policy.name().to_string()),
    column("prio", "prio", false, |c| c.priorities.name().to_string()),
    column("workload", "workload", true, |c| c.workload.clone()),
    column("tasks", "tasks", true, |c| c.tasks.to_string()),
    column("kind", "kind", false, |c| c.kind.name().to_string()),
    column("start", "start", false, |c| c.start.name().to_string()),
    column("cpus", "cpus", false, |c| {
        c.cpus.clone().unwrap_or_else(|| "all".into())
    }),
    column("ok/trials", "ok/trials", true, |c| {
        format!("{}/{}", c.ok, c.trials)
    }),
    column("makespan p50", "makespan", true, |c| {
        opt(c.makespan_p50_ns, fmt_ns)
    }),
    column("response p50", "response", true, |c| {
        opt(c.response_p50_ns, fmt_ns)
    }),
    column("response max", "response max", false, |c| {
        opt(c.response_max_ns, fmt_ns)
    }),
    column("turnaround p50", "turnaround", true, |c| {
        opt(c.turnaround_p50_ns, fmt_ns)
    }),
    column("turnaround max", "max turnaround", true, |c| {
        opt(c.turnaround_max_ns, fmt_ns)
    }),
    column("cpu/task p50", "cpu/task p50", false, |c| {
        opt(c.cpu_p50_ns, fmt_ns)
    }),
    column("vcsw/task p50", "vcsw/task p50", false, |c| {
        count(c.vcsw_p50)
    }),
    column("ivcsw/task p50", "ivcsw", true, |c| count(c.ivcsw_p50)),
    column("rq wait/task p50", "rq wait", true, |c| {
        opt(c.rq_wait_p50_ns, fmt_ns)
    }),
];

/// Renders one row per cell: medians of the trial values, as in `schedlab stats` (makespan
/// over trials; per-task metrics over trials of each trial's median over its tasks).
/// `wide`: every column; else the key ones (the axes that vary in the run, makespan,
/// response, turnaround and its maximum, run-queue wait, involuntary switches), which fit
/// 120 columns for typical runs.
pub fn render(lines: &[CellLine], wide: bool) -> String {
    let varies = |f: fn(&CellLine) -> String| lines.iter().any(|c| f(c) != f(&lines[0]));
    let shown: Vec<&Column> = COLUMNS
        .iter()
        .filter(|c| wide || c.key || (is_axis(c.heading) && varies(c.value)))
        .collect();
    let mut b = tabled::builder::Builder::default();
    b.push_record(
        shown
            .iter()
            .map(|c| if wide { c.heading } else { c.short }.to_string()),
    );
    for line in lines {
        b.push_record(shown.iter().map(|c| (c.value)(line)));
    }
    let mut out = b.build().with(Style::sharp()).to_string();
    out.push('\n');
    if !wide {
        out.push_str("medians over trials, per-task metrics of each trial's median over its tasks, as in `schedlab stats` (ivcsw:\ninvoluntary switches per task, rq wait: run-queue wait per task); max turnaround: the slowest task; --wide: every column\n");
    }
    for n in lines.iter().filter_map(|l| l.note.as_ref()) {
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// The axes shown without `--wide` only where they vary.
fn is_axis(heading: &str) -> bool {
    matches!(heading, "prio" | "kind" | "start" | "cpus")
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
    use crate::model::run_table::lines;
    use schedlab_core::policy::{PolicyKind, PriorityMode};
    use schedlab_core::records::TrialStatus;
    use schedlab_store::query::{CellView, Tally, TaskRow};

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
            policy: PolicyKind::Other,
            priorities: PriorityMode::Same,
            workload: "cpu:pi".into(),
            tasks: 2,
            statuses: vec![(Tally::Status(TrialStatus::Ok), 2)],
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
            policy: PolicyKind::Fifo,
            workload: "cpu:pi".into(),
            tasks: 2,
            statuses: vec![(Tally::Status(TrialStatus::Skipped), 3)],
            reason: Some("SCHED_FIFO refused (EPERM)".into()),
            ..Default::default()
        };
        let text = render(&lines(&[ok.clone(), skipped.clone()]), true);
        assert!(text.contains("20.00 ms"), "{text}");
        assert!(text.contains("3.0 us"), "{text}");
        assert!(text.contains("0/3"), "{text}");
        assert!(
            text.contains("fifo cpu:pi x2: 3 skipped: SCHED_FIFO refused (EPERM)"),
            "{text}"
        );
    }
}
