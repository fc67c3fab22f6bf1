//! The Markdown summary of a report (report.md): run, warnings, exploratory comparisons, study 001's key
//! tables per panel, links to the PNG figures, and the methods.

use crate::model::figures::Figure;
use crate::model::tables::{self, Table};
use crate::model::{Report, EXPLORATORY_HEADING, EXPLORATORY_NOTE};

/// A table cell with the characters that would break a pipe table escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A GitHub-flavoured pipe table with its title as a bold line above.
pub fn md_table(t: &Table) -> String {
    let mut out = format!("**{}**\n\n", t.title);
    let row = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    out += &row(&t.header);
    out += &format!("|{}\n", "---|".repeat(t.header.len()));
    for r in &t.rows {
        out += &row(r);
    }
    out
}

/// The warnings, one line per kind, with where every one is; empty without warnings.
fn warnings_section(r: &Report) -> String {
    if r.warning_kinds.is_empty() {
        return String::new();
    }
    let mut out = "## Warnings\n\n".to_string();
    for k in &r.warning_kinds {
        out += &format!("- {}\n", k.line().replace('\n', " "));
    }
    if r.warnings_grouped() {
        out += &format!(
            "- ({} warnings in all, every one in `csv/warnings.csv`)\n",
            r.warnings.len()
        );
    }
    out + "\n"
}

/// The whole summary; figures are linked as `plots/ID.png`.
pub fn render(r: &Report, figs: &[Figure]) -> String {
    let run = &r.run;
    let stored: i64 = r.cells.iter().map(|c| c.trials_total).sum();
    let mut out = format!("# schedlab report: run {} \"{}\"\n\n", run.run_id, run.name);
    out += &format!(
        "- started {}, finished {}, status {}\n",
        run.started_at,
        run.finished_at.as_deref().unwrap_or("-"),
        run.status
    );
    out += &format!(
        "- schedlab {}, seed {}, {} cells, {stored} trials stored of {} planned\n",
        run.version,
        run.seed,
        r.cells.len(),
        run.trials_planned
    );
    out += &format!("- command: `{}`\n\n", run.argv.replace('`', "'"));
    out += &r
        .claims
        .as_ref()
        .map(super::claims::markdown::render)
        .unwrap_or_default();
    out += &warnings_section(r);
    out += &format!("## {EXPLORATORY_HEADING}\n\n{EXPLORATORY_NOTE}\n\n");
    let mut any = false;
    for f in r.exploratory.iter().filter(|f| f.metric.headline()) {
        out += &format!("- {}\n", f.sentence);
        any = true;
    }
    if !any {
        out += "- No group has two policies with data to compare.\n";
    }
    out += "\n";
    if !r.exploratory.is_empty() {
        out += &md_table(&tables::exploratory_table(r));
        out += "\n";
    }
    out += "## Key tables\n\n";
    let key_tables = (0..r.panels.len())
        .map(|p| tables::key_table(r, p))
        .filter(|t| !t.rows.is_empty())
        .chain(crate::model::kernel::latency_table(&r.kernel))
        .chain(crate::model::iosched::tests_table(&r.iosched))
        .chain(crate::model::cgroups::table(&r.cgroups))
        .chain(crate::model::quality::tables(&r.quality));
    for t in key_tables {
        out += &md_table(&t);
        out += "\n";
    }
    out += &md_table(&tables::cells_table(r));
    out += "\n";
    if !figs.is_empty() {
        out += "## Figures\n\n";
        for f in figs {
            out += &format!(
                "![{}](plots/{}.png)\n\n*{}*\n\n",
                f.title.replace(['[', ']'], ""),
                f.id,
                f.caption
            );
        }
    }
    out += "## Methods\n\n";
    for n in &r.methods.notes {
        out += &format!("- {n}\n");
    }
    out += "\nEvery table, with full-precision numbers and every metric, is in `csv/`; the HTML page (index.html) has all summaries, tests and figures.\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_tables_escape_pipes_and_have_one_rule_cell_per_column() {
        let t = Table {
            title: "T".into(),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["x|y".into(), "z".into()]],
        };
        assert_eq!(
            md_table(&t),
            "**T**\n\n| a | b |\n|---|---|\n| x\\|y | z |\n"
        );
    }
}
