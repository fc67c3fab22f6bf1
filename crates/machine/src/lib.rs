//! The machine schedlab runs on: its environment record (kernel, CPUs, scheduler settings,
//! privileges), captured once per run so that results can be compared (or refused as
//! incomparable) across machines; its boot id; process identity.
//!
//! Submodules: [`probe`] (which scheduling policies this process may use, probed),
//! [`sched_ext`] (BPF schedulers: present, state, loaded ops), [`host`] (the identity
//! every run records: host name, machine id, kernel, CPU, build), and [`secret`] (the command
//! line as stored and shown, passwords masked). Whether the machine is idle
//! before a trial is the run stage's business: `run::settle`.

#![forbid(unsafe_code)]

pub mod cgroups;
pub mod host;
pub mod probe;
pub mod sched_ext;
pub mod secret;
mod slice;

pub use host::HostIdentity;
pub use probe::{policy_report, render_policy_report, PolicyAvailability};

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use schedlab_procfs::{
    cmdline_value, format_cpu_list, parse_cpu_list, parse_cpuinfo, parse_kernel_config,
    parse_preempt_mode, sched_config, SchedConfig,
};
use schedlab_sys::{soft_rlimit, uname, Resource};

/// Everything schedlab records about the machine a run happened on.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct EnvRecord {
    /// Kernel release (`uname -r`).
    pub kernel_release: Option<String>,
    /// Kernel build string (`uname -v`).
    pub kernel_version: Option<String>,
    /// Hardware name (`uname -m`).
    pub machine: Option<String>,
    /// Host name (`uname -n`).
    pub hostname: Option<String>,
    /// Kernel command line (`/proc/cmdline`).
    pub cmdline: Option<String>,
    /// Scheduler options of the kernel configuration, when the configuration is readable.
    pub kernel_config: Option<SchedConfig>,
    /// Where `kernel_config` came from (`/proc/config.gz` or `/boot/config-RELEASE`).
    pub kernel_config_source: Option<String>,
    /// Preemption mode in force: `none`, `voluntary`, `full`, `lazy` or `rt`.
    pub preempt_mode: Option<String>,
    /// How `preempt_mode` was found: `debugfs` (authoritative), `cmdline` or `config`.
    pub preempt_mode_source: Option<String>,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// Processors in `/proc/cpuinfo`; else online CPUs, else `available_parallelism`; at least 1.
    pub cpu_count: usize,
    /// Online CPUs (`/sys/devices/system/cpu/online`) in CPU list format, e.g. `0-3,5`.
    pub cpus_online: Option<String>,
    /// Simultaneous multithreading active (`/sys/devices/system/cpu/smt/active`).
    pub smt_active: Option<bool>,
    /// cpufreq governor of CPU 0; `None` without cpufreq (common in VMs).
    pub cpufreq_governor: Option<String>,
    /// Current clocksource (`tsc`, `kvm-clock`, `hpet`...).
    pub clocksource: Option<String>,
    /// Signs of running in a virtual machine.
    pub virtualization: Virtualization,
    /// `sched_rt_runtime_us`: RT and DEADLINE budget per period, in microseconds; -1 = no limit.
    pub rt_runtime_us: Option<i64>,
    /// `sched_rt_period_us`: the period of that budget, in microseconds.
    pub rt_period_us: Option<u64>,
    /// `sched_rr_timeslice_ms`: SCHED_RR quantum, in milliseconds.
    pub rr_timeslice_ms: Option<u64>,
    /// `sched_autogroup_enabled`: fair-class tasks grouped per session.
    pub autogroup_enabled: Option<bool>,
    /// `/sys/kernel/sched_ext/state` (`disabled`, `enabled`...), or `absent` without sched_ext.
    pub sched_ext_state: String,
    /// Name of the loaded sched_ext scheduler (`/sys/kernel/sched_ext/root/ops`).
    pub sched_ext_ops: Option<String>,
    /// DEADLINE fair server per CPU (`/sys/kernel/debug/sched/fair_server`), when readable.
    pub fair_server: Option<Vec<FairServerCpu>>,
    /// Block device -> its `queue/scheduler` line (the active one in brackets).
    pub io_schedulers: BTreeMap<String, String>,
    /// Version of schedlab that made the record.
    pub schedlab_version: String,
    /// Git commit schedlab was built from, see [`git_commit`].
    pub git_commit: Option<String>,
    /// Identity and limits that decide which policies are allowed.
    pub privileges: Privileges,
    /// CPU cgroup controllers: which hierarchy (v1 or v2) holds each and what it offers, one
    /// line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<String>,
}

