//! Is a string an SQL statement? Hand-written (no crate answers "SQL or English prose?"): the
//! text is cut into lower-case words and punctuation, and a statement is a keyword sequence
//! followed by what SQL puts there and prose does not (a select list of columns and calls, a
//! table name that is no article, a column list or VALUES after INSERT INTO, ...).

/// Words that may stand next to each other in a select list (`CASE WHEN`, `x AS y`).
const LIST_KEYWORDS: &[&str] = &[
    "as",
    "distinct",
    "all",
    "case",
    "when",
    "then",
    "else",
    "end",
    "and",
    "or",
    "not",
    "is",
    "null",
    "in",
    "like",
    "between",
    "over",
    "partition",
    "by",
    "order",
    "filter",
    "where",
    "cast",
    "asc",
    "desc",
    "true",
    "false",
];

/// Words of prose that are no table name ("delete from the disk").
const NOT_A_TABLE: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "each", "every", "which", "its", "their",
    "it", "them", "all", "any", "one", "your", "our", "my", "some", "no", "of", "to", "and", "or",
    "in", "on", "at", "for", "with", "by", "is", "are", "was", "be", "there",
];

/// The text in lower-case words (`t.a`, `?1`, `$1`; `{...}` format holes count as one word)
/// and single punctuation characters; quotes around identifiers are dropped.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() || matches!(c, '"' | '`' | '\'') {
            continue;
        }
        if c == '{' {
            for d in chars.by_ref() {
                if d == '}' {
                    break;
                }
            }
            out.push("{}".to_string());
        } else if c.is_alphanumeric() || matches!(c, '_' | '$' | '?') {
            let mut w = c.to_lowercase().to_string();
            while let Some(&d) = chars.peek() {
                if d.is_alphanumeric() || matches!(d, '_' | '$' | '?' | '.') {
                    w.extend(d.to_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(w.trim_end_matches('.').to_string());
        } else {
            out.push(c.to_string());
        }
    }
    out
}

fn is_word(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '?' | '{'))
}

/// A word that can name a table.
fn is_table(t: Option<&String>) -> bool {
    t.is_some_and(|t| is_word(t) && !NOT_A_TABLE.contains(&t.as_str()))
}

fn at(t: &[String], i: usize) -> Option<&str> {
    t.get(i).map(String::as_str)
}

/// `SELECT list FROM table`, where the list has no two plain words side by side; or a text
/// that starts with a `SELECT` of a call, a number or `*` and no FROM (`SELECT version()`).
fn select_from(t: &[String], i: usize) -> bool {
    let Some(from) = (i + 2..t.len()).find(|&j| t[j] == "from") else {
        let value = t
            .get(i + 1)
            .is_some_and(|w| w == "*" || w.parse::<f64>().is_ok())
            || (t.get(i + 1).is_some_and(|w| is_word(w)) && at(t, i + 2) == Some("("));
        return i == 0 && value;
    };
    let list = &t[i + 1..from];
    let prose = list.windows(2).any(|w| {
        is_word(&w[0])
            && is_word(&w[1])
            && !LIST_KEYWORDS.contains(&w[0].as_str())
            && !LIST_KEYWORDS.contains(&w[1].as_str())
    });
    !prose && (is_table(t.get(from + 1)) || at(t, from + 1) == Some("("))
}

/// Whether `text` holds an SQL statement (case-insensitive): SELECT…FROM, INSERT INTO,
/// UPDATE…SET, DELETE FROM, CREATE/DROP TABLE (INDEX, VIEW, TRIGGER), ALTER TABLE, PRAGMA,
/// COPY…FROM STDIN/TO STDOUT.
pub fn is_sql(text: &str) -> bool {
    let t = tokens(text);
    (0..t.len()).any(|i| match t[i].as_str() {
        "select" => select_from(&t, i),
        "insert" => {
            let mut j = i + 1;
            if at(&t, j) == Some("or") {
                j += 2;
            }
            at(&t, j) == Some("into")
                && is_table(t.get(j + 1))
                && matches!(at(&t, j + 2), Some("(" | "values" | "select" | "default"))
        }
        "update" => {
            is_table(t.get(i + 1))
                && at(&t, i + 2) == Some("set")
                && t.get(i + 3).is_some_and(|w| is_word(w))
                && at(&t, i + 4) == Some("=")
        }
        "delete" => {
            at(&t, i + 1) == Some("from")
                && is_table(t.get(i + 2))
                && matches!(
                    at(&t, i + 3),
                    None | Some(";" | ")" | "where" | "returning" | "using")
                )
        }
        "create" | "drop" => {
            let mut j = i + 1;
            while matches!(
                at(&t, j),
                Some("temp" | "temporary" | "unique" | "virtual" | "or" | "replace")
            ) {
                j += 1;
            }
            if !matches!(at(&t, j), Some("table" | "index" | "view" | "trigger")) {
                return false;
            }
            j += 1;
            if at(&t, j) == Some("if") {
                j += if at(&t, j + 1) == Some("not") { 3 } else { 2 };
            }
            is_table(t.get(j))
        }
        "alter" => {
            at(&t, i + 1) == Some("table")
                && is_table(t.get(i + 2))
                && matches!(at(&t, i + 3), Some("add" | "rename" | "drop" | "alter"))
        }
        "pragma" => is_table(t.get(i + 1)) && matches!(at(&t, i + 2), None | Some("=" | "(" | ";")),
        "copy" => {
            let rest: Vec<&str> = t[i + 1..].iter().map(String::as_str).collect();
            is_table(t.get(i + 1))
                && rest
                    .windows(2)
                    .any(|w| w == ["from", "stdin"] || w == ["to", "stdout"])
        }
        _ => false,
    })
}
