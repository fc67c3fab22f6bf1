//! One task's life: pin, apply its policy, prepare its work, wait for release, work, record.
//!
//! Everything a task records goes into its preallocated shared `Slot`; between `t_start` and
//! `t_end` it runs nothing but the workload: its setup (affinity, policy, opening its files and
//! its /proc files) comes before `t_start` in both start modes.

use schedlab_core::policy::TaskPolicy;
use schedlab_core::workload::record::{HistKind, HISTS};
use schedlab_core::workload::{Links, TaskWork, TrialDirRef, Workload, WorkloadKind};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicU8, Ordering::SeqCst};

/// Slot state: created, not yet ready.
pub const STATE_NEW: u32 = 0;
/// Slot state: attributes set, work prepared, waiting for release.
pub const STATE_READY: u32 = 1;
/// Slot state: finished its work and recorded its counters.
pub const STATE_DONE: u32 = 2;
/// Slot state: the kernel refused its scheduling attributes (errno in `errno`).
pub const STATE_REFUSED: u32 = 3;
/// Slot state: its work could not be prepared (errno in `errno`).
pub const STATE_SETUP_FAILED: u32 = 4;
/// Slot state: its program could not be started (errno of execvp or chdir in `errno`).
pub const STATE_EXEC_FAILED: u32 = 5;
/// Slot state: the host could not place it in its task group's cgroup (errno in `errno`);
/// never created.
pub const STATE_NOT_PLACED: u32 = 6;

/// Trial-wide words shared by the launcher, the host and every task.
#[repr(C)]
#[derive(Default, bytemuck::Zeroable)]
pub struct Header {
    /// Number of tasks that reached the barrier (ready, refused or failed).
    pub ready: AtomicU32,
    /// 1 once the launcher released the barrier.
    pub release: AtomicU32,
    /// Tasks that have not yet finished (or given up).
    pub remaining: AtomicU32,
    /// Tasks refused by the kernel.
    pub refused: AtomicU32,
    /// Barrier release time, CLOCK_MONOTONIC ns.
    pub t_release_ns: AtomicU64,
    /// CPU time of the host's own thread (creating and reaping tasks), ns.
    pub host_cpu_ns: AtomicU64,
    /// 1 once every measured task finished: antagonists stop, finished tasks exit.
    pub stop: AtomicU32,
    /// Tasks of the trial (measured and antagonists): the number the barrier waits for.
    pub tasks: AtomicU32,
    /// Threads the host counted in /proc when it started (1 after a fork).
    pub host_threads: AtomicU32,
    /// 1 when the spawner (staggered start) holds the first task's policy, which every task
    /// created after that inherits.
    pub spawner_policy: AtomicU32,
    /// Task groups: 1 once a measured task has claimed the contended snapshot (the first to
    /// finish reads every group's CPU usage right after its work, see [`contended_snapshot`]).
    pub contended_claimed: AtomicU32,
    /// When it read them, CLOCK_MONOTONIC ns (0: not read).
    pub contended_at_ns: AtomicU64,
    /// Each group's CPU usage then, ns + 1 (0: not read), for the first
    /// [`MAX_CONTENDED_GROUPS`] groups.
    pub contended_usage: [AtomicU64; MAX_CONTENDED_GROUPS],
}

/// Most task groups whose contended usage a trial records.
pub const MAX_CONTENDED_GROUPS: usize = 16;

