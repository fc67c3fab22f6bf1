//! The CPU cgroup flags of `run` and `plan`: task groups and their settings, each an axis
//! (`,` separates cells, `:` the groups of one cell, `-` keeps a group's kernel default).

use clap::Args;
use schedlab_spec::{Axes, CgroupValue, Groups, SpecError};

/// Task groups (one CPU cgroup each) and their settings.
#[derive(Debug, Args, Default)]
pub struct CgroupArgs {
    /// Task groups, NAME=TASKS joined with `:`; `,` separates layouts (cells), e.g.
    /// a=1:b=1,a=1:b=4. Without it a cell with a cgroup flag has one group of all its tasks.
    #[arg(long, value_name = "LAYOUTS")]
    pub groups: Option<String>,
    /// CPU weight per group, 1..10000 (v2 cpu.weight; v1 cpu.shares = round(w × 1024 / 100)),
    /// e.g. 100:300,100:900.
    #[arg(long, value_name = "WEIGHTS")]
    pub cpu_weight: Option<String>,
    /// Bandwidth limit per group, QUOTA/PERIOD or max (v2 cpu.max; v1 cpu.cfs_quota_us and
    /// cpu.cfs_period_us), e.g. 50ms/100ms,200ms/100ms,max.
    #[arg(long, value_name = "LIMITS")]
    pub cpu_max: Option<String>,
    /// Idle groups, 0 or 1 per group (cpu.idle), e.g. 0,1.
    #[arg(long, value_name = "0|1")]
    pub cpu_idle: Option<String>,
    /// CPUs per group (cpuset.cpus), items of one list joined with `+`, e.g. 1 or 0:1 or 0+2-3.
    #[arg(long, value_name = "CPUS")]
    pub cpuset: Option<String>,
    /// Give each group with CPUs (--cpuset, else --cpus) a root domain of its own (a cpuset
    /// partition), so that pinned DEADLINE tasks are admitted.
    #[arg(long)]
    pub partition: bool,
}

/// The cells of a value flag, one spec value each.
fn cells(text: &Option<String>) -> Vec<CgroupValue> {
    text.iter()
        .flat_map(|t| t.split(','))
        .map(|c| CgroupValue::Text(c.trim().to_string()))
        .collect()
}

impl CgroupArgs {
    /// Whether any cgroup flag was given.
    pub fn any(&self) -> bool {
        self.groups.is_some()
            || self.cpu_weight.is_some()
            || self.cpu_max.is_some()
            || self.cpu_idle.is_some()
            || self.cpuset.is_some()
            || self.partition
    }

    /// The flags over the spec's axes (each flag given replaces its axis).
    pub fn apply(&self, a: &mut Axes) -> Result<(), SpecError> {
        if let Some(g) = &self.groups {
            // The layout's error names the flag and the layout itself (once).
            let layouts = g
                .split(',')
                .map(Groups::parse_layout)
                .collect::<Result<Vec<_>, _>>()?;
            a.groups = Some(Groups::Many(layouts));
        }
        let set = |axis: &mut Vec<CgroupValue>, flag: &Option<String>| {
            if flag.is_some() {
                *axis = cells(flag);
            }
        };
        set(&mut a.cpu_weight, &self.cpu_weight);
        set(&mut a.cpu_max, &self.cpu_max);
        set(&mut a.cpu_idle, &self.cpu_idle);
        set(&mut a.cpuset, &self.cpuset);
        if self.partition {
            a.partition = vec![true];
        }
        Ok(())
    }
}
