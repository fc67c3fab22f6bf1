//! The claims section of index.html, the first thing on the page: one line per claim, the
//! table, what was left out. Every text is escaped here (the page inserts it as it is).

use super::table::{claims_table, summary_line};
use crate::claims::ClaimsOutcome;

/// `s` with HTML's special characters escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The section, or "" without claims.
pub fn render(o: Option<&ClaimsOutcome>) -> String {
    let Some(o) = o else { return String::new() };
    let mut out =
        String::from("<section id=\"claims\"><h2>Claims</h2>\n<ul class=\"sentences\">\n");
    for c in &o.claims {
        out += &format!("<li>{}</li>\n", esc(&summary_line(c)));
    }
    out += "</ul>\n";
    let ct = claims_table(o);
    let t = &ct.table;
    out += &format!(
        "<div class=\"claims\"><table class=\"claims\">\n<caption>{}</caption>\n<thead><tr>",
        esc(&t.title)
    );
    for h in &t.header {
        out += &format!("<th>{}</th>", esc(h));
    }
    out += "</tr></thead>\n<tbody>\n";
    for row in &t.rows {
        out += "<tr>";
        for c in row {
            out += &format!("<td>{}</td>", esc(c));
        }
        out += "</tr>\n";
    }
    out += "</tbody></table></div>\n";
    if !ct.notes.is_empty() {
        out += "<ol class=\"notes\">\n";
        for n in &ct.notes {
            out += &format!("<li>{}</li>\n", esc(n));
        }
        out += "</ol>\n";
    }
    out += &format!(
        "<p>{}</p>\n</section>\n",
        esc(&super::terminal::footnote(o))
    );
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_is_escaped() {
        assert_eq!(super::esc("a < b & \"c\""), "a &lt; b &amp; &quot;c&quot;");
    }
}
