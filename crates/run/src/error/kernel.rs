//! What each kind of [`super::KernelError`] holds: the setting, file, value, errno or process it
//! is about, as values; each shows as the sentence schedlab prints (cause and remedy).

use super::IoCause;
use schedlab_machine::probe::SliceError;
use std::path::PathBuf;

/// ` (PATTERN leads to it)` when the file checked is not the knob's own path.
fn via(pattern: &Option<String>) -> String {
    pattern
        .as_ref()
        .map_or(String::new(), |p| format!(" ({p} leads to it)"))
}

/// Paths joined with ` and `.
fn joined(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(" and ")
}

/// Why schedlab refuses to change a setting, whatever the machine offers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A file whose real path lies outside /proc/sys and /sys.
    #[error(
        "{} leads to {}, outside {}; schedlab changes only kernel settings there",
        path.display(),
        real.display(),
        joined(roots)
    )]
    Outside {
        /// The path given.
        path: PathBuf,
        /// Where it leads.
        real: PathBuf,
        /// Where settings may lie.
        roots: Vec<PathBuf>,
    },
    /// A file on the deny list that makes the kernel run a program: no flag allows it.
    #[error(
        "{file}{} is on schedlab's deny list: {reason}; no flag allows it (schedlab never makes the kernel run a program)",
        via(pattern)
    )]
    RunsProgram {
        /// The file checked.
        file: String,
        /// The knob's path, when it is another name of the file.
        pattern: Option<String>,
        /// The deny list's reason.
        reason: &'static str,
    },
    /// A file on the deny list that `--allow-knob` does not name.
    #[error(
        "{file}{} is on schedlab's deny list: {reason}; if you mean it, allow it with --allow-knob {file} (settings.allow_knobs)",
        via(pattern)
    )]
    Denied {
        /// The file checked.
        file: String,
        /// The knob's path, when it is another name of the file.
        pattern: Option<String>,
        /// The deny list's reason.
        reason: &'static str,
    },
    /// A value that makes the kernel run a program (a core_pattern pipe).
    #[error(
        "{pattern} = {value:?}: {reason}; no flag allows it (schedlab never makes the kernel run a program)"
    )]
    ProgramValue {
        /// The knob's path.
        pattern: String,
        /// The value.
        value: String,
        /// Why it runs a program.
        reason: &'static str,
    },
    /// Two knobs of a plan that name one file.
    #[error(
        "{first} and {second} are the same file, {}; give each setting once, with all its values",
        file.display()
    )]
    SameFile {
        /// The earlier knob's label, `name (path)`.
        first: String,
        /// The later knob's label.
        second: String,
        /// The file both name.
        file: PathBuf,
    },
    /// A knob on a file another axis of the plan sets.
    #[error(
        "{label} is {}, which {by} sets and restores itself; drop the knob (one file is set by one axis only)",
        file.display()
    )]
    HeldByAxis {
        /// The knob's label, `name (path)`.
        label: String,
        /// Its real file.
        file: PathBuf,
        /// The axis that holds the file.
        by: String,
    },
    /// A setting another axis holds, found on the deny list.
    #[error("{} is on schedlab's deny list: {reason}", file.display())]
    DeniedHeld {
        /// The file.
        file: PathBuf,
        /// The deny list's reason.
        reason: &'static str,
    },
}

