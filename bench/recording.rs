//! Recording cost of the communicating workloads (issue 19): the nanoseconds per message or
//! request that schedlab's figures add to the bare loop.
//!
//! - messaging: one thread writes 500 messages of 100 bytes into a pipe with the workload's
//!   own `send` and reads them back with `receive`, 200 times (100,000 messages), with the
//!   per-message latency recording (`--message-latency`: a send-time stamp in the message,
//!   a clock read and an HDR record at the receiver) and without it (the default, which
//!   records only byte counts). One thread, so no scheduling is in the figure.
//! - request: what a worker adds per request: two clock reads and two HDR records (wake-up
//!   and request latency), against the same loop without them (1,000,000 requests).
//!
//! ROUNDS rounds with the two ways interleaved in each; medians of ns per operation, and the
//! difference. Run: `cargo bench --bench recording`.

use schedlab_core::workload::comm::{channel, receive, send};
use schedlab_core::workload::{HistKind, Ipc, MessagingParams, Recorder, Workload, WorkloadKind};
use std::hint::black_box;
use std::os::fd::AsFd;
use std::time::Instant;

const ROUNDS: usize = 7;
const BATCH: u64 = 500;
const BATCHES: u64 = 200;
const REQUESTS: u64 = 1_000_000;

/// ns per message of 100-byte messages through a pipe, with or without latency recording.
fn messaging_ns(latency: bool) -> f64 {
    let w = Workload {
        kind: WorkloadKind::Messaging,
        messaging: Some(MessagingParams {
            latency,
            ..MessagingParams::default()
        }),
        ..Workload::default()
    };
    let (mut tx, mut rx) = (Recorder::for_workload(&w), Recorder::for_workload(&w));
    let (r, wr) = channel(Ipc::Pipe).expect("pipe");
    let (mut out, mut inp) = ([b'-'; 100], [0u8; 100]);
    let t = Instant::now();
    for _ in 0..BATCHES {
        send(&[wr.as_fd()], BATCH, &mut out, latency, &mut tx);
        receive(r.as_fd(), BATCH, &mut inp, latency, &mut rx);
    }
    let ns = t.elapsed().as_nanos() as f64 / (BATCH * BATCHES) as f64;
    assert_eq!(rx.bytes, 100 * BATCH * BATCHES);
    ns
}

/// ns per request of a worker's recording (two clock reads, two records), or of the loop alone.
fn request_ns(record: bool) -> f64 {
    let w = Workload {
        kind: WorkloadKind::Request,
        ..Workload::default()
    };
    let mut rec = Recorder::for_workload(&w);
    let t = Instant::now();
    for i in 0..REQUESTS {
        let sent = black_box(i);
        if record {
            let woke = schedlab_sys::now_ns();
            rec.record(HistKind::Wakeup, woke.wrapping_sub(sent) & 0xffff);
            let done = schedlab_sys::now_ns();
            rec.record(HistKind::Op, done.wrapping_sub(sent) & 0xfffff);
        }
        black_box(&rec);
    }
    t.elapsed().as_nanos() as f64 / REQUESTS as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (mut bare, mut rec) = (Vec::new(), Vec::new());
    let (mut rq_bare, mut rq_rec) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(messaging_ns(false));
        rec.push(messaging_ns(true));
        rq_bare.push(request_ns(false));
        rq_rec.push(request_ns(true));
    }
    let (b, r) = (median(bare), median(rec));
    println!("messaging, ns per 100-byte message through a pipe (send + receive, one thread), median of {ROUNDS}:");
    println!(
        "  without latency recording {b:.0} ns, with {r:.0} ns: {:.0} ns ({:.1} %) per message",
        r - b,
        (r - b) / b * 100.0
    );
    let (b, r) = (median(rq_bare), median(rq_rec));
    println!("request, ns per request of a worker's recording (2 clock reads + 2 HDR records), median of {ROUNDS}:");
    println!(
        "  loop alone {b:.1} ns, with recording {r:.1} ns: {:.1} ns per request",
        r - b
    );
}
