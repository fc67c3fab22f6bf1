//! Interference measured, not guessed: a CPU hog pinned to the trial's CPU makes every trial
//! `disturbed` (its outside CPU share stored), while a run of RT tasks on that CPU, which
//! outside work cannot preempt, flags none.

mod common;

use common::*;
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use schedlab_core::records::DISTURBED_PCT;
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
    if !root("SCHED_FIFO") {
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
    // run but for the kernel's fair server (or RT throttling), which gives fair tasks up to
    // 50 ms a second; with trials of about 0.8 s that is at most ~6 % of the CPU, below the
    // threshold. (With 0.1 s trials the server's 50 ms, when it lands in one, is 15-50 %.)
    let quiet = Scratch::new();
    run_ok(
        &quiet,
        &[
            "--policy", "fifo", "--tasks", "2", "--cpus", "0", "--work", "400ms", "--trials", "4",
        ],
    );
    drop(hog);
    let calm = shares(&quiet);
    eprintln!("FIFO beside the hog (share, disturbed, source): {calm:?}");
    assert_eq!(calm.len(), 4);
    // Measured here: 2-6 % each. On a shared machine other programs' RT threads and interrupt
    // work on CPU 0 may still land in one trial: at most one may be flagged, and the median
    // stays far below the hog's.
    let flagged = calm.iter().filter(|t| t.1 == 1).count();
    assert!(flagged <= 1, "{flagged} of 4 flagged: {calm:?}");
    for (share, disturbed, _) in &calm {
        assert_eq!(*disturbed == 1, *share * 100.0 > DISTURBED_PCT, "{calm:?}");
    }
    let mut calm_shares: Vec<f64> = calm.iter().map(|t| t.0).collect();
    calm_shares.sort_by(f64::total_cmp);
    let median = (calm_shares[1] + calm_shares[2]) / 2.0;
    assert!(median < 0.10, "median outside share {median}: {calm:?}");
}
