//! Where a spec's mistake is written: every error of a spec file reads
//! `PATH:LINE:COL: KEY: message (accepted: ...)`, for TOML syntax errors, unknown keys, wrong
//! types, unknown values and the checks of [`Spec::check`].
//!
//! toml gives the byte span of syntax and type errors; the key of a span and the span of a
//! key come from a span tree of the same text ([`super::tree`]). Text that is not valid TOML
//! has no tree, so the key of a syntax error is read from the lines around it.

use super::tree::{parse_path, render_path, Seg, Tree};
use super::{accepted_values, Problem, Spec, SpecError};
use crate::plan::Plan;
use crate::policy::{PolicyKind, PriorityMode};
use crate::records::{StartMode, TaskKind};
use crate::workload::{CpuKernel, IoMode, WorkloadKind};
use std::path::Path;

/// A spec mistake with its place in the text, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based line and column (in characters) of the mistake, when known.
    pub line_col: Option<(usize, usize)>,
    /// The key path it is about, e.g. `axes.policies[0]`, when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What would be accepted instead, when that fits in a short list or range.
    pub accepted: Option<String>,
}

impl Located {
    /// One line: `ORIGIN:LINE:COL: KEY: message (accepted: ...)`; without an origin the
    /// position reads `line L, column C`; unknown parts are left out.
    pub fn render(&self, origin: Option<&str>) -> String {
        let mut out = match (origin, self.line_col) {
            (Some(o), Some((l, c))) => format!("{o}:{l}:{c}: "),
            (Some(o), None) => format!("{o}: "),
            (None, Some((l, c))) => format!("line {l}, column {c}: "),
            (None, None) => String::new(),
        };
        if let Some(k) = &self.key {
            out.push_str(k);
            out.push_str(": ");
        }
        out.push_str(&self.message);
        if let Some(a) = &self.accepted {
            out.push_str(&format!(" (accepted: {a})"));
        }
        // Keys and values quoted from the file may hold line breaks; a message stays one line.
        out.replace('\n', "\\n").replace('\r', "\\r")
    }
}

/// The largest char boundary of `text` at or before `offset` (offsets past the end clamp to it).
fn boundary(text: &str, offset: usize) -> usize {
    let mut off = offset.min(text.len());
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    off
}

/// 1-based line and column of byte `offset` in `text`, columns counted in characters as
/// toml counts them; offsets past the end or inside a character are clamped, never a panic.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // Like toml, place the end of the text one column past its last character, on the
    // last character's line (not at the start of an empty line after it).
    if offset >= text.len() && !text.is_empty() {
        let (line, column) = line_col(text, boundary(text, text.len() - 1));
        return (line, column + 1);
    }
    let before = &text[..boundary(text, offset)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    (line, before[line_start..].chars().count() + 1)
}

/// The backquoted names after the last `expected` of a serde message
/// (`expected one of `a`, `b``, `expected `a` or `b``), or `None` if it names none.
pub fn expected_list(message: &str) -> Option<Vec<String>> {
    let tail = &message[message.rfind("expected ")? + "expected ".len()..];
    let items: Vec<String> = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    (!items.is_empty()).then_some(items)
}

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