/// What one task records (all times CLOCK_MONOTONIC ns, CPU times ns).
#[repr(C)]
#[derive(Default, bytemuck::Zeroable)]
pub struct Slot {
    /// One of the `STATE_*` values.
    pub state: AtomicU32,
    /// errno of a refusal or setup failure.
    pub errno: AtomicU32,
    /// Process id of the task.
    pub pid: AtomicI32,
    /// Thread id of the task.
    pub tid: AtomicI32,
    /// Release time of this task (staggered: just before its creation).
    pub t_release_ns: AtomicU64,
    /// The task's timestamp as its work begins: after the barrier's release, or (staggered)
    /// after its setup.
    pub t_start_ns: AtomicU64,
    /// Staggered: the task's first timestamp after its creation, before its setup (the end of
    /// its response); 0 with a barrier, where `t_start_ns` is both.
    pub t_first_ns: AtomicU64,
    /// The task's timestamp after its last unit of work.
    pub t_end_ns: AtomicU64,
    /// User CPU time.
    pub utime_ns: AtomicU64,
    /// System CPU time.
    pub stime_ns: AtomicU64,
    /// Voluntary context switches.
    pub nvcsw: AtomicU64,
    /// Involuntary context switches.
    pub nivcsw: AtomicU64,
    /// Time spent waiting on a run queue (schedstat).
    pub run_delay_ns: AtomicU64,
    /// Timeslices run (schedstat).
    pub timeslices: AtomicU64,
    /// CPU migrations (/proc/.../sched).
    pub migrations: AtomicU64,
    /// Units of work completed.
    pub work_units: AtomicU64,
    /// Raw wait status (processes) or 0.
    pub exit_status: AtomicI32,
    /// Policy number read back after applying.
    pub policy_read: AtomicU32,
    /// Nice read back.
    pub nice_read: AtomicI32,
    /// RT priority read back.
    pub prio_read: AtomicU32,
    /// Counters at the end of setup (just before the barrier, or before the work when staggered),
    /// subtracted so that a task's record covers its work, not its preparation:
    /// user CPU ns, system CPU ns, voluntary, involuntary switches, run-queue wait ns, timeslices, migrations.
    pub base: [AtomicU64; 7],
    /// Bytes of each serialised histogram in this task's histogram buffer, by
    /// [`HistKind::slot`] (0: none).
    pub hist_lens: [AtomicU32; HISTS],
    /// Bytes the task wrote (messaging senders) or read (receivers).
    pub bytes: AtomicU64,
    /// Periods missed (periodic) or requests dropped (request, RPS mode).
    pub misses: AtomicU64,
    /// The thread's exact CPU time (CLOCK_THREAD_CPUTIME_ID) at the end of setup, ns.
    pub base_cpu_ns: AtomicU64,
    /// The same clock right after the work's last unit, ns (0: the task did not record it,
    /// e.g. an exec'd program, whose CPU time comes from its rusage when it is reaped).
    pub cpu_ns: AtomicU64,
    /// EEVDF slice read back with sched_getattr (`sched_runtime` of a fair task), ns; 0: unread.
    pub slice_getattr_ns: AtomicU64,
    /// EEVDF slice in /proc/thread-self/sched (`se.slice`), ns; 0: unread.
    pub slice_proc_ns: AtomicU64,
}

/// What every task of a trial needs to know, prepared before any task exists.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TaskPlan {
    /// Policy and level of each task.
    pub policies: Vec<TaskPolicy>,
    /// The workload.
    pub workload: Workload,
    /// Units of work per task.
    pub units: u64,
    /// CPUs to pin to.
    pub cpus: Option<Vec<usize>>,
    /// Barrier (true) or staggered start.
    pub barrier: bool,
    /// The trial's scratch directory, if it has one (removed after the trial): the launcher
    /// opens it again (refusing a replaced one) and the tasks reach their files through that
    /// fd; command tasks start in it unless their `cwd` says otherwise.
    pub dir: Option<TrialDirRef>,
    /// CPU units per period (periodic workload).
    pub run_units: u64,
    /// Number of measured tasks; the tasks after them are antagonists.
    pub measured: usize,
    /// What antagonists run, in chunks of `antagonist_chunk` units, until the measured tasks end.
    pub antagonist_workload: Option<Workload>,
    /// Units per antagonist chunk (about 1 ms of work).
    pub antagonist_chunk: u64,
    /// Task groups: where each group's usage is read at the end of the contended window (two
    /// groups or more; empty otherwise).
    #[serde(default)]
    pub contended: Vec<schedlab_cgroup::StatFiles>,
}

impl TaskPlan {
    /// Whether task `i` is an antagonist rather than a measured task.
    pub fn is_antagonist(&self, i: usize) -> bool {
        i >= self.measured
    }
}

