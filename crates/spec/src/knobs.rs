//! The kernel-knob axes of a spec: EEVDF slices for the fair policies, named settings under
//! /proc/sys and /sys, and BPF schedulers (sched_ext): their serde types, the mapping of a
//! knob's name to its file, and their checks.
//!
//! Only files under /proc/sys and /sys can be knobs; a name that leads anywhere else is
//! refused here, before anything runs.

use super::durations::duration_ns;
use super::Problem;
use schedlab_core::policy::PolicyKind;
use schedlab_core::records::ScxCommand;
use serde::{Deserialize, Serialize};

/// Shortest custom slice the kernel keeps, ns (it clamps `sched_runtime` to 0.1 ms..100 ms).
pub const MIN_SLICE_NS: u64 = 100_000;
/// Longest custom slice the kernel keeps, ns.
pub const MAX_SLICE_NS: u64 = 100_000_000;

/// One knob of the `knobs` axis: a setting and the values a cell may give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnobAxis {
    /// A sysctl name (`kernel.sched_rr_timeslice_ms`), a path under /proc/sys or /sys
    /// (`/sys/kernel/mm/transparent_hugepage/enabled`), or `cpufreq.governor` (every CPU's
    /// cpufreq governor).
    pub name: String,
    /// The values to compare, one cell each.
    pub values: Vec<KnobValue>,
}

/// A knob's value as written in a spec: a number or a word.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KnobValue {
    /// A whole number, e.g. 950000 or -1.
    Int(i64),
    /// Text, e.g. "madvise".
    Text(String),
}

impl std::fmt::Display for KnobValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KnobValue::Int(n) => write!(f, "{n}"),
            KnobValue::Text(t) => f.write_str(t.trim()),
        }
    }
}

/// One BPF scheduler of the `scx` axis: its command line, or a table naming the ops name too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScxSpec {
    /// A command line such as "scx_lavd --performance" (split at spaces), or "none" for the
    /// kernel's own fair class.
    Command(String),
    /// A command line and the ops name the kernel shows once it is enabled.
    Table {
        /// The command line.
        command: String,
        /// The ops name (default: the program's name without `scx_`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ops: Option<String>,
    },
}

impl KnobAxis {
    /// A knob from a `--knob NAME=V1,V2` flag; whole numbers stay numbers.
    pub fn from_flag(flag: &str) -> Result<KnobAxis, super::SpecError> {
        let (name, values) = flag.split_once('=').ok_or_else(|| super::SpecError::Flag {
            flag: "--knob",
            value: flag.to_string(),
            message: "give NAME=V1,V2, e.g. --knob kernel.sched_rr_timeslice_ms=10,100".into(),
        })?;
        let value = |v: &str| match v.trim().parse::<i64>() {
            Ok(n) => KnobValue::Int(n),
            Err(_) => KnobValue::Text(v.trim().to_string()),
        };
        Ok(KnobAxis {
            name: name.trim().to_string(),
            values: values.split(',').map(value).collect(),
        })
    }
}

/// A knob whose name and values were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedKnob {
    /// The name as given.
    pub name: String,
    /// The file it names (one `*` component allowed).
    pub path: String,
    /// The values, as text.
    pub values: Vec<String>,
}

/// The path of every CPU's cpufreq governor.
pub const CPUFREQ_GOVERNOR: &str = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";

/// Why a knob's name stands for no file schedlab may change ([`knob_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnobNameError {
    /// An empty name.
    #[error("a knob needs a name")]
    Empty,
    /// An absolute path outside /proc/sys and /sys.
    #[error("{name} is outside /proc/sys and /sys; schedlab changes only kernel settings there")]
    Outside {
        /// The name given (trimmed).
        name: String,
    },
    /// A character no sysctl name holds.
    #[error("'{name}' is not a sysctl name ('{found}' in it)")]
    NotSysctl {
        /// The name given (trimmed).
        name: String,
        /// The first character refused.
        found: char,
    },
    /// An empty, `.` or `..` component.
    #[error("{path} has an empty, `.` or `..` component; give the file's plain path")]
    Component {
        /// The path the name maps to.
        path: String,
    },
    /// More than one `*`, or a `*` in more than one component.
    #[error("{path}: at most one `*`, in one component (e.g. cpu*)")]
    Stars {
        /// The path the name maps to.
        path: String,
    },
}

