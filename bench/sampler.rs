//! CPU cost of one sample of the system-wide sampler (target: at most 60 us), side by side with
//! the floor (reading the six files with `read_to_string`, nothing else) and the old way
//! (`read_to_string` and the allocating parsers the sampler used before issue 10).
//!
//! Two measures, each over ROUNDS rounds with the ways interleaved in every round, medians:
//! - back to back: READS readings in a loop on this thread (for the new sampler, each reading
//!   with the sampler's computation), CPU time of the thread per reading: warm caches;
//! - every 10 ms in a thread, as the sampler runs: a WINDOW with the real `Sampler` (read,
//!   compute, store) or with a thread doing the floor or the old reading, or nothing (the cost
//!   of waking up), on the same timed wait, and one window with no thread; the process CPU time
//!   (RUSAGE_SELF) of a window minus that of the window without a thread, per sample. Also the
//!   real sampler at the default 100 ms, as a share of one CPU.
//!
//! Run: `cargo bench --bench sampler`.

use nix::sys::resource::{getrusage, UsageWho};
use schedlab_procfs::{CpuTicks, LoadAvg, Pressure, PsiLine, SystemReader, SYSTEM_FILES};
use schedlab_run::sampler::{compute, Sampler};
use std::hint::black_box;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const ROUNDS: usize = 5;
const READS: usize = 1000;
const WINDOW: Duration = Duration::from_secs(3);
const WINDOW_100MS: Duration = Duration::from_secs(5);

/// The sampler's reading before issue 10 (commit 63f3e2e): `read_to_string` of each file, then
/// parsers that split `&str` lines, collect per-CPU lines into a Vec and /proc/vmstat into a
/// HashMap of owned names. Kept here only to show the ratio.
mod old {
    use super::*;
    use std::collections::HashMap;

    #[allow(dead_code)] // Read through black_box only.
    pub struct Stat {
        pub cpu: CpuTicks,
        pub per_cpu: Vec<(usize, CpuTicks)>,
        pub intr_total: Option<u64>,
        pub ctxt: Option<u64>,
        pub procs_running: Option<u64>,
        pub procs_blocked: Option<u64>,
    }

    #[allow(dead_code)] // Read through black_box only.
    pub struct Reading {
        pub t_ns: u64,
        pub stat: Option<Stat>,
        pub pgpg: Option<(u64, u64)>,
        pub psi: [Option<Pressure>; 3],
        pub load1: Option<f64>,
    }

