//! The system-wide counters (/proc/stat, /proc/vmstat, /proc/loadavg, /proc/pressure/*): their
//! parsers, and [`SystemReader`], the one reader of them, shared by the run's sampler and the
//! idle check before each trial.
//!
//! The sampler reads these files every 100 ms during a trial, so the reader keeps the six files
//! open, re-reads each from offset 0 with `pread` into one reused buffer, and the parsers work on
//! bytes without allocating. Hand-written (see [`crate`] for why not the `procfs` crate);
//! the parsers are tested on literal text copied from a real machine, and the sampler's columns
//! against a hand computation and against `vmstat` (tests/sampler_vmstat.rs).

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One `cpu` line of `/proc/stat`: time spent in each state since boot, in USER_HZ ticks
/// (`sysconf(_SC_CLK_TCK)`, 100 per second on every mainstream architecture).
///
/// `guest` and `guest_nice` are already counted inside `user` and `nice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CpuTicks {
    /// User mode at nice <= 0, in ticks.
    pub user: u64,
    /// User mode at nice > 0, in ticks.
    pub nice: u64,
    /// Kernel mode, in ticks.
    pub system: u64,
    /// Idle, in ticks.
    pub idle: u64,
    /// Idle with I/O outstanding, in ticks.
    pub iowait: u64,
    /// Hard interrupts, in ticks.
    pub irq: u64,
    /// Soft interrupts, in ticks.
    pub softirq: u64,
    /// Taken by the hypervisor for other guests while this CPU wanted to run, in ticks.
    pub steal: u64,
    /// Running a guest's virtual CPU, in ticks (included in `user`).
    pub guest: u64,
    /// Running a niced guest's virtual CPU, in ticks (included in `nice`).
    pub guest_nice: u64,
}

impl CpuTicks {
    /// Every tick of every state once (guest time is inside user/nice), in ticks.
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait + self.steal
    }

    /// Ticks spent working: user, nice, system, irq and softirq.
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }
}

/// The lines of `text` (without their `\n`).
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n')
}

/// The words of `line`, separated by ASCII whitespace.
fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
}

