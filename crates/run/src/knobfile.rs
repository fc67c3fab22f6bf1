//! One kernel setting file under /proc/sys or /sys: its value read as the kernel shows it
//! (a plain value, or the bracketed choice of a list such as `none [mq-deadline] kyber`),
//! written, compared, and the check that a path really lies under /proc/sys or /sys.

use crate::error::{Refusal, Unavailable};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where kernel settings may be changed.
pub const ALLOWED_ROOTS: [&str; 2] = ["/proc/sys", "/sys"];

/// A setting as read from its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// The value in force: the bracketed word of a choice list, else the text with runs of
    /// whitespace made one space.
    pub value: String,
    /// Every choice of a choice list (None for a plain value).
    pub offered: Option<Vec<String>>,
}

/// Parses a setting file's text.
pub fn parse(text: &str) -> Read {
    let words: Vec<&str> = text.split_whitespace().collect();
    let chosen = words
        .iter()
        .find(|w| w.starts_with('[') && w.ends_with(']') && w.len() > 2);
    match chosen {
        Some(c) => Read {
            value: c[1..c.len() - 1].to_string(),
            offered: Some(
                words
                    .iter()
                    .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_string())
                    .collect(),
            ),
        },
        None => Read {
            value: words.join(" "),
            offered: None,
        },
    }
}

/// Reads the setting at `path`.
pub fn read(path: &Path) -> std::io::Result<Read> {
    Ok(parse(&std::fs::read_to_string(path)?))
}

/// Writes `value` to the setting at `path` in one write, as `echo VALUE > PATH` does (the
/// kernel ignores the truncation; the file must exist). An empty value is written as a bare
/// newline: a write of no bytes never reaches the kernel, so the setting would stay as it was.
pub fn write(path: &Path, value: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    f.write_all(if value.is_empty() {
        b"\n"
    } else {
        value.as_bytes()
    })
}

/// `s` as one shell word in single quotes: nothing in it is expanded or run when pasted.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command that puts `value` into the setting at `path` by hand, shell-quoted so that
/// pasting it writes that value and runs nothing else (a core_pattern of `|/tmp/x %p` stays
/// text); None when the value holds control characters, which no pasted line carries safely.
pub fn hand_fix(value: &str, path: &str) -> Option<String> {
    if value.chars().any(|c| c.is_control() && c != '\t') || path.chars().any(char::is_control) {
        return None;
    }
    Some(format!(
        "printf '%s\\n' {} > {}",
        shell_quote(value),
        shell_quote(path)
    ))
}

/// How to restore the setting at `path` to `value` by hand, for a message: the quoted command,
/// or, when none can be pasted safely, where to look.
pub fn hand_fix_hint(value: &str, path: &str) -> String {
    match hand_fix(value, path) {
        Some(cmd) => format!("restore it by hand: {cmd}"),
        None => format!(
            "restore it by hand to the value the journal holds (it has control characters, so no command is shown to paste) in {}",
            path.escape_default()
        ),
    }
}

