//! Restoring what a dead schedlab's restore journal names: each setting checked again as if
//! it came from a spec, written back when it is not at its original, and said; a BPF
//! scheduler it left running stopped; its cgroups removed. The journal is removed only when
//! everything is back.

use super::{knobfile, Entry, Record, ScxProcess};
use crate::error::{IoCause, Unavailable};
use crate::statedir::StateDir;
use std::path::{Path, PathBuf};

/// Stops a BPF scheduler process left running by a dead schedlab, if it is still the same
/// process; returns what was done.
fn stop_orphan(scx: &ScxProcess) -> Option<String> {
    if !scx.owner.alive() {
        return None;
    }
    let pid = scx.owner.pid;
    schedlab_sys::kill_group(pid, libc::SIGTERM);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while scx.owner.alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if scx.owner.alive() {
        schedlab_sys::kill_group(pid, libc::SIGKILL);
    }
    Some(format!(
        "stopped the BPF scheduler `{}` (pid {pid}) it had started",
        printable(&scx.command)
    ))
}

/// `s` on one line of a terminal: the one printable filter.
pub(super) fn printable(s: &str) -> String {
    schedlab_core::text::printable_line(s)
}

/// Why a journaled setting is not restored (shown after its label).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NotObeyed {
    /// Its original value is not one schedlab writes.
    #[error("its original value {original:?} is not one schedlab writes: {why}")]
    Value {
        /// The journaled value.
        original: String,
        /// What is wrong with it.
        why: schedlab_core::CoreError,
    },
    /// Its file cannot be resolved, or lies outside the roots.
    #[error(transparent)]
    Path(#[from] Unavailable),
    /// A path that is not the file's own.
    #[error(
        "{} is not the file's own path (that is {}); schedlab journals real paths",
        printable(path),
        real.display()
    )]
    NotReal {
        /// The journaled path.
        path: String,
        /// The file's own path.
        real: PathBuf,
    },
    /// A file on the deny list.
    #[error(
        "{} is on schedlab's deny list ({reason}); if you trust the journal{}, {}",
        printable(path),
        if *runs_program { " (it names a program the kernel runs as root: look at the value first)" } else { "" },
        knobfile::hand_fix_hint(original, path)
    )]
    Denied {
        /// The journaled path.
        path: String,
        /// The deny list's reason.
        reason: &'static str,
        /// Whether the file makes the kernel run a program.
        runs_program: bool,
        /// The journaled value.
        original: String,
    },
    /// The setting cannot be read.
    #[error("cannot read it: {cause}")]
    Unreadable {
        /// What failed.
        cause: IoCause,
    },
}

/// The file entry `e` may restore, checked again as if it came from a spec: under `roots`,
/// its canonical path, not on the deny list, with a value schedlab would write. Else why not.
fn check_entry(e: &Entry, roots: &[PathBuf]) -> Result<PathBuf, NotObeyed> {
    schedlab_core::records::check_knob_value(&e.original).map_err(|why| NotObeyed::Value {
        original: e.original.clone(),
        why,
    })?;
    let real = knobfile::check_allowed(Path::new(&e.path), roots)?;
    if real != Path::new(&e.path) {
        return Err(NotObeyed::NotReal {
            path: e.path.clone(),
            real,
        });
    }
    if let Some(reason) = schedlab_core::records::denied(&e.path) {
        return Err(NotObeyed::Denied {
            path: e.path.clone(),
            reason,
            runs_program: schedlab_core::records::runs_program(&e.path).is_some(),
            original: e.original.clone(),
        });
    }
    Ok(real)
}

/// What restoring one journal did.
#[derive(Debug, Default)]
pub(super) struct Restored {
    pub lines: Vec<String>,
    pub failed: bool,
}

/// Restores every setting of `record` (journal `name` in `dir`, whose owner is dead), then
/// removes the journal unless something could not be restored. Says, for every setting, what
/// it was, what it is now and what was done.
pub(super) fn restore_file(
    dir: &StateDir,
    name: &str,
    record: &Record,
    roots: &[PathBuf],
) -> Restored {
    let file = dir.file(name);
    let who = format!(
        "schedlab pid {} (`{}`, {})",
        record.owner.pid,
        printable(&record.command),
        printable(&record.created_at)
    );
    let names = || {
        record
            .entries
            .iter()
            .map(|e| printable(&e.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if record.owner.earlier_boot() {
        dir.remove(name);
        return Restored {
            lines: vec![format!(
                "removed the restore journal of {who} from an earlier boot: the reboot reset the settings it changed ({}), nothing to restore",
                names()
            )],
            failed: false,
        };
    }
    let mut out = Restored {
        lines: record.scx.iter().filter_map(stop_orphan).collect(),
        failed: false,
    };
    let mut unchanged = Vec::new();
    for e in &record.entries {
        restore_entry(e, roots, &mut out, &mut unchanged);
    }
    let removed = crate::cgroups::remove_recorded(&record.cgroups);
    out.failed |= removed.failed;
    out.lines.extend(removed.lines);
    if out.failed {
        out.lines
            .push(format!("kept the journal {} of {who}", file.display()));
        return out;
    }
    dir.remove(name);
    let at_original = if unchanged.is_empty() {
        String::new()
    } else {
        format!(
            "; at the value it journaled as original: {}",
            unchanged.join(", ")
        )
    };
    if out.lines.is_empty() {
        out.lines.push(format!(
            "removed the restore journal of {who}: nothing needed restoring{at_original}"
        ));
    } else {
        out.lines.insert(
            0,
            format!(
                "{who} ended without restoring kernel settings; restored them now{at_original}:"
            ),
        );
    }
    out
}

/// Restores one journaled setting if it is not at its original value: says what was done in
/// `out` (failed if it could not be restored), or adds it to `unchanged` ("label = value").
fn restore_entry(e: &Entry, roots: &[PathBuf], out: &mut Restored, unchanged: &mut Vec<String>) {
    let label = format!("{} ({})", printable(&e.name), printable(&e.path));
    let checked = check_entry(e, roots).and_then(|real| {
        let r = knobfile::read(&real).map_err(|err| NotObeyed::Unreadable { cause: err.into() })?;
        Ok((real, r.value))
    });
    let (real, now) = match checked {
        Ok(found) => found,
        Err(err) => {
            out.lines.push(format!("did not restore {label}: {err}"));
            out.failed = true;
            return;
        }
    };
    if knobfile::same(&now, &e.original) {
        unchanged.push(format!("{label} = {now}"));
        return;
    }
    match knobfile::write(&real, &e.original).and_then(|()| knobfile::read(&real)) {
        Ok(r) if knobfile::same(&r.value, &e.original) => out
            .lines
            .push(format!("restored {label}: {now} -> {}", e.original)),
        Ok(r) => {
            out.failed = true;
            out.lines.push(format!(
                "could not restore {label}: it reads {:?} after writing {:?}; {}",
                r.value,
                e.original,
                knobfile::hand_fix_hint(&e.original, &e.path)
            ));
        }
        Err(err) => {
            out.failed = true;
            out.lines.push(format!(
                "could not restore {label} from {now:?} to {:?}: {err}; {}",
                e.original,
                knobfile::hand_fix_hint(&e.original, &e.path)
            ));
        }
    }
}