/// A decimal number of ASCII digits only (the kernel prints no sign); `None` on anything else
/// or on overflow.
fn parse_u64(word: &[u8]) -> Option<u64> {
    if word.is_empty() {
        return None;
    }
    word.iter().try_fold(0u64, |n, &b| {
        let digit = b.wrapping_sub(b'0');
        (digit <= 9).then_some(())?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// A decimal fraction such as `0.24`; parsing a `&str` allocates nothing.
fn parse_f64(word: &[u8]) -> Option<f64> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// Reads the numbers after `cpu`/`cpuN`; columns a kernel does not print count as 0, but at
/// least user, nice, system and idle must be there.
fn parse_cpu_ticks<'a>(words: impl Iterator<Item = &'a [u8]>) -> Option<CpuTicks> {
    let mut v = [0u64; 10];
    let mut n = 0;
    for (slot, word) in v.iter_mut().zip(words) {
        *slot = parse_u64(word)?;
        n += 1;
    }
    (n >= 4).then_some(CpuTicks {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
        guest: v[8],
        guest_nice: v[9],
    })
}

/// The system-wide lines of `/proc/stat` that schedlab uses (per-CPU lines: [`parse_per_cpu_ticks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcStat {
    /// The aggregate `cpu` line, summed over all CPUs, in ticks.
    pub cpu: CpuTicks,
    /// Interrupts serviced since boot (first number of `intr`).
    pub intr_total: Option<u64>,
    /// Context switches since boot, all CPUs (`ctxt`).
    pub ctxt: Option<u64>,
    /// Tasks runnable right now (`procs_running`).
    pub procs_running: Option<u64>,
    /// Tasks blocked on I/O right now (`procs_blocked`).
    pub procs_blocked: Option<u64>,
}

/// Parses `/proc/stat` without allocating; `None` without a readable aggregate `cpu` line.
pub fn parse_stat(text: impl AsRef<[u8]>) -> Option<ProcStat> {
    let mut cpu = None;
    let mut stat = ProcStat::default();
    for line in lines(text.as_ref()) {
        let mut words = words(line);
        let Some(key) = words.next() else { continue };
        let mut first = || words.next().and_then(parse_u64);
        match key {
            b"cpu" => cpu = parse_cpu_ticks(words),
            b"intr" => stat.intr_total = first(),
            b"ctxt" => stat.ctxt = first(),
            b"procs_running" => stat.procs_running = first(),
            b"procs_blocked" => stat.procs_blocked = first(),
            _ => {}
        }
    }
    stat.cpu = cpu?;
    Some(stat)
}

/// The `cpuN` lines of `/proc/stat` as (N, ticks); offline CPUs have no line.
pub fn parse_per_cpu_ticks(text: impl AsRef<[u8]>) -> Vec<(usize, CpuTicks)> {
    lines(text.as_ref())
        .filter_map(|line| {
            let mut words = words(line);
            let n = parse_u64(words.next()?.strip_prefix(b"cpu")?)?;
            Some((usize::try_from(n).ok()?, parse_cpu_ticks(words)?))
        })
        .collect()
}

/// The values of `names` in `/proc/vmstat` ("name value" lines), without allocating; a name
/// that is absent or whose value is not a number gives `None`. The scan stops once every name
/// is found.
///
/// The columns of vmstat(8) are `pgpgin`/`pgpgout` (KiB paged in/out since boot) and
/// `pswpin`/`pswpout` (pages swapped in/out since boot).
pub fn vmstat_values<const N: usize>(text: impl AsRef<[u8]>, names: [&str; N]) -> [Option<u64>; N] {
    let mut values = [None; N];
    let mut seen = 0;
    for line in lines(text.as_ref()) {
        let mut words = words(line);
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        if let Some(i) = names.iter().position(|n| n.as_bytes() == name) {
            if values[i].is_none() {
                values[i] = parse_u64(value);
                seen += 1;
                if seen == N {
                    break;
                }
            }
        }
    }
    values
}

/// One line (`some` or `full`) of a `/proc/pressure/*` file.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PsiLine {
    /// Share of wall time stalled, averaged over 10 s, in percent.
    pub avg10_pct: f64,
    /// Same over 60 s, in percent.
    pub avg60_pct: f64,
    /// Same over 300 s, in percent.
    pub avg300_pct: f64,
    /// Total stall time since boot, in microseconds.
    pub total_us: u64,
}

/// `/proc/pressure/{cpu,io,memory}`: `some` = at least one task stalled, `full` = all stalled.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pressure {
    /// Time at least one runnable task waited for the resource.
    pub some: PsiLine,
    /// Time all non-idle tasks waited at once; absent for `cpu` before Linux 5.13.
    pub full: Option<PsiLine>,
}

/// The `key=value` fields after `some`/`full`; `None` if one is not `key=value` or one of the
/// four is missing.
fn parse_psi_line(fields: &[u8]) -> Option<PsiLine> {
    let (mut a10, mut a60, mut a300, mut total) = (None, None, None, None);
    for kv in words(fields) {
        let eq = kv.iter().position(|&b| b == b'=')?;
        let (k, v) = (&kv[..eq], &kv[eq + 1..]);
        match k {
            b"avg10" => a10 = parse_f64(v),
            b"avg60" => a60 = parse_f64(v),
            b"avg300" => a300 = parse_f64(v),
            b"total" => total = parse_u64(v),
            _ => {}
        }
    }
    Some(PsiLine {
        avg10_pct: a10?,
        avg60_pct: a60?,
        avg300_pct: a300?,
        total_us: total?,
    })
}

/// Parses a `/proc/pressure/*` file without allocating; `None` without a complete `some` line.
pub fn parse_pressure(text: impl AsRef<[u8]>) -> Option<Pressure> {
    let (mut some, mut full) = (None, None);
    for line in lines(text.as_ref()) {
        if let Some(rest) = line.strip_prefix(b"some ") {
            some = parse_psi_line(rest);
        } else if let Some(rest) = line.strip_prefix(b"full ") {
            full = parse_psi_line(rest);
        }
    }
    Some(Pressure { some: some?, full })
}