/// The file a knob's name stands for: a sysctl name with dots (`kernel.sched_rr_timeslice_ms`
/// -> `/proc/sys/kernel/sched_rr_timeslice_ms`, as sysctl(8) maps it), a path under /proc/sys
/// or /sys, or `cpufreq.governor`. Anything else, and any `..`, is refused.
pub fn knob_path(name: &str) -> Result<String, KnobNameError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(KnobNameError::Empty);
    }
    if matches!(name, "cpufreq.governor" | "cpufreq_governor") {
        return Ok(CPUFREQ_GOVERNOR.into());
    }
    let path = if name.starts_with('/') {
        if !(name.starts_with("/proc/sys/") || name.starts_with("/sys/")) {
            return Err(KnobNameError::Outside { name: name.into() });
        }
        name.to_string()
    } else {
        if let Some(found) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
        {
            return Err(KnobNameError::NotSysctl {
                name: name.into(),
                found,
            });
        }
        let rel = if name.contains('/') {
            name.to_string()
        } else {
            name.replace('.', "/")
        };
        format!("/proc/sys/{rel}")
    };
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(KnobNameError::Component { path });
    }
    let stars = parts.iter().filter(|p| p.contains('*')).count();
    if stars > 1 || parts.iter().any(|p| p.matches('*').count() > 1) {
        return Err(KnobNameError::Stars { path });
    }
    Ok(path)
}

/// The `slices` axis in ns, `None` for "default" (the kernel's base slice); each within what
/// the kernel keeps, and only with a policy that takes a slice.
pub fn check_slices(
    slices: &[String],
    policies: &[PolicyKind],
) -> Result<Vec<Option<u64>>, Problem> {
    let accepted =
        "durations from \"0.1ms\" to \"100ms\", or \"default\" (the kernel's base slice)";
    let mut out = Vec::with_capacity(slices.len());
    for (i, s) in slices.iter().enumerate() {
        let key = format!("axes.slices[{i}]");
        if s.trim() == "default" {
            out.push(None);
            continue;
        }
        let ns = duration_ns(&key, s)?;
        if !(MIN_SLICE_NS..=MAX_SLICE_NS).contains(&ns) {
            return Err(Problem::new(
                key,
                format!("{s} is outside what the kernel keeps (it clamps sched_attr.sched_runtime of a fair task to 0.1ms..100ms)"),
            )
            .accepting(accepted));
        }
        out.push(Some(ns));
    }
    if !out.is_empty() && !policies.iter().any(|p| p.takes_slice()) {
        return Err(Problem::new(
            "axes.slices",
            "an EEVDF slice applies to the fair policies other and batch, and axes.policies has neither",
        )
        .accepting("other and/or batch in axes.policies"));
    }
    Ok(out)
}

/// `settings.allow_knobs` (and `--allow-knob`): each a knob name mapped to its file.
pub fn check_allow_knobs(allow: &[String]) -> Result<Vec<String>, Problem> {
    allow
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let key = format!("settings.allow_knobs[{i}]");
            let path = knob_path(a).map_err(|e| Problem::new(key.clone(), e.to_string()))?;
            if path.contains('*') {
                return Err(Problem::new(
                    key,
                    format!("{path}: name the one file to allow, without `*`"),
                ));
            }
            Ok(path)
        })
        .collect()
}