/// The values a key accepts, for messages about its type, or `None` if there is no short answer.
fn hint(path: &[Seg], expected: Option<&str>) -> Option<String> {
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Index(_) => None,
        })
        .collect();
    let element = matches!(path.last(), Some(Seg::Index(_)));
    let list_or_one = |values: String| {
        if element {
            format!("one of: {values}")
        } else {
            format!("a list of: {values}")
        }
    };
    let duration = "a duration in quotes, e.g. \"50ms\"";
    let specific = match keys.join(".").as_str() {
        "axes.policies" => list_or_one(accepted_values::<PolicyKind>()),
        "axes.priorities" => list_or_one(accepted_values::<PriorityMode>()),
        "axes.kind" => list_or_one(accepted_values::<TaskKind>()),
        "axes.start" => list_or_one(accepted_values::<StartMode>()),
        "axes.workloads.kind" => accepted_values::<WorkloadKind>(),
        "axes.workloads.cpu_kernel" => accepted_values::<CpuKernel>(),
        "axes.workloads.io_mode" => accepted_values::<IoMode>(),
        "axes.tasks" if element => "a task count 1..=100000".into(),
        "axes.tasks" => "a list of task counts, e.g. [4, 10]".into(),
        "axes.cpus" if element => "a CPU list in quotes, e.g. \"0-1\"".into(),
        "axes.cpus" => "a list of CPU lists, e.g. [\"0\", \"0-1\"]".into(),
        "axes.workloads" if element => "a table such as { kind = \"cpu\" }".into(),
        "axes.workloads" => "a list of tables, e.g. [{ kind = \"cpu\" }, { kind = \"io\" }]".into(),
        "settings.work"
        | "settings.timeout"
        | "settings.deadline.runtime"
        | "settings.deadline.deadline"
        | "settings.deadline.period"
        | "axes.workloads.work" => duration.into(),
        "settings.nice" => "a whole number -20..=19".into(),
        "settings.rt_priority" => "a whole number 1..=99".into(),
        "settings.trials" => "a whole number from 1 to 4294967295".into(),
        _ => String::new(),
    };
    if !specific.is_empty() {
        return Some(specific);
    }
    let generic = match expected? {
        "u32" => "a whole number from 0 to 4294967295",
        "u64" => "a whole number from 0 to 18446744073709551615",
        "i32" => "a whole number from -2147483648 to 2147483647",
        "a string" => "a string in quotes",
        "path string" => "a path in quotes",
        "a boolean" => "true or false",
        "a sequence" => "a list in brackets",
        e if e.starts_with("struct ") || e == "a map" => "a table",
        e => e,
    };
    Some(generic.to_string())
}

/// Turns a serde message about the value at `path` into key, message and accepted values.
fn describe(message: &str, mut path: Vec<Seg>) -> (Option<String>, String, Option<String>) {
    let message = message.trim();
    let joined = || {
        message
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let key = |path: &[Seg]| (!path.is_empty()).then(|| render_path(path));
    let named = |prefix: &str| -> Option<String> {
        let rest = message.strip_prefix(prefix)?;
        let end = [rest.rfind("`, expected"), rest.rfind("`, there are no")]
            .into_iter()
            .flatten()
            .max()
            .or_else(|| rest.rfind('`'))?;
        Some(rest[..end].to_string())
    };
    let list = || expected_list(message).map(|l| l.join(", "));
    if let Some(name) = named("unknown field `") {
        if path.last() != Some(&Seg::Key(name.clone())) {
            path.push(Seg::Key(name.clone()));
        }
        let accepted = list().or_else(|| Some("no keys here".into()));
        return (key(&path), format!("unknown key `{name}`"), accepted);
    }
    if let Some(name) = named("unknown variant `") {
        return (key(&path), format!("unknown value `{name}`"), list());
    }
    if let Some(name) = named("missing field `") {
        path.push(Seg::Key(name.clone()));
        let accepted = hint(&path, None);
        return (key(&path), format!("missing key `{name}`"), accepted);
    }
    for (prefix, label) in [
        ("invalid type: ", "wrong type: "),
        ("invalid value: ", "invalid value: "),
    ] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((what, expected)) = rest.rsplit_once(", expected ") {
                let accepted = hint(&path, Some(expected));
                return (key(&path), format!("{label}{what}"), accepted);
            }
        }
    }
    (key(&path), joined(), None)
}

/// Explains a toml error of `text`: its position, key, message and accepted values.
fn describe_toml_error(text: &str, e: &toml::de::Error) -> Located {
    let offset = e.span().map(|s| s.start);
    let line_col = offset.map(|o| line_col(text, o));
    match Tree::parse(text) {
        // Valid TOML: a key, a type or a value is wrong.
        Some(tree) => {
            let path = offset.and_then(|o| tree.path_at(o)).unwrap_or_default();
            let (key, message, accepted) = describe(e.message(), path);
            Located {
                line_col,
                key,
                message,
                accepted,
            }
        }
        // Not TOML at all: toml's message, with the key read from the lines around it.
        None => Located {
            line_col,
            key: offset.and_then(|o| key_near(text, o)),
            message: e
                .message()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(", "),
            accepted: None,
        },
    }
}

/// Parses spec text, explaining any mistake with its position.
pub fn parse_text(text: &str) -> Result<Spec, Located> {
    toml::from_str::<Spec>(text).map_err(|e| describe_toml_error(text, &e))
}