/// Runs task `i` in the calling thread: the whole life of one task. Never panics into the caller.
///
/// `hist` is this task's share of the trial's histogram buffer (empty unless the work records
/// histograms); `dir` is the trial directory, held open by the launcher; `links` what the task
/// reaches of a communicating workload's channels and shared words.
pub fn task_main(
    hdr: &Header,
    slot: &Slot,
    hist: &[AtomicU8],
    plan: &TaskPlan,
    dir: Option<BorrowedFd>,
    i: usize,
    links: Links,
) {
    let measured = !plan.is_antagonist(i);
    let setup = take_attributes(hdr, slot, plan, i)
        .and_then(|()| prepare_work(plan, dir, i, links, measured));
    let (mut work, exec, units) = match setup {
        Ok(prepared) => prepared,
        Err(GiveUp { state, errno }) => return give_up(hdr, slot, state, errno, measured),
    };
    let mut buf = [0u8; 4096];
    // Staggered tasks are being created while this runs, so this task does the least it can
    // before its work: its migrations count from its creation (a new task starts at zero,
    // and its setup runs after its first timestamp anyway), which spares reading `sched`
    // here. Barrier tasks read everything before they wait.
    let mut procs = ThreadProc::open(plan.barrier);
    let (base, slice_ns) = procs.counters(&mut buf);
    for (b, v) in slot.base.iter().zip(base) {
        b.store(v, SeqCst);
    }
    // The exact CPU clock, last thing before the barrier (see `cpu_ns` in `TaskRecord`).
    slot.base_cpu_ns
        .store(schedlab_sys::thread_cpu_ns(), SeqCst);
    if plan.barrier {
        wait_for_release(hdr, slot);
    }
    slot.t_start_ns.store(schedlab_sys::now_ns(), SeqCst);
    if let Some(e) = exec {
        // The program is the workload; the host records its end when it reaps it.
        let errno = e.exec();
        slot.errno.store(errno as u32, SeqCst);
        slot.state.store(STATE_EXEC_FAILED, SeqCst);
        finish(hdr, measured);
        schedlab_sys::exit_now(127);
    }
    // ---- measured region: the workload only ----
    let done = if measured {
        work.run()
    } else {
        work.run_until(units, || hdr.stop.load(SeqCst) != 0)
    };
    let t_end = schedlab_sys::now_ns();
    // ---- end of measured region ----
    // The thread's exact CPU time, read before anything else runs. Not the CPU time of
    // getrusage(RUSAGE_THREAD) or /proc/thread-self/schedstat: both report the scheduler's
    // `se.sum_exec_runtime`, which for a thread that is running is brought up to date only
    // at a scheduler tick (every 4 ms at HZ=250), a context switch or a migration. A thread
    // reading its own counters at the end of its work is running, so they miss the time since
    // the last tick: up to 4 ms here, which is most of a 2 ms task and 30-70 % of a short
    // unpreempted FIFO run (/proc/thread-self/schedstat advances in 4 ms steps while a thread
    // spins). CLOCK_THREAD_CPUTIME_ID adds the running slice (task_sched_runtime()), so it is
    // exact at any instant (and, as a side effect, brings `sum_exec_runtime` up to date, which
    // is why the rusage read just after it is right too). Processes were right before only
    // because their rusage is read by wait4() after exit, when the sum is final.
    slot.cpu_ns.store(schedlab_sys::thread_cpu_ns(), SeqCst);
    slot.t_end_ns.store(t_end, SeqCst);
    slot.work_units.store(done, SeqCst);
    if measured {
        contended_snapshot(hdr, plan);
    }
    procs.open_sched();
    let (c, end_slice_ns) = procs.counters(&mut buf);
    drop(procs);
    let slice_ns = if plan.barrier { slice_ns } else { end_slice_ns };
    store_end_counters(slot, &plan.policies[i], c, slice_ns);
    keep_recordings(slot, hist, &work);
    drop(work);
    slot.state.store(STATE_DONE, SeqCst);
    finish(hdr, measured);
    linger(hdr);
}

/// Counts a ready task in at the barrier and waits until the launcher releases it.
fn wait_for_release(hdr: &Header, slot: &Slot) {
    slot.state.store(STATE_READY, SeqCst);
    arrive(hdr);
    while hdr.release.load(SeqCst) == 0 {
        schedlab_sys::futex_wait(&hdr.release, 0, None);
    }
}

/// Why a task gives up before its work: the slot state to record and the errno.
struct GiveUp {
    state: u32,
    errno: i32,
}

