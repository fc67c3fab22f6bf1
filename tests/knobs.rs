//! Kernel knobs as axes, with the real binary: the RR quantum changes how RR tasks rotate and
//! is restored; a run SIGKILLed with its launcher has its settings restored by the next command; the EEVDF slice
//! is read back per task; refusals (absent knob, refused value, outside /proc/sys and /sys,
//! no sched_ext here) skip or stop with the reason.
//!
//! Every test that changes a kernel setting needs root, takes its turn (`rt_turn`), keeps its
//! restore journal in a scratch directory, and puts the setting back when it ends, even when
//! it panics ([`Restore`]).

mod common;

use common::*;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

const RR_QUANTUM: &str = "/proc/sys/kernel/sched_rr_timeslice_ms";
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// `schedlab` with its restore journal in `state`.
fn schedlab_in(state: &Path) -> std::process::Command {
    let mut c = schedlab();
    c.env("SCHEDLAB_STATE_DIR", state);
    c
}

/// Runs `schedlab run ARGS` with the journal in `state`; panics with the output on failure.
fn run_in(s: &Scratch, state: &Path, args: &[&str]) -> String {
    let out = schedlab_in(state)
        .args(["run", "--db", s.db().to_str().unwrap(), "--quiet"])
        .args(NO_RETRIES)
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "schedlab run failed: {text}");
    text
}