/// Places a problem found by [`Spec::check`] at its key in `text` (or at the longest part of
/// the key path that is written there; no position if none is).
pub fn locate_problem(text: &str, problem: &Problem) -> Located {
    let offset = Tree::parse(text).and_then(|t| t.offset_of(&parse_path(&problem.key)));
    Located {
        line_col: offset.map(|o| line_col(text, o)),
        key: Some(problem.key.clone()),
        message: problem.message.clone(),
        accepted: problem.accepted.clone(),
    }
}

/// Parses and plans spec `text` read from `origin`; every error names `origin:line:column`.
pub fn check_text(origin: &str, text: &str, seed: u64) -> Result<(Spec, Plan), SpecError> {
    let spec = parse_text(text).map_err(|l| SpecError(l.render(Some(origin))))?;
    let plan = spec
        .check(seed)
        .map_err(|p| SpecError(locate_problem(text, &p).render(Some(origin))))?;
    Ok((spec, plan))
}

/// Parses the `text` of spec file `path`; errors read `PATH:LINE:COL: KEY: message (accepted: ...)`.
pub fn parse_spec_file(path: &Path, text: &str) -> Result<Spec, SpecError> {
    parse_text(text).map_err(|l| SpecError(l.render(Some(&path.display().to_string()))))
}

/// Plans `spec`, which was read from file `path` and possibly changed by flags since. A
/// problem the file alone has is positioned in the file; one the flags brought in is
/// reported as [`Spec::plan`] reports it.
pub fn plan_spec_file(path: &Path, spec: &Spec, seed: u64) -> Result<Plan, SpecError> {
    let problem = match spec.check(seed) {
        Ok(plan) => return Ok(plan),
        Err(p) => p,
    };
    let origin = path.display().to_string();
    let in_file = std::fs::read_to_string(path).ok().and_then(|text| {
        let alone = parse_text(&text).ok()?;
        match alone.check(seed) {
            Err(p) if p == problem => Some(locate_problem(&text, &p).render(Some(&origin))),
            _ => None,
        }
    });
    Err(SpecError(in_file.unwrap_or_else(|| problem.to_string())))
}

