//! The cgroups a dead schedlab left: those its restore journal names, and any
//! `schedlab-PID-START` tree of a dead owner under the cgroup mounts. Both are removed by the
//! next schedlab command of any kind (tasks moved out first), which says what it removed.

use schedlab_cgroup::{remove_recorded as layer_recorded, remove_stale as layer_stale};
use schedlab_cgroup::{Capabilities, RealFs, StaleTree};
use std::path::PathBuf;

/// What a removal found and did, one line each.
#[derive(Debug, Default)]
pub struct Removed {
    /// One line per tree (removed, or why not).
    pub lines: Vec<String>,
    /// A tree could not be removed.
    pub failed: bool,
}

/// One line about `t`, and whether its removal failed.
fn line(t: &StaleTree) -> (String, bool) {
    let who = format!("schedlab pid {}", t.owner.pid);
    match &t.result {
        Ok(r) => {
            let moved = if r.tasks_moved.is_empty() {
                String::new()
            } else {
                format!(
                    ", after moving {} leftover task(s) out to the hierarchy's root",
                    r.tasks_moved.len()
                )
            };
            (
                format!(
                    "removed the cgroups {} that {who} left ({} directories{moved})",
                    t.path.display(),
                    r.dirs_removed
                ),
                false,
            )
        }
        Err(e) => (
            format!(
                "could not remove the cgroups {} that {who} left: {e}",
                t.path.display()
            ),
            true,
        ),
    }
}

/// The machine's cgroup hierarchies as detected (without `SCHEDLAB_CGROUP_HIDE`: a tree is
/// removed wherever it is).
fn caps() -> Option<Capabilities> {
    Capabilities::detect(&RealFs).ok()
}

/// Removes the cgroup trees named by a dead owner's journal (`paths`).
pub fn remove_recorded(paths: &[PathBuf]) -> Removed {
    let mut out = Removed::default();
    if paths.is_empty() {
        return out;
    }
    let Some(caps) = caps() else {
        out.failed = true;
        out.lines.push(
            "could not find the cgroup mounts to remove the cgroups the journal names".into(),
        );
        return out;
    };
    for r in layer_recorded(&RealFs, &caps, paths, &|o| o.alive()) {
        match r {
            Ok(t) => {
                let (l, failed) = line(&t);
                out.lines.push(l);
                out.failed |= failed;
            }
            Err(e) => out
                .lines
                .push(format!("left a cgroup the journal names: {e}")),
        }
    }
    out
}

/// Removes every `schedlab-PID-START` tree of a dead owner (root only; nothing to do is cheap:
/// the mounts are listed).
pub fn remove_stale() -> Removed {
    let mut out = Removed::default();
    if !schedlab_sys::is_root() {
        return out;
    }
    let Some(caps) = caps() else { return out };
    for t in layer_stale(&RealFs, &caps) {
        let (l, failed) = line(&t);
        out.lines.push(l);
        out.failed |= failed;
    }
    out
}
