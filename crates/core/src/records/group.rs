//! What a trial records about each task group (its CPU cgroup): the settings in force and the
//! figures the kernel keeps for the group (`cpu.stat`, v1 `cpuacct.usage`).

use serde::{Deserialize, Serialize};

/// One task group of a trial. Figures are None where the hierarchy does not report them (no
/// throttling figures without the cpu controller) or the trial did not get that far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRecord {
    /// Index of the group in its cell (its tasks follow the earlier groups' tasks).
    pub index: u32,
    /// Its name (its cgroup's directory).
    pub name: String,
    /// Its measured tasks.
    pub tasks: u32,
    /// `cpu.weight` (v1: written as `cpu.shares` = round(weight × 1024 / 100)); None: default.
    pub weight: Option<u32>,
    /// Bandwidth quota, µs per `period_us` (None: no limit set, or `max`).
    pub quota_us: Option<u64>,
    /// Bandwidth period, µs (None: no limit set).
    pub period_us: Option<u64>,
    /// `cpu.idle` as set (None: default).
    pub idle: Option<bool>,
    /// `cpuset.cpus` as set (None: all).
    pub cpus: Option<String>,
    /// A partition: its CPUs had a root domain of their own.
    pub partition: bool,
    /// v1 RT group scheduling: the group's `cpu.rt_runtime_us` (None: not set).
    pub rt_runtime_us: Option<u64>,
    /// CPU time of the group's tasks over the measured period (release to the end of the
    /// last measured task), ns.
    pub usage_ns: Option<u64>,
    /// Bandwidth periods with runnable tasks in that period (`nr_periods`).
    pub nr_periods: Option<u64>,
    /// Periods in which the group was throttled (`nr_throttled`).
    pub nr_throttled: Option<u64>,
    /// Time the group's tasks were throttled, ns (v2 `throttled_usec`, v1 `throttled_time`).
    pub throttled_ns: Option<u64>,
    /// Length of the contended window: from release to the end of the first measured task,
    /// while every group's tasks still ran, ns.
    pub contended_ns: Option<u64>,
    /// CPU time of the group's tasks in the contended window, ns: the group's share of the CPU
    /// while all groups compete is this over the sum of all groups' values.
    pub usage_contended_ns: Option<u64>,
}
