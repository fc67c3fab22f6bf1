//! Small parsers for the /proc files schedlab reads, one function per file, tested on literal text.
//!
//! Hand-written rather than the `procfs` crate: `/proc/PID/sched` is not parsed by it, and the
//! worker reads its own `schedstat`/`sched` into a stack buffer at the end of its measured work,
//! where a parser over `&str` that allocates nothing is what is needed.
//!
//! The system-wide files (read once per run or per trial) have parsers that may allocate.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

/// `/proc/PID/task/TID/schedstat`: three integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedStat {
    /// Time spent on the CPU, in nanoseconds.
    pub run_ns: u64,
    /// Time spent runnable but waiting on a run queue, in nanoseconds.
    pub run_delay_ns: u64,
    /// Number of timeslices run on a CPU.
    pub timeslices: u64,
}

/// Parses `/proc/PID/task/TID/schedstat` ("run_ns run_delay_ns timeslices").
pub fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut it = text.split_ascii_whitespace().map(|w| w.parse::<u64>().ok());
    Some(SchedStat {
        run_ns: it.next()??,
        run_delay_ns: it.next()??,
        timeslices: it.next()??,
    })
}

/// The fields schedlab uses from `/proc/PID/task/TID/sched`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedInfo {
    /// Number of migrations between CPUs (`se.nr_migrations`).
    pub nr_migrations: Option<u64>,
    /// Voluntary context switches.
    pub nr_voluntary_switches: Option<u64>,
    /// Involuntary context switches.
    pub nr_involuntary_switches: Option<u64>,
    /// Scheduling policy number in force (0 other, 1 fifo, 2 rr, 3 batch, 5 idle, 6 deadline).
    pub policy: Option<i64>,
    /// Kernel priority (`prio`: 100..139 fair, lower is RT, -1 deadline).
    pub prio: Option<i64>,
    /// EEVDF slice in nanoseconds (`se.slice`).
    pub slice_ns: Option<u64>,
}

/// Parses `/proc/PID/task/TID/sched` ("key : value" lines after a two-line header).
pub fn parse_sched(text: &str) -> SchedInfo {
    let mut info = SchedInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "se.nr_migrations" => info.nr_migrations = value.parse().ok(),
            "nr_voluntary_switches" => info.nr_voluntary_switches = value.parse().ok(),
            "nr_involuntary_switches" => info.nr_involuntary_switches = value.parse().ok(),
            "policy" => info.policy = value.parse().ok(),
            "prio" => info.prio = value.parse().ok(),
            "se.slice" => info.slice_ns = value.parse().ok(),
            _ => {}
        }
    }
    info
}

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

/// Reads the numbers after `cpu`/`cpuN`; columns a kernel does not print count as 0, but at
/// least user, nice, system and idle must be there.
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

/// The scheduler-relevant lines of `/proc/stat`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcStat {
    /// The aggregate `cpu` line, summed over all CPUs, in ticks.
    pub cpu: CpuTicks,
    /// The `cpuN` lines as (N, ticks); offline CPUs have no line.
    pub per_cpu: Vec<(usize, CpuTicks)>,
    /// Interrupts serviced since boot (first number of `intr`).
    pub intr_total: Option<u64>,
    /// Context switches since boot, all CPUs (`ctxt`).
    pub ctxt: Option<u64>,
    /// Tasks runnable right now (`procs_running`).
    pub procs_running: Option<u64>,
    /// Tasks blocked on I/O right now (`procs_blocked`).
    pub procs_blocked: Option<u64>,
}

/// Parses `/proc/stat`; `None` without a readable aggregate `cpu` line.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let mut cpu = None;
    let mut stat = ProcStat::default();
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

/// Parses `/proc/vmstat` ("name value" lines) into a map; lines that do not parse are skipped.
///
/// The columns of vmstat(8) are `pgpgin`/`pgpgout` (KiB paged in/out since boot) and
/// `pswpin`/`pswpout` (pages swapped in/out since boot).
pub fn parse_vmstat(text: &str) -> HashMap<String, u64> {
    text.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_string(), value.trim().parse().ok()?))
        })
        .collect()
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

