//! What a run asks of the machine, checked before anything is stored: each trial's tasks
//! within the kernel's process limits, its files within the I/O directory's free space, and
//! its length within [`MAX_TRIAL_NS`] (where the work is a duration, before the run; where it
//! is a count of units, once the cell is calibrated). Each refusal is a [`SpecError`] (exit 2)
//! that names the key to change.

use super::cells::{estimate_trial_ns, units_per_task, Calibrator};
use schedlab_core::records::WorkSize;
use schedlab_core::workload::calibrate::Rate;
use schedlab_core::workload::WorkloadKind;
use schedlab_spec::plan::{Cell, Plan, SpecError, MAX_TRIAL_NS};
use schedlab_spec::Problem;

/// Checks every cell of `plan` against this machine (see the module's comment).
pub fn check_plan(plan: &Plan) -> Result<(), SpecError> {
    let limit = task_limit();
    let files = schedlab_sys::soft_rlimit(schedlab_sys::Resource::RLIMIT_NOFILE);
    for cell in &plan.cells {
        if let Some((max, source)) = limit {
            check_tasks(cell, max, source)?;
        }
        if let Some(max) = files {
            check_fds(cell, max)?;
        }
        if let Some(alone_ns) = known_alone_ns(cell) {
            check_trial_length(cell, alone_ns)?;
        }
    }
    check_free_space(plan)
}

/// The cells whose work is a count of CPU or I/O units, calibrated now (or their stored
/// calibration taken), each within [`MAX_TRIAL_NS`]: a run checks them before it stores
/// anything, so that such a mistake too leaves no run behind. Returns the speeds measured now,
/// not stored: the caller saves them once the plan is accepted.
pub fn check_calibrated(
    plan: &Plan,
    cal: &mut Calibrator,
) -> crate::error::Result<Vec<crate::cells::Measured>> {
    let mut measured = Vec::new();
    let mut rates = std::collections::HashMap::new();
    for cell in &plan.cells {
        let counted = matches!(cell.size, WorkSize::Iterations(_))
            && matches!(
                cell.workload.kind,
                WorkloadKind::Cpu | WorkloadKind::Io | WorkloadKind::Mixed
            );
        if !counted {
            continue;
        }
        let key = schedlab_core::workload::calibrate::key(&cell.workload);
        let rate = match rates.get(&key) {
            Some(&r) => r,
            None => {
                let (r, now) = cal.rate_unsaved(&cell.workload)?;
                measured.extend(now);
                rates.insert(key, r);
                r
            }
        };
        check_trial_length(cell, rate.ns_for(units_per_task(cell, rate)))?;
    }
    Ok(measured)
}

/// A trial of `cell` whose tasks each need `alone_ns` alone is planned to last at most
/// [`MAX_TRIAL_NS`]; the error names the key that sets its length.
pub fn check_trial_length(cell: &Cell, alone_ns: u64) -> Result<(), SpecError> {
    if cell.workload.kind == WorkloadKind::Command {
        // Programs: their window or a fixed deadline; their length is not estimated.
        return Ok(());
    }
    let trial_ns = estimate_trial_ns(cell, alone_ns);
    if trial_ns <= MAX_TRIAL_NS {
        return Ok(());
    }
    let key = match cell.size {
        WorkSize::Iterations(n) => format!("iterations = {n}"),
        WorkSize::WorkNs(ns) => format!("work = {}", fmt_span(ns)),
    };
    let message = format!(
        "a trial of `{}` would last about {} ({} task(s) of {} each alone); a trial may last at most {}",
        cell.label(),
        fmt_span(trial_ns),
        cell.tasks,
        fmt_span(alone_ns),
        fmt_span(MAX_TRIAL_NS),
    );
    Err(Problem::new(key, message)
        .accepting("less work or fewer iterations per task, or fewer tasks")
        .into())
}