/// The `knobs` axis with each name mapped to its file and each value as text; a file on the
/// deny list is refused unless `allow` (paths) names it. The real files behind globs and links
/// are checked again where they exist (`run::knobpaths`).
pub fn check_knobs(knobs: &[KnobAxis], allow: &[String]) -> Result<Vec<CheckedKnob>, Problem> {
    let mut out: Vec<CheckedKnob> = Vec::with_capacity(knobs.len());
    for (i, k) in knobs.iter().enumerate() {
        let path = knob_path(&k.name).map_err(|e| {
            Problem::new(format!("axes.knobs[{i}].name"), e.to_string()).accepting(
                "a sysctl name such as \"kernel.sched_rr_timeslice_ms\", a path under /proc/sys or /sys, or \"cpufreq.governor\"",
            )
        })?;
        if let Some(reason) = schedlab_core::records::runs_program(&path) {
            return Err(Problem::new(
                format!("axes.knobs[{i}].name"),
                format!(
                    "{path} is on schedlab's deny list: {reason}; no flag allows it (schedlab never makes the kernel run a program)"
                ),
            ));
        }
        if let Some(reason) =
            schedlab_core::records::denied(&path).filter(|_| !allow.contains(&path))
        {
            return Err(Problem::new(
                format!("axes.knobs[{i}].name"),
                format!(
                    "{path} is on schedlab's deny list: {reason}; if you mean it, allow it with --allow-knob {path} (settings.allow_knobs)"
                ),
            ));
        }
        if let Some(j) = out.iter().position(|o| o.path == path) {
            return Err(Problem::new(
                format!("axes.knobs[{i}].name"),
                format!(
                    "{path} is already axes.knobs[{j}]; give each knob once, with all its values"
                ),
            ));
        }
        if k.values.is_empty() {
            return Err(Problem::new(
                format!("axes.knobs[{i}].values"),
                "is empty; give at least one value",
            ));
        }
        let mut values = Vec::with_capacity(k.values.len());
        for (n, v) in k.values.iter().enumerate() {
            let text = v.to_string();
            if text.is_empty() || schedlab_core::records::check_knob_value(&text).is_err() {
                return Err(Problem::new(
                    format!("axes.knobs[{i}].values[{n}]"),
                    "a knob's value is one line of printable text, at most 4096 bytes",
                )
                .accepting("a number such as 10 or a word such as \"madvise\""));
            }
            if let Some(reason) = schedlab_core::records::program_value(&path, &text) {
                return Err(Problem::new(
                    format!("axes.knobs[{i}].values[{n}]"),
                    format!("{reason}; no flag allows it"),
                )
                .accepting("a file name pattern such as \"core.%p\""));
            }
            values.push(text);
        }
        out.push(CheckedKnob {
            name: k.name.trim().to_string(),
            path,
            values,
        });
    }
    Ok(out)
}

/// The `scx` axis: each command with the ops name to wait for; `None` for "none" (no BPF
/// scheduler: the kernel's fair class).
pub fn check_scx(scx: &[ScxSpec]) -> Result<Vec<Option<ScxCommand>>, Problem> {
    scx.iter()
        .enumerate()
        .map(|(i, s)| {
            let (command, ops) = match s {
                ScxSpec::Command(c) => (c.as_str(), None),
                ScxSpec::Table { command, ops } => (command.as_str(), ops.as_deref()),
            };
            if matches!(command.trim(), "none" | "fair") {
                return Ok(None);
            }
            let argv: Vec<String> = command.split_whitespace().map(str::to_string).collect();
            let Some(program) = argv.first() else {
                return Err(
                    Problem::new(format!("axes.scx[{i}]"), "the command is empty")
                        .accepting("a command line such as \"scx_lavd\", or \"none\""),
                );
            };
            let base = program.rsplit('/').next().unwrap_or(program);
            let ops = ops
                .map(|o| o.trim().to_string())
                .unwrap_or_else(|| base.strip_prefix("scx_").unwrap_or(base).to_string());
            if ops.is_empty() {
                return Err(Problem::new(format!("axes.scx[{i}].ops"), "is empty")
                    .accepting("the name /sys/kernel/sched_ext/root/ops shows, e.g. \"lavd\""));
            }
            Ok(Some(ScxCommand { argv, ops }))
        })
        .collect()
}

