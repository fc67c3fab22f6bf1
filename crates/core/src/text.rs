//! Text from outside (names, descriptions, labels, stored rows) on its way to a person: the
//! one printable filter every terminal output goes through, and the check that refuses
//! control characters where a spec or flag gives a name.
//!
//! A control character in a terminal's output is a command to the terminal (ESC sequences set
//! the window title, clear the screen, move the cursor; CR overwrites a line; BEL rings), and a
//! bidirectional override reorders what is shown. Both are shown escaped (`\u{1b}`), never sent.

/// Whether `c` may not reach a terminal as it is: a control character (C0, DEL, C1) or a
/// bidirectional formatting character (embeddings, overrides, isolates, marks).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` for a terminal, keeping its lines and tabs: every other unsafe character
/// ([`is_unsafe`]) escaped as `\u{..}`.
pub fn printable(s: &str) -> String {
    escape_where(s, |c| is_unsafe(c) && c != '\n' && c != '\t')
}

/// `s` for one line of a terminal: like [`printable`], with line breaks and tabs escaped too.
pub fn printable_line(s: &str) -> String {
    escape_where(s, is_unsafe)
}

fn escape_where(s: &str, unsafe_char: impl Fn(char) -> bool) -> String {
    if !s.chars().any(&unsafe_char) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if unsafe_char(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The first character of `s` a name, description or label may not hold ([`is_unsafe`]), if
/// any: such text is refused where it is given.
pub fn first_unsafe(s: &str) -> Option<char> {
    s.chars().find(|&c| is_unsafe(c))
}

/// Why `s` (what `what` names, e.g. `the run's name`) is refused, if it holds a character
/// that is not printable text.
pub fn refusal(what: &str, s: &str) -> Option<String> {
    first_unsafe(s).map(|c| {
        format!(
            "{what} holds the control character {} (names, descriptions and labels are printable text on one line)",
            c.escape_unicode()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_commands_are_shown_escaped_and_lines_kept() {
        let evil = "a\u{1b}]0;owned\u{7}\u{1b}[2J\r\nb\tc\u{202e}d";
        let shown = printable(evil);
        assert!(
            !shown.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}']),
            "{shown}"
        );
        assert_eq!(shown.lines().count(), 2, "{shown}");
        assert!(
            shown.contains("\\u{1b}]0;owned\\u{7}") && shown.contains("b\tc"),
            "{shown}"
        );
        assert!(!printable_line(evil).contains(['\n', '\t']));
        assert_eq!(printable("plain text, ünïcode"), "plain text, ünïcode");
    }

    #[test]
    fn names_with_control_characters_are_refused() {
        assert_eq!(first_unsafe("web1"), None);
        assert_eq!(first_unsafe("a\rb"), Some('\r'));
        assert_eq!(first_unsafe("x\u{9b}2J"), Some('\u{9b}'));
        let why = refusal("the run's name", "a\u{1b}b").unwrap();
        assert!(why.contains("control character \\u{1b}"), "{why}");
        assert_eq!(refusal("a label", "fine label"), None);
    }
}
