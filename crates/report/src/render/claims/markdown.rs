//! The claims section of report.md.

use super::table::{claims_table, summary_line};
use crate::claims::ClaimsOutcome;
use crate::render::markdown::{md_table, text};

/// "## Claims" with one bullet per claim, the table and what was left out.
pub fn render(o: &ClaimsOutcome) -> String {
    let mut out = String::from("## Claims\n\n");
    for c in &o.claims {
        out += &format!("- {}\n", text(&summary_line(c)).replace('|', "\\|"));
    }
    out += "\n";
    let t = claims_table(o);
    out += &md_table(&t.table);
    for (i, n) in t.notes.iter().enumerate() {
        out += &format!("\n[{}] {}", i + 1, text(n).replace('|', "\\|"));
    }
    out += "\n";
    out += &format!("\n{}\n\n", text(&super::terminal::footnote(o)));
    out
}
