//! The claims section of `schedlab stats`: one summary line per claim, then the table.

use super::table::{claims_table, summary_line};
use crate::claims::ClaimsOutcome;
use crate::render::terminal::terminal_table;

/// The section's text, ending with a blank line.
pub fn render(o: &ClaimsOutcome) -> String {
    let mut out = String::from("Claims\n");
    for c in &o.claims {
        out += &format!("- {}\n", summary_line(c));
    }
    out += "\n";
    let t = claims_table(o);
    out += &terminal_table(&t.table);
    for (i, n) in t.notes.iter().enumerate() {
        out += &format!("[{}] {n}\n", i + 1);
    }
    out += &format!("{}\n\n", footnote(o));
    out
}

/// What was left out and why, in one line.
pub fn footnote(o: &ClaimsOutcome) -> String {
    if o.include_disturbed {
        format!(
            "{} trials used, disturbed ones included (--include-disturbed).",
            o.trials
        )
    } else {
        format!(
            "{} trials used; {} disturbed trials left out (outside work above {:.0}% of the trial's CPUs; --include-disturbed keeps them).",
            o.trials,
            o.disturbed_left_out,
            super::table::DISTURBED_PCT
        )
    }
}
