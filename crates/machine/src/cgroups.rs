//! The CPU cgroup controllers as the environment record and `schedlab policies` show them:
//! which hierarchy (v1 or v2) holds cpu, cpuacct and cpuset, and what each offers here.

/// One line per controller (and the v2 mount), or why they could not be detected.
pub fn lines() -> Vec<String> {
    match schedlab_cgroup::Capabilities::detect(&schedlab_cgroup::RealFs) {
        Ok(c) => c.lines(),
        Err(e) => vec![format!("cgroups: cannot detect the hierarchies: {e}")],
    }
}