    fn parse_cpu_ticks<'a>(words: impl Iterator<Item = &'a str>) -> Option<CpuTicks> {
        let mut v = [0u64; 10];
        let mut n = 0;
        for (slot, word) in v.iter_mut().zip(words) {
            *slot = word.parse().ok()?;
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

    fn parse_stat(text: &str) -> Option<Stat> {
        let mut cpu = None;
        let mut stat = Stat {
            cpu: CpuTicks::default(),
            per_cpu: Vec::new(),
            intr_total: None,
            ctxt: None,
            procs_running: None,
            procs_blocked: None,
        };
        for line in text.lines() {
            let mut words = line.split_ascii_whitespace();
            let Some(key) = words.next() else { continue };
            let mut first = || words.next().and_then(|w| w.parse::<u64>().ok());
            match key {
                "cpu" => cpu = parse_cpu_ticks(words),
                "intr" => stat.intr_total = first(),
                "ctxt" => stat.ctxt = first(),
                "procs_running" => stat.procs_running = first(),
                "procs_blocked" => stat.procs_blocked = first(),
                _ => {
                    let n = key.strip_prefix("cpu").and_then(|n| n.parse().ok());
                    if let (Some(n), Some(t)) = (n, parse_cpu_ticks(words)) {
                        stat.per_cpu.push((n, t));
                    }
                }
            }
        }
        stat.cpu = cpu?;
        Some(stat)
    }

    fn parse_vmstat(text: &str) -> HashMap<String, u64> {
        text.lines()
            .filter_map(|line| {
                let (name, value) = line.split_once(' ')?;
                Some((name.to_string(), value.trim().parse().ok()?))
            })
            .collect()
    }

    fn parse_psi_line(fields: &str) -> Option<PsiLine> {
        let (mut a10, mut a60, mut a300, mut total) = (None, None, None, None);
        for kv in fields.split_ascii_whitespace() {
            let (k, v) = kv.split_once('=')?;
            match k {
                "avg10" => a10 = v.parse().ok(),
                "avg60" => a60 = v.parse().ok(),
                "avg300" => a300 = v.parse().ok(),
                "total" => total = v.parse().ok(),
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

    fn parse_pressure(text: &str) -> Option<Pressure> {
        let (mut some, mut full) = (None, None);
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("some ") {
                some = parse_psi_line(rest);
            } else if let Some(rest) = line.strip_prefix("full ") {
                full = parse_psi_line(rest);
            }
        }
        Some(Pressure { some: some?, full })
    }

    fn parse_loadavg(text: &str) -> Option<LoadAvg> {
        let mut w = text.split_ascii_whitespace();
        let (load1, load5, load15) = (w.next()?, w.next()?, w.next()?);
        let (runnable, tasks) = w.next()?.split_once('/')?;
        Some(LoadAvg {
            load1: load1.parse().ok()?,
            load5: load5.parse().ok()?,
            load15: load15.parse().ok()?,
            runnable: runnable.parse().ok()?,
            tasks: tasks.parse().ok()?,
            last_pid: w.next()?.parse().ok()?,
        })
    }

    /// `Reading::take` as it was.
    pub fn take() -> Reading {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let pgpg = read("/proc/vmstat")
            .map(|t| parse_vmstat(&t))
            .and_then(|m| Some((*m.get("pgpgin")?, *m.get("pgpgout")?)));
        Reading {
            t_ns: schedlab_sys::now_ns(),
            stat: read("/proc/stat").and_then(|t| parse_stat(&t)),
            pgpg,
            psi: [
                "/proc/pressure/cpu",
                "/proc/pressure/io",
                "/proc/pressure/memory",
            ]
            .map(|p| read(p).and_then(|t| parse_pressure(&t))),
            load1: read("/proc/loadavg")
                .and_then(|t| parse_loadavg(&t))
                .map(|l| l.load1),
        }
    }
}

/// The floor: the six files read with `read_to_string`, nothing parsed.
fn floor() {
    for name in SYSTEM_FILES {
        black_box(std::fs::read_to_string(format!("/proc/{name}")).ok());
    }
}

/// CPU time of this process so far (user + system), ns.
fn process_cpu_ns() -> u64 {
    let ru = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage(RUSAGE_SELF)");
    let ns =
        |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1_000;
    ns(ru.user_time()) + ns(ru.system_time())
}

/// CPU time of this thread per call of `f`, us, over READS calls back to back.
fn back_to_back(mut f: impl FnMut()) -> f64 {
    let t0 = schedlab_sys::thread_cpu_ns();
    for _ in 0..READS {
        f();
    }
    (schedlab_sys::thread_cpu_ns() - t0) as f64 / READS as f64 / 1e3
}

/// What one window measured: process CPU ns, wall ns, samples taken.
struct Window {
    cpu_ns: u64,
    wall_ns: u64,
    samples: usize,
}

/// The ways a window can sample.
#[derive(Clone, Copy)]
enum Way {
    /// No sampling thread: the baseline.
    Nothing,
    /// The real sampler.
    Sampler,
    /// A thread reading like `floor` on the sampler's timed wait.
    Floor,
    /// A thread reading like `old::take` on the sampler's timed wait.
    Old,
    /// A thread on the sampler's timed wait that reads nothing: the cost of waking up.
    WakeOnly,
    /// A thread on the sampler's timed wait that only re-reads /proc/stat (kept open, pread):
    /// the least a sample with CPU ticks can cost.
    StatOnly,
    /// A thread that sleeps (`clock_nanosleep`, relative) between readings of nothing: the
    /// cost of waking up from a plain sleep instead of a timed wait.
    SleepOnly,
}

/// /proc/stat, opened once for [`stat_only`].
static STAT: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();

/// Re-reads /proc/stat from offset 0 into a buffer, nothing parsed.
fn stat_only() {
    use std::os::unix::fs::FileExt;
    let file = STAT.get_or_init(|| std::fs::File::open("/proc/stat").expect("/proc/stat"));
    let mut buf = [0u8; 65536];
    let (mut off, mut n) = (0, 1);
    while n > 0 && off < buf.len() {
        n = file.read_at(&mut buf[off..], off as u64).unwrap_or(0);
        off += n;
    }
    black_box(&buf[..off]);
}

/// A thread calling `f` every `interval` on a timed condition-variable wait, as the sampler
/// does, until stopped; returns the number of calls.
fn timed_loop(interval: Duration, duration: Duration, f: fn()) -> usize {
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let (lock, cv) = &*flag;
        let mut stopped = lock.lock().unwrap();
        let mut calls = 0;
        loop {
            let (guard, timeout) = cv.wait_timeout(stopped, interval).unwrap();
            stopped = guard;
            if *stopped {
                return calls;
            }
            if timeout.timed_out() {
                f();
                calls += 1;
            }
        }
    });
    std::thread::sleep(duration);
    *stop.0.lock().unwrap() = true;
    stop.1.notify_all();
    handle.join().unwrap()
}

fn window(way: Way, interval: Duration, duration: Duration) -> Window {
    let cpu0 = process_cpu_ns();
    let t0 = Instant::now();
    let samples = match way {
        Way::Nothing => {
            std::thread::sleep(duration);
            0
        }
        Way::Sampler => {
            let sampler = Sampler::start(interval, false);
            std::thread::sleep(duration);
            sampler.finish().len()
        }
        Way::Floor => timed_loop(interval, duration, floor),
        Way::Old => timed_loop(interval, duration, || {
            black_box(old::take());
        }),
        Way::WakeOnly => timed_loop(interval, duration, || {}),
        Way::StatOnly => timed_loop(interval, duration, stat_only),
        Way::SleepOnly => {
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = stop.clone();
            let handle = std::thread::spawn(move || {
                let mut calls = 0;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(interval);
                    calls += 1;
                }
                calls
            });
            std::thread::sleep(duration);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            handle.join().unwrap()
        }
    };
    Window {
        cpu_ns: process_cpu_ns() - cpu0,
        wall_ns: t0.elapsed().as_nanos() as u64,
        samples,
    }
}

