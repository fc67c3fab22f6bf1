//! The keys of the communicating workloads (messaging, request, pipe) in a workloads entry:
//! their values checked and typed, their sizes (`loops`, `duration`), and each key refused
//! where its kind does not use it, so that no parameter is silently ignored.

use super::durations::duration_ns;
use super::{Problem, WorkloadSpec};
use schedlab_core::records::WorkSize;
use schedlab_core::workload::{CpuKernel, MessagingParams, RequestParams, Workload, WorkloadKind};

/// Round trips of a pipe workload when `loops` is not given.
pub const DEFAULT_PIPE_LOOPS: u64 = 100_000;
/// Loops of a messaging workload when `loops` is not given (hackbench's default).
pub const DEFAULT_MESSAGING_LOOPS: u64 = 100;
/// How long a request workload runs when `duration` is not given, ns.
pub const DEFAULT_REQUEST_NS: u64 = 1_000_000_000;
/// CPU work per request when `run` is not given, ns.
pub const DEFAULT_REQUEST_RUN_NS: u64 = 1_000_000;

/// The keys only some kinds use, with the kinds that do.
fn misplaced(w: &WorkloadSpec) -> Option<(&'static str, &'static str)> {
    use WorkloadKind as K;
    let matrix = w.cpu_kernel == CpuKernel::Matrix;
    let keys: [(&str, bool, bool, &str); 11] = [
        (
            "groups",
            w.groups.is_some(),
            w.kind == K::Messaging,
            "messaging",
        ),
        ("fds", w.fds.is_some(), w.kind == K::Messaging, "messaging"),
        (
            "data_size",
            w.data_size.is_some(),
            w.kind == K::Messaging,
            "messaging",
        ),
        ("ipc", w.ipc.is_some(), w.kind == K::Messaging, "messaging"),
        (
            "message_latency",
            w.message_latency.is_some(),
            w.kind == K::Messaging,
            "messaging",
        ),
        (
            "loops",
            w.loops.is_some(),
            matches!(w.kind, K::Messaging | K::Pipe),
            "messaging and pipe",
        ),
        (
            "message_threads",
            w.message_threads.is_some(),
            w.kind == K::Request,
            "request",
        ),
        (
            "workers",
            w.workers.is_some(),
            w.kind == K::Request,
            "request",
        ),
        ("rps", w.rps.is_some(), w.kind == K::Request, "request"),
        ("lock", w.lock.is_some(), w.kind == K::Request, "request"),
        (
            "footprint",
            w.footprint.is_some(),
            w.kind == K::Request || matrix,
            "request and the matrix cpu_kernel",
        ),
    ];
    keys.into_iter()
        .find(|&(_, given, used, _)| given && !used)
        .map(|(key, _, _, kinds)| (key, kinds))
}

/// Sets the parameters of `out` (whose kind is `w.kind`) from entry `w` at key path `key`.
pub(crate) fn parameters(key: &str, w: &WorkloadSpec, out: &mut Workload) -> Result<(), Problem> {
    if let Some((k, kinds)) = misplaced(w) {
        return Err(Problem::new(
            format!("{key}.{k}"),
            format!("applies to {kinds} workloads, not to {}", w.kind.name()),
        ));
    }
    if let Some(f) = w.footprint {
        out.footprint_kib = f;
    }
    match w.kind {
        WorkloadKind::Messaging => {
            let d = MessagingParams::default();
            out.messaging = Some(MessagingParams {
                groups: w.groups.unwrap_or(d.groups),
                fds: w.fds.unwrap_or(d.fds),
                data_size: w.data_size.unwrap_or(d.data_size),
                ipc: w.ipc.unwrap_or(d.ipc),
                latency: w.message_latency.unwrap_or(false),
            });
        }
        WorkloadKind::Request => {
            if !matches!(w.cpu_kernel, CpuKernel::Pi | CpuKernel::Matrix) {
                return Err(Problem::new(
                    format!("{key}.cpu_kernel"),
                    "a request's work is the matrix kernel; set its size with run and footprint",
                )
                .accepting("\"matrix\" (or leave cpu_kernel out)"));
            }
            out.cpu_kernel = CpuKernel::Matrix;
            if w.run.is_none() {
                out.run_ns = DEFAULT_REQUEST_RUN_NS;
            }
            let d = RequestParams::default();
            out.request = Some(RequestParams {
                message_threads: w.message_threads.unwrap_or(d.message_threads),
                workers: w.workers.unwrap_or(d.workers),
                rps: w.rps.unwrap_or(d.rps),
                lock: w.lock.unwrap_or(d.lock),
            });
        }
        _ => return Ok(()),
    }
    out.check_comm()
        .map_err(|(k, message)| Problem::new(format!("{key}.{k}"), message))
}