/// A span of time for a message: "400.0 h", "12.5 s" or "3.0 ms".
fn fmt_span(ns: u64) -> String {
    match ns {
        3_600_000_000_000.. => format!("{:.1} h", ns as f64 / 3.6e12),
        1_000_000_000.. => format!("{:.1} s", ns as f64 / 1e9),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}

/// Time one task of `cell` needs alone, ns, where it is known without calibration: work given
/// as a duration, or periods of a periodic workload; None for a count of units of CPU or I/O
/// work and for programs.
fn known_alone_ns(cell: &Cell) -> Option<u64> {
    let rate = match (cell.workload.kind, cell.size) {
        (WorkloadKind::Command, _) => return None,
        (_, _) if cell.workload.nominal_rate().is_some() => cell.workload.nominal_rate()?,
        (_, WorkSize::WorkNs(_)) => 1e9,
        (_, WorkSize::Iterations(_)) => return None,
    };
    let rate = Rate {
        units_per_sec: rate,
    };
    Some(rate.ns_for(units_per_task(cell, rate)))
}

/// The most processes and threads this machine lets a trial have, and which limit that is:
/// `kernel.pid_max`, `kernel.threads-max`, or RLIMIT_NPROC (which does not bind root).
fn task_limit() -> Option<(u64, &'static str)> {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let mut limits = vec![
        (read("pid_max"), "kernel.pid_max"),
        (read("threads-max"), "kernel.threads-max"),
    ];
    if !schedlab_sys::is_root() {
        limits.push((
            schedlab_sys::soft_rlimit(schedlab_sys::Resource::RLIMIT_NPROC),
            "RLIMIT_NPROC (ulimit -u)",
        ));
    }
    limits
        .into_iter()
        .filter_map(|(v, source)| v.map(|v| (v, source)))
        .min_by_key(|&(v, _)| v)
}

/// The tasks and antagonists of a trial of `cell`, with schedlab's own three processes (main,
/// launcher, host), fit under `max`.
fn check_tasks(cell: &Cell, max: u64, source: &str) -> Result<(), SpecError> {
    let n = u64::from(cell.tasks) + u64::from(cell.antagonists);
    if n + 3 <= max {
        return Ok(());
    }
    let message = format!(
        "a trial of `{}` needs {n} processes or threads (tasks and antagonists), more than this machine allows ({max}, {source})",
        cell.label()
    );
    Err(Problem::new("axes.tasks", message)
        .accepting("fewer tasks or antagonists")
        .into())
}

/// File descriptors a trial's processes keep for schedlab's own use besides a workload's
/// channels (standard streams, the store, the launcher's socket, /proc files, the trial
/// directory): a generous margin.
pub const FD_RESERVE: u64 = 64;

/// The channels of a messaging or pipe trial of `cell`, with [`FD_RESERVE`], fit in one
/// process under RLIMIT_NOFILE (`max`): with threads, every group's channels live in one
/// process (2·groups·fds); with processes, one group's (2·fds; see `trial::links`).
fn check_fds(cell: &Cell, max: u64) -> Result<(), SpecError> {
    let threads = cell.kind == schedlab_core::records::TaskKind::Thread;
    let need = cell.workload.channel_fds(threads);
    if need == 0 || need + FD_RESERVE <= max {
        return Ok(());
    }
    let m = cell.workload.messaging.unwrap_or_default();
    let (key, given, how) = match threads {
        true => (
            "groups",
            format!("groups = {}", m.groups),
            format!(
                "2 x {} groups x {} fds, every group in one process (threads)",
                m.groups, m.fds
            ),
        ),
        false => (
            "fds",
            format!("fds = {}", m.fds),
            format!("2 x {} fds of one group in each process", m.fds),
        ),
    };
    let message = format!(
        "with {given}, a trial of `{}` needs {need} file descriptors for its channels ({how}) plus {FD_RESERVE} for schedlab, more than RLIMIT_NOFILE allows ({max})",
        cell.label()
    );
    Err(SpecError::Invalid(Problem::new(key, message).accepting(
        "fewer groups or fds, processes instead of threads, or a higher limit with `ulimit -n`",
    )))
}

