//! Kernel settings as axes: every knob a plan varies (sysctls, /sys files, the I/O scheduler,
//! a BPF scheduler) is resolved to its real files when the run starts ([`super::knobpaths`]:
//! two names for one file and denied files are refused), its original value written to the
//! restore journal before anything changes, set before each trial of a cell and read back (the
//! settle window runs after), and restored when the run ends however it ends (the journal
//! covers SIGKILL and power loss). The process's [`super::owner::KernelOwner`] holds one run's
//! knobs at a time. Cells whose knob is absent, refused, or needs what this machine lacks
//! (root, sched_ext, a kernel that keeps custom slices) are skipped with the reason.

mod describe;

pub use describe::describe;

use super::journal::{self, Entry, Journal, Owner, ScxProcess};
use super::knobfile;
use super::knobpaths;
use super::scx::Scx;
use crate::error::{Internal, KernelError, NotRestored, Refusal, SettingError};
use crate::error::{Unavailable, Unrestored};
use schedlab_core::policy::PolicyKind;
use schedlab_core::records::{KnobReading, KnobSetting};
use schedlab_core::Warning;
use schedlab_machine::sched_ext::{self, SchedExt};
use schedlab_spec::plan::{Cell, Plan};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Name of the I/O scheduler knob (the `io_schedulers` axis).
pub const IO_SCHEDULER: &str = "io_scheduler";
/// How long a BPF scheduler may take to be enabled.
const SCX_START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a BPF scheduler may take to stop, and the kernel to be back on its fair class.
const SCX_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// One settings file schedlab changes.
#[derive(Debug)]
struct Managed {
    /// The knob's name.
    name: String,
    /// The knob's path as the cell names it (may hold a `*`).
    pattern: String,
    /// The file (symbolic links resolved).
    file: PathBuf,
    /// Its value before the run.
    original: String,
}

/// Every kernel setting of a run, with its originals; restores them when dropped.
#[derive(Debug, Default)]
pub struct Knobs {
    files: Vec<Managed>,
    /// Knob paths that cannot be set here, with the reason (absent, outside, not root).
    unusable: BTreeMap<String, Unavailable>,
    journal: Option<Journal>,
    scx: Option<Scx>,
    /// Why BPF schedulers and the ext policy cannot run here.
    ext_refusal: Option<Unavailable>,
    /// Device whose I/O scheduler is varied.
    io_device: Option<String>,
    /// Custom slices probed so far: (policy number, slice ns) -> refusal.
    slices: HashMap<(u32, u64), Option<schedlab_machine::probe::SliceError>>,
}

/// The I/O scheduler file of block device `device`.
fn io_path(device: &str) -> String {
    format!("/sys/block/{device}/queue/scheduler")
}

/// The device whose I/O scheduler `plan` varies, if it varies one.
fn io_device(plan: &Plan, io_dir: &Path) -> Result<Option<String>, KernelError> {
    if !plan.cells.iter().any(|c| c.io_scheduler.is_some()) {
        return Ok(None);
    }
    match &plan.settings.device {
        Some(d) => Ok(Some(d.clone())),
        None => super::iosched::device_for(io_dir).map(Some),
    }
}

/// The settings `cell` asks for, the I/O scheduler as one of them.
fn cell_settings(cell: &Cell, io_device: Option<&str>) -> Vec<KnobSetting> {
    let io = cell
        .io_scheduler
        .as_ref()
        .zip(io_device)
        .map(|(name, dev)| KnobSetting {
            name: IO_SCHEDULER.into(),
            path: io_path(dev),
            value: name.clone(),
        });
    cell.knobs.iter().cloned().chain(io).collect()
}

/// Every knob of `plan` once (by name and path: the I/O scheduler axis and a knob on its file
/// stay two, to be refused as one file), in first-use order, with every value asked for.
fn plan_settings(plan: &Plan, io_device: Option<&str>) -> Vec<knobpaths::Setting> {
    let mut out: Vec<knobpaths::Setting> = Vec::new();
    for s in plan.cells.iter().flat_map(|c| cell_settings(c, io_device)) {
        match out
            .iter_mut()
            .find(|o| o.pattern == s.path && o.name == s.name)
        {
            Some(o) if !o.values.contains(&s.value) => o.values.push(s.value),
            Some(_) => {}
            None => out.push(knobpaths::Setting {
                name: s.name,
                pattern: s.path,
                values: vec![s.value],
            }),
        }
    }
    out
}

