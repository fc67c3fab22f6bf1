//! The axes a claim's treatments and scope name, the values each takes in a spec, and the
//! reading of a claim's treatments and scope against them (`claims.rs`; the relation:
//! `claim_relation.rs`).

use super::claims::Treatment;
use super::{Problem, Spec};
use serde::{Deserialize, Serialize};

/// An axis a treatment or a scope names; values compare as the store writes them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimAxis {
    /// Scheduling class: other, fifo, ...
    Policy,
    /// same or spread.
    Priorities,
    /// A workload kind (cpu, io, mixed, periodic, command) or its full label (cpu:pi).
    Workload,
    /// Task count.
    Tasks,
    /// process or thread.
    Kind,
    /// barrier or staggered.
    Start,
    /// Pinned CPUs ("0", "0-1").
    Cpus,
    /// Antagonist count.
    Antagonists,
    /// Block-device I/O scheduler.
    IoScheduler,
    /// EEVDF custom slice ("0.1ms", or "default").
    Slice,
    /// BPF scheduler command ("none" for the fair class).
    Scx,
    /// Host name (runs pooled from several machines).
    Host,
    /// Kernel release (runs pooled from several kernels).
    Kernel,
    /// A kernel setting of the knobs axis, by its name.
    Knob(String),
}

/// Axis names a table may use, and the axis each means.
const AXIS_KEYS: [(&str, ClaimAxis); 16] = [
    ("policy", ClaimAxis::Policy),
    ("policies", ClaimAxis::Policy),
    ("priorities", ClaimAxis::Priorities),
    ("workload", ClaimAxis::Workload),
    ("workloads", ClaimAxis::Workload),
    ("tasks", ClaimAxis::Tasks),
    ("kind", ClaimAxis::Kind),
    ("start", ClaimAxis::Start),
    ("cpus", ClaimAxis::Cpus),
    ("antagonists", ClaimAxis::Antagonists),
    ("io_scheduler", ClaimAxis::IoScheduler),
    ("slice", ClaimAxis::Slice),
    ("scx", ClaimAxis::Scx),
    ("host", ClaimAxis::Host),
    ("kernel", ClaimAxis::Kernel),
    ("io_schedulers", ClaimAxis::IoScheduler),
];

impl ClaimAxis {
    /// The key tables and reports use: "policy", "io_scheduler", or the knob's name.
    pub fn key(&self) -> &str {
        match self {
            ClaimAxis::Policy => "policy",
            ClaimAxis::Priorities => "priorities",
            ClaimAxis::Workload => "workload",
            ClaimAxis::Tasks => "tasks",
            ClaimAxis::Kind => "kind",
            ClaimAxis::Start => "start",
            ClaimAxis::Cpus => "cpus",
            ClaimAxis::Antagonists => "antagonists",
            ClaimAxis::IoScheduler => "io_scheduler",
            ClaimAxis::Slice => "slice",
            ClaimAxis::Scx => "scx",
            ClaimAxis::Host => "host",
            ClaimAxis::Kernel => "kernel",
            ClaimAxis::Knob(name) => name,
        }
    }

    /// Whether its values are ordered numbers (a trend can run along it).
    pub fn numeric(&self) -> bool {
        matches!(
            self,
            ClaimAxis::Tasks | ClaimAxis::Antagonists | ClaimAxis::Slice | ClaimAxis::Knob(_)
        )
    }
}

/// The values each axis takes in a spec (normalised as the store writes them).
pub(crate) struct AxisValues {
    axes: Vec<(ClaimAxis, Vec<String>)>,
}

impl AxisValues {
    /// The axes of `spec` as written (its checks aside: a stored spec passed them).
    pub(crate) fn of(spec: &Spec) -> AxisValues {
        let a = &spec.axes;
        let strings = |v: Vec<String>| v;
        let mut axes = vec![
            (
                ClaimAxis::Policy,
                strings(a.policies.iter().map(|p| p.name().to_string()).collect()),
            ),
            (
                ClaimAxis::Priorities,
                a.priorities.iter().map(|p| p.name().to_string()).collect(),
            ),
            (
                ClaimAxis::Workload,
                a.workloads
                    .iter()
                    .map(|w| w.kind.name().to_string())
                    .collect(),
            ),
            (
                ClaimAxis::Tasks,
                a.tasks.iter().map(u32::to_string).collect(),
            ),
            (
                ClaimAxis::Kind,
                a.kind.iter().map(|k| k.name().to_string()).collect(),
            ),
            (
                ClaimAxis::Start,
                a.start.iter().map(|s| s.name().to_string()).collect(),
            ),
            (
                ClaimAxis::Cpus,
                a.cpus.iter().map(|c| cpu_list(c)).collect(),
            ),
            (
                ClaimAxis::Antagonists,
                a.antagonists.iter().map(u32::to_string).collect(),
            ),
            (
                ClaimAxis::IoScheduler,
                a.io_schedulers
                    .iter()
                    .map(|s| s.trim().to_string())
                    .collect(),
            ),
            (
                ClaimAxis::Slice,
                a.slices
                    .iter()
                    .map(|s| slice(s).unwrap_or_else(|| s.clone()))
                    .collect(),
            ),
            (ClaimAxis::Scx, a.scx.iter().map(scx_command).collect()),
        ];
        for k in &a.knobs {
            axes.push((
                ClaimAxis::Knob(k.name.trim().to_string()),
                k.values.iter().map(|v| v.to_string()).collect(),
            ));
        }
        AxisValues { axes }
    }

