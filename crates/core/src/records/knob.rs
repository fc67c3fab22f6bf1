//! The vocabulary of kernel knobs: a setting a cell asks for, what was read back before a
//! trial, and the command that starts a BPF scheduler (sched_ext).

use serde::{Deserialize, Serialize};

/// One kernel setting a cell asks for: a file under /proc/sys or /sys and the value to write.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KnobSetting {
    /// The name as the spec gives it, e.g. `kernel.sched_rr_timeslice_ms`.
    pub name: String,
    /// The file it names, e.g. `/proc/sys/kernel/sched_rr_timeslice_ms`; one `*` component
    /// stands for every match (e.g. every CPU's cpufreq governor).
    pub path: String,
    /// The value to write, as text.
    pub value: String,
}

impl KnobSetting {
    /// `name=value`, as cell labels and the store show it.
    pub fn label(&self) -> String {
        format!("{}={}", self.name, self.value)
    }
}

/// A kernel setting as read back just before a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobReading {
    /// The knob's name as the spec gives it (`io_scheduler` for the I/O scheduler axis,
    /// `sched_ext` for the BPF scheduler).
    pub name: String,
    /// The file read.
    pub path: String,
    /// The value the cell asked for.
    pub requested: String,
    /// What the file said after writing it.
    pub read_back: String,
}

/// A command that starts a BPF scheduler, and the name the kernel shows for it once it is
/// enabled (`/sys/kernel/sched_ext/root/ops`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScxCommand {
    /// Program and arguments, e.g. `["scx_lavd", "--performance"]`.
    pub argv: Vec<String>,
    /// The ops name to wait for: the kernel's `root/ops` equals it or starts with it and `_`
    /// (schedulers may append a version).
    pub ops: String,
}

impl ScxCommand {
    /// The command line as one string.
    pub fn command_line(&self) -> String {
        self.argv.join(" ")
    }

    /// Whether the kernel's ops name `shown` is this scheduler's.
    pub fn matches_ops(&self, shown: &str) -> bool {
        shown == self.ops
            || shown
                .strip_prefix(self.ops.as_str())
                .is_some_and(|rest| rest.starts_with('_'))
    }
}

/// A slice length for labels: `0.1ms`, `3ms`, `250us`.
pub fn slice_label(slice_ns: u64) -> String {
    if slice_ns % 1_000_000 == 0 {
        format!("{}ms", slice_ns / 1_000_000)
    } else if slice_ns % 100_000 == 0 {
        format!("{}ms", slice_ns as f64 / 1e6)
    } else if slice_ns % 1_000 == 0 {
        format!("{}us", slice_ns / 1_000)
    } else {
        format!("{slice_ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_names_match_exactly_or_with_a_version_suffix() {
        let c = ScxCommand {
            argv: vec!["scx_lavd".into()],
            ops: "lavd".into(),
        };
        assert!(c.matches_ops("lavd"));
        assert!(c.matches_ops("lavd_1.0.12_g1234"));
        assert!(!c.matches_ops("lavdx"));
        assert!(!c.matches_ops("rusty"));
        assert!(!c.matches_ops(""));
    }

    #[test]
    fn slice_labels_keep_the_unit_short() {
        assert_eq!(slice_label(100_000), "0.1ms");
        assert_eq!(slice_label(3_000_000), "3ms");
        assert_eq!(slice_label(1_500_000), "1.5ms");
        assert_eq!(slice_label(250_000), "250us");
        assert_eq!(slice_label(150_000), "150us");
        assert_eq!(slice_label(1_500), "1500ns");
    }
}