/// Why knob `name` at `pattern` cannot be used: it names nothing on this machine.
fn absent(name: &str, pattern: &str) -> Unavailable {
    if name == IO_SCHEDULER {
        return Unavailable::NoIoScheduler {
            pattern: pattern.to_string(),
        };
    }
    Unavailable::Absent {
        name: name.to_string(),
        pattern: pattern.to_string(),
        kernel: schedlab_machine::kernel_release(),
    }
}

/// Why `plan` needs sched_ext and cannot have it here, if it needs it and cannot.
fn ext_refusal(plan: &Plan) -> Option<Unavailable> {
    let needs = plan
        .cells
        .iter()
        .any(|c| c.scx.is_some() || c.policy == PolicyKind::Ext);
    if !needs {
        return None;
    }
    let ext = SchedExt::now();
    let why = sched_ext::unavailable(&ext, schedlab_machine::kernel_sched_config().as_ref())?;
    Some(Unavailable::NoSchedExt { why })
}

impl Knobs {
    /// Resolves every knob of `plan` to its files, reads their originals and journals them
    /// before anything changes; returns the knobs and one warning per setting to store with
    /// the run. An error only when the run cannot start (a live schedlab varies the same
    /// setting, the journal cannot be written, the I/O device cannot be found).
    pub fn prepare(plan: &Plan, io_dir: &Path) -> Result<(Knobs, Vec<Warning>), KernelError> {
        if journal::held() {
            // One owner per process: what is read now may be a change of its own.
            return Err(Internal::EarlierRunInForce.into());
        }
        let io_device = io_device(plan, io_dir)?;
        let mut k = Knobs::default();
        k.io_device = io_device.clone();
        k.ext_refusal = ext_refusal(plan);
        let roots = knobfile::system_roots();
        let wants_scx = k.ext_refusal.is_none() && plan.cells.iter().any(|c| c.scx.is_some());
        let changes =
            schedlab_sys::is_root() && !plan_settings(plan, io_device.as_deref()).is_empty();
        if changes || wants_scx {
            // The originals are read under the journal's lock, after a dead schedlab's
            // changes are restored (issue 27: else a killed run's value was taken for one).
            let journal = Journal::create_reading(&journal::state_dir(), &roots, || {
                k.read_originals(plan, io_device.as_deref(), &roots);
                Ok(k.entries())
            })?;
            k.journal = Some(journal);
        } else {
            k.read_originals(plan, io_device.as_deref(), &roots);
        }
        if wants_scx {
            k.scx = Some(Scx::new(
                Path::new(sched_ext::SYSFS_ROOT),
                SCX_START_TIMEOUT,
                SCX_STOP_TIMEOUT,
            ));
        }
        let warnings = k.varied_warnings();
        Ok((k, warnings))
    }

    /// Reads the original value of every file the plan's settings resolve to (on
    /// `io_device`, under `roots`) into `files`; a setting that cannot be used (not root,
    /// refused, absent, unreadable) goes into `unusable` with the reason.
    fn read_originals(&mut self, plan: &Plan, io_device: Option<&str>, roots: &[PathBuf]) {
        let root = schedlab_sys::is_root();
        let settings = plan_settings(plan, io_device);
        let held = super::cgroups::held_files(plan);
        for r in knobpaths::resolve(&settings, &plan.settings.allow_knobs, &held, roots) {
            let (name, pattern) = (&r.name, &r.pattern);
            if !root {
                self.unusable.insert(
                    pattern.clone(),
                    Unavailable::NotRoot {
                        euid: schedlab_sys::euid(),
                        name: name.clone(),
                    },
                );
                continue;
            }
            if let Some(why) = r.refused {
                self.unusable.insert(pattern.clone(), why.into());
                continue;
            }
            if r.files.is_empty() {
                self.unusable.insert(pattern.clone(), absent(name, pattern));
            }
            for file in r.files {
                let read = file.and_then(|real| {
                    let r = knobfile::read(&real).map_err(|e| Unavailable::Unreadable {
                        name: name.clone(),
                        file: real.clone(),
                        cause: e.into(),
                    })?;
                    Ok((real, r.value))
                });
                match read {
                    Ok((file, original)) => self.files.push(Managed {
                        name: name.clone(),
                        pattern: pattern.clone(),
                        file,
                        original,
                    }),
                    Err(e) => {
                        self.unusable.insert(pattern.clone(), e);
                    }
                }
            }
        }
    }

    /// The journal's entries of the files held: their originals.
    fn entries(&self) -> Vec<Entry> {
        self.files
            .iter()
            .map(|m| Entry {
                name: m.name.clone(),
                path: m.file.display().to_string(),
                original: m.original.clone(),
            })
            .collect()
    }