    pub(crate) fn values(&self, axis: &ClaimAxis) -> Option<&[String]> {
        self.axes
            .iter()
            .find(|(a, _)| a == axis)
            .map(|(_, v)| v.as_slice())
    }

    /// The axis a table key names, if any.
    pub(crate) fn axis_of_key(&self, key: &str) -> Option<ClaimAxis> {
        AXIS_KEYS
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| a.clone())
            .or_else(|| {
                let knob = ClaimAxis::Knob(key.to_string());
                self.values(&knob).map(|_| knob)
            })
    }

    fn keys_accepted(&self) -> String {
        let mut keys: Vec<&str> = vec![
            "policy",
            "priorities",
            "workload",
            "tasks",
            "kind",
            "start",
            "cpus",
            "antagonists",
            "io_scheduler",
            "slice",
            "scx",
            "host",
            "kernel",
        ];
        keys.extend(self.axes.iter().filter_map(|(a, _)| match a {
            ClaimAxis::Knob(n) => Some(n.as_str()),
            _ => None,
        }));
        keys.join(", ")
    }
}

/// A CPU list as the store writes it ("0-1"), or as given when it does not parse.
fn cpu_list(text: &str) -> String {
    schedlab_procfs::parse_cpu_list(text)
        .map(|l| schedlab_procfs::format_cpu_list(&l))
        .unwrap_or_else(|_| text.trim().to_string())
}

/// A slice as the store labels it ("0.1ms"), "default", or None when it is not a duration.
fn slice(text: &str) -> Option<String> {
    let t = text.trim();
    if t == "default" {
        return Some(t.into());
    }
    super::durations::duration_ns("slice", t)
        .ok()
        .map(schedlab_core::records::slice_label)
}

fn scx_command(s: &super::ScxSpec) -> String {
    match s {
        super::ScxSpec::Command(c) | super::ScxSpec::Table { command: c, .. } => {
            c.split_whitespace().collect::<Vec<_>>().join(" ")
        }
    }
}

/// Reads one claim's parts against the axes; `key` is the claim's place (`claims[0]`).
pub(crate) struct Resolver<'a> {
    pub(crate) axes: &'a AxisValues,
    pub(crate) key: &'a str,
}

