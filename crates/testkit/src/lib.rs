//! What a test needs from the machine (root, a program, PostgreSQL, tracefs, ...), and what
//! happens when it is missing: the test skips with its reason shown in `cargo test`'s own
//! output, or fails when `SCHEDLAB_TEST_REQUIRE` says the machine must have it (`.ci/run` sets
//! `all`, so a gap in CI is a failure, not a quiet "ok"). Also what tests read of their own
//! process from the kernel ([`resident_kib`]).
//!
//! Every skip in every crate's tests goes through [`skip`]. libtest captures what a passing
//! test prints with `print!`/`eprint!`, so a reason printed that way is never seen; [`skip`]
//! writes its line straight to the process's standard error, which libtest does not capture,
//! so `cargo test` shows it beside the test's `... ok`:
//!
//! ```text
//! SKIPPED browser::the_html_report_renders_offline: Chromium is not installed (...) [needs program; SCHEDLAB_TEST_REQUIRE=all fails instead]
//! test the_html_report_renders_offline_without_console_errors ... ok
//! ```

#![forbid(unsafe_code)]

use std::fmt;
use std::io::Write;

/// The variable that turns skips into failures: `all`, or a comma-separated list of [`Need`]
/// names (`root,postgresql`); unset, empty or `none`: every missing need skips.
pub const REQUIRE_VAR: &str = "SCHEDLAB_TEST_REQUIRE";

/// A kind of thing a test needs from the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Running as root (real-time policies, kernel settings, dropping privileges).
    Root,
    /// A program on the machine (chromium, vmstat, perl, df, ...).
    Program,
    /// PostgreSQL's server binaries.
    Postgresql,
    /// The kernel's tracefs (scheduler trace).
    Tracefs,
    /// A user account (`nobody`) other than the one running the tests.
    User,
    /// A cgroup controller or hierarchy.
    Cgroup,
    /// A kernel feature or setting (sched_ext, RT throttling, custom slices, ...), or a
    /// machine shape (two CPUs).
    Kernel,
    /// A machine quiet enough to leave a test the CPU share the kernel behaviour it checks
    /// needs to show (a bandwidth limit throttles only a group that gets more than its quota).
    Idle,
}

impl Need {
    /// Every need, in the order of [`Need::name`]s.
    pub const ALL: [Need; 8] = [
        Need::Root,
        Need::Program,
        Need::Postgresql,
        Need::Tracefs,
        Need::User,
        Need::Cgroup,
        Need::Kernel,
        Need::Idle,
    ];

    /// The name used in [`REQUIRE_VAR`].
    pub fn name(self) -> &'static str {
        match self {
            Need::Root => "root",
            Need::Program => "program",
            Need::Postgresql => "postgresql",
            Need::Tracefs => "tracefs",
            Need::User => "user",
            Need::Cgroup => "cgroup",
            Need::Kernel => "kernel",
            Need::Idle => "idle",
        }
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `need` must be there, by the value of [`REQUIRE_VAR`]. Panics on a word that names
/// no need, so that a typo does not quietly require nothing.
pub fn required_by(value: Option<&str>, need: Need) -> bool {
    let Some(value) = value else { return false };
    let mut required = false;
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "all" => required = true,
            "none" => {}
            w => match Need::ALL.iter().find(|n| n.name() == w) {
                Some(n) => required |= *n == need,
                None => panic!(
                    "{REQUIRE_VAR}={value}: `{w}` is not one of all, none, {}",
                    Need::ALL.map(Need::name).join(", ")
                ),
            },
        }
    }
    required
}

/// Whether this process's environment requires `need`.
pub fn required(need: Need) -> bool {
    required_by(std::env::var(REQUIRE_VAR).ok().as_deref(), need)
}

/// The line [`skip`] prints for test `test` (None: unnamed).
pub fn skip_line(test: Option<&str>, need: Need, reason: &str) -> String {
    format!(
        "SKIPPED {}: {reason} [needs {need}; {REQUIRE_VAR}=all fails instead]\n",
        test.unwrap_or("a test")
    )
}

/// The running test's name: libtest names each test's thread after it.
fn test_name() -> Option<String> {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(str::to_string)
}

