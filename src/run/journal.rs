//! The restore journal: before schedlab changes any kernel setting, it writes what the setting
//! was to `STATE_DIR/restore-PID.json` (default `/var/lib/schedlab`, or `$SCHEDLAB_STATE_DIR`),
//! with the owner's pid, start time and boot id. The owner restores and removes it on every exit
//! path it lives through; after a SIGKILL or a crash, the next schedlab command of any kind
//! finds the journal of a dead owner, restores what it names, says so, and removes it.
//!
//! The journal sits on a disk that survives a reboot, so a power loss is noticed too; but a
//! reboot resets every /proc/sys and /sys setting to its boot value, so a journal from an
//! earlier boot is reported and removed without writing anything.
//!
//! Format (JSON, version 1):
//! `{"version":1,"owner":{"pid":..,"start_ticks":..,"boot_id":".."},"command":"..",
//!   "created_at":"..","entries":[{"name":"kernel.sched_rr_timeslice_ms",
//!   "path":"/proc/sys/kernel/sched_rr_timeslice_ms","original":"100"}],
//!   "scx":{"pid":..,"start_ticks":..,"command":"scx_lavd"}|null}`

use super::knobfile;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Environment variable naming the state directory (tests point it at a scratch directory).
pub const STATE_DIR_ENV: &str = "SCHEDLAB_STATE_DIR";
/// Default state directory: on disk, so that a power loss leaves the journal to be found.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/schedlab";
/// Journal format version.
const VERSION: u32 = 1;

/// The directory holding restore journals.
pub fn state_dir() -> PathBuf {
    std::env::var_os(STATE_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_STATE_DIR), PathBuf::from)
}

/// A process, identified across pid reuse and reboots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// Process id.
    pub pid: i32,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22).
    pub start_ticks: Option<u64>,
    /// The boot it ran in (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: Option<String>,
}

impl Owner {
    /// This process.
    pub fn this_process() -> Owner {
        Owner::of(std::process::id() as i32)
    }

    /// Process `pid` as it is now.
    pub fn of(pid: i32) -> Owner {
        Owner {
            pid,
            start_ticks: crate::machine::process_start_ticks(pid),
            boot_id: crate::machine::boot_id(),
        }
    }

    /// Whether the journal's owner ran in an earlier boot of this machine.
    pub fn earlier_boot(&self) -> bool {
        matches!((&self.boot_id, crate::machine::boot_id()), (Some(a), Some(b)) if *a != b)
    }

    /// Whether this very process still runs (same boot, same pid, same start time).
    pub fn alive(&self) -> bool {
        !self.earlier_boot()
            && self.start_ticks.is_some()
            && crate::machine::process_start_ticks(self.pid) == self.start_ticks
    }
}

/// One setting as it was before schedlab changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The knob's name (e.g. `kernel.sched_rr_timeslice_ms`, `io_scheduler`).
    pub name: String,
    /// Its file.
    pub path: String,
    /// The value before any change.
    pub original: String,
}

/// A BPF scheduler process schedlab started (to stop it if its starter died).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScxProcess {
    /// The process (also its process group).
    pub owner: Owner,
    /// Its command line.
    pub command: String,
}

/// What a journal file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Format version (1).
    pub version: u32,
    /// The schedlab process that changes the settings.
    pub owner: Owner,
    /// Its command line.
    pub command: String,
    /// When it was written, UTC RFC 3339.
    pub created_at: String,
    /// Every setting it may change, with its original value.
    pub entries: Vec<Entry>,
    /// The BPF scheduler it is running, if any.
    pub scx: Option<ScxProcess>,
}

/// This process's journal, on disk while settings may differ from their originals.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    record: Record,
}

/// The journal file of process `pid` in `dir`.
fn file_of(dir: &Path, pid: i32) -> PathBuf {
    dir.join(format!("restore-{pid}.json"))
}

/// Holds an exclusive flock on the directory itself while journals are read or written (no
/// lock file to leave behind).
fn lock(dir: &Path) -> Result<crate::sys::FileLock, String> {
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "cannot create the state directory {}: {e}; run as root or set {STATE_DIR_ENV}",
            dir.display()
        )
    })?;
    let d = std::fs::File::open(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
    crate::sys::lock_exclusive(d).map_err(|e| format!("cannot lock {}: {e}", dir.display()))
}

/// Every journal in `dir` with its file.
fn journals(dir: &Path) -> Vec<(PathBuf, Result<Record, String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, Result<Record, String>)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("restore-") && n.ends_with(".json")
            })
        })
        .map(|p| {
            let r = std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Record>(&t).map_err(|e| e.to_string()));
            (p, r)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Writes `record` to `path` so that a reader sees the old file or the new one, never half.
fn write_atomically(path: &Path, record: &Record) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(record).map_err(|e| e.to_string())?;
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        std::io::Write::write_all(&mut f, text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| format!("cannot write the restore journal {}: {e}", path.display()))
}