    /// The warnings that say which settings the run varies and their originals.
    fn varied_warnings(&self) -> Vec<Warning> {
        let journal = self
            .journal
            .as_ref()
            .map(|j| j.path().display().to_string());
        self.files
            .iter()
            .map(|m| match (&self.io_device, m.name.as_str()) {
                (Some(dev), IO_SCHEDULER) => Warning::IoSchedulerVaried {
                    device: dev.clone(),
                    original: m.original.clone(),
                },
                _ => Warning::KnobVaried {
                    name: m.name.clone(),
                    file: m.file.display().to_string(),
                    original: m.original.clone(),
                    journal: journal.clone(),
                },
            })
            .collect()
    }

    /// Puts the machine in `cell`'s settings before a trial: every knob at the cell's value
    /// (or back at its original), read back; the cell's BPF scheduler running (or none).
    /// Returns what was read back, or why the cell must be skipped.
    pub fn apply(&mut self, cell: &Cell) -> Result<Vec<KnobReading>, KernelError> {
        if cell.scx.is_some() || cell.policy == PolicyKind::Ext {
            if let Some(why) = &self.ext_refusal {
                return Err(KernelError::Unavailable(Box::new(why.clone())));
            }
        }
        if let Some(ns) = cell.slice_ns {
            let probed = self
                .slices
                .entry((cell.policy.number(), ns))
                .or_insert_with(|| {
                    schedlab_machine::probe::slice_support(cell.policy.number(), ns).err()
                });
            if let Some(why) = probed {
                return Err(KernelError::Unavailable(Box::new(Unavailable::Slice(
                    why.clone(),
                ))));
            }
        }
        let wanted = cell_settings(cell, self.io_device.as_deref());
        if let Some(why) = wanted.iter().find_map(|s| self.unusable.get(&s.path)) {
            return Err(KernelError::Unavailable(Box::new(why.clone())));
        }
        let mut readings = Vec::new();
        for m in &self.files {
            let setting = wanted.iter().find(|s| s.path == m.pattern);
            let target = setting.map_or(m.original.as_str(), |s| s.value.as_str());
            let read_back = set(m, target, self.io_device.as_deref())?;
            if let Some(s) = setting {
                readings.push(KnobReading {
                    name: s.name.clone(),
                    path: m.file.display().to_string(),
                    requested: s.value.clone(),
                    read_back,
                });
            }
        }
        if let Some(r) = self.switch_scx(cell)? {
            readings.push(r);
        }
        Ok(readings)
    }

    /// Runs `cell`'s BPF scheduler (stopping another first), or none; the reading of the ops
    /// name when the cell has one.
    fn switch_scx(&mut self, cell: &Cell) -> Result<Option<KnobReading>, KernelError> {
        let Some(scx) = self.scx.as_mut() else {
            return Ok(None);
        };
        if scx.running() != cell.scx.as_ref() {
            scx.stop()?;
            if let Some(j) = self.journal.as_mut() {
                j.set_scx(None)?;
            }
            if let Some(c) = &cell.scx {
                let journal = &mut self.journal;
                let mut noted = Ok(());
                scx.start(c, &mut |pid| {
                    if let Some(j) = journal.as_mut() {
                        noted = j.set_scx(Some(ScxProcess {
                            owner: Owner::of(pid),
                            command: c.command_line(),
                        }));
                    }
                })?;
                noted?;
            }
        }
        Ok(cell.scx.as_ref().map(|c| KnobReading {
            name: "sched_ext".into(),
            path: format!("{}/root/ops", sched_ext::SYSFS_ROOT),
            requested: c.ops.clone(),
            read_back: scx.state().ops.unwrap_or_default(),
        }))
    }

    /// The process's restore journal, created (naming no knob) when the run changes none.
    pub(crate) fn journal(&mut self) -> Result<&mut Journal, KernelError> {
        if self.journal.is_none() {
            let j = Journal::create(&journal::state_dir(), Vec::new(), &knobfile::system_roots())?;
            self.journal = Some(j);
        }
        Ok(self.journal.as_mut().expect("created above"))
    }

    /// Takes the kernel setting `name` at `path` into the run's care, its original journaled
    /// first: [`Knobs::set_held`] changes it for a while, and it is restored with every other
    /// setting (a cell that does not ask for it puts it back before its trials).
    pub(crate) fn hold(&mut self, name: &str, path: &Path) -> Result<(), KernelError> {
        let file = knobfile::check_allowed(path, &knobfile::system_roots())?;
        if self.files.iter().any(|m| m.file == file) {
            return Ok(());
        }
        if let Some(reason) = schedlab_core::records::denied(&file.display().to_string()) {
            return Err(Refusal::DeniedHeld { file, reason }.into());
        }
        // Read under the journal's lock, after a dead schedlab's changes are restored.
        let mut original = String::new();
        self.journal()?.add_reading(|| {
            original = knobfile::read(&file)
                .map_err(|e| SettingError::Unreadable {
                    name: name.to_string(),
                    file: file.clone(),
                    cause: e.into(),
                })?
                .value;
            Ok(vec![Entry {
                name: name.to_string(),
                path: file.display().to_string(),
                original: original.clone(),
            }])
        })?;
        self.files.push(Managed {
            name: name.to_string(),
            pattern: path.display().to_string(),
            file,
            original,
        });
        Ok(())
    }

