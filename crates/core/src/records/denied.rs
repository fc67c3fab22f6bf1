//! The built-in deny list: kernel setting files schedlab refuses as knobs unless the run names
//! them with `--allow-knob PATH` (`settings.allow_knobs`), each with the reason shown. It is
//! checked on the path as given and on the real file it leads to, and again before a restore
//! journal is obeyed. It also fixes what a value schedlab writes or restores may look like.
//!
//! What is on it, and why: files whose write makes the kernel run a program as root (core
//! dumps piped to a program, the module loader, power-off and device-event helpers,
//! binfmt_misc interpreters), loads code or policy (firmware, live patches, configfs ACPI
//! tables, security policy), stops or restarts the machine (panic switches, SysRq, /sys/power,
//! fault injection and crash triggers), takes hardware away from it (device remove, unbind,
//! reset, eject, memory offlining), can brick it (firmware variables), or cannot be undone
//! until a reboot (one-way switches such as modules_disabled), so a restore would fail.
//! The list is not exhaustive: knobs need root, and it stops mistakes and planted specs, not
//! root itself.
//!
//! Files whose write makes the kernel run a program as root (the module loader, power-off and
//! device-event helpers, binfmt_misc, a cgroup's `release_agent` and the `notify_on_release`
//! that calls it) are refused whatever `--allow-knob` says ([`runs_program`]), and so is a
//! core_pattern that pipes dumps to a program ([`program_value`]): a spec, a queued run or a
//! planted journal must never be a way to have root run a program.

/// Denied files as path patterns, with the reason. A `*` matches within one component, a
/// `**` component any number of components.
const RULES: &[(&str, &str)] = &[
    ("/proc/sys/kernel/core_pattern", "a value starting with | makes the kernel run that program as root at every crash"),
    ("/proc/sys/kernel/core_pipe_limit", "bounds the crash-dump programs core_pattern pipes to, and makes crashing processes wait for them"),
    ("/proc/sys/kernel/modprobe", "the kernel runs this program as root to load modules on demand"),
    ("/proc/sys/kernel/poweroff_cmd", "the kernel runs this program as root to power the machine off"),
    ("/proc/sys/kernel/hotplug", "the kernel runs this program as root at every device event (the uevent helper)"),
    ("/sys/kernel/uevent_helper", "the kernel runs this program as root at every device event"),
    ("/proc/sys/kernel/usermodehelper/**", "sets the capabilities of the programs the kernel runs as root"),
    ("/sys/**/release_agent", "the kernel runs this program as root when a cgroup of the hierarchy empties (cgroup v1)"),
    ("/sys/**/notify_on_release", "makes the kernel run the hierarchy's release_agent as root when the cgroup empties (cgroup v1)"),
    ("/proc/sys/fs/binfmt_misc/**", "registers interpreters the kernel runs for matching executables"),
    ("/sys/module/firmware_class/parameters/path", "the directory the kernel loads device firmware (code run by devices) from"),
    ("/sys/class/firmware/**", "feeds firmware (code run by devices) to the kernel's fallback loader"),
    ("/sys/devices/virtual/firmware/**", "feeds firmware (code run by devices) to the kernel's fallback loader"),
    ("/sys/kernel/livepatch/**", "enables or disables live patches of the kernel's code"),
    ("/sys/kernel/config/**", "configfs creates kernel objects, among them ACPI tables whose code the kernel runs"),
    ("/sys/kernel/security/**", "securityfs loads security policy (AppArmor, IMA) or locks the kernel down until reboot"),
    ("/sys/fs/selinux/**", "selinuxfs loads the SELinux policy or switches its enforcement"),
    ("/proc/sys/kernel/kexec*", "controls loading another kernel with kexec, and disabling it is one way until reboot"),
    ("/sys/kernel/kexec*", "changes the memory reserved for the crash kernel (kexec)"),
    ("/proc/sys/kernel/modules_disabled", "one way: once set, no module loads until reboot, so it cannot be restored"),
    ("/sys/module/module/parameters/sig_enforce", "one way: module signature enforcement cannot be switched off again"),
    ("/proc/sys/kernel/unprivileged_bpf_disabled", "one way at 1: it cannot be restored until reboot"),
    ("/proc/sys/kernel/yama/ptrace_scope", "one way at 3: it cannot be restored until reboot"),
    ("/proc/sys/kernel/sysrq", "enables SysRq functions that reboot, crash or kill every process from the keyboard or /proc/sysrq-trigger"),
    ("/proc/sys/kernel/*panic*", "makes the kernel panic (stop the machine) or reboot on events such as a stalled task, which long real-time trials cause"),
    ("/proc/sys/vm/panic_on_oom", "makes the kernel panic (stop the machine) when memory runs out"),
    ("/sys/power/**", "suspends, hibernates or powers off the machine"),
    ("/sys/firmware/**", "firmware interfaces (EFI variables, ACPI): a bad write can leave the machine unable to boot"),
    ("/sys/kernel/debug/fail*/**", "fault injection makes kernel calls fail on purpose"),
    ("/sys/kernel/debug/provoke-crash/**", "crashes the kernel on purpose (lkdtm)"),
    ("/sys/devices/system/memory/**", "takes memory away from the running kernel (memory hot-unplug)"),
    ("/sys/**/remove", "removes a device from the machine (a disk or network card vanishes)"),
    ("/sys/**/delete", "removes a device from the machine (a disk vanishes)"),
    ("/sys/**/eject", "ejects a device from the machine"),
    ("/sys/**/reset", "resets a device, losing its state"),
    ("/sys/**/bind", "attaches a driver to a device by hand"),
    ("/sys/**/unbind", "detaches a device from its driver (a disk or network card stops working)"),
    ("/sys/**/new_id", "makes a driver take devices it was not written for"),
    ("/sys/**/remove_id", "changes which devices a driver takes"),
    ("/sys/**/drivers_probe", "attaches drivers to devices by hand"),
    ("/sys/**/driver_override", "changes which driver a device binds to"),
];

