//! The restore journal: before schedlab changes any kernel setting, it writes what the setting
//! was to `STATE_DIR/restore-PID.json` (default `/var/lib/schedlab`, or `$SCHEDLAB_STATE_DIR`),
//! with the owner's pid, start time and boot id. A process holds one journal at a time, naming
//! every change it has in force. The owner restores and removes it on every exit path it lives
//! through; after a SIGKILL or a crash, the next schedlab command of any kind finds the journal
//! of a dead owner, restores what it names, says for every setting what it found and did, and
//! removes it.
//!
//! A journal is obeyed only when its directory and file are trusted ([`super::statedir`]), and
//! each setting is checked again as if it came from a spec: a canonical path under /proc/sys or
//! /sys, not on the deny list, a one-line value. Anything else is reported, not written.
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

mod restore;

use super::knobfile;
use super::statedir::StateDir;
use crate::error::{Busy, Internal, KernelError};
use restore::{printable, restore_file};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

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
            start_ticks: schedlab_machine::process_start_ticks(pid),
            boot_id: schedlab_machine::boot_id(),
        }
    }

    /// Whether the journal's owner ran in an earlier boot of this machine.
    pub fn earlier_boot(&self) -> bool {
        matches!((&self.boot_id, schedlab_machine::boot_id()), (Some(a), Some(b)) if *a != b)
    }

    /// Whether this very process still runs (same boot, same pid, same start time).
    pub fn alive(&self) -> bool {
        !self.earlier_boot()
            && self.start_ticks.is_some()
            && schedlab_machine::process_start_ticks(self.pid) == self.start_ticks
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
    /// CPU cgroups it created (or is about to create), removed with everything below them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<PathBuf>,
}

/// This process's journal, on disk while settings may differ from their originals.
#[derive(Debug)]
pub struct Journal {
    dir: StateDir,
    name: String,
    record: Record,
    /// Where settings may lie (checked again when a dead owner's journal is restored).
    roots: Vec<PathBuf>,
}

/// Whether this process holds a journal: there is one per process (`restore-PID.json`),
/// holding every change in force, so a second one would overwrite the first's originals.
static HELD: AtomicBool = AtomicBool::new(false);

/// Whether this process holds a restore journal (then settings of its own may be changed, and
/// nothing it reads now is an original).
pub fn held() -> bool {
    HELD.load(SeqCst)
}

/// The journal file name of process `pid`.
fn name_of(pid: i32) -> String {
    format!("restore-{pid}.json")
}

/// Whether `name` is a journal's file name.
fn is_journal(name: &str) -> bool {
    name.starts_with("restore-") && name.ends_with(".json")
}

/// A journal file as found.
#[derive(Debug)]
enum Found {
    /// Trusted and read.
    Record(Record),
    /// Not trusted (owner, mode, link): why.
    Refused(String),
    /// Trusted but not schedlab's format: why.
    Unreadable(String),
}

/// Every journal in `dir`, by file name.
fn journals(dir: &StateDir) -> Vec<(String, Found)> {
    dir.names(is_journal)
        .into_iter()
        .map(|name| {
            let found = match dir.read(&name) {
                Err(why) => Found::Refused(why.to_string()),
                Ok(text) => match serde_json::from_str::<Record>(&text) {
                    Ok(r) => Found::Record(r),
                    Err(e) => Found::Unreadable(e.to_string()),
                },
            };
            (name, found)
        })
        .collect()
}

/// The message for a journal that is not trusted.
fn refusal(file: &Path, why: &str) -> String {
    format!(
        "refused the restore journal {}: {why}, so someone other than schedlab could have written it; nothing in it was obeyed. Look at it, remove it (rm {}), and restore by hand what it names if need be",
        file.display(),
        file.display()
    )
}

impl Journal {
    /// Writes this process's journal of `entries` into the state directory `dir`, before
    /// anything changes (see [`Journal::create_reading`]).
    pub fn create(
        dir: &Path,
        entries: Vec<Entry>,
        roots: &[PathBuf],
    ) -> Result<Journal, KernelError> {
        Journal::create_reading(dir, roots, move || Ok(entries))
    }