/// Parses a `/proc/pressure/*` file; `None` without a complete `some` line.
pub fn parse_pressure(text: &str) -> Option<Pressure> {
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

/// Parses `/proc/loadavg` ("0.24 0.51 0.25 2/81 5752").
pub fn parse_loadavg(text: &str) -> Option<LoadAvg> {
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

/// The fields schedlab uses from `/proc/PID/status`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProcStatus {
    /// Voluntary context switches (blocked, yielded) of this task: the main thread for
    /// `/proc/PID/status`, one thread for `/proc/PID/task/TID/status`.
    pub voluntary_ctxt_switches: Option<u64>,
    /// Involuntary context switches (preempted) of this task.
    pub nonvoluntary_ctxt_switches: Option<u64>,
    /// CPUs the task may run on (`Cpus_allowed_list`).
    pub cpus_allowed_list: Option<Vec<usize>>,
    /// Number of threads.
    pub threads: Option<u64>,
}

/// Parses `/proc/PID/status` ("Key:\tvalue" lines).
pub fn parse_status(text: &str) -> ProcStatus {
    let mut s = ProcStatus::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "voluntary_ctxt_switches" => s.voluntary_ctxt_switches = value.parse().ok(),
            "nonvoluntary_ctxt_switches" => s.nonvoluntary_ctxt_switches = value.parse().ok(),
            "Cpus_allowed_list" => s.cpus_allowed_list = parse_cpu_list(value).ok(),
            "Threads" => s.threads = value.parse().ok(),
            _ => {}
        }
    }
    s
}

/// What schedlab records from `/proc/cpuinfo`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CpuInfo {
    /// The first `model name` (x86); `None` where the architecture prints none (arm64).
    pub model_name: Option<String>,
    /// Number of `processor` entries.
    pub processors: usize,
    /// Some `flags` line contains `hypervisor`: running in a virtual machine (x86).
    pub hypervisor: bool,
}

/// Parses `/proc/cpuinfo` ("key\t: value" lines, one block per processor).
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        match key.trim() {
            "processor" => info.processors += 1,
            "model name" if info.model_name.is_none() => {
                info.model_name = Some(value.trim().to_string());
            }
            "flags" => {
                info.hypervisor |= value.split_ascii_whitespace().any(|f| f == "hypervisor");
            }
            _ => {}
        }
    }
    info
}

/// Parses kernel config text (`/proc/config.gz` uncompressed, `/boot/config-*`) into option
/// name without `CONFIG_` -> `y`, `m`, `n` (also for `# CONFIG_X is not set`) or the value
/// with its quotes removed.
pub fn parse_kernel_config(text: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line
            .strip_prefix("# CONFIG_")
            .and_then(|l| l.strip_suffix(" is not set"))
        {
            map.insert(name.to_string(), "n".to_string());
        } else if let Some((name, value)) =
            line.strip_prefix("CONFIG_").and_then(|l| l.split_once('='))
        {
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            map.insert(name.to_string(), value.to_string());
        }
    }
    map
}

/// The scheduler options of a kernel configuration. Booleans are true only for `=y`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SchedConfig {
    /// Timer interrupt frequency in Hz (`CONFIG_HZ`); one tick lasts 1/HZ s.
    pub hz: Option<u32>,
    /// Built-in preemption model: `none`, `voluntary`, `full`, `lazy` or `rt`.
    pub preempt_model: Option<String>,
    /// `CONFIG_PREEMPT_DYNAMIC`: the model can be changed by `preempt=` or debugfs.
    pub preempt_dynamic: bool,
    /// `CONFIG_SCHEDSTATS`: `/proc/PID/sched` carries wait/sleep statistics.
    pub schedstats: bool,
    /// `CONFIG_SCHED_CLASS_EXT`: BPF schedulers (sched_ext) can be loaded.
    pub sched_class_ext: bool,
    /// `CONFIG_RT_GROUP_SCHED`: RT runtime is budgeted per cgroup (can refuse FIFO/RR).
    pub rt_group_sched: bool,
    /// `CONFIG_PSI`: `/proc/pressure/*` exists.
    pub psi: bool,
    /// `CONFIG_PSI_DEFAULT_DISABLED`: PSI needs `psi=1` on the kernel command line.
    pub psi_default_disabled: bool,
    /// `CONFIG_SCHED_AUTOGROUP`: fair-class tasks are grouped per session.
    pub sched_autogroup: bool,
    /// Every `CONFIG_PREEMPT*` option as written, for the record.
    pub preempt_options: BTreeMap<String, String>,
}