    /// Sets a held setting to `value` (None: back to its original) and reads it back.
    pub(crate) fn set_held(&self, path: &Path, value: Option<&str>) -> Result<String, KernelError> {
        let m = self
            .files
            .iter()
            .find(|m| m.file == path || Path::new(&m.pattern) == path)
            .ok_or_else(|| Internal::NotHeld {
                path: path.to_path_buf(),
            })?;
        set(m, value.unwrap_or(&m.original), None)
    }

    /// Puts everything back: stops the BPF scheduler, writes every original value that
    /// differs, and removes the journal once all is back (else keeps it for `schedlab restore`
    /// and says what could not be restored). Done once: what failed is left to the journal,
    /// not tried and said again when the knobs are dropped.
    pub fn restore(&mut self) -> Result<(), KernelError> {
        if self.journal.is_none() && self.scx.is_none() {
            return Ok(());
        }
        let mut failed = Vec::new();
        if let Some(scx) = self.scx.as_mut() {
            if let Err(e) = scx.stop() {
                failed.push(Unrestored::Scx(e));
            }
        }
        for m in &self.files {
            if let Err(e) = set(m, &m.original, self.io_device.as_deref()) {
                failed.push(Unrestored::Setting {
                    name: m.name.clone(),
                    original: m.original.clone(),
                    file: m.file.clone(),
                    cause: Box::new(e),
                });
            }
        }
        match self.journal.take() {
            Some(j) if j.has_cgroups() => {
                failed.push(Unrestored::JournalKeepsCgroups { journal: j.path() })
            }
            Some(j) if failed.is_empty() => j.remove(),
            Some(j) => failed.push(Unrestored::JournalKeepsOriginals { journal: j.path() }),
            None => {}
        }
        if failed.is_empty() {
            Ok(())
        } else {
            self.files.clear();
            Err(NotRestored::Left(failed).into())
        }
    }
}

impl Drop for Knobs {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            say_err!("error: {e}");
        }
    }
}

/// Refuses, as bad input, knobs of `plan` that are on the deny list without `--allow-knob`
/// or name one file twice, checked on this machine's real files (changes nothing).
pub fn check(plan: &Plan, io_dir: &Path) -> Result<(), KernelError> {
    let io_device = io_device(plan, io_dir).ok().flatten();
    let settings = plan_settings(plan, io_device.as_deref());
    let held = super::cgroups::held_files(plan);
    knobpaths::check(&settings, &plan.settings.allow_knobs, &held)
}

/// Sets file `m` to `target` unless it already is, and reads it back; returns the value read
/// back, or why it could not be set.
fn set(m: &Managed, target: &str, io_device: Option<&str>) -> Result<String, KernelError> {
    let file = &m.file;
    let now = knobfile::read(file).map_err(|e| SettingError::Unreadable {
        name: m.name.clone(),
        file: file.clone(),
        cause: e.into(),
    })?;
    if knobfile::same(&now.value, target) {
        return Ok(now.value);
    }
    if let Some(offered) = now.offered.filter(|o| !o.iter().any(|v| v == target)) {
        return Err(KernelError::Unavailable(Box::new(
            match io_device.filter(|_| m.name == IO_SCHEDULER) {
                Some(dev) => Unavailable::IoSchedulerNotOffered {
                    device: dev.to_string(),
                    target: target.to_string(),
                    offered,
                },
                None => Unavailable::NotOffered {
                    name: m.name.clone(),
                    file: file.clone(),
                    target: target.to_string(),
                    offered,
                },
            },
        )));
    }
    knobfile::write(file, target).map_err(|e| SettingError::Refused {
        name: m.name.clone(),
        file: file.clone(),
        target: target.to_string(),
        cause: e.into(),
    })?;
    let back = knobfile::read(file)
        .map_err(|e| SettingError::ReadBack {
            name: m.name.clone(),
            cause: e.into(),
        })?
        .value;
    if !knobfile::same(&back, target) {
        return Err(SettingError::Mismatch {
            name: m.name.clone(),
            file: file.clone(),
            back,
            target: target.to_string(),
        }
        .into());
    }
    Ok(back)
}
