//! Temporary environment record (replaced by the full record).
use serde::Serialize;

/// The environment record of a run.
#[derive(Debug, Clone, Serialize)]
pub struct EnvRecord {
    /// Kernel release.
    pub kernel_release: String,
}

impl EnvRecord {
    /// Reads the record of this machine.
    pub fn capture() -> EnvRecord {
        EnvRecord {
            kernel_release: kernel_release(),
        }
    }
    /// The record as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The kernel release (`uname -r`).
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The CPU model name from /proc/cpuinfo.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Temporary policy report.
pub fn policy_report() -> Vec<String> {
    vec![]
}

/// Temporary rendering.
pub fn render_policy_report(_p: &[String], _e: &EnvRecord) -> String {
    String::new()
}
