//! The test binary run again as a child process (`SCHEDLAB_CG_CHILD=MODE`): busy loops that
//! measure their own CPU time, a DEADLINE task started through `chrt`, a process that creates
//! groups and is then killed. Children wait for a byte on stdin before they start, so the
//! parent can place them in their groups first.

use schedlab_cgroup::*;
use std::io::{BufRead, Read, Write};
use std::os::unix::process::CommandExt;
use std::sync::Arc;
use std::time::Instant;

/// The variable that makes the test binary a child.
pub const CHILD_ENV: &str = "SCHEDLAB_CG_CHILD";

/// Run as a child if asked; true if this process was one (and has done its work).
pub fn dispatch() -> bool {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return false;
    };
    let parts: Vec<&str> = mode.split(':').collect();
    let n = |i: usize| -> u64 { parts[i].parse().expect("a number in the child mode") };
    match parts[0] {
        "burn" => {
            wait_start();
            burn_report(n(1));
        }
        "burn-now" => burn_report(n(1)),
        "spin" => {
            wait_start();
            loop {
                std::hint::black_box(spin_a_while());
            }
        }
        "dl" => {
            wait_start();
            let (runtime, period, ms) = (n(1), n(2), n(3));
            let exe = std::env::current_exe().expect("own path");
            let e = std::process::Command::new("chrt")
                .args(["-d", "--sched-runtime", &runtime.to_string()])
                .args([
                    "--sched-deadline",
                    &period.to_string(),
                    "--sched-period",
                    &period.to_string(),
                    "0",
                ])
                .arg(exe)
                .env(CHILD_ENV, format!("burn-now:{ms}"))
                .exec();
            eprintln!("cannot run chrt: {e}");
            std::process::exit(3);
        }
        "fifo" => {
            wait_start();
            let exe = std::env::current_exe().expect("own path");
            let e = std::process::Command::new("chrt")
                .args(["-f", "10"])
                .arg(exe)
                .env(CHILD_ENV, format!("burn-now:{}", n(1)))
                .exec();
            eprintln!("cannot run chrt: {e}");
            std::process::exit(3);
        }
        "threads" => threads(n(1)),
        "make-groups" => make_groups(),
        other => panic!("unknown child mode {other}"),
    }
    true
}

fn wait_start() {
    let mut b = [0u8; 1];
    std::io::stdin().read_exact(&mut b).expect("the start byte");
}

/// This thread's time on a CPU, ns (`/proc/thread-self/schedstat`, first field).
pub fn thread_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number")
}

/// A task's time on a CPU, ns (`/proc/PID/schedstat`; a single-threaded child).
pub fn task_cpu_ns(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// This thread's id (`/proc/thread-self` links to `PID/task/TID`).
pub fn tid() -> u32 {
    let l = std::fs::read_link("/proc/thread-self").expect("thread-self");
    l.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse().ok())
        .expect("a tid")
}

fn spin_a_while() -> u64 {
    let mut x = 0u64;
    for i in 0..20_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

/// Burn `ms` of this thread's CPU time; returns (wall ns, cpu ns).
fn burn(ms: u64) -> (u64, u64) {
    let (t0, c0) = (Instant::now(), thread_cpu_ns());
    while thread_cpu_ns() - c0 < ms * 1_000_000 {
        std::hint::black_box(spin_a_while());
    }
    (t0.elapsed().as_nanos() as u64, thread_cpu_ns() - c0)
}

fn burn_report(ms: u64) {
    let (wall, cpu) = burn(ms);
    println!("done {wall} {cpu}");
}

/// Two threads: print both tids, wait for the start byte, let the second burn `ms`, report,
/// and keep both threads until stdin closes (so the parent can remove the groups while the
/// worker thread still lives in its group).
fn threads(ms: u64) {
    let (tx, rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (res_tx, res_rx) = std::sync::mpsc::channel();
    let (quit_tx, quit_rx) = std::sync::mpsc::channel::<()>();
    let h = std::thread::spawn(move || {
        tx.send(tid()).expect("send");
        go_rx.recv().expect("go");
        res_tx.send(burn(ms)).expect("result");
        let _ = quit_rx.recv();
    });
    let worker = rx.recv().expect("tid");
    println!("tids {} {worker}", tid());
    std::io::stdout().flush().expect("flush");
    wait_start();
    go_tx.send(()).expect("go");
    let (wall, cpu) = res_rx.recv().expect("result");
    println!("done {wall} {cpu}");
    std::io::stdout().flush().expect("flush");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let _ = quit_tx.send(());
    h.join().expect("join");
}

/// Open a session, create a trial, put a `sleep` in it, print the paths and the sleeper's pid,
/// then wait to be killed.
fn make_groups() {
    let fs = Arc::new(RealFs);
    let caps = Capabilities::detect(&*fs).expect("detect");
    let spec = TrialSpec {
        label: Name::new("killed").expect("name"),
        groups: vec![GroupSpec {
            name: Name::new("g").expect("name"),
            settings: GroupSettings {
                weight: Some(Weight::new(50).expect("weight")),
                ..GroupSettings::default()
            },
        }],
        threads: false,
    };
    let owner = OwnerId::this_process().expect("owner");
    let s = Session::open(fs, caps, owner, Needs::of([&spec])).expect("open");
    let plan = s.plan_trial(&spec).expect("plan");
    let mut paths: Vec<String> = s.paths().iter().map(|p| p.display().to_string()).collect();
    paths.extend(plan.paths().iter().map(|p| p.display().to_string()));
    let t = s.create_trial(plan).expect("create");
    // Left to run when this process is SIGKILLed, as a task would be; the test kills it.
    #[allow(clippy::zombie_processes)]
    let sleeper = std::process::Command::new("sleep")
        .arg("10")
        .spawn()
        .expect("sleep");
    t.add_process(0, sleeper.id()).expect("place the sleeper");
    t.add_process(0, std::process::id()).expect("place itself");
    println!("ready {} {}", sleeper.id(), paths.join(" "));
    std::io::stdout().flush().expect("flush");
    let stdin = std::io::stdin();
    let _ = stdin.lock().lines().next(); // killed while waiting
    std::mem::forget(t);
    std::mem::forget(s);
}
