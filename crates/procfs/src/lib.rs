//! Small parsers for the /proc files schedlab reads, one function per file, tested on literal text.
//!
//! Hand-written rather than the `procfs` crate: `/proc/PID/sched` is not parsed by it, the
//! worker reads its own `schedstat`/`sched` into a stack buffer at the end of its measured work,
//! and the sampler re-reads the system-wide files every 100 ms: parsers that allocate nothing
//! are what is needed there.
//!
//! - [`task`]: a task's `schedstat`, `sched` and `status`.
//! - [`system`]: the system-wide counters (`/proc/stat`, `/proc/vmstat`, `/proc/loadavg`,
//!   `/proc/pressure/*`) and [`SystemReader`], which keeps those files open and re-reads them.
//! - [`procs`]: the process table (each process's CPU time, parent, kernel thread or not).
//! - [`busy`]: how busy each CPU was (`/proc/schedstat`, cgroup CPU accounting).
//! - [`machine`]: what describes the machine (`/proc/cpuinfo`, kernel configuration,
//!   preemption mode, kernel command line, CPU lists); these may allocate.
//!
//! Everything is re-exported here, so `crate::parse_schedstat` and the like resolve.

#![forbid(unsafe_code)]

pub mod busy;
pub mod machine;
pub mod procs;
pub mod system;
pub mod task;

pub use busy::{parse_cpu_stat_usage_usec, parse_schedstat_cpus, parse_usage_percpu};
pub use machine::{
    cmdline_value, format_cpu_list, parse_cpu_list, parse_cpuinfo, parse_kernel_config,
    parse_preempt_mode, sched_config, CpuInfo, CpuListError, SchedConfig, MAX_CPU,
};
pub use procs::{parse_pid_stat, PidStat, Proc, ProcTable, PF_KTHREAD, TICK_NS};
pub use system::{
    parse_loadavg, parse_per_cpu_ticks, parse_pressure, parse_stat, vmstat_values, CpuTicks,
    LoadAvg, Pressure, ProcStat, PsiLine, SystemCounters, SystemReader, SYSTEM_FILES,
};
pub use task::{parse_sched, parse_schedstat, parse_status, ProcStatus, SchedInfo, SchedStat};

#[cfg(test)]
mod system_tests;