/// The task's own attributes: its policy (staggered: before its first timestamp, which it
/// stamps; with a barrier: after pinning), its ids, its affinity, and the attributes read back.
fn take_attributes(hdr: &Header, slot: &Slot, plan: &TaskPlan, i: usize) -> Result<(), GiveUp> {
    let policy = &plan.policies[i];
    let refused = |errno| {
        hdr.refused.fetch_add(1, SeqCst);
        GiveUp {
            state: STATE_REFUSED,
            errno,
        }
    };
    // Staggered: the task inherited the cell's policy from its spawner; it takes its own level
    // (spread priorities) at once, then its first timestamp (the end of its response), before
    // its setup; its work starts at `t_start`, after the setup.
    if !plan.barrier {
        // A task whose attributes are the spawner's has them already (read back below).
        let inherited = hdr.spawner_policy.load(SeqCst) == 1 && *policy == plan.policies[0];
        if !inherited {
            policy.apply().map_err(refused)?;
        }
        slot.t_first_ns.store(schedlab_sys::now_ns(), SeqCst);
    }
    slot.pid.store(schedlab_sys::getpid(), SeqCst);
    slot.tid.store(schedlab_sys::gettid(), SeqCst);
    if let Some(cpus) = &plan.cpus {
        schedlab_sys::set_affinity(cpus).map_err(|e| GiveUp {
            state: STATE_SETUP_FAILED,
            errno: e.raw_os_error().unwrap_or(libc::EINVAL),
        })?;
    }
    // (Staggered tasks applied it before their first timestamp.)
    if plan.barrier {
        policy.apply().map_err(refused)?;
    }
    if let Ok(a) = schedlab_sys::sched_getattr() {
        slot.policy_read.store(a.policy, SeqCst);
        slot.nice_read.store(a.nice, SeqCst);
        slot.prio_read.store(a.priority, SeqCst);
        if policy.kind.is_fair() {
            slot.slice_getattr_ns.store(a.runtime_ns, SeqCst);
        }
    }
    Ok(())
}

/// The task's work (an antagonist's, in chunks, or the measured workload), for a measured
/// command task its program prepared to be exec'd at its first timestamp, and the units of
/// work asked for (an antagonist's chunk).
fn prepare_work<'a>(
    plan: &TaskPlan,
    dir: Option<BorrowedFd>,
    i: usize,
    links: Links<'a>,
    measured: bool,
) -> Result<(TaskWork<'a>, Option<schedlab_sys::ExecArgs>, u64), GiveUp> {
    let (workload, units) = match (&plan.antagonist_workload, measured) {
        (Some(w), false) => (w, plan.antagonist_chunk),
        _ => (&plan.workload, plan.units),
    };
    let seed = 0x5EED + i as u64;
    let work =
        TaskWork::prepare(workload, units, plan.run_units, seed, dir, i, links).map_err(|e| {
            GiveUp {
                state: STATE_SETUP_FAILED,
                errno: e.raw_os_error().unwrap_or(0),
            }
        })?;
    // A command task prepares its program now and execs it at its first timestamp.
    let exec = if measured && plan.workload.kind == WorkloadKind::Command {
        let trial_dir = plan.dir.as_ref().map(|d| d.path.as_path()).zip(dir);
        let sandbox = plan.workload.sandbox.as_ref();
        let exec =
            prepare_exec(&plan.workload.commands[i], trial_dir, i, sandbox).map_err(|errno| {
                GiveUp {
                    state: STATE_EXEC_FAILED,
                    errno,
                }
            })?;
        Some(exec)
    } else {
        None
    };
    Ok((work, exec, units))
}

/// Stores the counters read after the work (`c`: user, system CPU, voluntary, involuntary
/// switches, run-queue wait, timeslices, migrations) and, for a fair policy, the EEVDF slice
/// in force (`slice_ns`, as /proc/thread-self/sched shows it: `se.slice`).
fn store_end_counters(slot: &Slot, policy: &TaskPolicy, c: [u64; 7], slice_ns: u64) {
    if policy.kind.is_fair() {
        slot.slice_proc_ns.store(slice_ns, SeqCst);
    }
    let fields = [
        &slot.utime_ns,
        &slot.stime_ns,
        &slot.nvcsw,
        &slot.nivcsw,
        &slot.run_delay_ns,
        &slot.timeslices,
        &slot.migrations,
    ];
    for (f, v) in fields.into_iter().zip(c) {
        f.store(v, SeqCst);
    }
}

/// Copies what the work recorded into the task's slot and its share of the histogram buffer
/// (`HISTS` parts of `HIST_BYTES`; a histogram too large for its part is left out).
fn keep_recordings(slot: &Slot, hist: &[AtomicU8], work: &TaskWork) {
    use schedlab_core::workload::periodic::{serialize, HIST_BYTES};
    let rec = work.recorder();
    slot.bytes.store(rec.bytes, SeqCst);
    slot.misses.store(rec.misses, SeqCst);
    for kind in HistKind::ALL {
        let (Some(h), Some(part)) = (
            rec.hist(kind),
            hist.get(kind.slot() * HIST_BYTES..(kind.slot() + 1) * HIST_BYTES),
        ) else {
            continue;
        };
        let bytes = serialize(h);
        if bytes.len() <= part.len() {
            for (dst, &b) in part.iter().zip(&bytes) {
                dst.store(b, SeqCst);
            }
            slot.hist_lens[kind.slot()].store(bytes.len() as u32, SeqCst);
        }
    }
}

