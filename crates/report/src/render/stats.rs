//! The text `schedlab stats` prints: the claims, warnings and the exploratory comparisons of
//! the primary metric, then the run's own tables (trials per cell, drift, the workloads' and
//! the kernel's figures) within 120 columns: one screen for a run of about 10 cells (issue 18).
//! `--all` adds every metric's comparisons, the summary and pairwise tables with every column,
//! the pooled per-task tables and the methods.

use super::terminal::terminal_table;
use super::{sections, tables};
use crate::model::{Metric, Report, EXPLORATORY_HEADING, EXPLORATORY_NOTE};
use crate::render::text_table::Table;

/// Longest reason shown in the trials table without `--all` (the warnings have it whole).
const REASON_CHARS: usize = 48;

/// The text printed by `schedlab stats`; `all` (`--all`): every column, every tested metric's
/// exploratory comparisons and the pooled per-task tables, else the key columns, which fit 120 columns for
/// typical runs.
pub fn render_stats(r: &Report, all: bool) -> String {
    let mut out = format!(
        "run {} \"{}\" ({}), started {}, seed {}\n",
        r.run.run_id, r.run.name, r.run.status, r.run.started_at, r.run.seed
    );
    out += &r
        .claims
        .as_ref()
        .map(super::claims::terminal::render)
        .map(|c| format!("\n{c}"))
        .unwrap_or_default();
    out += &warnings_section(r);
    out += &exploratory_section(r, all);
    for t in kernel_tables(r, all) {
        out += &terminal_table(&t);
        out += "\n";
    }
    out += &terminal_table(&cells_table(r, all));
    for t in detail_tables(r, all) {
        out += "\n";
        out += &terminal_table(&t);
    }
    if !all {
        out += "\n(the primary metric only; --all adds every metric's comparisons, summaries and pairwise tests, the per-task metrics pooled over tasks, and the methods)\n";
        return out;
    }
    out += "\nMethods\n";
    for note in super::notes::method_notes(r) {
        out += &format!("- {note}\n");
    }
    out
}

/// The warnings, one line per kind, with a pointer to the full list; empty without warnings.
fn warnings_section(r: &Report) -> String {
    if r.warning_kinds.is_empty() {
        return String::new();
    }
    let mut out = "\nWarnings\n".to_string();
    for k in &r.warning_kinds {
        out += &format!("- {}\n", super::notes::kind_line(k));
    }
    if r.warnings_grouped() {
        out += &format!(
            "- ({} warnings in all; `schedlab show {}` lists every stored warning)\n",
            r.warnings.len(),
            r.run.run_id
        );
    }
    out
}

/// The headline exploratory comparisons as sentences, then their table (narrow: one line per group
/// for the primary metric, with the legend in two lines).
fn exploratory_section(r: &Report, all: bool) -> String {
    let mut out = format!("\n{EXPLORATORY_HEADING}\n{EXPLORATORY_NOTE}\n");
    // Without `all`, the primary metric's sentences only (its table follows).
    let headline: Vec<String> = r
        .exploratory
        .iter()
        .filter(|f| f.metric.headline())
        .filter(|f| all || f.metric == r.primary_metric)
        .map(|f| super::exploratory::sentence(&r.groups[f.group].label, f))
        .collect();
    if headline.is_empty() {
        out += "- No group has two policies with data to compare.\n";
    }
    for s in headline {
        out += &format!("- {s}\n");
    }
    out += "\n";
    if r.exploratory.is_empty() {
        return out;
    }
    if all {
        out += &terminal_table(&tables::exploratory_table(r));
    } else {
        if let Some(t) = tables::primary_table(r) {
            out += &terminal_table(&t);
        }
        out += "(every tested metric of every group: --all)\n";
        // The legend in its two halves, one line each (within 120 columns).
        for half in tables::VERDICT_LEGEND {
            out += &format!("{half}\n");
        }
    }
    out + "\n"
}

/// The kernel's tables: wake-up latency, I/O scheduler tests, task groups. Without `all`:
/// latency without min and p99.9, I/O scheduler tests without their statistics (the
/// p-values stay).
fn kernel_tables(r: &Report, all: bool) -> Vec<Table> {
    let key = |t: Table, columns: &[usize]| if all { t } else { t.keep(columns) };
    let latency = sections::latency_table(&r.kernel).map(|t| key(t, &[0, 1, 2, 4, 6, 8]));
    let io = sections::io_tests_table(&r.iosched).map(|t| key(t, &[0, 1, 2, 4, 6]));
    let groups = sections::groups_table(&r.cgroups).map(|t| key(t, &[0, 1, 2, 3, 4, 5, 7, 8, 10]));
    latency.into_iter().chain(io).chain(groups).collect()
}

/// The trials per cell; without `all`, reasons cut to [`REASON_CHARS`].
fn cells_table(r: &Report, all: bool) -> Table {
    let mut cells = tables::cells_table(r);
    if !all {
        for row in &mut cells.rows {
            if let Some(reason) = row.last_mut() {
                if reason.chars().count() > REASON_CHARS {
                    *reason = reason.chars().take(REASON_CHARS - 1).collect::<String>() + "…";
                }
            }
        }
    }
    cells
}

/// The workload and quality tables (key columns only without `all`); with `all`, the summary,
/// pooled and pairwise tables too.
fn detail_tables(r: &Report, all: bool) -> Vec<Table> {
    let mut out = sections::workload_tables(r, all);
    out.extend(super::quality::tables(&r.quality));
    if !all {
        return out;
    }
    for m in Metric::ALL {
        let t = tables::summary_table(r, m);
        if !t.rows.is_empty() {
            out.push(t);
        }
    }
    out.extend(
        Metric::ALL
            .into_iter()
            .filter(|m| m.per_task())
            .map(|m| tables::pooled_table(r, m))
            .filter(|t| !t.rows.is_empty()),
    );
    let pairs = tables::pairs_table(r);
    if !pairs.rows.is_empty() {
        out.push(pairs);
    }
    out
}