/// Bytes a trial of `cell` writes in the I/O directory where that is known before the run: its
/// input file, and what its tasks write when their size is a count. None: it writes no file.
fn trial_bytes(cell: &Cell) -> Option<(u64, u64)> {
    if !super::one::needs_trial_dir(cell) {
        return None;
    }
    let written = match cell.size {
        WorkSize::Iterations(_) => {
            let units = units_per_task(cell, Rate { units_per_sec: 1.0 });
            let per_task = cell.workload.bytes_written(units).unwrap_or(0);
            per_task.saturating_mul(u64::from(cell.tasks))
        }
        WorkSize::WorkNs(_) => 0,
    };
    Some((cell.workload.io_input_bytes.max(1), written))
}

/// What a run needs of this machine before its first trial, checked alike by `run` and by a
/// worker (for each queued run it meets): the plan fits the machine ([`check_plan`], the I/O
/// directory existing where trials need one among it), trial directories a dead schedlab
/// left in the I/O directory are removed, and a trace, if asked for, can be recorded here.
pub fn prepare_machine(plan: &Plan) -> crate::error::Result<()> {
    check_plan(plan)?;
    super::one::remove_stale_trial_dirs(&plan.settings.io_dir);
    if plan.settings.trace {
        super::trace::TraceSession::available()
            .map_err(crate::error::RunError::TraceUnavailable)?;
    }
    Ok(())
}

/// The I/O directory exists where a trial needs one (for its files, its antagonists' files or
/// its programs' starting directory).
fn check_io_dir(plan: &Plan) -> Result<(), SpecError> {
    let io_dir = &plan.settings.io_dir;
    if !plan.cells.iter().any(super::one::needs_trial_dir) || io_dir.is_dir() {
        return Ok(());
    }
    Err(Problem::new(
        "settings.io_dir",
        format!("the I/O directory {} does not exist", io_dir.display()),
    )
    .accepting("an existing directory on a disk-backed filesystem: create it, or choose another with --io-dir")
    .into())
}

/// Every trial's files fit in the I/O directory's free space (one trial's directory exists at
/// a time).
fn check_free_space(plan: &Plan) -> Result<(), SpecError> {
    check_io_dir(plan)?;
    let io_dir = &plan.settings.io_dir;
    let Some((cell, (input, written))) = plan
        .cells
        .iter()
        .filter_map(|c| trial_bytes(c).map(|b| (c, b)))
        .max_by_key(|(_, (input, written))| input.saturating_add(*written))
    else {
        return Ok(());
    };
    let Ok(Some(free)) = schedlab_sys::dir::free_bytes(io_dir) else {
        return Ok(());
    };
    let need = input.saturating_add(written);
    if need <= free {
        return Ok(());
    }
    let message = format!(
        "a trial of `{}` needs {} in the I/O directory {} (its input file{}), which has {} free",
        cell.label(),
        fmt_bytes(need),
        io_dir.display(),
        if written > 0 {
            format!(" and {} its tasks write", fmt_bytes(written))
        } else {
            String::new()
        },
        fmt_bytes(free),
    );
    Err(Problem::new(format!("io_bytes = {input}"), message)
        .accepting("a smaller io_bytes or fewer iterations, or another --io-dir")
        .into())
}