    /// Writes this process's journal into the state directory `dir`, before anything changes,
    /// naming the settings `read` returns with their originals. Under the directory's lock,
    /// journals of dead owners are restored first (reported on stderr), and only then are the
    /// originals read: a setting a killed schedlab left changed is never taken for one.
    /// Refused when a live schedlab process holds any of the same files, or when this process
    /// holds a journal already.
    pub fn create_reading(
        dir: &Path,
        roots: &[PathBuf],
        read: impl FnOnce() -> Result<Vec<Entry>, KernelError>,
    ) -> Result<Journal, KernelError> {
        if HELD.swap(true, SeqCst) {
            return Err(Internal::JournalHeld.into());
        }
        let made = Journal::write_new(dir, roots, read);
        if made.is_err() {
            HELD.store(false, SeqCst);
        }
        made
    }

    fn write_new(
        dir: &Path,
        roots: &[PathBuf],
        read: impl FnOnce() -> Result<Vec<Entry>, KernelError>,
    ) -> Result<Journal, KernelError> {
        let dir = StateDir::open(dir, true)?.expect("created when missing");
        let _lock = dir.lock()?;
        let me = Owner::this_process();
        let live = recover_others(&dir, &me, roots);
        let entries = read()?;
        for other in &live {
            held_by(other, &entries)?;
        }
        let record = Record {
            version: VERSION,
            owner: me,
            command: schedlab_machine::secret::command_line(),
            created_at: schedlab_core::records::now_utc(),
            entries,
            scx: None,
            cgroups: Vec::new(),
        };
        let name = name_of(record.owner.pid);
        let journal = Journal {
            dir,
            name,
            record,
            roots: roots.to_vec(),
        };
        journal.save()?;
        Ok(journal)
    }

    fn save(&self) -> Result<(), KernelError> {
        let text = serde_json::to_string_pretty(&self.record).map_err(|e| Internal::Json {
            detail: e.to_string(),
        })?;
        self.dir.write(&self.name, &text)
    }

    /// The journal's file.
    pub fn path(&self) -> PathBuf {
        self.dir.file(&self.name)
    }

    /// Adds settings to the journal before they change (their originals), refused when a live
    /// schedlab process varies one of them.
    pub fn add_entries(&mut self, entries: Vec<Entry>) -> Result<(), KernelError> {
        self.add_reading(move || Ok(entries))
    }

    /// Adds the settings `read` returns, with their originals, before they change: under the
    /// directory's lock, after journals of dead owners are restored (as in
    /// [`Journal::create_reading`]); refused when a live schedlab process varies one of them.
    pub fn add_reading(
        &mut self,
        read: impl FnOnce() -> Result<Vec<Entry>, KernelError>,
    ) -> Result<(), KernelError> {
        let _lock = self.dir.lock()?;
        let live = recover_others(&self.dir, &self.record.owner, &self.roots);
        let entries = read()?;
        for other in &live {
            held_by(other, &entries)?;
        }
        self.record.entries.extend(entries);
        self.save()
    }

    /// Records CPU cgroups before they are created.
    pub fn add_cgroups(&mut self, paths: &[PathBuf]) -> Result<(), KernelError> {
        let new: Vec<PathBuf> = paths
            .iter()
            .filter(|p| !self.record.cgroups.contains(p))
            .cloned()
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        self.record.cgroups.extend(new);
        self.save()
    }

    /// Forgets CPU cgroups once they are removed.
    pub fn remove_cgroups(&mut self, paths: &[PathBuf]) -> Result<(), KernelError> {
        let before = self.record.cgroups.len();
        self.record.cgroups.retain(|p| !paths.contains(p));
        if self.record.cgroups.len() == before {
            return Ok(());
        }
        self.save()
    }

    /// Whether it names cgroups that may still exist.
    pub fn has_cgroups(&self) -> bool {
        !self.record.cgroups.is_empty()
    }

    /// Records the BPF scheduler now running (None: none), before it starts or after it stopped.
    pub fn set_scx(&mut self, scx: Option<ScxProcess>) -> Result<(), KernelError> {
        self.record.scx = scx;
        self.save()
    }