impl Resolver<'_> {
    pub(crate) fn k(&self, sub: &str) -> String {
        format!("{}.{sub}", self.key)
    }

    /// The scope: each axis with its values.
    pub(crate) fn scope(
        &self,
        scope: Option<&toml::Table>,
    ) -> Result<Vec<(ClaimAxis, Vec<String>)>, Problem> {
        let Some(table) = scope else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (name, value) in flatten(table) {
            let key = self.k(&format!("where.{name}"));
            let axis = self.axis_key(&name, &key)?;
            let values = match &value {
                toml::Value::Array(list) => list
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.value(&axis, v, &format!("{key}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?,
                one => vec![self.value(&axis, one, &key)?],
            };
            out.push((axis, values));
        }
        Ok(out)
    }

    pub(crate) fn axis_key(&self, name: &str, key: &str) -> Result<ClaimAxis, Problem> {
        self.axes.axis_of_key(name).ok_or_else(|| {
            Problem::new(key, format!("'{name}' is not an axis"))
                .accepting(self.axes.keys_accepted())
        })
    }

    /// A treatment: a bare value of one axis, or a table of axis = value.
    pub(crate) fn treatment(&self, v: &toml::Value, key: &str) -> Result<Treatment, Problem> {
        let mut values = match v {
            toml::Value::String(s) => vec![self.bare(s, key)?],
            toml::Value::Table(t) if !t.is_empty() => {
                let mut out = Vec::new();
                for (name, value) in flatten(t) {
                    let axis = self.axis_key(&name, &format!("{key}.{name}"))?;
                    let value = self.value(&axis, &value, &format!("{key}.{name}"))?;
                    out.push((axis, value));
                }
                out
            }
            _ => {
                return Err(Problem::new(key, "is not a treatment").accepting(
                    "an axis value such as \"fifo\", or a table such as { slice = \"0.1ms\" }",
                ))
            }
        };
        values.sort();
        Ok(Treatment { values })
    }

    /// A bare string: the value of exactly one axis.
    fn bare(&self, s: &str, key: &str) -> Result<(ClaimAxis, String), Problem> {
        let s = s.trim();
        let found: Vec<(ClaimAxis, String)> = self
            .axes
            .axes
            .iter()
            .filter(|(a, _)| {
                !matches!(
                    a,
                    ClaimAxis::Tasks | ClaimAxis::Antagonists | ClaimAxis::Knob(_)
                )
            })
            .filter_map(|(a, _)| self.known(a, s).map(|v| (a.clone(), v)))
            .collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Problem::new(
                key,
                format!("'{s}' is not a value of any axis of this experiment"),
            )
            .accepting(self.bare_values())),
            many => Err(Problem::new(
                key,
                format!(
                    "'{s}' is a value of several axes ({})",
                    many.iter()
                        .map(|(a, _)| a.key())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .accepting(format!(
                "a table naming the axis, e.g. {{ {} = \"{s}\" }}",
                many[0].0.key()
            ))),
        }
    }

    fn bare_values(&self) -> String {
        let mut all: Vec<String> = Vec::new();
        for (a, values) in &self.axes.axes {
            if !matches!(
                a,
                ClaimAxis::Tasks | ClaimAxis::Antagonists | ClaimAxis::Knob(_)
            ) {
                all.extend(values.iter().cloned());
            }
        }
        all.dedup();
        format!("{}, or a table such as {{ tasks = 10 }}", all.join(", "))
    }

    /// `s` normalised, if it is a value `axis` takes in the spec.
    fn known(&self, axis: &ClaimAxis, s: &str) -> Option<String> {
        let values = self.axes.values(axis)?;
        let norm = normalise(axis, s)?;
        let workload_label = *axis == ClaimAxis::Workload
            && norm
                .split_once(':')
                .is_some_and(|(kind, _)| values.iter().any(|v| v == kind));
        (values.contains(&norm) || workload_label).then_some(norm)
    }

    /// The value of `axis` written at `key`, checked against the spec's values of it.
    fn value(&self, axis: &ClaimAxis, v: &toml::Value, key: &str) -> Result<String, Problem> {
        let text = match v {
            toml::Value::String(s) => s.trim().to_string(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Float(f) => f.to_string(),
            _ => {
                return Err(
                    Problem::new(key, "is not an axis value").accepting("a string or a number")
                )
            }
        };
        if matches!(axis, ClaimAxis::Host | ClaimAxis::Kernel) {
            // Known only once runs from several machines are pooled in one report.
            return Ok(text);
        }
        self.known(axis, &text).ok_or_else(|| {
            let values = self.axes.values(axis).unwrap_or(&[]);
            Problem::new(
                key,
                format!(
                    "'{text}' is not a value of {} in this experiment",
                    axis.key()
                ),
            )
            .accepting(if values.is_empty() {
                format!("nothing: the experiment does not vary {}", axis.key())
            } else {
                values.join(", ")
            })
        })
    }
}

/// `text` as the store writes values of `axis`; None when it cannot be one.
fn normalise(axis: &ClaimAxis, text: &str) -> Option<String> {
    let t = text.trim();
    match axis {
        ClaimAxis::Slice => slice(t),
        ClaimAxis::Cpus => Some(cpu_list(t)),
        ClaimAxis::Tasks | ClaimAxis::Antagonists => t.parse::<u64>().ok().map(|n| n.to_string()),
        ClaimAxis::Scx => Some(t.split_whitespace().collect::<Vec<_>>().join(" ")),
        _ => Some(t.to_string()),
    }
}

/// A table's entries with nested tables joined into dotted keys (an unquoted knob name such
/// as `kernel.sched_rr_timeslice_ms = 10` is a nested table in TOML).
fn flatten(t: &toml::Table) -> Vec<(String, toml::Value)> {
    let mut out = Vec::new();
    for (k, v) in t {
        match v {
            toml::Value::Table(inner) => {
                out.extend(
                    flatten(inner)
                        .into_iter()
                        .map(|(ik, iv)| (format!("{k}.{ik}"), iv)),
                );
            }
            _ => out.push((k.clone(), v.clone())),
        }
    }
    out
}
