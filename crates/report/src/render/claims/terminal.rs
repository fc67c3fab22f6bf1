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
    match (o.include_disturbed, o.disturbed_left_out) {
        (true, 0) => format!(
            "{} trials used, disturbed ones included (--include-disturbed).",
            o.trials
        ),
        (true, n) => format!(
            "{} trials used, disturbed ones included (--include-disturbed); {n} trials left out (slowed: calibrated work over 10% slower than the run's steady speed, --include-slowed keeps them; or re-runs not used).",
            o.trials
        ),
        (false, n) => format!(
            "{} trials used; {n} trials left out (disturbed: other processes above {:.0}% of the trial's CPUs, --include-disturbed keeps them; slowed: calibrated work over 10% slower than the run's steady speed, --include-slowed keeps them; or re-runs not used).",
            o.trials,
            super::table::DISTURBED_PCT
        ),
    }
}
