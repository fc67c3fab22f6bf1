//! Parsers for what describes the machine: `/proc/cpuinfo`, the kernel configuration, the
//! preemption mode, the kernel command line and CPU lists.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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

/// Why a CPU list cannot be read; the message ends with the format expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// Nothing but white space.
    #[error("empty CPU list: {}", CpuListError::FORMAT)]
    Empty,
    /// A part is not a number or a rising range of numbers up to [`MAX_CPU`].
    #[error("bad part '{part}' in CPU list '{list}': {}", CpuListError::FORMAT)]
    BadPart {
        /// The part, between commas.
        part: String,
        /// The whole list.
        list: String,
    },
}

impl CpuListError {
    /// What a CPU list looks like.
    pub const FORMAT: &'static str =
        "expected CPU numbers and ranges separated by commas, like 0-3,5,7-8";

    /// What is wrong, without the format.
    pub fn what(&self) -> String {
        match self {
            CpuListError::Empty => "empty CPU list".into(),
            CpuListError::BadPart { part, list } => {
                format!("bad part '{part}' in CPU list '{list}'")
            }
        }
    }
}

/// Parses a CPU list like `0-3,5,7-8` (sysfs `online`, `Cpus_allowed_list`, `--cpus`) into
/// sorted, distinct CPU numbers. Surrounding whitespace (the trailing newline) is ignored.
/// The CPUs are gathered in a bitset of [`MAX_CPU`] + 1 bits (8 KiB), a range a word at a
/// time, so that however many parts the list repeats, memory and time stay bounded.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, CpuListError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(CpuListError::Empty);
    }
    let bad = |part: &str| CpuListError::BadPart {
        part: part.to_string(),
        list: text.to_string(),
    };
    let number = |s: &str| s.parse::<usize>().ok().filter(|&n| n <= MAX_CPU);
    let mut bits = vec![0u64; MAX_CPU / 64 + 1];
    for part in text.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (number(lo), number(hi)),
            None => (number(part), number(part)),
        };
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo <= hi => set_bits(&mut bits, lo, hi),
            _ => return Err(bad(part)),
        }
    }
    Ok(bits
        .iter()
        .enumerate()
        .flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word & (1u64 << b) != 0)
                .map(move |b| w * 64 + b)
        })
        .collect())
}

/// Sets bits `lo..=hi` of `bits`, whole words at once where it can.
fn set_bits(bits: &mut [u64], lo: usize, hi: usize) {
    let (first, last) = (lo / 64, hi / 64);
    for (w, word) in bits.iter_mut().enumerate().take(last + 1).skip(first) {
        let from = if w == first { lo % 64 } else { 0 };
        let to = if w == last { hi % 64 } else { 63 };
        let width = to - from + 1;
        let mask = if width == 64 {
            u64::MAX
        } else {
            ((1u64 << width) - 1) << from
        };
        *word |= mask;
    }
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
    fn a_list_repeating_the_whole_range_parses_in_bounded_memory() {
        // Issue 27: 16384 parts of 0-65535 took 8.2 GB as a vector of every CPU of every part.
        let list = vec!["0-65535"; 16384].join(",");
        let cpus = parse_cpu_list(&list).unwrap();
        assert_eq!(cpus.len(), MAX_CPU + 1);
        assert_eq!((cpus[0], cpus[MAX_CPU]), (0, MAX_CPU));
        assert_eq!(
            parse_cpu_list("62-66,1,63").unwrap(),
            [1, 62, 63, 64, 65, 66]
        );
        assert_eq!(parse_cpu_list("64-127").unwrap().len(), 64);
        assert_eq!(parse_cpu_list("0-63").unwrap(), (0..64).collect::<Vec<_>>());
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
        assert_eq!(empty, CpuListError::Empty);
        let empty = empty.to_string();
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
            assert!(matches!(err, CpuListError::BadPart { .. }), "{text}: {err}");
            let err = err.to_string();
            assert!(err.contains(part), "{text}: {err}");
            assert!(err.contains("like 0-3,5,7-8"), "{text}: {err}");
        }
        assert!(parse_cpu_list("0-99999999999").is_err());
    }
}
