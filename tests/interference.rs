//! Interference measured, not guessed: a CPU hog pinned to the trial's CPU makes every trial
//! `disturbed` (its outside CPU share stored), while a run of RT tasks on that CPU, which
//! outside work cannot preempt, flags none.

mod common;

use common::*;
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use std::process::{Child, Command, Stdio};

/// A busy shell loop pinned to CPU 0 at SCHED_OTHER, killed on drop.
struct Hog(Child);

impl Hog {
    fn start() -> Hog {
        let child = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh runs");
        let mut set = CpuSet::new();
        set.set(0).unwrap();
        sched_setaffinity(Pid::from_raw(child.id() as i32), &set).expect("pinned to CPU 0");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// (outside share, disturbed, source) of every ok trial.
fn shares(s: &Scratch) -> Vec<(f64, i64, String)> {
    s.conn()
        .prepare("SELECT outside_share, disturbed, interference_source FROM trials WHERE status = 'ok' ORDER BY trial_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn a_hog_on_the_trials_cpu_disturbs_every_trial_and_rt_tasks_on_it_none() {
    if !root_or_skip("a_hog_on_the_trials_cpu_disturbs_every_trial") {
        return;
    }
    let _turn = rt_turn();
    let hog = Hog::start();
    // One OTHER task of 100 ms on CPU 0 shares it with the hog: about half of the CPU's time
    // goes to work outside the trial (more if other programs run there too).
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy", "other", "--tasks", "1", "--cpus", "0", "--work", "100ms", "--trials", "4",
        ],
    );
    let hogged = shares(&s);
    eprintln!("with a hog (share, disturbed, source): {hogged:?}");
    assert_eq!(hogged.len(), 4);
    for (share, disturbed, source) in &hogged {
        assert!(*share > 0.25, "outside share {share}: {hogged:?}");
        assert_eq!(*disturbed, 1, "{hogged:?}");
        assert!(!source.is_empty());
    }
    // FIFO tasks on the same CPU with the hog still there: the hog gets no CPU while they
    // run (the fair server only steps in after about 950 ms without fair time), so nothing
    // outside disturbs them.
    let quiet = Scratch::new();
    run_ok(
        &quiet,
        &[
            "--policy", "fifo", "--tasks", "2", "--cpus", "0", "--work", "50ms", "--trials", "4",
        ],
    );
    drop(hog);
    let calm = shares(&quiet);
    eprintln!("FIFO beside the hog (share, disturbed, source): {calm:?}");
    assert_eq!(calm.len(), 4);
    for (share, disturbed, _) in &calm {
        assert!(*share < 0.10, "outside share {share}: {calm:?}");
        assert_eq!(*disturbed, 0, "{calm:?}");
    }
}