/// Signs of virtualisation; any of them means steal time and noisy neighbours are possible.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub struct Virtualization {
    /// `/proc/cpuinfo` flags contain `hypervisor` (x86 guests); `None` if unreadable.
    pub hypervisor_flag: Option<bool>,
    /// `/sys/hypervisor/type` (e.g. `xen`).
    pub hypervisor_type: Option<String>,
    /// `/sys/class/dmi/id/sys_vendor` (e.g. `QEMU`, `Amazon EC2`).
    pub dmi_sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name` (e.g. `Standard PC (Q35 + ICH9, 2009)`).
    pub dmi_product_name: Option<String>,
}

/// The DEADLINE server that reserves CPU time for fair tasks on one CPU (Linux 6.12+).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FairServerCpu {
    /// CPU number.
    pub cpu: usize,
    /// Reserved runtime per period, in nanoseconds.
    pub runtime_ns: Option<u64>,
    /// Period, in nanoseconds.
    pub period_ns: Option<u64>,
}

/// Who this process is, as far as scheduling permissions go.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Privileges {
    /// Effective user id.
    pub euid: u32,
    /// Effective user id is 0.
    pub is_root: bool,
    /// CAP_SYS_NICE in the effective set; `None` if capabilities could not be read.
    pub cap_sys_nice: Option<bool>,
    /// RLIMIT_RTPRIO soft limit: highest FIFO/RR priority usable without CAP_SYS_NICE;
    /// `None` = unlimited.
    pub rlimit_rtprio: Option<u64>,
    /// RLIMIT_NICE soft limit: without CAP_SYS_NICE nice may go down to `20 - limit`;
    /// `None` = unlimited.
    pub rlimit_nice: Option<u64>,
    /// RLIMIT_RTTIME soft limit: CPU time an RT task may use without blocking, in
    /// microseconds; `None` = unlimited.
    pub rlimit_rttime_us: Option<u64>,
}

impl Privileges {
    /// Reads the effective uid, CAP_SYS_NICE and the scheduling rlimits of this process.
    pub fn capture() -> Privileges {
        let euid = schedlab_sys::euid();
        Privileges {
            euid,
            is_root: euid == 0,
            cap_sys_nice: caps::has_cap(
                None,
                caps::CapSet::Effective,
                caps::Capability::CAP_SYS_NICE,
            )
            .ok(),
            rlimit_rtprio: soft_rlimit(Resource::RLIMIT_RTPRIO),
            rlimit_nice: soft_rlimit(Resource::RLIMIT_NICE),
            rlimit_rttime_us: soft_rlimit(Resource::RLIMIT_RTTIME),
        }
    }

    /// Lowest nice value reachable without CAP_SYS_NICE under RLIMIT_NICE (-20..=20; 20 means
    /// nice cannot be lowered at all).
    pub fn nice_floor_by_rlimit(&self) -> i32 {
        match self.rlimit_nice {
            None => -20,
            Some(n) => 20 - n.min(40) as i32,
        }
    }
}

/// The git commit schedlab was built from, set at build time through `SCHEDLAB_GIT_COMMIT`.
pub fn git_commit() -> Option<String> {
    option_env!("SCHEDLAB_GIT_COMMIT").map(str::to_string)
}

impl EnvRecord {
    /// Reads everything it can; what is unreadable (not mounted, no permission, too old a
    /// kernel) is left `None`. Never panics. Spawns `gzip -dc /proc/config.gz` once.
    pub fn capture() -> EnvRecord {
        let uts = uname();
        let release = uts.as_ref().map(|u| u.release.clone());
        let cmdline = read_trim("/proc/cmdline");
        let (kernel_config, kernel_config_source) = match read_kernel_config(release.as_deref()) {
            Some((text, source)) => (
                Some(sched_config(&parse_kernel_config(&text))),
                Some(source),
            ),
            None => (None, None),
        };
        let (preempt_mode, preempt_mode_source) = resolve_preempt_mode(
            read_trim("/sys/kernel/debug/sched/preempt").as_deref(),
            cmdline.as_deref(),
            kernel_config.as_ref(),
        );
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .map(|t| parse_cpuinfo(&t));
        let online =
            read_trim("/sys/devices/system/cpu/online").and_then(|t| parse_cpu_list(&t).ok());
        let cpu_count = [
            cpuinfo.as_ref().map(|c| c.processors),
            online.as_ref().map(Vec::len),
            std::thread::available_parallelism().ok().map(usize::from),
        ]
        .into_iter()
        .flatten()
        .find(|&n| n > 0)
        .unwrap_or(1);
        let sched_ext = sched_ext::SchedExt::now();
        EnvRecord {
            kernel_release: release,
            kernel_version: uts.as_ref().map(|u| u.version.clone()),
            machine: uts.as_ref().map(|u| u.machine.clone()),
            hostname: uts.map(|u| u.nodename),
            cmdline,
            kernel_config,
            kernel_config_source,
            preempt_mode,
            preempt_mode_source,
            cpu_model: cpuinfo.as_ref().and_then(|c| c.model_name.clone()),
            cpu_count,
            cpus_online: online.map(|cpus| format_cpu_list(&cpus)),
            smt_active: read_trim("/sys/devices/system/cpu/smt/active").map(|v| v == "1"),
            cpufreq_governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            clocksource: read_trim(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            virtualization: Virtualization {
                hypervisor_flag: cpuinfo.map(|c| c.hypervisor),
                hypervisor_type: read_trim("/sys/hypervisor/type"),
                dmi_sys_vendor: read_trim("/sys/class/dmi/id/sys_vendor"),
                dmi_product_name: read_trim("/sys/class/dmi/id/product_name"),
            },
            rt_runtime_us: read_parsed("/proc/sys/kernel/sched_rt_runtime_us"),
            rt_period_us: read_parsed("/proc/sys/kernel/sched_rt_period_us"),
            rr_timeslice_ms: read_parsed("/proc/sys/kernel/sched_rr_timeslice_ms"),
            autogroup_enabled: read_trim("/proc/sys/kernel/sched_autogroup_enabled")
                .map(|v| v == "1"),
            sched_ext_ops: sched_ext.ops,
            sched_ext_state: sched_ext.state,
            fair_server: read_fair_server(Path::new("/sys/kernel/debug/sched/fair_server")),
            io_schedulers: read_io_schedulers(Path::new("/sys/block")),
            schedlab_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: git_commit(),
            privileges: Privileges::capture(),
            cgroups: cgroups::lines(),
        }
    }
}

impl EnvRecord {
    /// The record as one line of JSON (stored with each run).
    pub fn to_json(&self) -> String {
        // Cannot fail: every field is a plain value, string or map with string keys.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): a new one after every boot.
pub fn boot_id() -> Option<String> {
    read_trim("/proc/sys/kernel/random/boot_id")
}

/// When process `pid` started, in clock ticks after boot (`/proc/PID/stat` field 22); None if
/// there is no such process (or it is a zombie). With the pid it identifies a process across
/// pid reuse.
pub fn process_start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_ticks(&stat)
}

/// Field 22 (starttime) of a `/proc/PID/stat` line; None for a zombie (state Z), which is gone
/// in all but name. The command name (field 2) may hold spaces and parentheses, so fields are
/// counted after its last `)`.
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    if fields.next()? == "Z" {
        return None;
    }
    // After the state (field 3), starttime is the 19th field.
    fields.nth(18)?.parse().ok()
}

/// The scheduler options of this kernel's configuration, when it is readable (spawns
/// `gzip -dc /proc/config.gz` when that file exists).
pub fn kernel_sched_config() -> Option<SchedConfig> {
    let release = uname().map(|u| u.release);
    read_kernel_config(release.as_deref())
        .map(|(text, _)| sched_config(&parse_kernel_config(&text)))
}

/// Kernel release (`uname -r`), empty if unknown; cheap, without a full capture.
pub fn kernel_release() -> String {
    uname().map(|u| u.release).unwrap_or_default()
}

/// CPU model name from `/proc/cpuinfo`, `unknown` if absent; cheap, without a full capture.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| parse_cpuinfo(&t).model_name)
        .unwrap_or_else(|| "unknown".into())
}

/// Decides the preemption mode in force and where it came from. debugfs shows the live mode;
/// otherwise `preempt=` on the command line wins when the kernel is PREEMPT_DYNAMIC (or the
/// configuration is unknown); otherwise the configured model.
fn resolve_preempt_mode(
    debugfs: Option<&str>,
    cmdline: Option<&str>,
    config: Option<&SchedConfig>,
) -> (Option<String>, Option<String>) {
    let found = |mode: String, source: &str| (Some(mode), Some(source.to_string()));
    if let Some(mode) = debugfs.and_then(parse_preempt_mode) {
        return found(mode, "debugfs");
    }
    let model = config.and_then(|c| c.preempt_model.clone());
    let dynamic = config.is_none_or(|c| c.preempt_dynamic);
    if model.as_deref() != Some("rt") && dynamic {
        let boot = cmdline.and_then(|c| cmdline_value(c, "preempt"));
        if let Some(mode) = boot.filter(|m| ["none", "voluntary", "full", "lazy"].contains(m)) {
            return found(mode.to_string(), "cmdline");
        }
    }
    match model {
        Some(mode) => found(mode, "config"),
        None => (None, None),
    }
}

/// Kernel configuration text and its source: `/proc/config.gz` through `gzip -dc` (no
/// decompressor in our dependencies), else `/boot/config-RELEASE`.
fn read_kernel_config(release: Option<&str>) -> Option<(String, String)> {
    const GZ: &str = "/proc/config.gz";
    if Path::new(GZ).exists() {
        let out = Command::new("gzip")
            .args(["-dc", GZ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        if let Some(out) = out.ok().filter(|o| o.status.success()) {
            return Some((
                String::from_utf8_lossy(&out.stdout).into_owned(),
                GZ.to_string(),
            ));
        }
    }
    let boot = format!("/boot/config-{}", release?);
    let text = std::fs::read_to_string(&boot).ok()?;
    Some((text, boot))
}

/// `fair_server/cpuN/{runtime,period}` (nanoseconds), sorted by CPU; `None` when absent.
fn read_fair_server(dir: &Path) -> Option<Vec<FairServerCpu>> {
    let mut cpus: Vec<FairServerCpu> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let cpu = entry
                .file_name()
                .to_str()?
                .strip_prefix("cpu")?
                .parse()
                .ok()?;
            let path = entry.path();
            Some(FairServerCpu {
                cpu,
                runtime_ns: read_parsed(path.join("runtime")),
                period_ns: read_parsed(path.join("period")),
            })
        })
        .collect();
    cpus.sort_by_key(|c| c.cpu);
    Some(cpus)
}

/// Device name -> `queue/scheduler` line for each entry of `/sys/block`.
fn read_io_schedulers(block: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(block) else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let line = read_trim(e.path().join("queue/scheduler"))?;
            Some((e.file_name().to_string_lossy().into_owned(), line))
        })
        .collect()
}

/// A small file's contents without surrounding whitespace; `None` if unreadable.
fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// A small file holding one number; `None` if unreadable or not a number.
fn read_parsed<T: std::str::FromStr>(path: impl AsRef<Path>) -> Option<T> {
    read_trim(path)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_ticks_are_field_22_even_when_the_name_has_spaces_and_parentheses() {
        // A real line of /proc/PID/stat with the name changed to "a (b) c".
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 250 0 0 0 3 1 0 0 20 0 1 0 123456 10547200 512 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(parse_start_ticks(line), Some(123456));
        assert_eq!(parse_start_ticks(&line.replace(") S ", ") Z ")), None);
        let me = process_start_ticks(std::process::id() as i32).unwrap();
        assert!(me > 0);
    }

    #[test]
    fn capture_on_this_machine_finds_a_kernel_release_and_at_least_one_cpu() {
        let env = EnvRecord::capture();
        assert!(
            env.kernel_release.as_deref().is_some_and(|r| !r.is_empty()),
            "{env:?}"
        );
        assert!(env.cpu_count >= 1);
        assert_eq!(env.schedlab_version, env!("CARGO_PKG_VERSION"));
        assert!(!env.sched_ext_state.is_empty());
        let back: EnvRecord = serde_json::from_str(&env.to_json()).unwrap();
        assert_eq!(back, env);
        assert_eq!(Some(kernel_release()), env.kernel_release);
        assert_eq!(Some(cpu_model()), env.cpu_model.or(Some("unknown".into())));
    }

    #[test]
    fn preempt_mode_prefers_debugfs_then_dynamic_cmdline_then_config() {
        let dynamic_none = SchedConfig {
            preempt_model: Some("none".into()),
            preempt_dynamic: true,
            ..SchedConfig::default()
        };
        let static_full = SchedConfig {
            preempt_model: Some("full".into()),
            ..SchedConfig::default()
        };
        let mode = |d, c, cfg| resolve_preempt_mode(d, c, cfg);
        let pair = |m: &str, s: &str| (Some(m.to_string()), Some(s.to_string()));
        assert_eq!(
            mode(Some("none (voluntary) full"), Some("preempt=full"), None),
            pair("voluntary", "debugfs")
        );
        assert_eq!(
            mode(None, Some("quiet preempt=lazy"), Some(&dynamic_none)),
            pair("lazy", "cmdline")
        );
        assert_eq!(
            mode(None, Some("quiet psi=1"), Some(&dynamic_none)),
            pair("none", "config")
        );
        // Without PREEMPT_DYNAMIC the kernel ignores preempt=.
        assert_eq!(
            mode(None, Some("preempt=none"), Some(&static_full)),
            pair("full", "config")
        );
        assert_eq!(mode(None, Some("preempt=bogus"), None), (None, None));
    }

    #[test]
    fn io_schedulers_and_fair_server_are_read_from_a_directory_tree() {
        let root = std::env::temp_dir().join(format!("schedlab-env-test-{}", std::process::id()));
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "block/vda/queue/scheduler",
            "none [mq-deadline] kyber bfq \n",
        );
        write("block/loop0/queue/scheduler", "[none] mq-deadline\n");
        std::fs::create_dir_all(root.join("block/weird")).unwrap();
        write("fs/cpu1/runtime", "50000000\n");
        write("fs/cpu1/period", "1000000000\n");
        write("fs/cpu0/runtime", "50000000\n");
        let io = read_io_schedulers(&root.join("block"));
        let fs = read_fair_server(&root.join("fs")).unwrap();
        let missing = read_fair_server(&root.join("nothing"));
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(io.len(), 2);
        assert_eq!(io["vda"], "none [mq-deadline] kyber bfq");
        assert_eq!(fs.iter().map(|c| c.cpu).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(fs[1].period_ns, Some(1_000_000_000));
        assert_eq!(fs[0].period_ns, None);
        assert_eq!(missing, None);
    }

    #[test]
    fn rlimit_nice_translates_to_the_lowest_reachable_nice() {
        let p = |n| Privileges {
            rlimit_nice: n,
            ..Privileges::default()
        };
        assert_eq!(p(Some(0)).nice_floor_by_rlimit(), 20);
        assert_eq!(p(Some(25)).nice_floor_by_rlimit(), -5);
        assert_eq!(p(Some(40)).nice_floor_by_rlimit(), -20);
        assert_eq!(p(None).nice_floor_by_rlimit(), -20);
    }
}