/// How many cells the knob axes multiply the others by (at most; the slices axis applies to
/// fair cells only).
pub fn cell_factor(slices: usize, knobs: &[KnobAxis], scx: usize) -> u64 {
    knobs
        .iter()
        .map(|k| k.values.len().max(1) as u64)
        .chain([slices.max(1) as u64, scx.max(1) as u64])
        .fold(1u64, |n, f| n.saturating_mul(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_and_paths_map_to_files_under_proc_sys_and_sys() {
        assert_eq!(
            knob_path("kernel.sched_rr_timeslice_ms").unwrap(),
            "/proc/sys/kernel/sched_rr_timeslice_ms"
        );
        assert_eq!(
            knob_path("kernel/sched_rt_runtime_us").unwrap(),
            "/proc/sys/kernel/sched_rt_runtime_us"
        );
        assert_eq!(
            knob_path("/sys/kernel/mm/transparent_hugepage/enabled").unwrap(),
            "/sys/kernel/mm/transparent_hugepage/enabled"
        );
        assert_eq!(knob_path("cpufreq.governor").unwrap(), CPUFREQ_GOVERNOR);
    }

    #[test]
    fn anything_outside_proc_sys_and_sys_is_refused() {
        for bad in [
            "/etc/passwd",
            "/proc/1/mem",
            "/proc/sys/../../etc/shadow",
            "/sys/./kernel",
            "kernel..x",
            "kernel.x;rm",
            "/sys/a*/b*/c",
            "",
        ] {
            assert!(knob_path(bad).is_err(), "{bad} was accepted");
        }
        let e = knob_path("/etc/sysctl.conf").unwrap_err();
        assert_eq!(
            e,
            KnobNameError::Outside {
                name: "/etc/sysctl.conf".into()
            }
        );
        assert!(e.to_string().contains("outside /proc/sys and /sys"), "{e}");
    }

    #[test]
    fn slices_are_checked_against_the_kernels_clamp_and_the_policies() {
        let fair = [PolicyKind::Other, PolicyKind::Fifo];
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check_slices(&s(&["0.1ms", "3ms", "default"]), &fair).unwrap(),
            vec![Some(100_000), Some(3_000_000), None]
        );
        let e = check_slices(&s(&["50us"]), &fair).unwrap_err();
        assert_eq!(e.key, "axes.slices[0]");
        assert!(e.message.contains("0.1ms..100ms"), "{e}");
        assert!(check_slices(&s(&["101ms"]), &fair).is_err());
        let e = check_slices(&s(&["1ms"]), &[PolicyKind::Fifo]).unwrap_err();
        assert_eq!(e.key, "axes.slices");
    }

    #[test]
    fn knob_values_become_text_and_duplicates_are_refused() {
        let spec: crate::Spec = toml::from_str(
            "[[axes.knobs]]\nname = \"kernel.sched_rt_runtime_us\"\nvalues = [950000, -1]\n\
             [[axes.knobs]]\nname = \"/sys/kernel/mm/transparent_hugepage/enabled\"\nvalues = [\"never\", \"always\"]\n",
        )
        .unwrap();
        let k = check_knobs(&spec.axes.knobs, &[]).unwrap();
        assert_eq!(k[0].values, ["950000", "-1"]);
        assert_eq!(k[1].values, ["never", "always"]);
        let twice = vec![spec.axes.knobs[0].clone(), spec.axes.knobs[0].clone()];
        let e = check_knobs(&twice, &[]).unwrap_err();
        assert_eq!(e.key, "axes.knobs[1].name");
        let outside = vec![KnobAxis {
            name: "/etc/hosts".into(),
            values: vec![KnobValue::Int(1)],
        }];
        assert_eq!(
            check_knobs(&outside, &[]).unwrap_err().key,
            "axes.knobs[0].name"
        );
    }

    #[test]
    fn denied_knobs_need_to_be_allowed_by_path_or_name() {
        let core = vec![KnobAxis {
            name: "kernel.core_pattern".into(),
            values: vec![KnobValue::Text("|/tmp/evil %p".into())],
        }];
        let e = check_knobs(&core, &[]).unwrap_err();
        assert_eq!(e.key, "axes.knobs[0].name");
        assert!(
            e.message.contains("deny list")
                && e.message.contains("run that program as root")
                && e.message
                    .contains("--allow-knob /proc/sys/kernel/core_pattern"),
            "{e}"
        );
        let allow = check_allow_knobs(&["kernel.core_pattern".into()]).unwrap();
        assert_eq!(allow, ["/proc/sys/kernel/core_pattern"]);
        // Allowed, the file takes a pattern; a pipe to a program no flag allows.
        let e = check_knobs(&core, &allow).unwrap_err();
        assert_eq!(e.key, "axes.knobs[0].values[0]");
        assert!(e.message.contains("no flag allows it"), "{e}");
        let file = vec![KnobAxis {
            name: "kernel.core_pattern".into(),
            values: vec![KnobValue::Text("core.%p".into())],
        }];
        assert!(check_knobs(&file, &allow).is_ok());
        let agent = vec![KnobAxis {
            name: "/sys/fs/cgroup/cpu/release_agent".into(),
            values: vec![KnobValue::Text("/bin/true".into())],
        }];
        let allow_agent = ["/sys/fs/cgroup/cpu/release_agent".to_string()];
        let e = check_knobs(&agent, &allow_agent).unwrap_err();
        assert!(e.message.contains("no flag allows it"), "{e}");
        assert!(check_allow_knobs(&["/etc/passwd".into()]).is_err());
        let e = check_allow_knobs(&["a".into(), "/sys/power/*".into()]).unwrap_err();
        assert_eq!(e.key, "settings.allow_knobs[1]");
    }

    #[test]
    fn a_knob_flag_is_name_equals_values() {
        let k = KnobAxis::from_flag("kernel.sched_rt_runtime_us=950000,-1").unwrap();
        assert_eq!(k.name, "kernel.sched_rt_runtime_us");
        assert_eq!(k.values, [KnobValue::Int(950_000), KnobValue::Int(-1)]);
        let t = KnobAxis::from_flag("/sys/kernel/mm/transparent_hugepage/enabled=never,always");
        assert_eq!(
            t.unwrap().values,
            [
                KnobValue::Text("never".into()),
                KnobValue::Text("always".into())
            ]
        );
        let e = KnobAxis::from_flag("kernel.sched_rr_timeslice_ms").unwrap_err();
        assert!(
            matches!(&e, crate::SpecError::Flag { flag: "--knob", .. }),
            "{e}"
        );
        assert!(e.to_string().contains("NAME=V1,V2"), "{e}");
    }

    #[test]
    fn scx_commands_take_their_ops_name_from_the_program() {
        let spec: crate::Spec = toml::from_str(
            "[axes]\nscx = [\"none\", \"/usr/bin/scx_lavd --performance\", { command = \"scx_rusty\", ops = \"rusty_x\" }]\n",
        )
        .unwrap();
        let c = check_scx(&spec.axes.scx).unwrap();
        assert_eq!(c[0], None);
        let lavd = c[1].as_ref().unwrap();
        assert_eq!(lavd.argv, ["/usr/bin/scx_lavd", "--performance"]);
        assert_eq!(lavd.ops, "lavd");
        assert_eq!(c[2].as_ref().unwrap().ops, "rusty_x");
        assert!(check_scx(&[ScxSpec::Command("  ".into())]).is_err());
    }
}