/// Files whose write makes the kernel run a program as root: refused even with `--allow-knob`
/// (patterns as in [`RULES`], where each is also listed with its reason).
const RUNS_PROGRAM: &[&str] = &[
    "/proc/sys/kernel/modprobe",
    "/proc/sys/kernel/poweroff_cmd",
    "/proc/sys/kernel/hotplug",
    "/sys/kernel/uevent_helper",
    "/proc/sys/kernel/usermodehelper/**",
    "/proc/sys/fs/binfmt_misc/**",
    "/sys/**/release_agent",
    "/sys/**/notify_on_release",
];

/// The setting whose values starting with `|` name a program the kernel runs as root.
const CORE_PATTERN: &str = "/proc/sys/kernel/core_pattern";

/// Longest value a knob may be given or restored to, bytes.
pub const MAX_KNOB_VALUE_BYTES: usize = 4096;

/// Why writing the file at `path` is refused without `--allow-knob`, if it is on the list.
pub fn denied(path: &str) -> Option<&'static str> {
    let parts = components(path)?;
    RULES.iter().find_map(|(pattern, reason)| {
        let pat = components(pattern).unwrap_or_default();
        matches_parts(&pat, &parts).then_some(*reason)
    })
}

/// Why writing the file at `path` is refused even with `--allow-knob`: the kernel would run a
/// program as root. None for any other file.
pub fn runs_program(path: &str) -> Option<&'static str> {
    let parts = components(path)?;
    if !RUNS_PROGRAM
        .iter()
        .any(|pattern| matches_parts(&components(pattern).unwrap_or_default(), &parts))
    {
        return None;
    }
    denied(path)
}

/// Why writing `value` to the file at `path` is refused whatever the flags: a core pattern
/// starting with `|` makes the kernel run that program as root at every crash.
pub fn program_value(path: &str, value: &str) -> Option<&'static str> {
    (path == CORE_PATTERN && value.trim_start().starts_with('|')).then_some(
        "a core_pattern starting with | makes the kernel run that program as root at every crash",
    )
}

/// The components of an absolute path; None for a relative one.
fn components(path: &str) -> Option<Vec<&str>> {
    path.starts_with('/')
        .then(|| path.split('/').filter(|p| !p.is_empty()).collect())
}

/// Whether `value` is what schedlab writes to a knob: one line of printable text (tabs
/// allowed), at most [`MAX_KNOB_VALUE_BYTES`]; else why not.
pub fn check_knob_value(value: &str) -> Result<(), crate::CoreError> {
    if value.len() > MAX_KNOB_VALUE_BYTES {
        return Err(crate::CoreError::KnobValueTooLong {
            bytes: value.len(),
            max: MAX_KNOB_VALUE_BYTES,
        });
    }
    if let Some(c) = value.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(crate::CoreError::KnobValueControl { found: c });
    }
    Ok(())
}

fn matches_parts(pat: &[&str], path: &[&str]) -> bool {
    match pat.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|k| matches_parts(rest, &path[k..])),
        Some((p, rest)) => path
            .split_first()
            .is_some_and(|(c, tail)| matches_component(p, c) && matches_parts(rest, tail)),
    }
}