/// The restore journals in `state`.
fn journals(state: &Path) -> Vec<String> {
    std::fs::read_dir(state)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("restore-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Text rows of a query.
fn texts(c: &rusqlite::Connection, sql: &str) -> Vec<String> {
    let mut st = c.prepare(sql).unwrap();
    st.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn an_rr_quantum_of_10ms_makes_50ms_rr_tasks_rotate_and_is_restored() {
    if !root("changing kernel settings") {
        return;
    }
    let _turn = rt_turn();
    let _restore = Restore::new(RR_QUANTUM);
    let original = value(RR_QUANTUM);
    let s = Scratch::new();
    let state = s.path().join("state");
    run_in(
        &s,
        &state,
        &[
            "--policy",
            "rr",
            "--tasks",
            "3",
            "--work",
            "50ms",
            "--cpus",
            "0",
            "--trials",
            "2",
            "--knob",
            "kernel.sched_rr_timeslice_ms=10,100",
        ],
    );
    assert_eq!(value(RR_QUANTUM), original, "the quantum is back");
    assert!(journals(&state).is_empty(), "the journal is gone");
    let c = s.conn();
    let per = |quantum: &str, col: &str| {
        ints(
            &c,
            &format!(
                "SELECT t.{col} FROM tasks t JOIN trials tr USING (trial_id) JOIN cells c USING (cell_id)
                 WHERE tr.status = 'ok' AND c.knobs = 'kernel.sched_rr_timeslice_ms={quantum}'"
            ),
        )
    };
    // Hand computation: 50 ms of work in 10 ms turns (12 ms at HZ=250: the quantum is
    // rounded up to whole ticks) is preempted 4 times; with 100 ms each task runs to its end.
    let rotating = per("10", "nivcsw");
    let whole = per("100", "nivcsw");
    assert_eq!(rotating.len(), 6, "3 tasks x 2 trials");
    assert!(
        (3..=6).contains(&median(rotating.clone())),
        "nivcsw at 10 ms: {rotating:?}"
    );
    assert!(median(whole.clone()) <= 1, "nivcsw at 100 ms: {whole:?}");
    // Turnaround: rotating, even the first task ends after ~4 rounds of 3 tasks (~130-150 ms);
    // run one after another, the first ends after its own 50 ms.
    let first_10 = *per("10", "turnaround_ns").iter().min().unwrap();
    let first_100 = *per("100", "turnaround_ns").iter().min().unwrap();
    assert!(
        first_10 > 2 * first_100,
        "first task done at {first_10} ns (10 ms) vs {first_100} ns (100 ms)"
    );
    // Each trial read the quantum back as asked.
    let read = texts(
        &c,
        "SELECT requested || '=' || read_back FROM knob_readings ORDER BY trial_id",
    );
    assert_eq!(read.len(), 4);
    assert!(
        read.iter().all(|r| r == "10=10" || r == "100=100"),
        "{read:?}"
    );
}

#[test]
fn after_a_sigkill_during_a_knob_cell_the_next_command_restores_the_settings() {
    if !root("changing kernel settings") {
        return;
    }
    let _turn = rt_turn();
    let _quantum = Restore::new(RR_QUANTUM);
    let original = value(RR_QUANTUM);
    let changed = if original == "30" { "40" } else { "30" };
    let device = schedlab_run::iosched::device_for(Path::new("/var/tmp")).ok();
    let io = device.as_ref().map(|d| {
        let file = format!("/sys/block/{d}/queue/scheduler");
        let offered = schedlab_run::iosched::read(d).unwrap();
        let other = offered
            .available
            .iter()
            .find(|a| **a != offered.current)
            .cloned();
        (Restore::new(&file), file, offered.current, other)
    });
    let s = Scratch::new();
    let state = s.path().join("state");
    for next in ["runs", "restore"] {
        let mut args: Vec<String> = [
            "run",
            "--retries",
            "0",
            "--db",
            s.db().to_str().unwrap(),
            "--quiet",
            "--policy",
            "other",
            "--tasks",
            "1",
            "--work",
            "5s",
            "--trials",
            "2",
            "--knob",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.push(format!("kernel.sched_rr_timeslice_ms={changed}"));
        if let Some((_, _, _, Some(other))) = &io {
            args.extend(["--io-schedulers".into(), other.clone()]);
        }
        let mut child = schedlab_in(&state)
            .args(&args)
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while value(RR_QUANTUM) != changed {
            assert!(Instant::now() < deadline, "the quantum was never changed");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        // SIGKILL to the main process and its launcher at once (its process group): no
        // chance to restore anything. (The main process alone: its launcher restores at
        // once, tests/signals.rs.)
        signal_group(child.id(), Signal::SIGKILL);
        child.wait().unwrap();
        assert_eq!(
            value(RR_QUANTUM),
            changed,
            "a SIGKILLed run leaves it changed"
        );
        assert_eq!(journals(&state).len(), 1, "and its journal behind");
        if let Some((_, file, _, Some(other))) = &io {
            assert_eq!(value(file), *other);
        }
        // The next command, whatever it is, restores everything and says so.
        let mut command = schedlab_in(&state);
        command.arg(next);
        if next == "runs" {
            command.args(["--db", s.db().to_str().unwrap()]);
        }
        let out = command.output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{said}");
        assert_eq!(value(RR_QUANTUM), original, "{next} restored it: {said}");
        assert!(
            said.contains(&format!(
                "restored kernel.sched_rr_timeslice_ms (/proc/sys/kernel/sched_rr_timeslice_ms): {changed} -> {original}"
            )),
            "{said}"
        );
        if let Some((_, file, current, Some(other))) = &io {
            assert_eq!(value(file), *current, "{said}");
            assert!(said.contains(&format!("{other} -> {current}")), "{said}");
        }
        assert!(journals(&state).is_empty(), "the journal is gone: {said}");
    }
}

#[test]
fn the_slice_is_read_back_from_proc_and_sched_getattr_for_each_task() {
    if let Err(why) = schedlab_machine::probe::slice_support(0, 100_000) {
        return skip(Need::Kernel, why);
    }
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "other,batch,fifo",
            "--slice",
            "0.1ms,3ms",
            "--tasks",
            "2",
            "--work",
            "5ms",
            "--trials",
            "1",
        ],
    );
    let c = s.conn();
    let rows = texts(
        &c,
        "SELECT c.policy || ' ' || COALESCE(c.slice_ns, '-') || ' ' || COALESCE(t.slice_getattr_ns, '-')
                || ' ' || COALESCE(t.slice_proc_ns, '-')
         FROM tasks t JOIN trials tr USING (trial_id) JOIN cells c USING (cell_id)
         WHERE tr.status = 'ok' ORDER BY c.cell_index, t.task_index",
    );
    // other and batch: each task shows the slice it asked for, in sched_getattr and in
    // /proc/PID/sched (`se.slice`); fifo cells have no slice.
    assert_eq!(
        rows,
        [
            "other 100000 100000 100000",
            "other 100000 100000 100000",
            "other 3000000 3000000 3000000",
            "other 3000000 3000000 3000000",
            "batch 100000 100000 100000",
            "batch 100000 100000 100000",
            "batch 3000000 3000000 3000000",
            "batch 3000000 3000000 3000000",
            "fifo - - -",
            "fifo - - -",
        ]
    );
    let out = schedlab()
        .args(["export", "--db", s.db().to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    // The knob columns, then those added after them (issue 11: the exact CPU time; issue 20:
    // the task's group and the cell's groups), then the 11 of the field's workloads (issue
    // 19), then the trial's attempt (issue 26: retry, retried), last.
    assert_eq!(header[header.len() - 2..], ["retry", "retried"]);
    let header = &header[..header.len() - 2];
    assert_eq!(header[header.len() - 11], "workload_role");
    assert_eq!(
        header[header.len() - 11 - 9..header.len() - 11],
        [
            "slice_ns",
            "knobs",
            "scx",
            "knobs_read",
            "slice_getattr_ns",
            "slice_proc_ns",
            "cpu_ns",
            "group_name",
            "cgroups"
        ]
    );
    assert_eq!(
        header[0..3],
        ["run_id", "trial_id", "trial_index"],
        "older columns first"
    );
}

#[test]
fn absent_refused_and_outside_knobs_are_skipped_or_stopped_with_the_reason() {
    let s = Scratch::new();
    let state = s.path().join("state");
    // Outside /proc/sys and /sys: refused before anything runs, as bad input.
    let out = schedlab_in(&state)
        .args([
            "run",
            "--retries",
            "0",
            "--db",
            s.db().to_str().unwrap(),
            "--knob",
            "/etc/hostname=x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("outside /proc/sys and /sys"), "{err}");
    if !root("changing kernel settings") {
        return;
    }
    let _turn = rt_turn();
    let _thp = Path::new(THP).exists().then(|| Restore::new(THP));
    let _quantum = Restore::new(RR_QUANTUM);
    let mut args = vec![
        "--tasks",
        "1",
        "--work",
        "2ms",
        "--trials",
        "1",
        "--knob",
        "kernel.schedlab_no_such_knob=1",
    ];
    run_in(&s, &state, &args);
    let c = s.conn();
    let reason = texts(&c, "SELECT reason FROM trials WHERE status = 'skipped'");
    assert_eq!(reason.len(), 1);
    assert!(
        reason[0].contains("absent")
            && reason[0].contains("/proc/sys/kernel/schedlab_no_such_knob"),
        "{reason:?}"
    );
    // A value the kernel refuses, and a choice a list does not offer.
    args.truncate(6);
    let mut refused = args.clone();
    refused.extend(["--knob", "kernel.sched_rr_timeslice_ms=abc"]);
    let s = Scratch::new();
    run_in(&s, &state, &refused);
    let reason = texts(
        &s.conn(),
        "SELECT reason FROM trials WHERE status = 'skipped'",
    );
    assert_eq!(reason.len(), 1);
    assert!(reason[0].contains("refused 'abc' (EINVAL"), "{reason:?}");
    if Path::new(THP).exists() {
        let thp = format!("{THP}=never,bogus");
        args.extend(["--knob", &thp]);
        let s = Scratch::new();
        run_in(&s, &state, &args);
        let c = s.conn();
        let rows = texts(
            &c,
            "SELECT tr.status || ' ' || COALESCE(tr.reason, (SELECT read_back FROM knob_readings k
             WHERE k.trial_id = tr.trial_id)) FROM trials tr ORDER BY tr.trial_id",
        );
        assert_eq!(rows.len(), 2);
        assert!(rows.contains(&"ok never".to_string()), "{rows:?}");
        assert!(
            rows.iter().any(|r| r.starts_with("skipped")
                && r.contains("does not offer 'bogus' (offered: always, madvise, never)")),
            "{rows:?}"
        );
    }
    assert!(journals(&state).is_empty());
}

#[test]
fn plan_lists_every_setting_it_will_change_with_the_value_now() {
    let s = Scratch::new();
    let out = schedlab()
        .args(["plan", "--db", s.db().to_str().unwrap()])
        .args([
            "--policy",
            "rr",
            "--knob",
            "kernel.sched_rr_timeslice_ms=10,30,100",
        ])
        .args(["--knob", "kernel.sched_rt_runtime_us=950000,-1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Kernel settings this plan changes"), "{text}");
    let now = value(RR_QUANTUM);
    assert!(
        text.contains(&format!(
            "kernel.sched_rr_timeslice_ms (/proc/sys/kernel/sched_rr_timeslice_ms): now {now}; set to 10, 30, 100"
        )),
        "{text}"
    );
    assert!(
        text.contains("kernel.sched_rt_runtime_us (/proc/sys/kernel/sched_rt_runtime_us): now "),
        "{text}"
    );
    assert!(text.contains("6 cells x 3 trials"), "{text}");
}

#[test]
fn without_sched_ext_the_scx_axis_and_the_ext_policy_are_refused_with_cause_and_remedy() {
    if schedlab_machine::sched_ext::SchedExt::now().present() {
        return skip(
            Need::Kernel,
            "this kernel has sched_ext; the refusal without it cannot be shown here",
        );
    }
    let s = Scratch::new();
    let state = s.path().join("state");
    run_in(
        &s,
        &state,
        &[
            "--policy",
            "other,ext",
            "--scx",
            "none",
            "--scx",
            "scx_lavd",
            "--tasks",
            "1",
            "--work",
            "2ms",
            "--trials",
            "1",
        ],
    );
    let c = s.conn();
    let rows = texts(
        &c,
        "SELECT c.policy || ' ' || COALESCE(c.scx, 'fair') || ' ' || tr.status FROM trials tr
         JOIN cells c USING (cell_id) ORDER BY c.cell_index",
    );
    assert_eq!(
        rows,
        [
            "other fair ok",
            "other scx_lavd skipped",
            "ext fair skipped",
            "ext scx_lavd skipped"
        ]
    );
    for reason in texts(&c, "SELECT reason FROM trials WHERE status = 'skipped'") {
        assert!(
            reason.contains("no sched_ext") && reason.contains("CONFIG_SCHED_CLASS_EXT=y"),
            "{reason}"
        );
    }
    let out = schedlab().arg("policies").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ext = text
        .lines()
        .find(|l| l.trim_start().starts_with("ext "))
        .unwrap();
    assert!(
        ext.contains("REFUSED (EINVAL)") && ext.contains("no sched_ext"),
        "{text}"
    );
    assert!(text.contains("sched_ext: absent"), "{text}");
}