/// What this machine lacks for a cell's settings (the cell is skipped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// Kernel settings need root.
    #[error(
        "changing kernel settings needs root (this process runs as uid {euid}); run schedlab as root to vary {name}"
    )]
    NotRoot {
        /// The effective uid.
        euid: u32,
        /// The knob.
        name: String,
    },
    /// A knob refused on this machine's files (a worker skips its cells).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The I/O scheduler's file is missing.
    #[error(
        "{pattern} does not exist: the block device has no I/O scheduler; name a block device from /sys/block with settings.device (--device)"
    )]
    NoIoScheduler {
        /// The scheduler file.
        pattern: String,
    },
    /// A knob that names no file on this kernel.
    #[error(
        "{name} is absent on this kernel ({kernel}): {pattern} does not exist{}; drop it from the knobs axis",
        if pattern.contains("cpufreq") { " (no cpufreq driver: common in virtual machines)" } else { "" }
    )]
    Absent {
        /// The knob.
        name: String,
        /// Its path.
        pattern: String,
        /// The kernel release.
        kernel: String,
    },
    /// A path whose real file cannot be found.
    #[error("{}: {cause}", path.display())]
    Unresolved {
        /// The path.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// A setting that cannot be read.
    #[error("cannot read {name} ({}): {cause}", file.display())]
    Unreadable {
        /// The knob.
        name: String,
        /// Its file.
        file: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// BPF schedulers and the ext policy without sched_ext.
    #[error("the ext policy and the scx axis need sched_ext, and {why}")]
    NoSchedExt {
        /// What the machine crate found (the kernel's configuration).
        why: String,
    },
    /// A custom slice this kernel does not keep.
    #[error(transparent)]
    Slice(#[from] SliceError),
    /// An I/O scheduler the device does not offer.
    #[error(
        "device {device} does not offer the I/O scheduler '{target}' (offered: {}); load its module (modprobe) or drop it from io_schedulers",
        offered.join(", ")
    )]
    IoSchedulerNotOffered {
        /// The block device.
        device: String,
        /// The scheduler asked for.
        target: String,
        /// What the device offers.
        offered: Vec<String>,
    },
    /// A value a setting of fixed choices does not offer.
    #[error("{name} ({}) does not offer '{target}' (offered: {})", file.display(), offered.join(", "))]
    NotOffered {
        /// The knob.
        name: String,
        /// Its file.
        file: PathBuf,
        /// The value asked for.
        target: String,
        /// The values offered.
        offered: Vec<String>,
    },
    /// A device's scheduler file cannot be read.
    #[error(
        "cannot read {}: {cause}; name a block device from /sys/block with settings.device",
        path.display()
    )]
    SchedulerUnreadable {
        /// The scheduler file.
        path: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The I/O directory cannot be examined.
    #[error("cannot stat {}: {cause}", dir.display())]
    Stat {
        /// The directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The I/O directory is on no block device.
    #[error(
        "{} is not on a block device (device {major}:{minor}, e.g. tmpfs or overlay); set settings.device to a disk from /sys/block",
        dir.display()
    )]
    NotBlock {
        /// The directory.
        dir: PathBuf,
        /// Its device's major number.
        major: u32,
        /// Its device's minor number.
        minor: u32,
    },
    /// The disk holding the I/O directory has no scheduler file.
    #[error(
        "block device {device} (under {}) has no I/O scheduler file; set settings.device",
        dir.display()
    )]
    NoSchedulerFile {
        /// The disk.
        device: String,
        /// The directory.
        dir: PathBuf,
    },
}

/// Why a setting could not be read, written or read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// A device's scheduler file with no scheduler in force.
    #[error("{} has no scheduler in brackets: '{text}'", path.display())]
    NoCurrentScheduler {
        /// The scheduler file.
        path: PathBuf,
        /// What it holds, trimmed.
        text: String,
    },
    /// A setting that cannot be read.
    #[error("cannot read {name} ({}): {cause}", file.display())]
    Unreadable {
        /// The knob.
        name: String,
        /// Its file.
        file: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// The kernel refused the value.
    #[error(
        "{name} ({}) refused '{target}' ({}: {})",
        file.display(),
        schedlab_sys::errno_name(cause.errno.unwrap_or(0)),
        write_refusal(cause)
    )]
    Refused {
        /// The knob.
        name: String,
        /// Its file.
        file: PathBuf,
        /// The value written.
        target: String,
        /// The kernel's answer.
        cause: IoCause,
    },
    /// The value cannot be read back.
    #[error("cannot read {name} back: {cause}")]
    ReadBack {
        /// The knob.
        name: String,
        /// What failed.
        cause: IoCause,
    },
    /// The value read back is not the one written.
    #[error("{name} ({}) reads back as '{back}' after writing '{target}'", file.display())]
    Mismatch {
        /// The knob.
        name: String,
        /// Its file.
        file: PathBuf,
        /// What was read back.
        back: String,
        /// What was written.
        target: String,
    },
    /// This process's identity, which names its cgroups, cannot be read.
    #[error("{0}")]
    Owner(super::CgroupCause),
}

/// What a refused write means, by its errno.
fn write_refusal(cause: &IoCause) -> String {
    match cause.errno.unwrap_or(0) {
        libc::EINVAL | libc::ERANGE => "the kernel does not accept this value there".to_string(),
        libc::EACCES | libc::EPERM => "needs root".to_string(),
        libc::EBUSY => "the setting is busy (for sched_rt_runtime_us: SCHED_DEADLINE bandwidth in use needs more)".to_string(),
        _ => cause.to_string(),
    }
}

/// What stays changed after a run, each said in turn (`; `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRestored {
    /// Settings, a BPF scheduler or a journal's cgroups.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Left(Vec<Unrestored>),
    /// The run's cgroups could not all be removed.
    #[error("the run's cgroups could not all be removed: {0}")]
    Cgroups(super::CgroupCause),
}

