//! Where a spec's mistake is written: every error of a spec file reads
//! `PATH:LINE:COL: KEY: message (accepted: ...)`, for TOML syntax errors, unknown keys, wrong
//! types, unknown values and the checks of [`Spec::validate`].
//!
//! toml gives the byte span of syntax and type errors; the key of a span and the span of a
//! key come from the spans of the same text (`spans.rs`). Text that is not valid TOML
//! has no spans, so the key of a syntax error is read from the lines around it
//! (`syntax.rs`).

use super::spans::{parse_path, render_path, Seg, Spans};
use super::syntax::key_near;
use super::{accepted_values, Checked, Problem, Spec, SpecError};
use schedlab_core::policy::{PolicyKind, PriorityMode};
use schedlab_core::records::{StartMode, TaskKind};
use schedlab_core::workload::{CpuKernel, IoMode, WorkloadKind};
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
pub(crate) fn boundary(text: &str, offset: usize) -> usize {
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
        "settings.precision" => "a percentage in quotes, e.g. \"2%\"".into(),
        "settings.max_time" => duration.into(),
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
    match Spans::parse(text) {
        // Valid TOML: a key, a type or a value is wrong.
        Some(spans) => {
            let path = offset.and_then(|o| spans.path_at(o)).unwrap_or_default();
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

/// Largest spec text read, bytes (the largest preset is a few KiB).
pub const MAX_SPEC_BYTES: usize = 1 << 20;

/// Parses spec text, explaining any mistake with its position; text over [`MAX_SPEC_BYTES`]
/// is refused unread.
pub fn parse_text(text: &str) -> Result<Spec, Located> {
    if text.len() > MAX_SPEC_BYTES {
        return Err(Located {
            line_col: None,
            key: None,
            message: format!("the spec is {} bytes long", text.len()),
            accepted: Some(format!("a spec of at most {MAX_SPEC_BYTES} bytes")),
        });
    }
    toml::from_str::<Spec>(text).map_err(|e| describe_toml_error(text, &e))
}

/// The text of spec file `path`, read up to [`MAX_SPEC_BYTES`] (a larger file is refused
/// without reading the rest of it).
pub fn read_spec_file(path: &Path) -> Result<String, SpecError> {
    use std::io::Read;
    let read = |source| SpecError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(read)?
        .take(MAX_SPEC_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .map_err(read)?;
    if text.len() > MAX_SPEC_BYTES {
        return Err(read(std::io::Error::other(format!(
            "it is larger than {MAX_SPEC_BYTES} bytes, the most a spec may be"
        ))));
    }
    Ok(text)
}

/// Places a problem found by [`Spec::validate`] at its key in `text` (or at the longest part
/// of the key path that is written there; no position if none is).
pub fn locate_problem(text: &str, problem: &Problem) -> Located {
    let offset = Spans::parse(text).and_then(|s| s.offset_of(&parse_path(&problem.key)));
    Located {
        line_col: offset.map(|o| line_col(text, o)),
        key: Some(problem.key.clone()),
        message: problem.message.clone(),
        accepted: problem.accepted.clone(),
    }
}

/// Parses and checks spec `text` read from `origin`; every error names `origin:line:column`.
pub fn check_text(origin: &str, text: &str) -> Result<(Spec, Checked), SpecError> {
    let spec = parse_text(text).map_err(|l| SpecError::located(Some(origin), l))?;
    let checked = spec
        .validate()
        .map_err(|p| SpecError::located(Some(origin), locate_problem(text, &p)))?;
    Ok((spec, checked))
}

/// Parses the `text` of spec file `path`; errors read `PATH:LINE:COL: KEY: message (accepted: ...)`.
pub fn parse_spec_file(path: &Path, text: &str) -> Result<Spec, SpecError> {
    parse_text(text).map_err(|l| SpecError::located(Some(&path.display().to_string()), l))
}

/// Checks `spec`, which was read from file `path` and possibly changed by flags since. A
/// problem the file alone has is positioned in the file; one the flags brought in is
/// reported as [`Spec::validate`] gives it.
pub fn validate_file(path: &Path, spec: &Spec) -> Result<Checked, SpecError> {
    let problem = match spec.validate() {
        Ok(checked) => return Ok(checked),
        Err(p) => p,
    };
    let origin = path.display().to_string();
    let in_file = read_spec_file(path).ok().and_then(|text| {
        let alone = parse_text(&text).ok()?;
        match alone.validate() {
            Err(p) if p == problem => Some(locate_problem(&text, &p)),
            _ => None,
        }
    });
    Err(match in_file {
        Some(located) => SpecError::located(Some(&origin), located),
        None => SpecError::Invalid(problem),
    })
}

#[cfg(test)]
#[path = "locate_tests.rs"]
mod tests;