/// `*` in `pat` matches any run of characters of `name`.
fn matches_component(pat: &str, name: &str) -> bool {
    match pat.split_once('*') {
        None => pat == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len())
                    .any(|i| name.is_char_boundary(i) && matches_component(tail, &name[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_running_and_machine_stopping_files_are_denied_with_a_reason() {
        for path in [
            "/proc/sys/kernel/core_pattern",
            "/proc/sys/kernel/modprobe",
            "/proc/sys/kernel/sysrq",
            "/proc/sys/kernel/panic_on_oops",
            "/proc/sys/kernel/hung_task_panic",
            "/proc/sys/kernel/usermodehelper/bset",
            "/proc/sys/kernel/kexec_load_disabled",
            "/proc/sys/fs/binfmt_misc/register",
            "/sys/power/state",
            "/sys/kernel/uevent_helper",
            "/sys/module/firmware_class/parameters/path",
            "/sys/class/firmware/timeout",
            "/sys/bus/pci/drivers/virtio-pci/unbind",
            "/sys/devices/pci0000:00/0000:00:02.0/remove",
            "/sys/devices/pci0000:00/0000:00:05.0/virtio2/host0/target0:0:0/0:0:0:0/delete",
            "/sys/devices/system/memory/memory3/online",
            "/sys/firmware/efi/efivars/Boot0000-8be4df61",
        ] {
            assert!(denied(path).is_some(), "{path} is not denied");
        }
        assert!(denied("/proc/sys/kernel/core_pattern")
            .unwrap()
            .contains("run that program as root"));
    }

    #[test]
    fn files_and_values_that_run_programs_are_never_allowed() {
        for path in [
            "/sys/fs/cgroup/cpu/release_agent",
            "/sys/fs/cgroup/memory/notify_on_release",
            "/sys/fs/cgroup/cpu/a/b/notify_on_release",
            "/proc/sys/kernel/modprobe",
            "/proc/sys/fs/binfmt_misc/register",
            "/sys/kernel/uevent_helper",
        ] {
            assert!(runs_program(path).is_some(), "{path}");
            assert!(denied(path).is_some(), "{path}");
        }
        for path in [
            "/proc/sys/kernel/core_pattern",
            "/sys/power/state",
            "/sys/fs/cgroup/cpu/cpu.shares",
            "/proc/sys/vm/swappiness",
        ] {
            assert_eq!(runs_program(path), None, "{path}");
        }
        let core = "/proc/sys/kernel/core_pattern";
        assert!(program_value(core, "|/tmp/x %p").is_some());
        assert!(program_value(core, "  |/tmp/x").is_some());
        assert_eq!(program_value(core, "core.%p"), None);
        assert_eq!(program_value("/proc/sys/vm/swappiness", "|1"), None);
    }

    #[test]
    fn the_settings_schedlab_studies_are_not_denied() {
        for path in [
            "/proc/sys/kernel/sched_rr_timeslice_ms",
            "/proc/sys/kernel/sched_rt_runtime_us",
            "/proc/sys/kernel/sched_autogroup_enabled",
            "/proc/sys/kernel/core_uses_pid",
            "/proc/sys/vm/swappiness",
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "/sys/devices/system/cpu/cpu1/online",
            "/sys/block/vda/queue/scheduler",
            "/sys/kernel/debug/sched/base_slice_ns",
            "kernel/core_pattern",
        ] {
            assert_eq!(denied(path), None, "{path} is denied");
        }
    }

    #[test]
    fn components_match_with_stars_and_double_stars() {
        assert!(matches_component("*panic*", "panic"));
        assert!(matches_component("*panic*", "softlockup_panic"));
        assert!(!matches_component("*panic*", "pani"));
        assert!(matches_component("kexec*", "kexec_load_limit_panic"));
        assert!(!matches_component("kexec*", "xkexec"));
        let p = |s: &'static str| s.split('/').filter(|x| !x.is_empty()).collect::<Vec<_>>();
        assert!(matches_parts(&p("/sys/**/remove"), &p("/sys/remove")));
        assert!(matches_parts(&p("/sys/**/remove"), &p("/sys/a/b/remove")));
        assert!(!matches_parts(&p("/sys/**/remove"), &p("/sys/a/remove/x")));
        assert!(matches_parts(&p("/sys/power/**"), &p("/sys/power/state")));
    }

    #[test]
    fn values_are_one_printable_line() {
        assert!(check_knob_value("60").is_ok());
        assert!(check_knob_value("4\t4\t1\t7").is_ok());
        assert!(check_knob_value("").is_ok());
        assert_eq!(
            check_knob_value("1\n0"),
            Err(crate::CoreError::KnobValueControl { found: '\n' })
        );
        assert!(matches!(
            check_knob_value(&"9".repeat(5000)),
            Err(crate::CoreError::KnobValueTooLong { bytes: 5000, .. })
        ));
    }
}