/// One thing a run could not put back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unrestored {
    /// The BPF scheduler did not stop.
    #[error(transparent)]
    Scx(ScxError),
    /// A setting could not be written back.
    #[error(
        "could not restore {name} to {original:?}: {cause}; {}",
        crate::knobfile::hand_fix_hint(original, &file.display().to_string())
    )]
    Setting {
        /// The knob.
        name: String,
        /// Its original value.
        original: String,
        /// Its file.
        file: PathBuf,
        /// Why the write failed.
        cause: Box<super::KernelError>,
    },
    /// The journal keeps cgroups the next command removes.
    #[error(
        "the restore journal {} keeps the cgroups that could not be removed; the next schedlab command removes them",
        journal.display()
    )]
    JournalKeepsCgroups {
        /// The journal.
        journal: PathBuf,
    },
    /// The journal keeps original values for `schedlab restore`.
    #[error(
        "the restore journal {} keeps the original values; `schedlab restore` tries again, and removes it once every setting is back",
        journal.display()
    )]
    JournalKeepsOriginals {
        /// The journal.
        journal: PathBuf,
    },
}

/// Why a BPF scheduler could not be started or stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScxError {
    /// Another BPF scheduler is loaded.
    #[error(
        "another BPF scheduler ({ops}) is already loaded; stop it before running the scx axis"
    )]
    AnotherLoaded {
        /// Its ops name.
        ops: String,
    },
    /// sched_ext is neither enabled nor disabled.
    #[error(
        "sched_ext is in state '{state}', not 'disabled'; wait for it to settle or stop the scheduler that holds it"
    )]
    NotDisabled {
        /// The state the kernel shows.
        state: String,
    },
    /// The private directory of its output cannot be made.
    #[error(
        "cannot create a private directory for the BPF scheduler's output in {}: {cause}",
        dir.display()
    )]
    LogDir {
        /// The temp directory.
        dir: PathBuf,
        /// What failed.
        cause: IoCause,
    },
    /// Its output file cannot be shared between stdout and stderr.
    #[error("{cause}")]
    LogFile {
        /// What failed.
        cause: IoCause,
    },
    /// The program cannot be started.
    #[error(
        "cannot start the BPF scheduler `{command}`: {cause}; install it (the scx packages) or give its full path"
    )]
    Spawn {
        /// Its command line.
        command: String,
        /// What failed.
        cause: IoCause,
    },
    /// It exited before the kernel enabled it.
    #[error(
        "the BPF scheduler `{command}` exited ({status}) before the kernel enabled it{}",
        tail.as_ref().map_or_else(String::new, |t| format!("; its last output: {t}"))
    )]
    Exited {
        /// Its command line.
        command: String,
        /// How it exited.
        status: std::process::ExitStatus,
        /// Its last lines of output.
        tail: Option<String>,
    },
    /// The kernel did not enable it in time.
    #[error(
        "the BPF scheduler `{command}` was not enabled as '{ops}' within {timeout_ms} ms (sched_ext state '{state}', ops '{now_ops}'); if its ops name differs, give it: {{ command = \"...\", ops = \"NAME\" }}"
    )]
    NotEnabled {
        /// Its command line.
        command: String,
        /// The ops name expected.
        ops: String,
        /// How long schedlab waited, ms.
        timeout_ms: u64,
        /// The state the kernel shows.
        state: String,
        /// The ops name the kernel shows.
        now_ops: String,
    },
    /// sched_ext stays loaded after the scheduler stopped.
    #[error(
        "after stopping `{command}` sched_ext still reports state '{state}' (ops '{ops}'), so the kernel is not back on its fair class; check dmesg"
    )]
    StillLoaded {
        /// Its command line.
        command: String,
        /// The state the kernel shows.
        state: String,
        /// The ops name the kernel shows.
        ops: String,
    },
}

/// A broken promise of schedlab's own code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Internal {
    /// A second restore journal in one process.
    #[error(
        "this process holds a restore journal already (its settings must be restored before others are read)"
    )]
    JournalHeld,
    /// Originals read while this process's own changes are in force.
    #[error(
        "kernel settings of an earlier run are still in force; restore them before reading originals"
    )]
    EarlierRunInForce,
    /// A journal that cannot be written as JSON.
    #[error("cannot write a journal as JSON: {detail}")]
    Json {
        /// serde_json's message.
        detail: String,
    },
    /// A setting set as held that is not.
    #[error("{} is not held", path.display())]
    NotHeld {
        /// The file.
        path: PathBuf,
    },
    /// A cell's settings asked of a run not prepared.
    #[error("run {run_id}'s kernel settings were not prepared")]
    NotPrepared {
        /// The run.
        run_id: i64,
    },
}

/// Another live schedlab varies the same setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{name} ({path}) is being varied by another schedlab process (pid {pid}, `{command}`); wait for it to end, or vary other settings"
)]
pub struct Busy {
    /// The knob.
    pub name: String,
    /// Its file.
    pub path: String,
    /// The other process.
    pub pid: i32,
    /// Its command line.
    pub command: String,
}
