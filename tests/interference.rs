//! Interference measured, not guessed: a CPU hog pinned to the trial's CPU makes every trial
//! `disturbed` (its outside CPU share stored, the hog named in its warning, every attempt
//! re-run while retries last), while a run of RT tasks on that CPU, which outside work cannot
//! preempt, flags none.

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

/// (other processes' share, disturbed, source) of every ok trial of attempt `retry`.
fn shares(s: &Scratch, retry: i64) -> Vec<(f64, i64, String)> {
    s.conn()
        .prepare(&format!("SELECT outside_process_share, disturbed, interference_source FROM trials WHERE status = 'ok' AND retry = {retry} ORDER BY trial_id"))
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
            "--policy",
            "other",
            "--tasks",
            "1",
            "--cpus",
            "0",
            "--work",
            "100ms",
            "--trials",
            "4",
            "--retries",
            "2",
        ],
    );
    let hogged = shares(&s, 0);
    eprintln!("with a hog (share, disturbed, source): {hogged:?}");
    assert_eq!(hogged.len(), 4);
    for (share, disturbed, source) in &hogged {
        assert!(*share > 0.25, "other processes' share {share}: {hogged:?}");
        assert_eq!(*disturbed, 1, "{hogged:?}");
        assert!(!source.is_empty());
    }
    // Each was run again twice (the default retries), disturbed each time, and the hog is
    // named in the warnings.
    for retry in [1, 2] {
        let again = shares(&s, retry);
        assert_eq!(again.len(), 4, "re-run {retry}: {again:?}");
        assert!(again.iter().all(|t| t.1 == 1), "{again:?}");
    }
    let hog_pid = hog.0.id();
    let c = s.conn();
    let named = ints(
        &c,
        &format!("SELECT COUNT(*) FROM warnings WHERE code = 'trial_disturbed' AND params LIKE '%\"pid\":{hog_pid},%'"),
    );
    assert_eq!(
        named,
        vec![12],
        "every attempt's warning names the hog (pid {hog_pid})"
    );
    drop(c);
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
    let calm = shares(&quiet, 0);
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

#[test]
fn an_io_trials_own_kernel_work_is_its_cost_not_disturbance() {
    if !root("SCHED_FIFO for the io cells of the issue") {
        return;
    }
    let _turn = rt_turn();
    // The cells of issue 26: O_SYNC writes of 1 KiB, flushed by kernel workers (kblockd, jbd2,
    // ext4) and completed in softirqs; before, that work counted as outside and left most of
    // these trials out as disturbed.
    let s = Scratch::new();
    run_ok(
        &s,
        &[
            "--policy",
            "fifo,other",
            "--workload",
            "io",
            "--io-mode",
            "sync-copy",
            "--io-block",
            "1024",
            "--io-bytes",
            "102400",
            "--tasks",
            "10",
            "--trials",
            "3",
        ],
    );
    type Row = (f64, f64, i64, i64, i64, i64, i64);
    let rows: Vec<Row> = s
        .conn()
        .prepare(
            "SELECT outside_share, outside_process_share, outside_process_ns, outside_kthread_ns,
                    outside_irq_ns, kernel_cpu_ns, disturbed FROM trials WHERE status = 'ok' ORDER BY trial_id",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    eprintln!("(outside share, processes' share, processes ns, kthreads ns, irq ns, kernel ns, disturbed): {rows:?}");
    assert_eq!(rows.len(), 6);
    let mut kernel_only = 0;
    for &(all, processes, process_ns, kthread_ns, irq_ns, kernel_ns, disturbed) in &rows {
        assert!(process_ns >= 0 && kthread_ns >= 0 && irq_ns >= 0 && kernel_ns >= 0);
        assert!(
            kernel_ns <= kthread_ns + irq_ns,
            "induced within the kernel's own"
        );
        assert!(
            processes <= all + 1e-9,
            "other processes are part of all outside work"
        );
        // Disturbed means other processes above the threshold, whatever the kernel did.
        assert_eq!(
            disturbed == 1,
            processes * 100.0 > DISTURBED_PCT,
            "{rows:?}"
        );
        if all * 100.0 > DISTURBED_PCT && processes * 100.0 <= DISTURBED_PCT {
            kernel_only += 1;
        }
    }
    eprintln!("{kernel_only} trials had more than 10 % outside work, not other processes' (flagged disturbed before)");
    let kernel: i64 = rows.iter().map(|r| r.3 + r.4).sum();
    assert!(
        kernel > 0,
        "the kernel worked for the trials' writes: {rows:?}"
    );
    // The export shows it.
    let o = schedlab()
        .args([
            "export",
            "--table",
            "trials",
            "--db",
            s.db().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == "kernel_cpu_ns").unwrap();
    let exported: Vec<i64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(k).unwrap().parse().unwrap())
        .collect();
    assert_eq!(exported, rows.iter().map(|r| r.5).collect::<Vec<_>>());
}