    /// Removes the journal: everything it names is back as it was. A journal dropped without
    /// this stays on disk for `schedlab restore`, and this process makes no other.
    pub fn remove(self) {
        self.dir.remove(&self.name);
        HELD.store(false, SeqCst);
    }
}

/// Restores the journals in `dir` (locked by the caller) of dead owners other than `me`,
/// saying so on stderr, and returns those of live ones. A journal not trusted is reported and
/// left alone.
fn recover_others(dir: &StateDir, me: &Owner, roots: &[PathBuf]) -> Vec<Record> {
    let mut live = Vec::new();
    for (name, found) in journals(dir) {
        let other = match found {
            Found::Record(r) => r,
            Found::Refused(why) => {
                say_err!("schedlab: {}", refusal(&dir.file(&name), &why));
                continue;
            }
            Found::Unreadable(_) => continue,
        };
        if other.owner.pid == me.pid && other.owner.start_ticks == me.start_ticks {
            continue;
        }
        if other.owner.alive() {
            live.push(other);
            continue;
        }
        for line in restore_file(dir, &name, &other, roots).lines {
            say_err!("schedlab: {line}");
        }
    }
    live
}

/// An error naming the first of `entries` that the live journal `other` holds.
fn held_by(other: &Record, entries: &[Entry]) -> Result<(), KernelError> {
    match entries
        .iter()
        .find(|e| other.entries.iter().any(|o| o.path == e.path))
    {
        Some(e) => Err(Busy {
            name: e.name.clone(),
            path: e.path.clone(),
            pid: other.owner.pid,
            command: other.command.clone(),
        }
        .into()),
        None => Ok(()),
    }
}

/// What a recovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// What was restored (or could not be), one line each.
    pub lines: Vec<String>,
    /// Whether a setting could not be restored (its journal is kept).
    pub failed: bool,
    /// Journals of live schedlab processes, left to them: (pid, command).
    pub live: Vec<(i32, String)>,
    /// Journals that are not schedlab's format: (file, why).
    pub unreadable: Vec<(PathBuf, String)>,
    /// Journals not trusted, hence not obeyed, one message each (cause and remedy).
    pub refused: Vec<String>,
}

/// Restores every journal in the state directory `dir` whose owner is dead; settings must lie
/// under `roots`. An error ([`KernelError::State`]) when the directory itself is not trusted.
pub fn recover(dir: &Path, roots: &[PathBuf]) -> Result<Recovery, KernelError> {
    let mut out = Recovery::default();
    let Some(dir) = StateDir::open(dir, false)? else {
        return Ok(out);
    };
    if dir.names(is_journal).is_empty() {
        return Ok(out);
    }
    let _lock = dir.lock()?;
    for (name, found) in journals(&dir) {
        match found {
            Found::Refused(why) => out.refused.push(refusal(&dir.file(&name), &why)),
            Found::Unreadable(e) => out.unreadable.push((dir.file(&name), e)),
            Found::Record(r) if r.owner.alive() => {
                out.live.push((r.owner.pid, printable(&r.command)))
            }
            Found::Record(r) => {
                let done = restore_file(&dir, &name, &r, roots);
                out.failed |= done.failed;
                out.lines.extend(done.lines);
            }
        }
    }
    Ok(out)
}

/// Run by every schedlab command as it starts: restores what a dead schedlab left changed and
/// says so on stderr. Cheap when there is nothing to do (one directory listing). Only root
/// can read or restore journals (the state directory is root's, mode 0700).
pub fn recover_at_startup() {
    let dir = state_dir();
    if !schedlab_sys::is_root() {
        return;
    }
    if !dir.exists() {
        for line in super::cgroups::remove_stale().lines {
            say_err!("schedlab: {line}");
        }
        return;
    }
    match recover(&dir, &knobfile::system_roots()) {
        Ok(r) => {
            for line in r.lines.iter().chain(&r.refused) {
                say_err!("schedlab: {line}");
            }
        }
        Err(e) => say_err!("schedlab: could not check the restore journals: {e}"),
    }
    // cgroups of dead schedlab processes that no journal names (one killed between creating
    // its journal's directory and writing it, or a journal refused above).
    for line in super::cgroups::remove_stale().lines {
        say_err!("schedlab: {line}");
    }
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