/// Reads, parses and plans spec file `path`; every error is positioned in the file.
pub fn load_spec_file(path: &Path, seed: u64) -> Result<(Spec, Plan), SpecError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| SpecError(format!("cannot read spec {}: {e}", path.display())))?;
    check_text(&path.display().to_string(), &text, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match check_text("f.toml", text, 1) {
            Ok(_) => panic!("{text:?} was accepted"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn line_and_column_count_lines_and_characters_from_one() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 4), (1, 5));
        assert_eq!(line_col(text, 6), (2, 1));
        // `é` is two bytes but one column.
        assert_eq!(line_col(text, text.rfind('=').unwrap_or(0)), (2, 4));
    }

    #[test]
    fn line_and_column_clamp_offsets_past_the_end_or_inside_a_character() {
        let text = "a\nbé";
        assert_eq!(line_col(text, 1000), (2, 3));
        // Byte 4 is inside `é`: the column of `é` itself.
        assert_eq!(line_col(text, 4), (2, 2));
        assert_eq!(line_col("", 3), (1, 1));
        // The end of a text ending in a line break stays on its last line, counted as toml
        // counts it: one column past the line break.
        assert_eq!(line_col("x = [\n", 6), (1, 7));
    }

    #[test]
    fn expected_lists_are_read_from_every_serde_wording() {
        let one_of = "unknown variant `fast`, expected one of `other`, `batch`, `rr`";
        assert_eq!(
            expected_list(one_of),
            Some(vec!["other".into(), "batch".into(), "rr".into()])
        );
        assert_eq!(
            expected_list("unknown field `x`, expected `a` or `b`"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(expected_list("invalid type: string, expected u32"), None);
        assert_eq!(expected_list("missing field `kind`"), None);
    }

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

    #[test]
    fn a_syntax_error_gives_its_position_key_and_one_line_message() {
        let e = err("[axes]\ntasks = [4,\n");
        assert!(
            e.starts_with("f.toml:2:13: axes.tasks: invalid array, expected `]`"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn an_unknown_key_lists_the_keys_of_its_table() {
        let e = err("[settings]\ntrails = 3\n");
        assert!(
            e.starts_with("f.toml:2:1: settings.trails: unknown key `trails` (accepted: trials, warmup, work,"),
            "{e}"
        );
        let e = err("[setting]\n");
        assert!(
            e.starts_with("f.toml:1:2: setting: unknown key `setting` (accepted: name, description, axes, settings)"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_value_lists_every_accepted_value() {
        let e = err("[axes]\npolicies = [\"other\", \"fast\"]\n");
        assert_eq!(
            e,
            "f.toml:2:22: axes.policies[1]: unknown value `fast` (accepted: other, batch, idle, fifo, rr, deadline)"
        );
    }

    #[test]
    fn a_wrong_type_names_what_the_key_accepts() {
        let e = err("[axes]\npolicies = \"fifo\"\n");
        assert!(
            e.starts_with("f.toml:2:12: axes.policies: wrong type: string \"fifo\" (accepted: a list of: other, batch,"),
            "{e}"
        );
        let e = err("settings.trials = -1\n");
        assert!(
            e.starts_with("f.toml:1:19: settings.trials: invalid value: integer `-1` (accepted: a whole number from 1"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_workload_kind_lists_the_kinds() {
        let e = err("[[axes.workloads]]\niterations = 5\n");
        assert_eq!(
            e,
            format!(
                "f.toml:1:1: axes.workloads[0].kind: missing key `kind` (accepted: {})",
                accepted_values::<WorkloadKind>()
            )
        );
        assert!(e.contains("cpu, io, mixed"), "{e}");
    }

    #[test]
    fn plan_problems_are_placed_at_their_key() {
        let e = err("[axes]\ntasks = [4, 0]\n");
        assert_eq!(
            e,
            "f.toml:2:13: axes.tasks[1]: 0 is not a usable task count (accepted: 1..=100000)"
        );
        let e = err("[axes]\nworkloads = [{ kind = \"cpu\", iterations = 0 }]\n");
        assert!(
            e.starts_with("f.toml:2:43: axes.workloads[0].iterations: must be above 0"),
            "{e}"
        );
        let e = err("[[axes.workloads]]\nkind = \"io\"\n[[axes.workloads]]\nkind = \"cpu\"\nwork = \"50\"\n");
        assert!(
            e.starts_with("f.toml:5:8: axes.workloads[1].work: '50' is not a duration (accepted: a number with a unit"),
            "{e}"
        );
        let e = err("[axes]\npolicies = [\"deadline\"]\n[settings]\ndeadline.runtime = \"60ms\"\n");
        assert!(
            e.starts_with("f.toml:4:20: settings.deadline.runtime: deadline parameters need runtime <= deadline <= period"),
            "{e}"
        );
    }

    #[test]
    fn a_problem_at_an_unwritten_key_falls_back_to_its_table_or_to_no_position() {
        // The deadline is the default, so the `[settings.deadline]` header is the place.
        let e = err("[axes]\npolicies = [\"deadline\"]\n[settings.deadline]\nperiod = \"1ms\"\n");
        assert!(
            e.starts_with("f.toml:3:11: settings.deadline.deadline: deadline parameters"),
            "{e}"
        );
        let p = Problem::new("settings.trials", "must be at least 1");
        assert_eq!(
            locate_problem("name = \"x\"\n", &p).render(Some("f.toml")),
            "f.toml: settings.trials: must be at least 1"
        );
    }

    #[test]
    fn without_an_origin_the_position_is_spelled_out() {
        let l = Located {
            line_col: Some((2, 5)),
            key: Some("axes.tasks".into()),
            message: "bad".into(),
            accepted: Some("1..=3".into()),
        };
        assert_eq!(
            l.render(None),
            "line 2, column 5: axes.tasks: bad (accepted: 1..=3)"
        );
        assert_eq!(
            l.render(Some("x.toml")),
            "x.toml:2:5: axes.tasks: bad (accepted: 1..=3)"
        );
    }

    #[test]
    fn a_valid_spec_file_text_plans() {
        let (spec, plan) = check_text("f.toml", "[axes]\ntasks = [1, 2]\n", 1).unwrap();
        assert_eq!(spec.axes.tasks, vec![1, 2]);
        assert_eq!(plan.cells.len(), 2);
    }
}
