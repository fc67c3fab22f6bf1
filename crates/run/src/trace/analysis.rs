//! The kernel's view of a trial's tasks, computed from parsed sched events: wake-up delays,
//! preemptions, migrations and on-CPU intervals, with `perf sched latency` semantics.
//!
//! Wake-up delay = time from `sched_wakeup` (or `sched_wakeup_new` for a new task) to the
//! `sched_switch` that puts the task on a CPU, the span `perf sched latency` measures.
//! `sched_waking` is not the start: it is emitted on the waker's CPU before the task is
//! enqueued, and is kept in the events for anyone who wants the longer waking-to-run span.
//! A wake-up is counted only when the task was seen leaving the CPU asleep (or not seen at
//! all yet, as perf does); wake-ups of a task still on a CPU or still runnable are ignored.
//! The waits of a preempted task for its CPU are not wake-up delays here (perf adds them).
//! Around a lost-events marker, intervals that may span the gap are dropped, not guessed.
//!
//! Some switches are never recorded at all: on the development machine the kernel emits no
//! `sched_switch` for switches away from the idle task (at times) and away from the guest
//! agent's threads (`perf record` misses them too). Such a gap shows as a switch out of a task
//! the trace never switched in on that CPU; the traced thread's wake-up delay and slice
//! around it are then unknown, so they are left out and counted in `unseen_switch_ins`.

use super::parser::{Event, EventKind};
pub use schedlab_core::records::{Slice, TaskTrace};
use std::collections::HashMap;

/// Per-thread summaries for `tids`, in the order given (a tid of 0 or less gets an empty one:
/// the idle tasks all have tid 0). Events are taken in time order (stable for ties).
pub fn per_task(events: &[Event], tids: &[i32]) -> Vec<TaskTrace> {
    let walk = Walk::run(events, tids);
    let mut run_ns: HashMap<i32, u64> = HashMap::new();
    for s in &walk.slices {
        *run_ns.entry(s.tid).or_default() += s.end_ns - s.start_ns;
    }
    tids.iter()
        .map(|&tid| {
            let mut t = walk
                .tasks
                .get(&tid)
                .map(|s| s.out.clone())
                .unwrap_or_default();
            t.tid = tid;
            t.run_ns = run_ns.get(&tid).copied().unwrap_or(0);
            t
        })
        .collect()
}

/// The on-CPU intervals of `tids`, ordered by start time then CPU. A slice whose switch-in
/// was not seen (before the trace began, or lost) is left out.
pub fn timeline(events: &[Event], tids: &[i32]) -> Vec<Slice> {
    Walk::run(events, tids).slices
}

/// Where a thread stands, as far as the trace has shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// Not seen yet, or lost track of in a gap.
    Unknown,
    /// On `cpu` since `since`.
    Running { cpu: u32, since: u64 },
    /// Switched out still runnable (preempted).
    Runnable,
    /// Switched out asleep (or exiting).
    Asleep,
    /// Woken at `at`, not yet on a CPU.
    Woken { at: u64 },
}

#[derive(Debug)]
struct State {
    at: Where,
    out: TaskTrace,
}

struct Walk {
    tasks: HashMap<i32, State>,
    slices: Vec<Slice>,
    /// The tid each CPU runs according to its last recorded switch.
    on_cpu: HashMap<u32, i32>,
}

impl Walk {
    fn run(events: &[Event], tids: &[i32]) -> Walk {
        let tasks = tids
            .iter()
            .filter(|&&tid| tid > 0)
            .map(|&tid| {
                let out = TaskTrace {
                    tid,
                    ..TaskTrace::default()
                };
                (
                    tid,
                    State {
                        at: Where::Unknown,
                        out,
                    },
                )
            })
            .collect();
        let mut walk = Walk {
            tasks,
            slices: Vec::new(),
            on_cpu: HashMap::new(),
        };
        let mut last_ts = 0;
        for e in in_time_order(events) {
            last_ts = last_ts.max(e.ts_ns);
            match &e.kind {
                EventKind::Switch {
                    prev_pid,
                    prev_state,
                    next_pid,
                    ..
                } => walk.switch(e, *prev_pid, prev_state, *next_pid),
                EventKind::Wakeup { pid, .. } | EventKind::WakeupNew { pid, .. } => {
                    if let Some(t) = walk.tasks.get_mut(pid) {
                        if matches!(t.at, Where::Unknown | Where::Asleep) {
                            t.at = Where::Woken { at: e.ts_ns };
                        }
                    }
                }
                EventKind::Waking { .. } => {}
                EventKind::Migrate {
                    pid,
                    orig_cpu,
                    dest_cpu,
                    ..
                } => {
                    if let Some(t) = walk.tasks.get_mut(pid).filter(|_| orig_cpu != dest_cpu) {
                        t.out.migrations += 1;
                    }
                }
                EventKind::Lost(_) => walk.lost(e.cpu),
            }
        }
        for (&tid, t) in &walk.tasks {
            if let Where::Running { cpu, since } = t.at {
                walk.slices.push(Slice {
                    cpu,
                    tid,
                    start_ns: since,
                    end_ns: last_ts,
                });
            }
        }
        walk.slices.sort_by_key(|s| (s.start_ns, s.cpu));
        walk
    }

    fn switch(&mut self, e: &Event, prev: i32, prev_state: &str, next: i32) {
        let believed = self.on_cpu.insert(e.cpu, next);
        // The trace shows another task on this CPU: the switches between were not recorded.
        let gap = believed.is_some_and(|b| b != prev);
        if let Some(t) = believed
            .filter(|_| gap)
            .and_then(|b| self.tasks.get_mut(&b))
        {
            // It left this CPU unrecorded: its slice has no known end.
            if matches!(t.at, Where::Running { cpu, .. } if cpu == e.cpu) {
                t.at = Where::Unknown;
            }
        }
        if let Some(t) = self.tasks.get_mut(&prev) {
            match t.at {
                Where::Running { cpu, since } if cpu == e.cpu && !gap => {
                    let slice = Slice {
                        cpu,
                        tid: prev,
                        start_ns: since,
                        end_ns: e.ts_ns,
                    };
                    self.slices.push(slice);
                }
                _ if gap => t.out.unseen_switch_ins += 1,
                // Running elsewhere (events lost) or not seen yet: no known start.
                _ => {}
            }
            let runnable = prev_state == "R" || prev_state == "R+";
            if runnable {
                t.out.preemptions += 1;
            }
            t.at = if runnable {
                Where::Runnable
            } else {
                Where::Asleep
            };
        }
        if let Some(t) = self.tasks.get_mut(&next) {
            if let Where::Woken { at } = t.at {
                t.out.wakeup_delays_ns.push(e.ts_ns.saturating_sub(at));
            }
            t.at = Where::Running {
                cpu: e.cpu,
                since: e.ts_ns,
            };
        }
    }

    fn lost(&mut self, cpu: u32) {
        self.on_cpu.remove(&cpu);
        for t in self.tasks.values_mut() {
            let spans_gap = match t.at {
                Where::Running { cpu: c, .. } => c == cpu,
                // The switch-in that ends the wait may be among the lost events.
                Where::Woken { .. } => true,
                _ => false,
            };
            if spans_gap {
                t.at = Where::Unknown;
            }
        }
    }
}

/// The events in time order: as given when already sorted (what `parse` returns), else
/// stably sorted by timestamp.
fn in_time_order(events: &[Event]) -> Vec<&Event> {
    let mut v: Vec<&Event> = events.iter().collect();
    if !events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns) {
        v.sort_by_key(|e| e.ts_ns);
    }
    v
}
