//! Task groups in real CPU cgroups (this machine: cgroup v1 with RT group scheduling), with
//! the real binary: a bandwidth limit throttles and no limit does not; weights 100:300 share a
//! CPU 1:3 while both groups run; a pinned DEADLINE task is admitted in a partition and
//! throttled by its CBS, refused without one; after a SIGKILL the next command removes the
//! run's cgroups and restores the root cpuset; a controller the machine lacks skips its cells
//! (exit 0, 1 with --strict). `exits`: Ctrl-C, SIGTERM, SIGHUP and a deadline kill remove a
//! trial's cgroups, and the root cgroups' settings are as before. `figures`: the stored
//! figures through export, stats and report. No `schedlab-*` cgroup of a dead process is left
//! after any test.
//!
//! cgroup v2 runs against a recorded tree (`crates/cgroup/tests/recorded`): a real v2 cpu or
//! cpuset controller cannot be had here, since PID 1 holds the v1 mounts (umount: busy; see
//! crates/cgroup/NOTES.md).
//!
//! The tests need root and take turns (`rt_turn`): two partition runs at once would vary the
//! same root cpuset setting, which the second refuses.

#[path = "../common/mod.rs"]
mod common;
mod exits;
mod figures;

use common::*;
use schedlab_cgroup::OwnerId;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const MOUNTS: [&str; 3] = [
    "/sys/fs/cgroup/cpu",
    "/sys/fs/cgroup/cpuacct",
    "/sys/fs/cgroup/cpuset",
];
const LOAD_BALANCE: &str = "/sys/fs/cgroup/cpuset/cpuset.sched_load_balance";
const MS: i64 = 1_000_000;

/// Tests in this binary run schedlab commands, and every command removes the cgroups of a
/// dead owner: the test that leaves cgroups behind on purpose (SIGKILL) runs alone. Every
/// other test holds a shared turn for its whole thread; that one holds it exclusively.
static TURN: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    static EXCLUSIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static SHARED_TURN: std::cell::RefCell<Option<std::sync::RwLockReadGuard<'static, ()>>> =
        const { std::cell::RefCell::new(None) };
}

/// The exclusive turn (see [`TURN`]); take it before [`ready`].
fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    SHARED_TURN.with(|t| t.borrow_mut().take());
    let guard = TURN.write().unwrap_or_else(|e| e.into_inner());
    EXCLUSIVE.with(|e| e.set(true));
    guard
}

/// Root with the v1 cpu, cpuacct and cpuset hierarchies of this machine, else a printed skip.
/// Takes this thread's shared turn unless the thread holds the exclusive one.
fn ready(test: &str) -> bool {
    if let Ok(guard) = TURN.try_read() {
        SHARED_TURN.with(|t| *t.borrow_mut() = Some(guard));
    } else if !EXCLUSIVE.with(|e| e.get()) {
        let guard = TURN.read().unwrap_or_else(|e| e.into_inner());
        SHARED_TURN.with(|t| *t.borrow_mut() = Some(guard));
    }
    if !root(&format!("{test}: cgroups")) {
        return false;
    }
    let mounted = MOUNTS.iter().all(|m| std::path::Path::new(m).is_dir());
    if !mounted {
        skip(
            Need::Cgroup,
            format!("{test}: needs the cgroup v1 cpu, cpuacct and cpuset mounts"),
        );
    }
    mounted
}

/// `schedlab` with its restore journal in the scratch directory.
fn schedlab_in(s: &Scratch) -> Command {
    let mut c = schedlab();
    c.env("SCHEDLAB_STATE_DIR", s.state_dir());
    c
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `schedlab run --db SCRATCH --quiet ARGS`.
fn run(s: &Scratch, args: &[&str]) -> Output {
    schedlab_in(s)
        .arg("run")
        .args(NO_RETRIES)
        .args(["--db", s.db().to_str().unwrap(), "--quiet"])
        .args(args)
        .output()
        .unwrap()
}

/// Every `schedlab-PID-START` cgroup whose owner is gone.
fn stale_cgroups() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for m in MOUNTS {
        for e in std::fs::read_dir(m).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if OwnerId::from_dir_name(&name).is_some_and(|o| !o.alive()) {
                out.push(e.path());
            }
        }
    }
    out
}

