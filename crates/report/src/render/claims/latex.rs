//! The claims table of report.tex (booktabs), placed before the other tables.

use super::table::{claims_table, summary_line};
use crate::claims::ClaimsOutcome;
use crate::render::latex::escape;

/// The table, or "" without claims.
pub fn render(o: Option<&ClaimsOutcome>) -> String {
    let Some(o) = o else { return String::new() };
    let ct = claims_table(o);
    let t = &ct.table;
    let mut out = String::from("\\begin{table}[ht]\n\\centering\\small\n");
    out += &format!("\\caption{{{}}}\n\\label{{tab:claims}}\n", escape(&t.title));
    out += &format!(
        "\\begin{{tabular}}{{{}}}\n\\toprule\n",
        "l".repeat(t.header.len())
    );
    let row = |cells: &[String]| {
        cells
            .iter()
            .map(|c| escape(c))
            .collect::<Vec<_>>()
            .join(" & ")
            + " \\\\\n"
    };
    out += &row(&t.header);
    out += "\\midrule\n";
    for r in &t.rows {
        out += &row(r);
    }
    out += "\\bottomrule\n\\end{tabular}\n";
    for (i, n) in ct.notes.iter().enumerate() {
        out += &format!("\\par\\footnotesize [{}] {}\n", i + 1, escape(n));
    }
    for c in &o.claims {
        out += &format!("\\par\\footnotesize {}\n", escape(&summary_line(c)));
    }
    out += "\\end{table}\n\n";
    out
}
