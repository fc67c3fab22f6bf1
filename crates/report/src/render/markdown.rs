//! The Markdown summary of a report (report.md): run, warnings, exploratory comparisons, study 001's key
//! tables per panel, links to the PNG figures, and the methods.

use super::tables;
use crate::model::plot_data::Figure;
use crate::model::{Report, EXPLORATORY_HEADING, EXPLORATORY_NOTE};
use crate::render::text_table::Table;

/// Text for Markdown: `&`, `<` and `>` as character references, so that no stored text
/// becomes raw HTML (a `<script>` in a run's name), and every control or bidirectional
/// character as a space.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            c if schedlab_core::text::is_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A table cell: [`text`], with the pipes that would break a pipe table escaped.
fn cell(s: &str) -> String {
    text(s).replace('|', "\\|")
}

/// A GitHub-flavoured pipe table with its title as a bold line above.
pub fn md_table(t: &Table) -> String {
    let mut out = format!("**{}**\n\n", text(&t.title));
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
        out += &format!("- {}\n", text(&super::notes::kind_line(k)));
    }
    if r.warnings_grouped() {
        out += &format!(
            "- ({} warnings in all, every one in `csv/warnings.csv`)\n",
            r.warnings.len()
        );
    }
    out + "\n"
}

/// The title and the run's lines: when, how, the command line.
fn header(r: &Report, stored: i64) -> String {
    let run = &r.run;
    let mut out = format!(
        "# schedlab report: run {} \"{}\"\n\n",
        run.run_id,
        text(&run.name)
    );
    out += &format!(
        "- started {}, finished {}, status {}\n",
        text(&run.started_at),
        text(run.finished_at.as_deref().unwrap_or("-")),
        text(run.status.name())
    );
    out += &format!(
        "- schedlab {}, seed {}, {} cells, {stored} trials stored of {} planned\n",
        text(&run.version),
        run.seed,
        r.cells.len(),
        run.trials_planned
    );
    // A code span shows `<` as it is; only its delimiter and control characters go.
    let argv: String = run
        .argv
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if schedlab_core::text::is_unsafe(c) => ' ',
            c => c,
        })
        .collect();
    out += &format!("- command: `{argv}`\n\n");
    out
}

/// The whole summary; figures are linked as `plots/ID.png`.
pub fn render(r: &Report, figs: &[Figure]) -> String {
    let stored: i64 = r.cells.iter().map(|c| c.trials_total).sum();
    let mut out = header(r, stored);
    out += &r
        .claims
        .as_ref()
        .map(super::claims::markdown::render)
        .unwrap_or_default();
    out += &warnings_section(r);
    out += &format!("## {EXPLORATORY_HEADING}\n\n{EXPLORATORY_NOTE}\n\n");
    let mut any = false;
    for f in r.exploratory.iter().filter(|f| f.metric.headline()) {
        let sentence = super::exploratory::sentence(&r.groups[f.group].label, f);
        out += &format!("- {}\n", text(&sentence));
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
        .chain(super::sections::latency_table(&r.kernel))
        .chain(super::sections::io_tests_table(&r.iosched))
        .chain(super::sections::groups_table(&r.cgroups))
        .chain(super::quality::tables(&r.quality));
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
                text(&f.title.replace(['[', ']'], "")),
                f.id,
                text(&f.caption)
            );
        }
    }
    out += "## Methods\n\n";
    for n in super::notes::method_notes(r) {
        out += &format!("- {}\n", text(&n));
    }
    out += "\nEvery table, with full-precision numbers and every metric, is in `csv/`; the HTML page (index.html) has all summaries, tests and figures.\n";
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_text_never_becomes_html_or_a_line_break() {
        assert_eq!(
            text("<script>a & b</script>\r\u{1b}x"),
            "&lt;script&gt;a &amp; b&lt;/script&gt;  x"
        );
    }

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