/// Extracts the scheduler options from a map made by [`parse_kernel_config`].
pub fn sched_config(config: &BTreeMap<String, String>) -> SchedConfig {
    let yes = |name: &str| config.get(name).is_some_and(|v| v == "y");
    let preempt_model = [
        ("PREEMPT_RT", "rt"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_NONE", "none"),
    ]
    .into_iter()
    .find(|(name, _)| yes(name))
    .map(|(_, model)| model.to_string());
    SchedConfig {
        hz: config.get("HZ").and_then(|v| v.parse().ok()),
        preempt_model,
        preempt_dynamic: yes("PREEMPT_DYNAMIC"),
        schedstats: yes("SCHEDSTATS"),
        sched_class_ext: yes("SCHED_CLASS_EXT"),
        rt_group_sched: yes("RT_GROUP_SCHED"),
        psi: yes("PSI"),
        psi_default_disabled: yes("PSI_DEFAULT_DISABLED"),
        sched_autogroup: yes("SCHED_AUTOGROUP"),
        preempt_options: config
            .iter()
            .filter(|(k, _)| k.starts_with("PREEMPT"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// The mode in parentheses of `/sys/kernel/debug/sched/preempt` ("none (voluntary) full lazy").
pub fn parse_preempt_mode(text: &str) -> Option<String> {
    text.split_ascii_whitespace()
        .find_map(|w| w.strip_prefix('(')?.strip_suffix(')'))
        .map(str::to_string)
}

/// The value of `key=` on a kernel command line (`/proc/cmdline`); the last occurrence wins, as
/// for the kernel, and words after `--` (arguments of init) are not kernel parameters.
pub fn cmdline_value<'a>(cmdline: &'a str, key: &str) -> Option<&'a str> {
    cmdline
        .split_ascii_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .last()
}

/// Largest CPU number [`parse_cpu_list`] accepts (Linux supports at most 8192 CPUs).
pub const MAX_CPU: usize = 65_535;

/// Parses a CPU list like `0-3,5,7-8` (sysfs `online`, `Cpus_allowed_list`, `--cpus`) into
/// sorted, distinct CPU numbers. Surrounding whitespace (the trailing newline) is ignored.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    const FORMAT: &str = "expected CPU numbers and ranges separated by commas, like 0-3,5,7-8";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("empty CPU list: {FORMAT}"));
    }
    let bad = |part: &str| format!("bad part '{part}' in CPU list '{text}': {FORMAT}");
    let number = |s: &str| s.parse::<usize>().ok().filter(|&n| n <= MAX_CPU);
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (number(lo), number(hi)),
            None => (number(part), number(part)),
        };
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo <= hi => cpus.extend(lo..=hi),
            _ => return Err(bad(part)),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Prints CPU numbers as a list with ranges (`[0,1,2,3,5]` -> `0-3,5`); order and repeats in
/// the input do not matter.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        while i + 1 < sorted.len() && sorted[i + 1] == sorted[i] + 1 {
            i += 1;
        }
        parts.push(match sorted[i] {
            end if end == start => start.to_string(),
            end => format!("{start}-{end}"),
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_reads_three_counters() {
        let s = parse_schedstat("123456 7890 42\n").unwrap();
        assert_eq!(
            s,
            SchedStat {
                run_ns: 123456,
                run_delay_ns: 7890,
                timeslices: 42
            }
        );
    }

    #[test]
    fn schedstat_rejects_short_or_garbled_text() {
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("1 x 3"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn sched_reads_switches_migrations_policy_and_prio() {
        let text = "\
schedlab (5069, #threads: 1)
-------------------------------------------------------------------
se.exec_start                                :       4199829.924385
se.nr_migrations                             :                    3
nr_switches                                  :                   17
nr_voluntary_switches                        :                   12
nr_involuntary_switches                      :                    5
policy                                       :                    1
prio                                         :                    1
se.slice                                     :              1400000
current_node=0, numa_group_id=0
";
        let info = parse_sched(text);
        assert_eq!(info.nr_migrations, Some(3));
        assert_eq!(info.nr_voluntary_switches, Some(12));
        assert_eq!(info.nr_involuntary_switches, Some(5));
        assert_eq!(info.policy, Some(1));
        assert_eq!(info.prio, Some(1));
        assert_eq!(info.slice_ns, Some(1_400_000));
    }

    #[test]
    fn sched_header_with_colon_in_name_is_ignored() {
        let info = parse_sched("a:b (1, #threads: 1)\nprio : 120\n");
        assert_eq!(info.prio, Some(120));
        assert_eq!(info.policy, None);
    }

    // Contents below are copied from a 2-CPU Firecracker VM (kernel 6.18) unless noted.
    const STAT: &str = "\
cpu  26419 0 3935 830646 585 0 86 138 0 0
cpu0 12882 0 1632 416203 85 0 30 68 0 0
cpu1 13537 0 2303 414442 500 0 56 70 0 0
intr 274875 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 10 0 0 0 0 862 54 0 82
ctxt 342020
btime 1795380621
processes 5748
procs_running 4
procs_blocked 0
softirq 197863 0 45382 4 4501 33593 0 103 84559 0 29721
";

    #[test]
    fn stat_reads_aggregate_and_per_cpu_ticks_and_counters() {
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s.cpu.user, 26419);
        assert_eq!(s.cpu.idle, 830646);
        assert_eq!(s.cpu.steal, 138);
        assert_eq!(s.cpu.total(), 26419 + 3935 + 830646 + 585 + 86 + 138);
        assert_eq!(s.cpu.busy(), 26419 + 3935 + 86);
        assert_eq!(s.per_cpu.len(), 2);
        assert_eq!(s.per_cpu[1].0, 1);
        assert_eq!(s.per_cpu[1].1.iowait, 500);
        assert_eq!(s.intr_total, Some(274875));
        assert_eq!(s.ctxt, Some(342020));
        assert_eq!(s.procs_running, Some(4));
        assert_eq!(s.procs_blocked, Some(0));
    }

    #[test]
    fn stat_from_an_old_kernel_with_four_columns_and_a_gap_in_cpu_numbers_still_parses() {
        let s = parse_stat("cpu 10 1 5 100\ncpu0 5 0 2 50\ncpu2 5 1 3 50\nctxt 7\n").unwrap();
        assert_eq!(s.cpu.steal, 0);
        assert_eq!(s.cpu.total(), 116);
        assert_eq!(s.per_cpu.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(s.procs_running, None);
        assert_eq!(parse_stat("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_stat("cpu 1 2 3\n"), None);
    }

    #[test]
    fn vmstat_gives_the_paging_and_swapping_counters_and_skips_garbage() {
        let text = "nr_free_pages 1145376\npgpgin 2041409\npgpgout 1156136\npswpin 0\n\
                    pswpout 0\nbroken line here\nnr_dirty x\n";
        let v = parse_vmstat(text);
        assert_eq!(v["pgpgin"], 2041409);
        assert_eq!(v["pgpgout"], 1156136);
        assert_eq!(v["pswpout"], 0);
        assert_eq!(v.get("nr_dirty"), None);
        assert_eq!(v.len(), 5);
    }

    #[test]
    fn pressure_reads_some_and_full_in_percent_and_microseconds() {
        let p = parse_pressure(
            "some avg10=0.00 avg60=0.07 avg300=0.32 total=4788976\n\
             full avg10=1.25 avg60=0.06 avg300=0.29 total=4441971\n",
        )
        .unwrap();
        assert_eq!(p.some.avg300_pct, 0.32);
        assert_eq!(p.some.total_us, 4788976);
        let full = p.full.unwrap();
        assert_eq!(full.avg10_pct, 1.25);
        assert_eq!(full.total_us, 4441971);
    }

    #[test]
    fn cpu_pressure_from_a_kernel_before_5_13_has_no_full_line() {
        let p = parse_pressure("some avg10=3.50 avg60=0.83 avg300=1.43 total=11953681\n").unwrap();
        assert_eq!(p.some.avg10_pct, 3.5);
        assert_eq!(p.full, None);
        assert_eq!(parse_pressure("some avg10=0.00 avg60=0.83\n"), None);
        assert_eq!(parse_pressure(""), None);
    }

    #[test]
    fn loadavg_reads_loads_runnable_tasks_and_last_pid() {
        let l = parse_loadavg("0.24 0.51 0.25 2/81 5752\n").unwrap();
        assert_eq!((l.load1, l.load5, l.load15), (0.24, 0.51, 0.25));
        assert_eq!((l.runnable, l.tasks, l.last_pid), (2, 81, 5752));
        assert_eq!(parse_loadavg("0.24 0.51 0.25 2 5752"), None);
    }

    #[test]
    fn status_reads_switches_threads_and_allowed_cpus() {
        let text = "Name:\tinit\nThreads:\t11\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n\
                    Mems_allowed_list:\t0\nvoluntary_ctxt_switches:\t338\n\
                    nonvoluntary_ctxt_switches:\t21\n";
        let s = parse_status(text);
        assert_eq!(s.threads, Some(11));
        assert_eq!(s.cpus_allowed_list, Some(vec![0, 1]));
        assert_eq!(s.voluntary_ctxt_switches, Some(338));
        assert_eq!(s.nonvoluntary_ctxt_switches, Some(21));
    }

    #[test]
    fn status_of_a_zombie_lacks_the_fields_and_gives_none() {
        let s = parse_status("Name:\tsleep\nState:\tZ (zombie)\nThreads:\t1\n");
        assert_eq!(s.threads, Some(1));
        assert_eq!(s.voluntary_ctxt_switches, None);
        assert_eq!(s.cpus_allowed_list, None);
    }

    #[test]
    fn cpuinfo_counts_processors_and_sees_the_hypervisor_flag() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\
                    flags\t\t: fpu vme sse2 ht rdrand hypervisor lahf_lm\n\n\
                    processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu hypervisor\n\n";
        let c = parse_cpuinfo(text);
        assert_eq!(c.model_name.as_deref(), Some("AMD EPYC"));
        assert_eq!(c.processors, 2);
        assert!(c.hypervisor);
    }

    #[test]
    fn cpuinfo_of_bare_metal_arm64_has_no_model_name_and_no_hypervisor() {
        // From an arm64 board: no "model name", features under "Features".
        let text = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm\n\
                    CPU implementer\t: 0x41\n\nprocessor\t: 1\nBogoMIPS\t: 108.00\n";
        let c = parse_cpuinfo(text);
        assert_eq!(c.model_name, None);
        assert_eq!(c.processors, 2);
        assert!(!c.hypervisor);
    }

    const CONFIG: &str = "\
#
# Linux/x86 6.18.44 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT=\"gcc (GCC) 15.3.0\"
CONFIG_PREEMPT_BUILD=y
CONFIG_PREEMPT_NONE=y
# CONFIG_PREEMPT_VOLUNTARY is not set
# CONFIG_PREEMPT is not set
# CONFIG_PREEMPT_LAZY is not set
CONFIG_PREEMPT_COUNT=y
CONFIG_PREEMPTION=y
CONFIG_PREEMPT_DYNAMIC=y
# CONFIG_SCHED_CLASS_EXT is not set
CONFIG_PSI=y
CONFIG_PSI_DEFAULT_DISABLED=y
CONFIG_RT_GROUP_SCHED=y
CONFIG_SCHED_AUTOGROUP=y
CONFIG_HZ_250=y
CONFIG_HZ=250
# CONFIG_SCHEDSTATS is not set
CONFIG_KVM_GUEST=m
";

    #[test]
    fn kernel_config_maps_set_unset_modules_and_quoted_values() {
        let map = parse_kernel_config(CONFIG);
        assert_eq!(map["PREEMPT_NONE"], "y");
        assert_eq!(map["PREEMPT"], "n");
        assert_eq!(map["KVM_GUEST"], "m");
        assert_eq!(map["HZ"], "250");
        assert_eq!(map["CC_VERSION_TEXT"], "gcc (GCC) 15.3.0");
        assert!(!map.contains_key("Linux/x86 6.18.44 Kernel Configuration"));
    }

    #[test]
    fn sched_config_extracts_hz_preemption_and_scheduler_options() {
        let c = sched_config(&parse_kernel_config(CONFIG));
        assert_eq!(c.hz, Some(250));
        assert_eq!(c.preempt_model.as_deref(), Some("none"));
        assert!(c.preempt_dynamic);
        assert!(!c.schedstats && !c.sched_class_ext);
        assert!(c.rt_group_sched && c.psi && c.psi_default_disabled && c.sched_autogroup);
        assert_eq!(c.preempt_options["PREEMPT_VOLUNTARY"], "n");
        assert!(!c.preempt_options.contains_key("HZ"));
    }

    #[test]
    fn sched_config_of_an_rt_kernel_without_hz_reports_rt_and_no_hz() {
        let c = sched_config(&parse_kernel_config(
            "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPTION=y\n",
        ));
        assert_eq!(c.preempt_model.as_deref(), Some("rt"));
        assert_eq!(c.hz, None);
        assert!(!c.psi);
    }

    #[test]
    fn preempt_mode_is_the_word_in_parentheses() {
        assert_eq!(
            parse_preempt_mode("none (voluntary) full lazy\n").as_deref(),
            Some("voluntary")
        );
        assert_eq!(
            parse_preempt_mode("none voluntary full (lazy)").as_deref(),
            Some("lazy")
        );
        assert_eq!(parse_preempt_mode("none voluntary full"), None);
    }

    #[test]
    fn cmdline_value_takes_the_last_kernel_parameter_and_ignores_init_arguments() {
        let cmdline = "console=ttyS0 quiet psi=1 preempt=none preempt=full rdinit=/process_api \
                       -- --firecracker-init --addr 0.0.0.0:2024 psi=0";
        assert_eq!(cmdline_value(cmdline, "preempt"), Some("full"));
        assert_eq!(cmdline_value(cmdline, "psi"), Some("1"));
        assert_eq!(cmdline_value(cmdline, "quiet"), None);
        assert_eq!(cmdline_value(cmdline, "--addr"), None);
    }

    #[test]
    fn cpu_lists_parse_and_print_back_in_compressed_form() {
        assert_eq!(
            parse_cpu_list("0-3,5,7-8\n").unwrap(),
            [0, 1, 2, 3, 5, 7, 8]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), [0]);
        assert_eq!(parse_cpu_list("5,1-2,2").unwrap(), [1, 2, 5]);
        for text in ["0-3,5,7-8", "0", "1,3,5", "0-1023", "4-5,9"] {
            assert_eq!(format_cpu_list(&parse_cpu_list(text).unwrap()), text);
        }
        assert_eq!(format_cpu_list(&[8, 7, 0, 1, 1, 2]), "0-2,7-8");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn bad_cpu_lists_are_refused_naming_the_part_and_the_format() {
        let empty = parse_cpu_list("").unwrap_err();
        assert!(
            empty.contains("empty") && empty.contains("0-3,5,7-8"),
            "{empty}"
        );
        for (text, part) in [
            ("3-1", "'3-1'"),
            ("a", "'a'"),
            ("1,,2", "''"),
            ("0-", "'0-'"),
        ] {
            let err = parse_cpu_list(text).unwrap_err();
            assert!(err.contains(part), "{text}: {err}");
            assert!(err.contains("like 0-3,5,7-8"), "{text}: {err}");
        }
        assert!(parse_cpu_list("0-99999999999").is_err());
    }
}