/// Waits, asleep, until every measured task of the trial has finished. A task's exit is
/// harness work (a process's exit tears down its address space: tens of microseconds of CPU;
/// a thread's unmaps its stacks, which stalls every thread of the process for a TLB flush),
/// so finished tasks keep it out of the period in which others are still created or running.
///
/// The wait has no timeout: a periodic check would wake the task during others' measured
/// work (and a FIFO task would take its turn on the CPU again). Every way a trial ends sets
/// `stop` or kills the trial's process group (deadline, Ctrl-C, the launcher's death).
fn linger(hdr: &Header) {
    while hdr.stop.load(SeqCst) == 0 {
        schedlab_sys::futex_wait(&hdr.stop, 0, None);
    }
}

/// Sets the working directory, standard streams and environment of a command and prepares its
/// argv. Without a `cwd` the program starts in the trial directory (`fchdir` to the fd the
/// launcher holds, not a path lookup), so what it writes is removed with it; it finds that
/// directory's path in `SCHEDLAB_TRIAL_DIR` and its task index in `SCHEDLAB_TASK_INDEX`, and
/// `TMPDIR` points there too (unless the spec's `env` sets it), so that what a program stopped
/// by its window leaves in its temporary directory (chromium's singleton files) goes with the
/// trial directory. Its stdin is /dev/null and its stdout and stderr go to [`command_log`]
/// files there (created exclusively, no link followed), so programs do not write over
/// schedlab's progress. In a worker's `sandbox` the program gets only the spec's environment
/// (and the three variables above), the trial directory becomes the sandbox user's, and the
/// task becomes that user for good before its exec.
fn prepare_exec(
    c: &schedlab_core::workload::Command,
    trial_dir: Option<(&std::path::Path, BorrowedFd)>,
    index: usize,
    sandbox: Option<&schedlab_core::workload::Sandbox>,
) -> Result<schedlab_sys::ExecArgs, i32> {
    let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::ENOENT);
    if sandbox.is_some() {
        // The worker's own environment (PGPASSWORD, SCHEDLAB_DB...) is not the program's.
        for (k, _) in std::env::vars_os() {
            std::env::remove_var(k);
        }
    }
    if let Some((path, dir)) = trial_dir {
        use nix::fcntl::OFlag;
        let null = std::fs::File::open("/dev/null").map_err(errno)?;
        let create = |stream| {
            schedlab_sys::dir::create_file_at(dir, &command_log(index, stream), OFlag::empty())
        };
        let out = create("stdout").map_err(errno)?;
        let err = create("stderr").map_err(errno)?;
        for (file, fd) in [(&null, 0), (&out, 1), (&err, 2)] {
            use std::os::fd::AsFd;
            schedlab_sys::redirect_std_fd(file.as_fd(), fd).map_err(errno)?;
        }
        schedlab_sys::dir::chdir_fd(dir).map_err(errno)?;
        // SAFETY of set_var: this process is a freshly forked, single-threaded task.
        std::env::set_var("SCHEDLAB_TRIAL_DIR", path);
        std::env::set_var("TMPDIR", path);
    }
    std::env::set_var("SCHEDLAB_TASK_INDEX", index.to_string());
    for (k, v) in &c.env {
        // SAFETY of set_var: this process is a freshly forked, single-threaded task.
        std::env::set_var(k, v);
    }
    // Only root changes users; any other worker's programs run as itself.
    if let Some(s) = sandbox.filter(|_| schedlab_sys::is_root()) {
        if let Some((_, dir)) = trial_dir {
            schedlab_sys::dir::chown_fd(dir, s.uid, s.gid).map_err(errno)?;
        }
        schedlab_sys::drop_privileges(s.uid, s.gid).map_err(errno)?;
    }
    // After the drop: a `cwd` the sandbox user may not enter fails the program.
    if let Some(dir) = &c.cwd {
        std::env::set_current_dir(dir).map_err(errno)?;
    }
    schedlab_sys::ExecArgs::new(&c.argv).ok_or(libc::EINVAL)
}

/// The file in the trial directory where command task `index` writes `stream` ("stdout" or
/// "stderr").
pub fn command_log(index: usize, stream: &str) -> String {
    format!("task-{index}.{stream}")
}

