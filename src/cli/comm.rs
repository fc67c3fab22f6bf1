//! The flags of the communicating workloads (messaging, request, pipe), applied to the
//! workloads of the kinds they belong to; a flag no workload of the experiment uses is an
//! error, not silently ignored.

use clap::Args;
use schedlab_core::workload::{Ipc, WorkloadKind};
use schedlab_spec::{Spec, SpecError, WorkloadSpec};

/// Flags of `schedlab run` for messaging (hackbench), request (schbench) and pipe.
#[derive(Debug, Args, Default)]
pub struct CommArgs {
    /// messaging: groups of senders and receivers (hackbench -g; default 10; spec key
    /// `groups` of the workload; `--groups` is the task groups' flag).
    #[arg(long, help_heading = "Communicating workloads")]
    pub message_groups: Option<u32>,
    /// messaging: senders and receivers per group (hackbench -f; default 20).
    #[arg(long, help_heading = "Communicating workloads")]
    pub fds: Option<u32>,
    /// messaging: messages each sender sends to each receiver (hackbench -l; default 100);
    /// pipe: round trips (default 100000).
    #[arg(long, help_heading = "Communicating workloads")]
    pub loops: Option<u64>,
    /// messaging: bytes per message (hackbench -s; default 100).
    #[arg(long, help_heading = "Communicating workloads")]
    pub data_size: Option<u32>,
    /// messaging: socket (socketpair, the default) or pipe.
    #[arg(long, help_heading = "Communicating workloads")]
    pub ipc: Option<Ipc>,
    /// messaging: record every message's latency (messages of 8..=4096 bytes).
    #[arg(long, help_heading = "Communicating workloads")]
    pub message_latency: bool,
    /// request: message threads (schbench -m; default 1).
    #[arg(long, help_heading = "Communicating workloads")]
    pub message_threads: Option<u32>,
    /// request: workers per message thread (schbench -t; default 2).
    #[arg(long, help_heading = "Communicating workloads")]
    pub workers: Option<u32>,
    /// request (and cpu with --cpu-kernel matrix): cache footprint of the work in KiB
    /// (schbench -F; default 256).
    #[arg(long, value_name = "KIB", help_heading = "Communicating workloads")]
    pub footprint: Option<u64>,
    /// request: requests per second over all message threads (schbench -R; default: a
    /// closed loop).
    #[arg(long, help_heading = "Communicating workloads")]
    pub rps: Option<u32>,
    /// request: no per-CPU spin lock around a request's work (schbench -L).
    #[arg(long, help_heading = "Communicating workloads")]
    pub no_lock: bool,
    /// request: how long the message threads hand out requests, e.g. 10s (default 1s);
    /// command: stop the programs this long after release.
    #[arg(long, help_heading = "Communicating workloads")]
    pub duration: Option<String>,
}

impl CommArgs {
    /// Applies the flags to the workloads of `spec` they belong to.
    pub fn apply(&self, spec: &mut Spec) -> Result<(), SpecError> {
        use WorkloadKind as K;
        let ws = &mut spec.axes.workloads;
        let messaging = [K::Messaging];
        set(
            ws,
            "--message-groups",
            self.message_groups,
            &messaging,
            |w, v| w.groups = Some(v),
        )?;
        set(ws, "--fds", self.fds, &messaging, |w, v| w.fds = Some(v))?;
        set(ws, "--data-size", self.data_size, &messaging, |w, v| {
            w.data_size = Some(v)
        })?;
        set(ws, "--ipc", self.ipc, &messaging, |w, v| w.ipc = Some(v))?;
        let latency = self.message_latency.then_some(true);
        set(ws, "--message-latency", latency, &messaging, |w, v| {
            w.message_latency = Some(v)
        })?;
        set(
            ws,
            "--loops",
            self.loops,
            &[K::Messaging, K::Pipe],
            |w, v| w.loops = Some(v),
        )?;
        let request = [K::Request];
        set(
            ws,
            "--message-threads",
            self.message_threads,
            &request,
            |w, v| w.message_threads = Some(v),
        )?;
        set(ws, "--workers", self.workers, &request, |w, v| {
            w.workers = Some(v)
        })?;
        set(ws, "--rps", self.rps, &request, |w, v| w.rps = Some(v))?;
        let no_lock = self.no_lock.then_some(false);
        set(ws, "--no-lock", no_lock, &request, |w, v| w.lock = Some(v))?;
        let footprint = |w: &WorkloadSpec| {
            w.kind == K::Request || w.cpu_kernel == schedlab_core::workload::CpuKernel::Matrix
        };
        if let Some(f) = self.footprint {
            let mut any = false;
            for w in ws.iter_mut().filter(|w| footprint(w)) {
                w.footprint = Some(f);
                any = true;
            }
            if !any {
                return Err(unused(
                    "--footprint",
                    "request workloads and the matrix cpu kernel",
                ));
            }
        }
        set(
            ws,
            "--duration",
            self.duration.clone(),
            &[K::Request, K::Command],
            |w, v| w.duration = Some(v),
        )?;
        Ok(())
    }
}

/// Sets `value` (if given) on every workload of `kinds`; an error if there is none.
fn set<T: Clone>(
    ws: &mut [WorkloadSpec],
    flag: &str,
    value: Option<T>,
    kinds: &[WorkloadKind],
    put: impl Fn(&mut WorkloadSpec, T),
) -> Result<(), SpecError> {
    let Some(v) = value else {
        return Ok(());
    };
    let mut any = false;
    for w in ws.iter_mut().filter(|w| kinds.contains(&w.kind)) {
        put(w, v.clone());
        any = true;
    }
    if any {
        return Ok(());
    }
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    Err(unused(flag, &format!("{} workloads", names.join(" and "))))
}

fn unused(flag: &str, what: &str) -> SpecError {
    SpecError::Invalid(
        schedlab_spec::Problem::new(
            flag,
            format!("applies to {what}, and the experiment has none"),
        )
        .accepting("add --workload with one of them"),
    )
}