impl Journal {
    /// Writes this process's journal of `entries` into `dir`, before anything changes. First
    /// restores journals of dead owners (reported on stderr); refuses when a live schedlab
    /// process holds any of the same files.
    pub fn create(dir: &Path, entries: Vec<Entry>, roots: &[PathBuf]) -> Result<Journal, String> {
        let _lock = lock(dir)?;
        let me = Owner::this_process();
        for (path, record) in journals(dir) {
            let Ok(other) = record else { continue };
            if other.owner.pid == me.pid && other.owner.start_ticks == me.start_ticks {
                continue;
            }
            if other.owner.alive() {
                if let Some(e) = entries
                    .iter()
                    .find(|e| other.entries.iter().any(|o| o.path == e.path))
                {
                    return Err(format!(
                        "{} ({}) is being varied by another schedlab process (pid {}, `{}`); wait for it to end, or vary other settings",
                        e.name, e.path, other.owner.pid, other.command
                    ));
                }
                continue;
            }
            for line in restore_file(&path, &other, roots) {
                eprintln!("schedlab: {line}");
            }
        }
        let record = Record {
            version: VERSION,
            owner: me,
            command: crate::machine::secret::command_line(),
            created_at: crate::records::now_utc(),
            entries,
            scx: None,
        };
        let path = file_of(dir, record.owner.pid);
        write_atomically(&path, &record)?;
        Ok(Journal { path, record })
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records the BPF scheduler now running (None: none), before it starts or after it stopped.
    pub fn set_scx(&mut self, scx: Option<ScxProcess>) -> Result<(), String> {
        self.record.scx = scx;
        write_atomically(&self.path, &self.record)
    }

    /// Removes the journal: everything it names is back as it was.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Stops a BPF scheduler process left running by a dead schedlab, if it is still the same
/// process; returns what was done.
fn stop_orphan(scx: &ScxProcess) -> Option<String> {
    if !scx.owner.alive() {
        return None;
    }
    let pid = scx.owner.pid;
    crate::sys::kill_group(pid, libc::SIGTERM);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while scx.owner.alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if scx.owner.alive() {
        crate::sys::kill_group(pid, libc::SIGKILL);
    }
    Some(format!(
        "stopped the BPF scheduler `{}` (pid {pid}) it had started",
        scx.command
    ))
}

/// Restores every setting of `record` (the journal at `path`, whose owner is dead), then
/// removes the journal unless something could not be restored. Returns one line per action.
fn restore_file(path: &Path, record: &Record, roots: &[PathBuf]) -> Vec<String> {
    let who = format!(
        "schedlab pid {} (`{}`, {})",
        record.owner.pid, record.command, record.created_at
    );
    if record.owner.earlier_boot() {
        let _ = std::fs::remove_file(path);
        return vec![format!(
            "removed the restore journal of {who} from an earlier boot: the reboot reset the settings it changed ({}), nothing to restore",
            record.entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
        )];
    }
    let mut lines: Vec<String> = record.scx.iter().filter_map(stop_orphan).collect();
    let mut failed = false;
    for e in &record.entries {
        let checked = knobfile::check_allowed(Path::new(&e.path), roots).and_then(|real| {
            let r = knobfile::read(&real).map_err(|err| format!("{}: {err}", e.path))?;
            Ok((real, r.value))
        });
        let (file, now) = match checked {
            Ok(found) => found,
            Err(err) => {
                lines.push(format!("could not read {} to restore it: {err}", e.name));
                failed = true;
                continue;
            }
        };
        if knobfile::same(&now, &e.original) {
            continue;
        }
        match knobfile::write(&file, &e.original).and_then(|()| knobfile::read(&file)) {
            Ok(r) if knobfile::same(&r.value, &e.original) => lines.push(format!(
                "restored {} ({}): {now} -> {}",
                e.name, e.path, e.original
            )),
            Ok(r) => {
                failed = true;
                lines.push(format!(
                    "could not restore {}: it reads {} after writing {}; restore it by hand: echo {} > {}",
                    e.name, r.value, e.original, e.original, e.path
                ));
            }
            Err(err) => {
                failed = true;
                lines.push(format!(
                    "could not restore {} to {}: {err}; restore it by hand: echo {} > {}",
                    e.name, e.original, e.original, e.path
                ));
            }
        }
    }
    if failed {
        lines.push(format!("kept the journal {} of {who}", path.display()));
        return lines;
    }
    let _ = std::fs::remove_file(path);
    if lines.is_empty() {
        lines.push(format!(
            "removed the restore journal of {who}: every setting it names is at its original value"
        ));
    } else {
        lines.insert(
            0,
            format!("{who} ended without restoring kernel settings; restored them now:"),
        );
    }
    lines
}

/// What a recovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// What was restored (or could not be), one line each.
    pub lines: Vec<String>,
    /// Journals of live schedlab processes, left to them: (pid, command).
    pub live: Vec<(i32, String)>,
    /// Journals that are not schedlab's format: (file, why).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Restores every journal in `dir` whose owner is dead; settings must lie under `roots`.
pub fn recover(dir: &Path, roots: &[PathBuf]) -> Result<Recovery, String> {
    let mut out = Recovery::default();
    if journals(dir).is_empty() {
        return Ok(out);
    }
    let _lock = lock(dir)?;
    for (path, record) in journals(dir) {
        match record {
            Err(e) => out.unreadable.push((path, e)),
            Ok(r) if r.owner.alive() => out.live.push((r.owner.pid, r.command)),
            Ok(r) => out.lines.extend(restore_file(&path, &r, roots)),
        }
    }
    Ok(out)
}

/// Run by every schedlab command as it starts: restores what a dead schedlab left changed and
/// says so on stderr. Cheap when there is nothing to do (one directory listing).
pub fn recover_at_startup() {
    let dir = state_dir();
    let dead = journals(&dir)
        .into_iter()
        .filter(|(_, r)| r.as_ref().is_ok_and(|r| !r.owner.alive()))
        .count();
    if dead == 0 {
        return;
    }
    if !crate::sys::is_root() {
        eprintln!(
            "schedlab: {dead} restore journal(s) in {} name kernel settings a killed schedlab left changed; run `sudo schedlab restore`",
            dir.display()
        );
        return;
    }
    match recover(&dir, &knobfile::system_roots()) {
        Ok(r) => {
            for line in r.lines {
                eprintln!("schedlab: {line}");
            }
        }
        Err(e) => eprintln!("schedlab: could not check the restore journals: {e}"),
    }
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