/// The calling thread's /proc files, opened once at the end of setup and read twice (an open
/// costs about as much as a read here: 3.5 us, while the kernel formats `sched` in 5 us and
/// `schedstat` in 0.6 us).
struct ThreadProc {
    schedstat: Option<std::fs::File>,
    sched: Option<std::fs::File>,
}

impl ThreadProc {
    /// Opens `schedstat`, and `sched` too when `with_sched`.
    fn open(with_sched: bool) -> ThreadProc {
        let mut p = ThreadProc {
            schedstat: std::fs::File::open("/proc/thread-self/schedstat").ok(),
            sched: None,
        };
        if with_sched {
            p.open_sched();
        }
        p
    }

    /// Opens `sched` if it is not open yet.
    fn open_sched(&mut self) {
        if self.sched.is_none() {
            self.sched = std::fs::File::open("/proc/thread-self/sched").ok();
        }
    }

    /// The thread's counters in `Slot::base` order, and its EEVDF slice (`se.slice`, ns).
    /// Reads into `buf`; allocates nothing.
    fn counters(&mut self, buf: &mut [u8]) -> ([u64; 7], u64) {
        let (ut, st, nv, ni) = schedlab_sys::rusage_thread();
        let mut c = [ut, st, nv, ni, 0, 0, 0];
        let mut slice = 0;
        if let Some(s) =
            read_at_start(self.schedstat.as_ref(), buf).and_then(schedlab_procfs::parse_schedstat)
        {
            c[4] = s.run_delay_ns;
            c[5] = s.timeslices;
        }
        if let Some(text) = read_at_start(self.sched.as_ref(), buf) {
            let info = schedlab_procfs::parse_sched(text);
            c[6] = info.nr_migrations.unwrap_or(0);
            slice = info.slice_ns.unwrap_or(0);
        }
        (c, slice)
    }
}

/// The text of an open /proc file, read again from its start (pread) into `buf`.
fn read_at_start<'a>(file: Option<&std::fs::File>, buf: &'a mut [u8]) -> Option<&'a str> {
    use std::os::unix::fs::FileExt;
    let file = file?;
    let mut len = 0;
    while len < buf.len() {
        match file.read_at(&mut buf[len..], len as u64) {
            Ok(n) if n > 0 => len += n,
            _ => break,
        }
    }
    std::str::from_utf8(&buf[..len]).ok()
}

/// Records that a task gave up before its work (`state`, `errno`) and counts it in at the
/// barrier and out of the measured tasks.
pub fn give_up(hdr: &Header, slot: &Slot, state: u32, errno: i32, measured: bool) {
    slot.errno.store(errno as u32, SeqCst);
    slot.state.store(state, SeqCst);
    arrive(hdr);
    finish(hdr, measured);
}

/// Counts a task in at the barrier. Only the last arrival wakes the launcher, which waits for
/// all of them: a wake-up per task would cost the launcher a switch per task while tasks are
/// still being created.
fn arrive(hdr: &Header) {
    if hdr.ready.fetch_add(1, SeqCst) + 1 >= hdr.tasks.load(SeqCst) {
        schedlab_sys::futex_wake(&hdr.ready, 1);
    }
}

/// Counts a measured task out (antagonists are not counted).
fn finish(hdr: &Header, measured: bool) {
    if measured {
        count_out(hdr);
    }
}

/// Counts one measured task out; the last one wakes the launcher (see [`arrive`]).
pub fn count_out(hdr: &Header) {
    if hdr.remaining.fetch_sub(1, SeqCst) == 1 {
        schedlab_sys::futex_wake(&hdr.remaining, 1);
    }
}

/// The first measured task to finish reads every task group's CPU usage, right after its
/// work and while every other task still runs: the end of the contended window, in which the
/// groups' shares are compared. The task is running then (a launcher woken for it would wait
/// for a CPU on a busy machine while the other groups run on alone); its own reads count in
/// its group's usage, after the snapshot.
fn contended_snapshot(hdr: &Header, plan: &TaskPlan) {
    if plan.contended.is_empty() || hdr.contended_claimed.swap(1, SeqCst) != 0 {
        return;
    }
    let at = schedlab_sys::now_ns();
    for (f, slot) in plan.contended.iter().zip(&hdr.contended_usage) {
        if let Some(u) = f.read().ok().and_then(|s| s.usage_ns) {
            slot.store(u.saturating_add(1), SeqCst);
        }
    }
    hdr.contended_at_ns.store(at, SeqCst);
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