/// Every `schedlab-PID-*` cgroup of process `pid`.
fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("schedlab-{pid}-");
    MOUNTS
        .iter()
        .flat_map(|m| std::fs::read_dir(m).into_iter().flatten().flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// A run whose one trial (a partition on CPU 1, with a limit) lasts until it is stopped.
const LONG_PARTITION_TRIAL: [&str; 13] = [
    "--tasks",
    "1",
    "--work",
    "20s",
    "--timeout",
    "60s",
    "--trials",
    "1",
    "--cpuset",
    "1",
    "--partition",
    "--cpu-max",
    "50ms/100ms",
];

/// The trial directories (`c3-t7`) under `cgroups_of(pid)`.
fn trial_dirs(pid: u32) -> Vec<PathBuf> {
    cgroups_of(pid)
        .iter()
        .flat_map(|p| std::fs::read_dir(p).into_iter().flatten().flatten())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// Starts `schedlab run ARGS` in a process group of its own, as a shell starts a command, and
/// returns once its trial's groups exist (after calibration and the settle window), and a
/// little more.
fn spawn_until_trial(s: &Scratch, args: &[&str]) -> Child {
    // Through `env --default-signal=HUP`, which execs schedlab in its place (same pid): under
    // `nohup` (a CI runner may use it) SIGHUP arrives ignored, and schedlab keeps an ignored
    // SIGHUP ignored by design, so the SIGHUP case would see a run that ends normally.
    let bin = assert_cmd::cargo::cargo_bin("schedlab");
    let child = Command::new("env")
        .arg("--default-signal=HUP")
        .arg(bin)
        .env("SCHEDLAB_STATE_DIR", s.state_dir())
        .arg("run")
        .args(NO_RETRIES)
        .args(["--db", s.db().to_str().unwrap(), "--quiet"])
        .args(args)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while trial_dirs(child.id()).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the trial's cgroups never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child
}

fn assert_nothing_left() {
    let left = stale_cgroups();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

/// One row per group of every ok trial: (cell, trial, group, usage, nr_periods, nr_throttled,
/// throttled ns, contended usage, the group's tasks' longest turnaround and CPU time).
type GroupFigures = (i64, i64, String, i64, i64, i64, i64, Option<i64>, i64, i64);

fn groups(s: &Scratch) -> Vec<GroupFigures> {
    rows(
        &s.conn(),
        "SELECT c.cell_index, g.trial_id, g.name, g.usage_ns, g.nr_periods, g.nr_throttled, g.throttled_ns,
                    g.usage_contended_ns,
                    (SELECT MAX(t.turnaround_ns) FROM tasks t WHERE t.trial_id = g.trial_id AND t.group_name = g.name),
                    (SELECT SUM(t.cpu_ns) FROM tasks t WHERE t.trial_id = g.trial_id AND t.group_name = g.name)
             FROM task_groups g JOIN trials tr ON tr.trial_id = g.trial_id JOIN cells c ON c.cell_id = tr.cell_id
             WHERE tr.status = 'ok' ORDER BY c.cell_index, g.trial_id, g.group_index",
    )
}

#[test]
fn a_bandwidth_limit_throttles_and_no_limit_does_not() {
    if !ready("a_bandwidth_limit_throttles_and_no_limit_does_not") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    // 150 ms of work rather than the 100 ms: the kernel's period has its own phase, so
    // a task that starts late in a period gets its quota on both sides of the boundary and
    // finishes after (n - 2) * period + 2 * quota for n quotas of work: 340 ms for 100 ms
    // under 20ms/100ms, 440 ms for 120 ms. 150 ms keeps 120 ms of CPU on a machine running
    // 25 % faster than at calibration.
    let o = run(
        &s,
        &[
            "--tasks",
            "1",
            "--work",
            "150ms",
            "--cpu-max",
            "20ms/100ms,max",
            "--trials",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows = groups(&s);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let (_, _, _, usage, periods, throttled, throttled_ns, _, turnaround, cpu) = &rows[0];
    println!(
        "    20ms/100ms: {:.1} ms CPU (task clock), group usage {:.1} ms, turnaround {:.0} ms, nr_periods {periods}, nr_throttled {throttled}, throttled {:.0} ms",
        *cpu as f64 / 1e6,
        *usage as f64 / 1e6,
        *turnaround as f64 / 1e6,
        *throttled_ns as f64 / 1e6
    );
    assert!(*cpu >= 120 * MS, "the task needed {cpu} ns of CPU");
    // The bound for the quotas this CPU time needs, less one 4 ms tick (HZ 250 here) per
    // period: quota is checked at the tick, so a period may overrun it by up to a tick (seen:
    // 149.7 ms of CPU in 8 periods, 7 throttled, ended after 622 ms, 8 ms under the exact bound).
    let quotas = (*cpu + 20 * MS - 1) / (20 * MS);
    let bound = (quotas - 2) * 100 * MS + 40 * MS - quotas * 4 * MS;
    assert!(
        *turnaround >= 400 * MS && *turnaround >= bound,
        "turnaround {turnaround} ns, bound {bound}"
    );
    let (limited_throttled, limited_throttled_ns) = (*throttled, *throttled_ns);
    // The kernel's group accounting against the task's own CPU clock.
    assert!(
        (*usage - *cpu).abs() <= *cpu / 10,
        "group usage {usage} ns, task {cpu} ns"
    );
    let (_, _, _, usage, periods, throttled, throttled_ns, _, turnaround, cpu) = &rows[1];
    println!(
        "    no limit:   {:.1} ms CPU, group usage {:.1} ms, turnaround {:.0} ms, nr_periods {periods}, nr_throttled {throttled}",
        *cpu as f64 / 1e6,
        *usage as f64 / 1e6,
        *turnaround as f64 / 1e6
    );
    assert_eq!((*throttled, *throttled_ns), (0, 0), "not throttled");
    let named = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM tasks WHERE group_name = 'all'",
    );
    assert_eq!(named, [2], "each task row carries its group");
    assert_nothing_left();
    // The kernel throttles only a group that used its quota: when the machine left the
    // unlimited task less than 30 % of a CPU, the 20 % quota may never bind. Then the
    // throttling is not checked: a skip, which fails under SCHEDLAB_TEST_REQUIRE.
    let free_share = *cpu as f64 / *turnaround as f64;
    if free_share < 0.3 {
        return skip(
            Need::Idle,
            format!(
                "the unlimited task got {:.0} % of a CPU (a busy machine): throttling not checked",
                free_share * 100.0
            ),
        );
    }
    assert!(limited_throttled >= 3, "nr_throttled {limited_throttled}");
    assert!(limited_throttled_ns > 0);
}

#[test]
fn weights_100_and_300_share_a_cpu_1_to_3_while_both_run() {
    if !ready("weights_100_and_300_share_a_cpu_1_to_3_while_both_run") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    let o = run(
        &s,
        &[
            "--groups",
            "a=1:b=1",
            "--cpu-weight",
            "100:300",
            "--cpus",
            "0",
            "--work",
            "200ms",
            "--kind",
            "process,thread",
            "--trials",
            "3",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows = groups(&s);
    for cell in [0, 1] {
        let mut ratios = Vec::new();
        let of = |name: &'static str| rows.iter().filter(move |r| r.0 == cell && r.2 == name);
        for (a, b) in of("a").zip(of("b")) {
            let (ua, ub) = (a.7.expect("contended a"), b.7.expect("contended b"));
            // b (weight 300) ends first: its contended usage is its whole work, which its
            // task's own CPU clock measured too.
            assert!(
                (ub - b.9).abs() <= b.9 / 20,
                "group b {ub} ns, its task {} ns",
                b.9
            );
            ratios.push(ub as f64 / ua as f64);
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "    {} tasks: b/a CPU while both ran {ratios:.3?}",
            ["process", "thread"][cell as usize]
        );
        assert_eq!(ratios.len(), 3);
        let m = ratios[1];
        assert!(
            (2.55..=3.45).contains(&m),
            "median ratio {m:.3} is not 3 within 15 %"
        );
    }
    assert_nothing_left();
}

#[test]
fn a_partition_admits_a_pinned_deadline_task_and_its_cbs_throttles_it() {
    if !ready("a_partition_admits_a_pinned_deadline_task_and_its_cbs_throttles_it") {
        return;
    }
    let _turn = rt_turn();
    let balance = Restore::new(LOAD_BALANCE);
    let s = Scratch::new();
    let dl = [
        "--policy",
        "deadline",
        "--cpus",
        "1",
        "--dl-runtime",
        "5ms",
        "--dl-deadline",
        "20ms",
        "--dl-period",
        "20ms",
        "--tasks",
        "1",
        "--work",
        "30ms",
        "--trials",
        "2",
    ];
    let o = run(&s, &[&dl[..], &["--partition"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        common::value(LOAD_BALANCE),
        balance.original(),
        "root cpuset restored"
    );
    let conn = s.conn();
    let rows: Vec<(i64, i64)> = conn
        .prepare("SELECT turnaround_ns, cpu_ns FROM tasks t JOIN trials tr ON tr.trial_id = t.trial_id WHERE tr.status = 'ok' AND t.policy_in_force = 'deadline'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2, "both trials admitted: {}", text(&o));
    for (turnaround, cpu) in rows {
        // CBS: 5 ms per 20 ms period; n runtimes of work end in the n-th period. The kernel
        // enforces the runtime at a tick and charges an overrun to the next period, so the
        // lower bound counts whole runtimes only (31 ms of CPU in 6 periods happens).
        let n = (cpu + 5 * MS - 1) / (5 * MS);
        let whole = cpu / (5 * MS);
        println!(
            "    {:.1} ms CPU in {:.1} ms ({n} runtimes of 5 ms per 20 ms)",
            cpu as f64 / 1e6,
            turnaround as f64 / 1e6
        );
        assert!(
            turnaround >= (whole - 1) * 20 * MS,
            "{turnaround} ns for {n} runtimes"
        );
        assert!(
            turnaround <= (n + 1) * 20 * MS + 10 * MS,
            "{turnaround} ns for {n} runtimes"
        );
    }
    // Without the partition: refused, as always, and skipped; --strict makes it exit 1.
    let s = Scratch::new();
    let o = run(&s, &dl);
    assert!(o.status.success(), "{}", text(&o));
    let skipped = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM trials WHERE status = 'skipped'",
    );
    assert_eq!(skipped, [2]);
    assert!(text(&o).contains("root domain"), "{}", text(&o));
    let strict = Scratch::new();
    let o = run(&strict, &[&dl[..], &["--strict"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_nothing_left();
}

#[test]
fn after_a_sigkill_the_next_command_removes_the_cgroups_and_says_so() {
    let _alone = alone();
    if !ready("after_a_sigkill_the_next_command_removes_the_cgroups_and_says_so") {
        return;
    }
    let _turn = rt_turn();
    let balance = Restore::new(LOAD_BALANCE);
    let s = Scratch::new();
    let mut child = spawn_until_trial(&s, &LONG_PARTITION_TRIAL);
    assert_eq!(common::value(LOAD_BALANCE), "0", "the partition trial runs");
    // SIGKILL to the main process and its launcher at once (its group): neither restores.
    // (The main process alone: its launcher restores at once, tests/signals.rs.)
    common::signal_group(child.id(), common::Signal::SIGKILL);
    child.wait().unwrap();
    // The tasks follow their parents (parent-death signals).
    let pgid = child.id() as i32;
    let gone = Instant::now() + Duration::from_secs(10);
    while group_alive(pgid) {
        assert!(
            Instant::now() < gone,
            "the run's processes outlived the SIGKILL"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = cgroups_of(child.id());
    assert_eq!(left.len(), 3, "left by the SIGKILL: {left:?}");
    // Any command: here `runs`.
    let o = schedlab_in(&s)
        .args(["runs", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    println!("    {}", said.trim().replace('\n', "\n    "));
    assert!(o.status.success(), "{said}");
    for dir in &left {
        assert!(!dir.exists(), "{} is still there", dir.display());
        assert!(
            said.contains(&format!("removed the cgroups {}", dir.display())),
            "{said}"
        );
    }
    assert!(
        said.contains("restored cpuset.sched_load_balance"),
        "{said}"
    );
    assert_eq!(common::value(LOAD_BALANCE), balance.original());
    assert_nothing_left();
}

#[test]
fn without_the_controller_the_cells_are_skipped_with_the_reason() {
    if !ready("without_the_controller_the_cells_are_skipped_with_the_reason") {
        return;
    }
    let _turn = rt_turn();
    let args = [
        "--tasks",
        "1",
        "--work",
        "10ms",
        "--cpu-max",
        "20ms/100ms",
        "--trials",
        "2",
    ];
    let s = Scratch::new();
    let o = schedlab_in(&s)
        .env("SCHEDLAB_CGROUP_HIDE", "cpu")
        .arg("run")
        .args(NO_RETRIES)
        .args(["--db", s.db().to_str().unwrap(), "--quiet"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let reasons: Vec<String> = s
        .conn()
        .prepare("SELECT reason FROM trials WHERE status = 'skipped'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(
        reasons[0].contains("[cgroup.no-controller]"),
        "{}",
        reasons[0]
    );
    assert!(
        reasons[0].contains("mount -t cgroup -o cpu"),
        "the remedy: {}",
        reasons[0]
    );
    let strict = Scratch::new();
    let o = schedlab_in(&strict)
        .env("SCHEDLAB_CGROUP_HIDE", "cpu")
        .arg("run")
        .args(NO_RETRIES)
        .args(["--db", strict.db().to_str().unwrap(), "--quiet", "--strict"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // `plan` says the same without running anything.
    let o = schedlab()
        .env("SCHEDLAB_CGROUP_HIDE", "cpu")
        .args(["plan"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        text(&o)
            .contains("cell 0: skipped here: no mounted cgroup hierarchy has the cpu controller"),
        "{}",
        text(&o)
    );
    assert_nothing_left();
}