/// CPU per sample of `w` beyond the baseline window `base`, us.
fn per_sample_us(w: &Window, base: &Window) -> f64 {
    let base_ns = base.cpu_ns as f64 * w.wall_ns as f64 / base.wall_ns as f64;
    (w.cpu_ns as f64 - base_ns) / w.samples.max(1) as f64 / 1e3
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut reader = SystemReader::open();
    let mut prev = reader.read();
    let names = [
        "new sampler (SystemReader and compute; in a thread the real Sampler)",
        "floor: read_to_string of the six files only",
        "old way: read_to_string and allocating parsers",
    ];

    println!("back to back: {ROUNDS} rounds of {READS} readings per way, thread CPU per reading");
    let mut loop_us = [vec![], vec![], vec![]];
    for _ in 0..ROUNDS {
        loop_us[0].push(back_to_back(|| {
            let cur = reader.read();
            black_box(compute(&prev, &cur, 0));
            prev = cur;
        }));
        loop_us[1].push(back_to_back(floor));
        loop_us[2].push(back_to_back(|| {
            black_box(old::take());
        }));
    }
    let loop_us = loop_us.map(median);

    println!(
        "every 10 ms in a thread: {ROUNDS} rounds of {} s windows per way, and {} s windows of \
         the sampler at 100 ms",
        WINDOW.as_secs(),
        WINDOW_100MS.as_secs()
    );
    let ten_ms = Duration::from_millis(10);
    let (mut thread_us, mut samples) = ([vec![], vec![], vec![], vec![], vec![], vec![]], [0; 6]);
    let (mut pct_100ms, mut samples_100ms) = (vec![], 0);
    for _ in 0..ROUNDS {
        let base = window(Way::Nothing, ten_ms, WINDOW);
        let ways = [
            Way::Sampler,
            Way::Floor,
            Way::Old,
            Way::WakeOnly,
            Way::StatOnly,
            Way::SleepOnly,
        ];
        for (i, way) in ways.into_iter().enumerate() {
            let w = window(way, ten_ms, WINDOW);
            thread_us[i].push(per_sample_us(&w, &base));
            samples[i] = w.samples;
        }
        let w = window(Way::Sampler, Duration::from_millis(100), WINDOW_100MS);
        let us = per_sample_us(&w, &base);
        pct_100ms.push(us * w.samples as f64 / (w.wall_ns as f64 / 1e3) * 100.0);
        samples_100ms = w.samples;
    }
    let thread_us = thread_us.map(median);

    println!();
    println!("| way | back to back: CPU per reading (us) | every 10 ms in a thread: samples per window | CPU per sample (us) | ratio to the new sampler (back to back / in a thread) |");
    println!("|---|---|---|---|---|");
    for i in 0..3 {
        println!(
            "| {} | {:.1} | {} | {:.1} | {:.2} / {:.2} |",
            names[i],
            loop_us[i],
            samples[i],
            thread_us[i],
            loop_us[i] / loop_us[0],
            thread_us[i] / thread_us[0]
        );
    }
    println!(
        "| wake-up only: the same timed wait, nothing read | | {} | {:.1} | |",
        samples[3], thread_us[3]
    );
    println!(
        "| /proc/stat only (pread, nothing parsed), on the same timed wait | | {} | {:.1} | |",
        samples[4], thread_us[4]
    );
    println!(
        "| wake-up only, from a plain sleep instead of the timed wait | | {} | {:.1} | |",
        samples[5], thread_us[5]
    );
    println!(
        "\nthe sampler at 100 ms: {samples_100ms} samples per {} s, {:.4} % of one CPU",
        WINDOW_100MS.as_secs(),
        median(pct_100ms)
    );
}