/// Whether two values of a setting are the same: equal text (whitespace runs aside), or
/// equal whole numbers (`010` and `10`).
pub fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (a, b) = (norm(a), norm(b));
    a == b
        || matches!(
            (a.parse::<i64>(), b.parse::<i64>()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The real path of `path` (symbolic links resolved) if it lies under one of `roots`;
/// otherwise why it may not be changed ([`Refusal::Outside`], or [`Unavailable::Unresolved`]
/// when it cannot be resolved; as a [`crate::error::KernelError`], the first stays a refusal).
pub fn check_allowed(path: &Path, roots: &[PathBuf]) -> Result<PathBuf, Unavailable> {
    let real = std::fs::canonicalize(path).map_err(|e| Unavailable::Unresolved {
        path: path.to_path_buf(),
        cause: e.into(),
    })?;
    if roots.iter().any(|r| real.starts_with(r)) {
        Ok(real)
    } else {
        Err(Refusal::Outside {
            path: path.to_path_buf(),
            real,
            roots: roots.to_vec(),
        }
        .into())
    }
}

/// The roots settings may lie under on a real system.
pub fn system_roots() -> Vec<PathBuf> {
    ALLOWED_ROOTS.iter().map(PathBuf::from).collect()
}

/// The files a knob path names: itself, or with one `*` component every existing match
/// (sorted); empty when nothing exists.
pub fn expand(pattern: &str) -> Vec<PathBuf> {
    let Some(star) = pattern.find('*') else {
        let p = PathBuf::from(pattern);
        return if p.exists() { vec![p] } else { Vec::new() };
    };
    let dir_end = pattern[..star].rfind('/').unwrap_or(0);
    let (dir, rest) = (&pattern[..dir_end], &pattern[dir_end + 1..]);
    let (component, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let (prefix, suffix) = component.split_once('*').unwrap_or((component, ""));
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "/" } else { dir }) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let hit = name.len() >= prefix.len() + suffix.len()
                && name.starts_with(prefix)
                && name.ends_with(suffix);
            let p = if tail.is_empty() {
                e.path()
            } else {
                e.path().join(tail)
            };
            (hit && p.exists()).then_some(p)
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_lists_give_the_bracketed_word_and_plain_files_their_text() {
        let io = parse("none [mq-deadline] kyber bfq \n");
        assert_eq!(io.value, "mq-deadline");
        assert_eq!(io.offered.unwrap(), ["none", "mq-deadline", "kyber", "bfq"]);
        let thp = parse("always [madvise] never\n");
        assert_eq!(thp.value, "madvise");
        assert_eq!(
            parse("100\n"),
            Read {
                value: "100".into(),
                offered: None
            }
        );
        assert_eq!(parse("4\t4\t1\t7\n").value, "4 4 1 7");
        assert_eq!(parse("-1\n").value, "-1");
    }

    #[test]
    fn hand_fixes_are_quoted_so_that_pasting_runs_nothing_else() {
        assert_eq!(
            hand_fix("|/tmp/x %p", "/proc/sys/kernel/core_pattern").unwrap(),
            r"printf '%s\n' '|/tmp/x %p' > '/proc/sys/kernel/core_pattern'"
        );
        assert_eq!(
            hand_fix("it's $(id)`id`", "/sys/x").unwrap(),
            r"printf '%s\n' 'it'\''s $(id)`id`' > '/sys/x'"
        );
        assert_eq!(
            hand_fix("", "/proc/sys/a").unwrap(),
            r"printf '%s\n' '' > '/proc/sys/a'"
        );
        assert_eq!(hand_fix("1\n0", "/proc/sys/a"), None);
        assert!(hand_fix_hint("1\r", "/proc/sys/a").contains("control characters"));
        // What sh makes of the pasted line: the value written, nothing run.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("it's a knob");
        let value = "|/tmp/x %p; $(touch ran) `touch ran` it's";
        let cmd = hand_fix(value, file.to_str().unwrap()).unwrap();
        let st = std::process::Command::new("sh")
            .args(["-c", &cmd])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("{value}\n")
        );
        assert!(!dir.path().join("ran").exists());
    }

    #[test]
    fn values_compare_as_text_or_as_numbers() {
        assert!(same("10", "010"));
        assert!(same("4 4 1 7", "4\t4  1 7"));
        assert!(same("madvise", "madvise"));
        assert!(!same("10", "12"));
        assert!(!same("never", "always"));
    }

    #[test]
    fn only_paths_under_the_roots_pass_even_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        std::fs::write(inside.join("knob"), "1").unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), inside.join("link")).unwrap();
        let roots = [std::fs::canonicalize(&inside).unwrap()];
        assert!(check_allowed(&inside.join("knob"), &roots).is_ok());
        let e = check_allowed(&inside.join("link"), &roots).unwrap_err();
        assert!(
            matches!(&e, Unavailable::Refused(Refusal::Outside { real, .. }) if *real == std::fs::canonicalize(outside.path()).unwrap())
                && e.to_string().contains("outside"),
            "{e}"
        );
        // The real system: a sysctl passes, a block device's link under /sys stays in /sys.
        let sys = system_roots();
        assert!(check_allowed(Path::new("/proc/sys/kernel/sched_rr_timeslice_ms"), &sys).is_ok());
        assert!(check_allowed(Path::new("/etc/hostname"), &sys).is_err());
    }

    #[test]
    fn a_star_component_expands_to_every_existing_match() {
        let dir = tempfile::tempdir().unwrap();
        for cpu in ["cpu0", "cpu1", "cpufreq", "other"] {
            let d = dir.path().join(cpu).join("cpufreq");
            std::fs::create_dir_all(&d).unwrap();
            if cpu != "cpufreq" {
                std::fs::write(d.join("scaling_governor"), "performance").unwrap();
            }
        }
        let pattern = format!("{}/cpu*/cpufreq/scaling_governor", dir.path().display());
        let got: Vec<String> = expand(&pattern)
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "cpu0/cpufreq/scaling_governor",
                "cpu1/cpufreq/scaling_governor"
            ]
        );
        assert!(expand(&format!("{}/nothing", dir.path().display())).is_empty());
    }
}