/// "68719476736 bytes (64.0 GiB)".
fn fmt_bytes(b: u64) -> String {
    format!("{b} bytes ({:.1} GiB)", b as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_spec::plan::build_from_text;

    fn plan(text: &str) -> Plan {
        build_from_text("test.toml", text, 1).unwrap().1
    }

    #[test]
    fn a_trial_longer_than_a_week_is_refused_with_its_key() {
        // 4 tasks of 100 h on one CPU: 400 h.
        let p = plan(
            "name = \"x\"\n[axes]\ntasks = [4]\ncpus = [\"0\"]\n[settings]\nwork = \"100h\"\n",
        );
        let e = check_plan(&p).unwrap_err();
        assert_eq!(e.key(), Some("work = 100.0 h"), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("400.0 h") && e.contains("at most 168.0 h"),
            "{e}"
        );
        // Counted work: the same check once the rate is known (1e9 units at 1000 units/s).
        let p = plan("name = \"x\"\n[axes]\ntasks = [1]\nworkloads = [{ kind = \"cpu\", iterations = 1000000000 }]\n");
        assert!(check_plan(&p).is_ok(), "unknown before calibration");
        let alone = Rate {
            units_per_sec: 1000.0,
        }
        .ns_for(1_000_000_000);
        let e = check_trial_length(&p.cells[0], alone).unwrap_err();
        assert_eq!(e.key(), Some("iterations = 1000000000"), "{e}");
        assert!(check_trial_length(&p.cells[0], MAX_TRIAL_NS / 2).is_ok());
    }

    #[test]
    fn the_longest_trial_has_a_deadline_that_fits_the_store() {
        let p = plan("name = \"x\"\n[axes]\ntasks = [1]\n");
        let cell = &p.cells[0];
        let timeout = super::super::default_timeout_ns(cell, MAX_TRIAL_NS);
        assert!(
            timeout > MAX_TRIAL_NS && timeout < i64::MAX as u64 / 1000,
            "{timeout}"
        );
        // Saturating, never wrapped: the estimate of an absurd trial is huge, not small.
        assert!(estimate_trial_ns(cell, u64::MAX) == u64::MAX);
    }

    #[test]
    fn a_missing_io_dir_is_bad_input_naming_its_key() {
        let text = "name = \"x\"\n[axes]\ntasks = [1]\nworkloads = [{ kind = \"io\" }]\n[settings]\nio_dir = \"/nonexistent/schedlab-io\"\n";
        let e = check_plan(&plan(text)).unwrap_err();
        assert_eq!(e.key(), Some("settings.io_dir"), "{e}");
        // A CPU-bound plan writes no file: no directory needed.
        let cpu = "name = \"x\"\n[axes]\ntasks = [1]\n[settings]\nio_dir = \"/nonexistent/schedlab-io\"\n";
        assert!(check_plan(&plan(cpu)).is_ok());
    }

    #[test]
    fn io_files_larger_than_the_free_space_are_refused() {
        let free = schedlab_sys::dir::free_bytes(std::path::Path::new("/var/tmp"))
            .unwrap()
            .unwrap();
        let io = (free / 2 + 1).min(64 << 30);
        let p = plan(&format!(
            "name = \"x\"\n[axes]\ntasks = [2]\nworkloads = [{{ kind = \"io\", io_bytes = {io} }}]\n"
        ));
        // Input io, and each of 2 tasks copies it once (iterations = io / block).
        let r = check_plan(&p);
        if io * 3 > free {
            let e = r.unwrap_err();
            assert_eq!(e.key(), Some(format!("io_bytes = {io}").as_str()), "{e}");
            let e = e.to_string();
            assert!(e.contains("GiB) free"), "{e}");
        } else {
            eprintln!("/var/tmp has {free} bytes free, more than 3 x 64 GiB: not refused");
            assert!(r.is_ok());
        }
    }

    #[test]
    fn more_tasks_than_the_kernel_allows_are_refused() {
        let p = plan("name = \"x\"\n[axes]\ntasks = [100]\n");
        let e = check_tasks(&p.cells[0], 50, "kernel.pid_max").unwrap_err();
        assert_eq!(e.key(), Some("axes.tasks"));
        let e = e.to_string();
        assert!(
            e.contains("needs 100 processes") && e.contains("(50, kernel.pid_max)"),
            "{e}"
        );
        assert!(check_tasks(&p.cells[0], 103, "kernel.pid_max").is_ok());
        let (max, _) = task_limit().unwrap();
        let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(max <= pid_max);
    }
}