/// The size of a communicating workload: `loops` (messaging, pipe) or `duration` (request);
/// None for the other kinds. `work`, `iterations` and `split` are refused for them.
pub(crate) fn size(key: &str, w: &WorkloadSpec) -> Result<Option<WorkSize>, Problem> {
    let (by, default) = match w.kind {
        WorkloadKind::Messaging => ("loops", DEFAULT_MESSAGING_LOOPS),
        WorkloadKind::Pipe => ("loops", DEFAULT_PIPE_LOOPS),
        WorkloadKind::Request => ("duration", DEFAULT_REQUEST_NS),
        _ => return Ok(None),
    };
    let refuse = |k: &str| {
        Problem::new(
            format!("{key}.{k}"),
            format!("a {} workload is sized by {by}, not by {k}", w.kind.name()),
        )
    };
    if w.work.is_some() {
        return Err(refuse("work"));
    }
    if w.iterations.is_some() {
        return Err(refuse("iterations"));
    }
    if w.split {
        return Err(refuse("split"));
    }
    if w.kind == WorkloadKind::Request {
        let ns = match &w.duration {
            Some(d) => duration_ns(&format!("{key}.duration"), d)?,
            None => default,
        };
        if ns == 0 {
            return Err(Problem::new(format!("{key}.duration"), "must be above 0")
                .accepting("a duration above 0 such as \"10s\""));
        }
        return Ok(Some(WorkSize::WorkNs(ns)));
    }
    match w.loops.unwrap_or(default) {
        0 => Err(Problem::new(format!("{key}.loops"), "must be at least 1")
            .accepting("a whole number of 1 or more")),
        n => Ok(Some(WorkSize::Iterations(n))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: WorkloadKind) -> WorkloadSpec {
        WorkloadSpec {
            kind,
            ..WorkloadSpec::default()
        }
    }

    #[test]
    fn keys_of_another_kind_are_refused_by_name() {
        let mut w = entry(WorkloadKind::Cpu);
        w.groups = Some(2);
        let mut out = Workload::default();
        let e = parameters("axes.workloads[0]", &w, &mut out).unwrap_err();
        assert_eq!(e.key, "axes.workloads[0].groups");
        let mut w = entry(WorkloadKind::Pipe);
        w.workers = Some(2);
        assert_eq!(parameters("k", &w, &mut out).unwrap_err().key, "k.workers");
    }

    #[test]
    fn sizes_are_loops_or_a_duration_and_work_is_refused() {
        assert_eq!(
            size("k", &entry(WorkloadKind::Pipe)).unwrap(),
            Some(WorkSize::Iterations(DEFAULT_PIPE_LOOPS))
        );
        let mut w = entry(WorkloadKind::Request);
        w.duration = Some("2s".into());
        assert_eq!(
            size("k", &w).unwrap(),
            Some(WorkSize::WorkNs(2_000_000_000))
        );
        w.work = Some("50ms".into());
        assert_eq!(size("k", &w).unwrap_err().key, "k.work");
        let mut w = entry(WorkloadKind::Messaging);
        w.loops = Some(0);
        assert_eq!(size("k", &w).unwrap_err().key, "k.loops");
        assert_eq!(size("k", &entry(WorkloadKind::Cpu)).unwrap(), None);
    }

    #[test]
    fn zero_groups_and_a_stamp_in_a_tiny_message_name_their_key() {
        let mut w = entry(WorkloadKind::Messaging);
        w.groups = Some(0);
        let mut out = Workload {
            kind: WorkloadKind::Messaging,
            ..Workload::default()
        };
        assert_eq!(parameters("k", &w, &mut out).unwrap_err().key, "k.groups");
        w.groups = Some(1);
        w.message_latency = Some(true);
        w.data_size = Some(4);
        assert_eq!(
            parameters("k", &w, &mut out).unwrap_err().key,
            "k.data_size"
        );
        let mut r = entry(WorkloadKind::Request);
        let mut out = Workload {
            kind: WorkloadKind::Request,
            ..Workload::default()
        };
        parameters("k", &r, &mut out).unwrap();
        assert_eq!(out.cpu_kernel, CpuKernel::Matrix);
        assert_eq!(out.run_ns, DEFAULT_REQUEST_RUN_NS);
        r.cpu_kernel = CpuKernel::Spin;
        assert_eq!(
            parameters("k", &r, &mut out).unwrap_err().key,
            "k.cpu_kernel"
        );
    }
}