/// `/proc/loadavg`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LoadAvg {
    /// Runnable plus uninterruptible tasks, exponentially averaged over 1 minute.
    pub load1: f64,
    /// Same over 5 minutes.
    pub load5: f64,
    /// Same over 15 minutes.
    pub load15: f64,
    /// Tasks runnable right now.
    pub runnable: u64,
    /// Tasks (threads) in the system.
    pub tasks: u64,
    /// Most recently assigned pid.
    pub last_pid: u64,
}

/// Parses `/proc/loadavg` ("0.24 0.51 0.25 2/81 5752") without allocating.
pub fn parse_loadavg(text: impl AsRef<[u8]>) -> Option<LoadAvg> {
    let mut w = words(text.as_ref());
    let (load1, load5, load15, tasks) = (w.next()?, w.next()?, w.next()?, w.next()?);
    let slash = tasks.iter().position(|&b| b == b'/')?;
    Some(LoadAvg {
        load1: parse_f64(load1)?,
        load5: parse_f64(load5)?,
        load15: parse_f64(load15)?,
        runnable: parse_u64(&tasks[..slash])?,
        tasks: parse_u64(&tasks[slash + 1..])?,
        last_pid: parse_u64(w.next()?)?,
    })
}

/// The files a [`SystemReader`] reads, relative to `/proc`, in the order [`SystemCounters::parse`]
/// takes their contents.
pub const SYSTEM_FILES: [&str; 6] = [
    "stat",
    "vmstat",
    "pressure/cpu",
    "pressure/io",
    "pressure/memory",
    "loadavg",
];

/// The system-wide counters at one instant; a part whose file was unreadable or did not parse
/// is `None` (PSI is absent on kernels without CONFIG_PSI or booted with `psi=0`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SystemCounters {
    /// CLOCK_MONOTONIC just before the files were read, ns.
    pub t_ns: u64,
    /// `/proc/stat`.
    pub stat: Option<ProcStat>,
    /// `pgpgin` and `pgpgout` of `/proc/vmstat`, KiB since boot.
    pub pgpg_kib: Option<(u64, u64)>,
    /// `/proc/pressure/{cpu,io,memory}`.
    pub psi: [Option<Pressure>; 3],
    /// `/proc/loadavg`.
    pub loadavg: Option<LoadAvg>,
}

impl SystemCounters {
    /// The counters in the contents of the files of [`SYSTEM_FILES`] (`None` = unreadable),
    /// read at `t_ns`: what [`SystemReader::read`] computes from the bytes it reads.
    pub fn parse(t_ns: u64, texts: [Option<&[u8]>; 6]) -> SystemCounters {
        let mut counters = SystemCounters {
            t_ns,
            ..SystemCounters::default()
        };
        for (file, text) in texts.into_iter().enumerate() {
            if let Some(text) = text {
                counters.fill(file, text);
            }
        }
        counters
    }

    /// Parses `text`, the contents of `SYSTEM_FILES[file]`, into its field.
    fn fill(&mut self, file: usize, text: &[u8]) {
        match file {
            0 => self.stat = parse_stat(text),
            1 => {
                self.pgpg_kib = match vmstat_values(text, ["pgpgin", "pgpgout"]) {
                    [Some(pgpgin), Some(pgpgout)] => Some((pgpgin, pgpgout)),
                    _ => None,
                }
            }
            2..=4 => self.psi[file - 2] = parse_pressure(text),
            _ => self.loadavg = parse_loadavg(text),
        }
    }
}

/// Index of `/proc/vmstat` in [`SYSTEM_FILES`].
const VMSTAT: usize = 1;

/// Bytes of `/proc/vmstat` asked for beyond where its `pgpgout` line ended last time: room for
/// the numbers before it to grow by a few digits.
const VMSTAT_MARGIN: usize = 256;

