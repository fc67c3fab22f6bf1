//! Tests of one task's life, run in a thread of the test process.

use super::*;
use schedlab_core::policy::{DeadlineParams, PolicyKind, PriorityMode};
use schedlab_core::workload::io::{IoMode, INPUT_FILE};
use std::os::fd::AsFd;
use std::time::Duration;

/// A staggered plan of one OTHER task doing one sync-copy I/O unit of `block` bytes.
fn one_io_task(block: u64) -> TaskPlan {
    TaskPlan {
        policies: vec![TaskPolicy::for_task(
            PolicyKind::Other,
            PriorityMode::Same,
            0,
            1,
            None,
            None,
            DeadlineParams::default(),
        )],
        workload: Workload {
            kind: WorkloadKind::Io,
            io_mode: IoMode::SyncCopy,
            io_block_bytes: block,
            ..Workload::default()
        },
        units: 1,
        cpus: None,
        barrier: false,
        dir: None,
        run_units: 0,
        measured: 1,
        antagonist_workload: None,
        antagonist_chunk: 0,
        contended: Vec::new(),
    }
}

/// Opens the FIFO `path` for writing as soon as a reader waits in its open: a non-blocking
/// open for writing fails (ENXIO) until one does. Returns the file and the instant just
/// before the open that succeeded (CLOCK_MONOTONIC ns).
fn open_writer_when_a_reader_waits(path: &std::path::Path) -> (std::fs::File, u64) {
    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..20_000 {
        let t = schedlab_sys::now_ns();
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(f) => return (f, t),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) => panic!("opening the FIFO for writing: {e}"),
        }
    }
    panic!("the task never opened its input (20 s)");
}

/// A staggered task's setup is held up for as long as the test likes: its input is a FIFO,
/// whose open for reading waits until a writer opens it. The writer opens it only once the
/// task waits there, having stamped `held_until` just before; so the task's setup ended after
/// `held_until` and its first timestamp came before. Exact orderings, no durations: the
/// work (and `t_start`) begins after `held_until`, the run span is at most `t_end -
/// held_until`, and the response (from the task's first timestamp, before its setup) at most
/// `held_until - t_release`. Stamping `t_start` before the setup, as before, fails the first
/// two.
#[test]
fn a_staggered_task_stamps_its_start_after_its_setup_and_its_response_before() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join(INPUT_FILE);
    nix::unistd::mkfifo(
        &fifo,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .unwrap();
    let dir = std::fs::File::open(tmp.path()).unwrap();
    let plan = one_io_task(4096);
    let hdr = Header::default();
    let slot = Slot::default();
    hdr.tasks.store(1, SeqCst);
    hdr.remaining.store(1, SeqCst);
    // The task keeps the test thread's attributes (no setattr, which an unprivileged test
    // under a raised nice could not undo).
    hdr.spawner_policy.store(1, SeqCst);
    let held_until = std::thread::scope(|s| {
        slot.t_release_ns.store(schedlab_sys::now_ns(), SeqCst);
        let task = s.spawn(|| task_main(&hdr, &slot, &[], &plan, Some(dir.as_fd()), 0));
        let (mut w, held_until) = open_writer_when_a_reader_waits(&fifo);
        std::io::Write::write_all(&mut w, &[7u8; 4096]).unwrap();
        drop(w);
        while hdr.remaining.load(SeqCst) != 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        hdr.stop.store(1, SeqCst);
        schedlab_sys::futex_wake(&hdr.stop, i32::MAX);
        task.join().unwrap();
        held_until
    });
    assert_eq!(
        slot.state.load(SeqCst),
        STATE_DONE,
        "errno {}",
        slot.errno.load(SeqCst)
    );
    assert_eq!(slot.work_units.load(SeqCst), 1);
    let r = crate::trial::record(0, &slot, &hdr);
    assert!(
        r.t_start_ns > held_until,
        "t_start {} is not after the setup, which ended after {held_until}",
        r.t_start_ns
    );
    let span = r.run_span_ns.unwrap();
    assert!(
        span <= (r.t_end_ns - held_until) as i64,
        "run span {span} ns includes the setup: the work ran from after {held_until} to {}",
        r.t_end_ns
    );
    let response = r.response_ns.unwrap();
    assert!(
        response >= 0 && response <= (held_until - r.t_release_ns) as i64,
        "response {response} ns includes the setup (held from before {held_until}, released at {})",
        r.t_release_ns
    );
    assert_eq!(
        r.turnaround_ns.unwrap(),
        (r.t_end_ns - r.t_release_ns) as i64
    );
}
