//! sched_ext, the kernel's class for BPF schedulers: whether this kernel has it, what state
//! it is in and which scheduler is loaded, read from `/sys/kernel/sched_ext` (or any directory
//! laid out like it, for tests), with the cause and remedy when it is missing.

use schedlab_procfs::SchedConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where the kernel shows sched_ext.
pub const SYSFS_ROOT: &str = "/sys/kernel/sched_ext";

/// What `/sys/kernel/sched_ext` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedExt {
    /// `state`: `disabled`, `enabling`, `enabled`, `disabling`; `absent` when the directory is
    /// missing (no sched_ext in this kernel).
    pub state: String,
    /// `root/ops`: the loaded BPF scheduler's name, when one is loaded.
    pub ops: Option<String>,
    /// `switch_all`: every fair task runs in the BPF scheduler (not only SCHED_EXT ones).
    pub switch_all: Option<bool>,
    /// `enable_seq`: how many times a BPF scheduler was enabled since boot.
    pub enable_seq: Option<u64>,
}

impl SchedExt {
    /// Reads the tree at `root` (normally [`SYSFS_ROOT`]); never fails: what is missing is
    /// `absent` or None.
    pub fn read(root: &Path) -> SchedExt {
        let read = |rel: &str| {
            std::fs::read_to_string(root.join(rel))
                .ok()
                .map(|s| s.trim().to_string())
        };
        SchedExt {
            state: read("state").unwrap_or_else(|| "absent".into()),
            ops: read("root/ops").filter(|s| !s.is_empty()),
            switch_all: read("switch_all").map(|v| v == "1"),
            enable_seq: read("enable_seq").and_then(|v| v.parse().ok()),
        }
    }

    /// The live state of this machine.
    pub fn now() -> SchedExt {
        SchedExt::read(Path::new(SYSFS_ROOT))
    }

    /// Whether the kernel has sched_ext at all.
    pub fn present(&self) -> bool {
        self.state != "absent"
    }
}

/// Why BPF schedulers and the ext policy cannot be used here, with the remedy, or None when
/// they can. `config` is the kernel configuration when it is readable.
pub fn unavailable(ext: &SchedExt, config: Option<&SchedConfig>) -> Option<String> {
    if ext.present() {
        return None;
    }
    let config = match config.map(|c| c.sched_class_ext) {
        Some(false) => "the kernel configuration has CONFIG_SCHED_CLASS_EXT off",
        Some(true) => "the configuration says CONFIG_SCHED_CLASS_EXT=y yet the directory is missing (is sysfs mounted?)",
        None => "the kernel configuration is unreadable",
    };
    Some(format!(
        "this kernel has no sched_ext: {SYSFS_ROOT} is absent and {config}; boot a kernel built with CONFIG_SCHED_CLASS_EXT=y (Linux 6.12 or later, with BPF and BTF) and install a BPF scheduler (the scx packages, e.g. scx_lavd)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_loaded_scheduler_shows_its_state_ops_and_counters() {
        let t = tree(&[
            ("state", "enabled\n"),
            ("root/ops", "lavd_1.0.12\n"),
            ("switch_all", "1\n"),
            ("enable_seq", "3\n"),
        ]);
        let e = SchedExt::read(t.path());
        assert_eq!(e.state, "enabled");
        assert_eq!(e.ops.as_deref(), Some("lavd_1.0.12"));
        assert_eq!(e.switch_all, Some(true));
        assert_eq!(e.enable_seq, Some(3));
        assert!(e.present());
        assert_eq!(unavailable(&e, None), None);
    }

    #[test]
    fn an_idle_sched_ext_has_no_ops_and_is_available() {
        let t = tree(&[("state", "disabled\n"), ("root/ops", "\n")]);
        let e = SchedExt::read(t.path());
        assert_eq!((e.state.as_str(), e.ops.as_deref()), ("disabled", None));
        assert_eq!(unavailable(&e, None), None);
    }

    #[test]
    fn a_missing_tree_is_absent_with_cause_and_remedy() {
        let t = tree(&[]);
        let e = SchedExt::read(&t.path().join("sched_ext"));
        assert_eq!(e.state, "absent");
        let off = SchedConfig::default();
        let why = unavailable(&e, Some(&off)).unwrap();
        assert!(why.contains("CONFIG_SCHED_CLASS_EXT off"), "{why}");
        assert!(why.contains("boot a kernel built with"), "{why}");
    }

    #[test]
    fn this_kernel_matches_its_configuration() {
        // The machine's own tree: present exactly when the configuration (if readable) says so.
        let e = SchedExt::now();
        let env = super::super::EnvRecord::capture();
        if let Some(c) = &env.kernel_config {
            assert_eq!(e.present(), c.sched_class_ext, "{e:?}");
        }
        assert_eq!(env.sched_ext_state, e.state);
    }
}
