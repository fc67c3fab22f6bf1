//! The key written around a syntax error: text that is not valid TOML has no spans, so the
//! key is read from the lines around the error (section headers, `key =` lines, open lists).

use super::locate::boundary;

/// Bracket depth after `line`, starting from `depth`: brackets and braces in strings and
/// comments do not count.
fn bracket_depth(line: &str, mut depth: usize) -> usize {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' => break,
                '[' | '{' => depth += 1,
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    depth
}

/// A best guess at the key written around byte `offset` of text that may not parse: the
/// `[section]` or `[[list.of.tables]]` header above it (with the table's index) joined to
/// the key of its line, or of the line that opened a list still open there.
pub fn key_near(text: &str, offset: usize) -> Option<String> {
    let off = boundary(text, offset);
    let line_end = text[off..].find('\n').map_or(text.len(), |i| off + i);
    let mut error_line = text[..off].matches('\n').count();
    if off == text.len() && text.ends_with('\n') {
        // The end of the text belongs to its last line, as in `line_col`.
        error_line = error_line.saturating_sub(1);
    }
    let mut header: Option<String> = None;
    let mut arrays: Vec<(String, usize)> = Vec::new();
    let mut key: Option<String> = None;
    let mut depth = 0;
    for (n, line) in text[..line_end].lines().enumerate() {
        let t = line.trim();
        let open = depth > 0;
        depth = bracket_depth(line, depth);
        if open {
            // Inside a list opened above: the line belongs to the key that opened it.
            continue;
        }
        if let Some(inner) = t.strip_prefix("[[") {
            let name = inner.split("]]").next().unwrap_or("").trim().to_string();
            let index = match arrays.iter_mut().find(|(k, _)| *k == name) {
                Some((_, count)) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    arrays.push((name.clone(), 1));
                    0
                }
            };
            header = Some(format!("{name}[{index}]"));
            key = None;
        } else if let Some(inner) = t.strip_prefix('[') {
            header = Some(inner.split(']').next().unwrap_or("").trim().to_string());
            key = None;
        } else if let Some((k, _)) = t.split_once('=') {
            let k = k.trim();
            if !k.is_empty() && !k.starts_with('#') {
                key = Some(k.to_string());
            }
        } else if n == error_line {
            // A word alone on a line is a key that lost its `=`.
            let word: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .collect();
            let rest = t[word.len()..].trim_start();
            key = (!word.is_empty() && (rest.is_empty() || rest.starts_with('#'))).then_some(word);
        }
    }
    match (header, key) {
        (Some(h), Some(k)) if !h.is_empty() => Some(format!("{h}.{k}")),
        (_, Some(k)) => Some(k),
        (Some(h), None) if !h.is_empty() => Some(h),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_near_a_syntax_error_joins_its_header_and_line() {
        let text = "name = \"x\"\n[axes]\ntasks = [4,\n";
        assert_eq!(key_near(text, text.len()).as_deref(), Some("axes.tasks"));
        let text = "[[axes.workloads]]\nkind = \"cpu\"\n[[axes.workloads]]\nwork = 5ms\n";
        assert_eq!(
            key_near(text, text.find("5ms").unwrap_or(0)).as_deref(),
            Some("axes.workloads[1].work")
        );
        let text = "[settings]\ntrials = 3\nbogus\n";
        assert_eq!(
            key_near(text, text.find("bogus").unwrap_or(0)).as_deref(),
            Some("settings.bogus")
        );
        let text = "[axes]\npolicies = [\n  \"other\",\n  fifo,\n]\n";
        assert_eq!(
            key_near(text, text.find("fifo").unwrap_or(0)).as_deref(),
            Some("axes.policies")
        );
        // A list left open swallows the next lines: they belong to the key that opened it.
        let text = "[axes]\ntasks = [4, 10\npolicies = [\"other\"]\n";
        assert_eq!(
            key_near(text, text.find("policies").unwrap_or(0)).as_deref(),
            Some("axes.tasks")
        );
        // Brackets in strings and comments do not open anything.
        let text = "[axes]\ncpus = [\"[\"] # [\nbad line here\n";
        assert_eq!(
            key_near(text, text.find("bad").unwrap_or(0)).as_deref(),
            Some("axes")
        );
        assert_eq!(key_near("[settings\n", 1).as_deref(), Some("settings"));
        assert_eq!(key_near("name = \n", 7).as_deref(), Some("name"));
        assert_eq!(key_near("\"\n", 0), None);
    }
}
