//! What a plan will change on this machine, as `schedlab plan` says it: every setting with
//! its file, its value now and the values to come, and what would skip cells here. Changes
//! nothing.

use super::{absent, ext_refusal, io_device, journal, knobfile, knobpaths, plan_settings};
use schedlab_core::policy::PolicyKind;
use schedlab_spec::plan::Plan;
use std::path::Path;

/// What `plan` will change on this machine, one line each, for `schedlab plan`: every
/// setting with its file, value now and values to come, and what would skip cells here.
/// Changes nothing.
pub fn describe(plan: &Plan, io_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let io_device = match io_device(plan, io_dir) {
        Ok(d) => d,
        Err(e) => {
            out.push(format!("io_scheduler: {e}"));
            None
        }
    };
    let settings = plan_settings(plan, io_device.as_deref());
    let resolved = knobpaths::resolve(
        &settings,
        &plan.settings.allow_knobs,
        &crate::cgroups::held_files(plan),
        &knobfile::system_roots(),
    );
    for (s, r) in settings.iter().zip(resolved) {
        out.push(describe_setting(&s.name, &s.pattern, &s.values, &r));
    }
    if !settings.is_empty() && !schedlab_sys::is_root() {
        out.push(format!(
            "not root (uid {}): cells that change kernel settings will be skipped",
            schedlab_sys::euid()
        ));
    }
    let mut scx: Vec<String> = Vec::new();
    for c in plan.cells.iter().filter_map(|c| c.scx.as_ref()) {
        let line = format!("`{}` (ops {})", c.command_line(), c.ops);
        if !scx.contains(&line) {
            scx.push(line);
        }
    }
    if !scx.is_empty() {
        out.push(format!(
            "BPF schedulers started before their cells' trials and stopped after: {}",
            scx.join(", ")
        ));
    }
    if let Some(why) = ext_refusal(plan) {
        out.push(format!("refused here: {why}"));
    }
    if !settings.is_empty() || !scx.is_empty() {
        out.push(format!(
            "originals are journaled in {} before any change and restored after the run (or by the next schedlab command after a crash)",
            journal::state_dir().display()
        ));
    }
    out.extend(describe_slices(plan));
    out
}

/// What `describe` says of one setting of the plan (`r`: its files as resolved here): the
/// values now, those it is set to, and whether the deny list had to allow it.
fn describe_setting(
    name: &str,
    pattern: &str,
    values: &[String],
    r: &knobpaths::Resolved,
) -> String {
    let now: Vec<String> = r
        .files
        .iter()
        .map(|f| match f {
            Ok(real) => knobfile::read(real).map_or_else(|e| format!("unusable: {e}"), |r| r.value),
            Err(e) => format!("unusable: {e}"),
        })
        .collect();
    let now = if r.files.is_empty() {
        format!("absent here: {}", absent(name, pattern))
    } else {
        format!("now {}", now.join(", "))
    };
    let allowed = r
        .files
        .iter()
        .flatten()
        .find_map(|f| schedlab_core::records::denied(&f.display().to_string()))
        .map_or(String::new(), |why| {
            format!(" (on the deny list, allowed by --allow-knob: {why})")
        });
    format!(
        "{name} ({pattern}): {now}; set to {}{allowed}",
        values.join(", ")
    )
}

/// The EEVDF slices the plan's cells give their tasks, and whether this kernel refuses them.
fn describe_slices(plan: &Plan) -> Option<String> {
    let mut slices: Vec<u64> = plan.cells.iter().filter_map(|c| c.slice_ns).collect();
    slices.sort_unstable();
    slices.dedup();
    let first = *slices.first()?;
    let labels: Vec<String> = slices
        .iter()
        .map(|&s| schedlab_core::records::slice_label(s))
        .collect();
    let probe = schedlab_machine::probe::slice_support(PolicyKind::Other.number(), first);
    Some(format!(
        "EEVDF slices of the measured tasks (sched_attr.sched_runtime, per task; no system setting): {}{}",
        labels.join(", "),
        probe.err().map_or_else(String::new, |e| format!("; refused here: {e}"))
    ))
}