/// Reads the system-wide counters again and again: the files of [`SYSTEM_FILES`] stay open and
/// are re-read from offset 0 with `pread` (procfs regenerates a file's text on a read at offset
/// 0) into one buffer, so that a reading allocates nothing once the buffer has grown to the
/// largest file.
///
/// `/proc/vmstat` is read only as far as its `pgpgin` and `pgpgout` lines: the kernel formats
/// it only as far as a read asks, at about 6 us of CPU per KiB on the development machine, and
/// the two lines come less than halfway through its 4 KiB. The other five files are made by one
/// call of the kernel (`single_open`), and such a file's read returns all of its text when the
/// buffer is big enough: a read that returns less than asked is taken as the end, which saves
/// a read per file (procps reads them so too: once, after seeking to 0).
#[derive(Debug)]
pub struct SystemReader {
    /// The open files, in the order of [`SYSTEM_FILES`]; `None` where opening failed.
    files: [Option<File>; 6],
    /// The reused buffer, as long as the largest file read so far (or longer).
    buf: Vec<u8>,
    /// Bytes of `/proc/vmstat` to ask for first: where its `pgpgout` line ended last time plus
    /// [`VMSTAT_MARGIN`], or the whole buffer before the first reading. If that is not enough,
    /// the reading goes on.
    vmstat_head: usize,
}

impl SystemReader {
    /// Opens the files under `/proc`. Files that cannot be opened give `None` in every reading.
    pub fn open() -> SystemReader {
        SystemReader::open_in(Path::new("/proc"))
    }

    /// Opens the files of [`SYSTEM_FILES`] under `root` instead of `/proc` (for tests).
    pub fn open_in(root: &Path) -> SystemReader {
        SystemReader {
            files: SYSTEM_FILES.map(|name| File::open(root.join(name)).ok()),
            buf: vec![0; 8 << 10],
            vmstat_head: usize::MAX,
        }
    }

    /// Reads and parses every file now.
    pub fn read(&mut self) -> SystemCounters {
        let mut counters = SystemCounters {
            t_ns: schedlab_sys::now_ns(),
            ..SystemCounters::default()
        };
        let SystemReader {
            files,
            buf,
            vmstat_head,
        } = self;
        for (i, file) in files.iter().enumerate() {
            let Some(file) = file else { continue };
            let len = if i == VMSTAT {
                let mut end = None;
                let len = read_head(file, buf, *vmstat_head, false, |text| {
                    end = pgpg_end(text);
                    end.is_some()
                });
                if let Some(end) = end {
                    *vmstat_head = end + VMSTAT_MARGIN;
                }
                len
            } else {
                read_head(file, buf, usize::MAX, true, |_| false)
            };
            if let Some(len) = len {
                counters.fill(i, &buf[..len]);
            }
        }
        counters
    }
}

/// Where the `pgpgin` and `pgpgout` lines of `/proc/vmstat` text end (just past the later
/// one's newline), when both are there in full.
fn pgpg_end(text: &[u8]) -> Option<usize> {
    let (mut end, mut seen) = (0, [false; 2]);
    for line in text.split_inclusive(|&b| b == b'\n') {
        if !line.ends_with(b"\n") {
            return None;
        }
        end += line.len();
        seen[0] |= line.starts_with(b"pgpgin ");
        seen[1] |= line.starts_with(b"pgpgout ");
        if seen == [true; 2] {
            return Some(end);
        }
    }
    None
}

/// Reads `file` from offset 0 into `buf`: first `first` bytes (at most the buffer), then on
/// until the end of the file (with `short_is_end`, also a read returning less than asked) or
/// until `enough` says the bytes read so far suffice; doubles `buf` when it fills. The length
/// read, or `None` on an error.
fn read_head(
    file: &File,
    buf: &mut Vec<u8>,
    first: usize,
    short_is_end: bool,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Option<usize> {
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize((2 * len).max(4096), 0);
        }
        let ask = if len == 0 {
            first.clamp(1, buf.len())
        } else {
            buf.len()
        };
        match file.read_at(&mut buf[len..ask], len as u64) {
            Ok(0) => return Some(len),
            Ok(n) => {
                let short = len + n < ask;
                len += n;
                if (short && short_is_end) || enough(&buf[..len]) {
                    return Some(len);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}
