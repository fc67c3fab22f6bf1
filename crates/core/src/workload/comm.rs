//! The communicating workloads' loops over real kernel objects: messaging (hackbench) and pipe
//! (perf bench sched pipe); request (schbench) is in [`super::request`]. [`Links`] is what a
//! task holds of its trial's channels and shared words; [`channel`] makes one channel.
//!
//! Everything here is blocking I/O on pipes and AF_UNIX stream sockets, as the peers do: a
//! writer sleeps when its channel is full (a pipe holds 64 KiB, a socket its send buffer), a
//! reader when it is empty, and those sleeps and wake-ups are the schedule being measured.
//! Nothing allocates: buffers are sized when the work is prepared.

use super::record::{HistKind, Recorder};
use super::request::{CpuLock, RequestWords};
use super::Ipc;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

/// Bytes of the pipe workload's token (perf's int).
pub const TOKEN_BYTES: usize = 4;

/// What a task of a communicating workload reaches of its trial.
#[derive(Debug, Default, Clone)]
pub struct Links<'a> {
    /// messaging receiver: its channel's read end; pipe: the pipe it reads.
    pub read: Option<BorrowedFd<'a>>,
    /// messaging sender: the write ends of its group's channels, receiver 0 first; pipe: the
    /// pipe it writes.
    pub write: Vec<BorrowedFd<'a>>,
    /// request: the shared words of every task of the trial.
    pub words: &'a [RequestWords],
    /// request: one spin lock per CPU (the per-CPU lock).
    pub cpu_locks: &'a [CpuLock],
}

/// A new channel: (read end, write end), both blocking and close-on-exec: a pipe, or one
/// AF_UNIX stream socket pair (the receiver reads one socket, the senders write the other).
pub fn channel(ipc: Ipc) -> io::Result<(OwnedFd, OwnedFd)> {
    match ipc {
        Ipc::Pipe => nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from),
        Ipc::Socket => {
            let (a, b) = std::os::unix::net::UnixStream::pair()?;
            Ok((a.into(), b.into()))
        }
    }
}

/// Writes all of `buf` to `fd` (a short write is continued, an interrupted one retried).
#[inline]
fn write_all(fd: BorrowedFd, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match nix::unistd::write(fd, &buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes from `fd`; an end of file before that is an error.
#[inline]
fn read_exact(fd: BorrowedFd, buf: &mut [u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match nix::unistd::read(fd.as_raw_fd(), &mut buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A messaging sender: `loops` times, one message of `buf.len()` bytes to each of `write`
/// in turn (receiver 0 first). With `stamp`, each message starts with its send time
/// (CLOCK_MONOTONIC ns, native byte order). Returns the messages sent; bytes go to `rec`.
pub fn send(
    write: &[BorrowedFd],
    loops: u64,
    buf: &mut [u8],
    stamp: bool,
    rec: &mut Recorder,
) -> u64 {
    let mut sent = 0;
    for _ in 0..loops {
        for &fd in write {
            if stamp {
                buf[..8].copy_from_slice(&schedlab_sys::now_ns().to_ne_bytes());
            }
            if write_all(fd, buf).is_err() {
                return sent;
            }
            rec.bytes += buf.len() as u64;
            sent += 1;
        }
    }
    sent
}

/// A messaging receiver: reads `messages` messages of `buf.len()` bytes from `read`. With
/// `stamp`, records each message's latency (its arrival minus the send time it carries).
/// Returns the messages received whole; bytes go to `rec`.
pub fn receive(
    read: BorrowedFd,
    messages: u64,
    buf: &mut [u8],
    stamp: bool,
    rec: &mut Recorder,
) -> u64 {
    for got in 0..messages {
        if read_exact(read, buf).is_err() {
            return got;
        }
        rec.bytes += buf.len() as u64;
        if stamp {
            let mut sent = [0u8; 8];
            sent.copy_from_slice(&buf[..8]);
            let now = schedlab_sys::now_ns();
            rec.record(HistKind::Op, now.saturating_sub(u64::from_ne_bytes(sent)));
        }
    }
    messages
}

/// One side of the pipe workload, `loops` round trips: the pinger writes the token and waits
/// for it to come back, the ponger waits for it and writes it back. Returns the round trips
/// completed.
pub fn ping_pong(read: BorrowedFd, write: BorrowedFd, loops: u64, ping: bool) -> u64 {
    let mut token = [0u8; TOKEN_BYTES];
    for done in 0..loops {
        let ok = if ping {
            write_all(write, &token).and_then(|_| read_exact(read, &mut token))
        } else {
            read_exact(read, &mut token).and_then(|_| write_all(write, &token))
        };
        if ok.is_err() {
            return done;
        }
    }
    loops
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn every_receiver_gets_each_senders_messages_whole_over_both_transports() {
        for ipc in [Ipc::Pipe, Ipc::Socket] {
            // 2 receivers, 3 senders, 50 loops of 100 bytes: each receiver gets 150 messages.
            let chans: Vec<(OwnedFd, OwnedFd)> = (0..2).map(|_| channel(ipc).unwrap()).collect();
            let writes: Vec<BorrowedFd> = chans.iter().map(|c| c.1.as_fd()).collect();
            std::thread::scope(|s| {
                let receivers: Vec<_> = chans
                    .iter()
                    .map(|c| {
                        let fd = c.0.as_fd();
                        s.spawn(move || {
                            let mut rec = Recorder::default();
                            let n = receive(fd, 150, &mut [0u8; 100], false, &mut rec);
                            (n, rec.bytes)
                        })
                    })
                    .collect();
                for _ in 0..3 {
                    let w = writes.clone();
                    s.spawn(move || {
                        let mut rec = Recorder::default();
                        assert_eq!(send(&w, 50, &mut [b'-'; 100], false, &mut rec), 100);
                        assert_eq!(rec.bytes, 100 * 100);
                    });
                }
                for r in receivers {
                    assert_eq!(r.join().unwrap(), (150, 15_000), "{ipc:?}");
                }
            });
        }
    }

    #[test]
    fn stamped_messages_give_one_latency_each() {
        let (r, w) = channel(Ipc::Pipe).unwrap();
        let wk = super::super::Workload {
            kind: super::super::WorkloadKind::Messaging,
            messaging: Some(super::super::MessagingParams {
                latency: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut rx = Recorder::for_workload(&wk);
        let mut tx = Recorder::default();
        assert_eq!(send(&[w.as_fd()], 10, &mut [0u8; 16], true, &mut tx), 10);
        assert_eq!(receive(r.as_fd(), 10, &mut [0u8; 16], true, &mut rx), 10);
        let h = rx.hist(HistKind::Op).unwrap();
        assert_eq!(h.len(), 10);
        assert!(
            h.max() < 10_000_000_000,
            "a latency is a real time: {}",
            h.max()
        );
        // The writer is gone: a read past the end stops short.
        drop(w);
        assert_eq!(receive(r.as_fd(), 1, &mut [0u8; 16], false, &mut rx), 0);
    }

    #[test]
    fn the_token_makes_exactly_the_round_trips_asked() {
        let (r1, w1) = channel(Ipc::Pipe).unwrap();
        let (r2, w2) = channel(Ipc::Pipe).unwrap();
        std::thread::scope(|s| {
            let pong = s.spawn(|| ping_pong(r1.as_fd(), w2.as_fd(), 1000, false));
            assert_eq!(ping_pong(r2.as_fd(), w1.as_fd(), 1000, true), 1000);
            assert_eq!(pong.join().unwrap(), 1000);
        });
    }
}
