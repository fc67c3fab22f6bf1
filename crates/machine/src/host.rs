//! The identity of the machine a run ran on, recorded with every run: host name, machine id,
//! kernel, CPU model, and the schedlab version and commit.

use serde::{Deserialize, Serialize};

/// Who ran a run (or a trial).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostIdentity {
    /// Host name (`uname -n`), empty if unknown.
    pub hostname: String,
    /// `/etc/machine-id` (systemd's stable id of an installation), if present.
    pub machine_id: Option<String>,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// schedlab's version.
    pub version: String,
    /// The git commit schedlab was built from, if known.
    pub git_commit: Option<String>,
}

impl HostIdentity {
    /// This machine and this build.
    pub fn capture() -> HostIdentity {
        HostIdentity {
            hostname: hostname(),
            machine_id: machine_id(),
            kernel: super::kernel_release(),
            cpu_model: super::cpu_model(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: super::git_commit(),
        }
    }
}

/// This machine's host name, empty if unknown.
pub fn hostname() -> String {
    schedlab_sys::uname()
        .map(|u| u.nodename)
        .unwrap_or_default()
}

/// The machine id: `/etc/machine-id`, else D-Bus's copy; None on systems without one.
pub fn machine_id() -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_a_name_a_kernel_and_a_version() {
        let h = HostIdentity::capture();
        assert!(!h.hostname.is_empty());
        assert_eq!(h.kernel, schedlab_sys::uname().unwrap().release);
        assert_eq!(h.version, env!("CARGO_PKG_VERSION"));
        if let Ok(id) = std::fs::read_to_string("/etc/machine-id") {
            assert_eq!(h.machine_id.as_deref(), Some(id.trim()));
        }
    }
}