/// The test cannot run here because `need` is missing (`reason` says what and how to get
/// it). Fails the test (panics) when [`REQUIRE_VAR`] requires `need`; otherwise prints the
/// reason where `cargo test` shows it and returns, and the caller returns.
///
/// ```no_run
/// use schedlab_testkit::{skip, Need};
///
/// fn a_test_of_the_trace() {
///     if !std::path::Path::new("/sys/kernel/tracing/trace").exists() {
///         return skip(Need::Tracefs, "no tracefs at /sys/kernel/tracing");
///     }
///     // ...
/// }
/// ```
#[track_caller]
pub fn skip(need: Need, reason: impl fmt::Display) {
    let reason = reason.to_string();
    let name = test_name();
    if required(need) {
        panic!(
            "{} cannot run: {reason}, and {REQUIRE_VAR} requires `{need}`",
            name.as_deref().unwrap_or("this test")
        );
    }
    // Straight to fd 2: `eprintln!` would be captured with the passing test's output.
    let line = skip_line(name.as_deref(), need, &reason);
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Whether this process runs as root (effective uid 0, from /proc/self/status).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// True when running as root; else skips (or fails) saying `why` root is needed.
#[track_caller]
pub fn root(why: &str) -> bool {
    if is_root() {
        return true;
    }
    skip(Need::Root, format!("needs root ({why}); CI runs as root"));
    false
}

/// True when `program` runs (`program arg`); else skips (or fails), naming the Debian
/// package that has it.
#[track_caller]
pub fn program(program: &str, arg: &str, package: &str) -> bool {
    let runs = std::process::Command::new(program)
        .arg(arg)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !runs {
        skip(
            Need::Program,
            format!("`{program}` is not installed (Debian package {package}; .ci/run installs it)"),
        );
    }
    runs
}

/// The pids of the processes whose command line matches the extended regular expression
/// `pattern` (`pgrep -f`), this process's own excluded. Panics when the listing itself fails
/// (pgrep exits 2 for a bad pattern or option, 3 for a fatal error), so a test that counts
/// processes left behind never passes on a listing that did not run: a pattern starting with
/// `--` was once read as an option, the output was empty, and the check always held.
pub fn processes_matching(pattern: &str) -> Vec<u32> {
    let out = std::process::Command::new("pgrep")
        .args(["-f", "--", pattern])
        .output()
        .expect("running pgrep (Debian package procps)");
    match out.status.code() {
        Some(0 | 1) => {}
        other => panic!(
            "pgrep -f -- {pattern:?} failed (exit {other:?}): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|p| p.parse().expect("pgrep prints pids"))
        .filter(|&p| p != std::process::id())
        .collect()
}

/// The resident size, in KiB, of this process's mapping that starts at `addr`, from the
/// kernel's own accounting (the mapping's `Rss:` line in /proc/self/smaps; the shared zero
/// page is not counted). Panics when no mapping starts there.
pub fn resident_kib(addr: usize) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("reading /proc/self/smaps");
    let mut lines = smaps.lines();
    while let Some(l) = lines.next() {
        let start = l.split('-').next().unwrap_or("");
        if usize::from_str_radix(start, 16).ok() == Some(addr) {
            let rss = lines.find(|l| l.starts_with("Rss:")).expect("an Rss line");
            return rss
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .expect("Rss in kB");
        }
    }
    panic!("no mapping starts at {addr:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_that_starts_with_dashes_finds_its_process_and_a_bad_one_fails() {
        // The marker is sh's $0, so it stands in the shell's command line; the shell waits in
        // its own `read` (no child of its own to leave behind) on a pipe nobody writes.
        let marker = format!("--spool-file /nonexistent/{}.db", std::process::id());
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x", &marker])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut found = processes_matching(&marker);
        while found.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            found = processes_matching(&marker);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(found, vec![child.id()]);
        assert!(processes_matching(&marker).is_empty(), "gone once reaped");
        let bad = std::panic::catch_unwind(|| processes_matching("("));
        assert!(
            bad.is_err(),
            "a listing that fails (bad pattern) fails the test"
        );
    }

    #[test]
    fn the_variable_names_all_none_or_a_list_of_needs() {
        assert!(!required_by(None, Need::Root));
        assert!(!required_by(Some(""), Need::Root));
        assert!(!required_by(Some("none"), Need::Root));
        for n in Need::ALL {
            assert!(required_by(Some("all"), n), "{n}");
        }
        assert!(required_by(Some("root, postgresql"), Need::Postgresql));
        assert!(required_by(Some("root,postgresql"), Need::Root));
        assert!(!required_by(Some("root,postgresql"), Need::Tracefs));
    }

    #[test]
    #[should_panic(expected = "`chromium` is not one of all, none, root, program")]
    fn a_word_that_names_no_need_is_an_error_not_nothing() {
        required_by(Some("root,chromium"), Need::Root);
    }

    #[test]
    fn the_line_names_the_test_the_reason_the_need_and_the_variable() {
        let l = skip_line(Some("t::x"), Need::Tracefs, "no tracefs here");
        assert_eq!(
            l,
            "SKIPPED t::x: no tracefs here [needs tracefs; SCHEDLAB_TEST_REQUIRE=all fails instead]\n"
        );
    }

    #[test]
    fn root_is_the_effective_uid() {
        // An independent reading: the owner of a file this process creates is its fsuid,
        // which follows the effective uid.
        use std::os::unix::fs::MetadataExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        let uid = f.as_file().metadata().unwrap().uid();
        assert_eq!(is_root(), uid == 0);
    }
}
