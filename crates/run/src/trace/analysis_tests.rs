//! Tests of per_task and timeline on constructed event sequences with known answers.

use super::*;

const US: u64 = 1000;

fn ev(cpu: u32, us: u64, kind: EventKind) -> Event {
    Event {
        cpu,
        ts_ns: us * US,
        kind,
    }
}

fn sw(cpu: u32, us: u64, prev_pid: i32, prev_state: &str, next_pid: i32) -> Event {
    let kind = EventKind::Switch {
        prev_comm: format!("t{prev_pid}"),
        prev_pid,
        prev_prio: 120,
        prev_state: prev_state.to_string(),
        next_comm: format!("t{next_pid}"),
        next_pid,
        next_prio: 120,
    };
    ev(cpu, us, kind)
}

fn wakeup(cpu: u32, us: u64, pid: i32) -> Event {
    ev(
        cpu,
        us,
        EventKind::Wakeup {
            comm: format!("t{pid}"),
            pid,
            prio: 120,
            target_cpu: cpu,
        },
    )
}

fn waking(cpu: u32, us: u64, pid: i32) -> Event {
    ev(
        cpu,
        us,
        EventKind::Waking {
            comm: format!("t{pid}"),
            pid,
            prio: 120,
            target_cpu: cpu,
        },
    )
}

fn wakeup_new(cpu: u32, us: u64, pid: i32) -> Event {
    ev(
        cpu,
        us,
        EventKind::WakeupNew {
            comm: format!("t{pid}"),
            pid,
            prio: 120,
            target_cpu: cpu,
        },
    )
}

fn migrate(cpu: u32, us: u64, pid: i32, orig_cpu: u32, dest_cpu: u32) -> Event {
    ev(
        cpu,
        us,
        EventKind::Migrate {
            comm: format!("t{pid}"),
            pid,
            prio: 120,
            orig_cpu,
            dest_cpu,
        },
    )
}

/// Task 100 is created, sleeps, is woken onto the other CPU (a migration), is preempted by
/// task 200, runs again, sleeps, and is running when the trace ends.
fn story() -> Vec<Event> {
    vec![
        wakeup_new(0, 1000, 100),
        sw(0, 1010, 0, "R", 100), // delay 10 us
        sw(0, 1500, 100, "S", 0), // ran 490 us
        waking(1, 2000, 100),     // not the start of the delay
        migrate(1, 2001, 100, 0, 1),
        migrate(1, 2002, 100, 1, 1), // the tracepoint also fires for a "move" to the same CPU
        wakeup(1, 2003, 100),
        sw(1, 2050, 0, "R", 100), // delay 47 us
        wakeup(1, 2100, 200),
        sw(1, 2104, 100, "R+", 200), // 100 preempted after 54 us; 200's delay 4 us
        wakeup(1, 2200, 100),        // already runnable: ignored
        sw(1, 2300, 200, "S", 100), // 200 ran 196 us; 100's wait after preemption is no wake-up delay
        sw(1, 2400, 100, "S", 0),   // ran 100 us
        wakeup(0, 3000, 100),
        sw(0, 3005, 0, "R", 100), // delay 5 us
        wakeup(0, 3100, 100),     // still running: ignored
        sw(1, 3500, 7, "S", 8),   // the trace ends; 100 ran 495 us so far
    ]
}

#[test]
fn per_task_finds_known_delays_a_preemption_and_a_migration() {
    let tasks = per_task(&story(), &[100, 200, 300, 0]);
    assert_eq!(
        tasks[0],
        TaskTrace {
            tid: 100,
            wakeup_delays_ns: vec![10 * US, 47 * US, 5 * US],
            preemptions: 1,
            migrations: 1,
            run_ns: (490 + 54 + 100 + 495) * US,
            unseen_switch_ins: 0,
        }
    );
    assert_eq!(
        tasks[1],
        TaskTrace {
            tid: 200,
            wakeup_delays_ns: vec![4 * US],
            preemptions: 0,
            migrations: 0,
            run_ns: 196 * US,
            unseen_switch_ins: 0,
        }
    );
    assert_eq!(
        tasks[2],
        TaskTrace {
            tid: 300,
            ..TaskTrace::default()
        }
    );
    assert_eq!(
        tasks[3],
        TaskTrace {
            tid: 0,
            ..TaskTrace::default()
        }
    );
}

#[test]
fn timeline_lists_each_cpu_interval_of_the_traced_tasks_in_time_order() {
    let slice = |cpu, tid, start: u64, end: u64| Slice {
        cpu,
        tid,
        start_ns: start * US,
        end_ns: end * US,
    };
    assert_eq!(
        timeline(&story(), &[100, 200]),
        vec![
            slice(0, 100, 1010, 1500),
            slice(1, 100, 2050, 2104),
            slice(1, 200, 2104, 2300),
            slice(1, 100, 2300, 2400),
            slice(0, 100, 3005, 3500),
        ]
    );
    assert_eq!(timeline(&story(), &[200]), vec![slice(1, 200, 2104, 2300)]);
}

#[test]
fn events_out_of_time_order_give_the_same_answers() {
    let mut shuffled = story();
    shuffled.reverse();
    assert_eq!(
        per_task(&shuffled, &[100, 200]),
        per_task(&story(), &[100, 200])
    );
    assert_eq!(
        timeline(&shuffled, &[100, 200]),
        timeline(&story(), &[100, 200])
    );
}

#[test]
fn intervals_spanning_lost_events_are_dropped_not_guessed() {
    let events = vec![
        sw(0, 1, 0, "R", 300),
        sw(1, 5, 0, "R", 200),
        wakeup(0, 10, 100),
        ev(0, 50, EventKind::Lost(12)),
        sw(0, 60, 300, "S", 100), // 100's switch-in may not be the one after its wake-up
        ev(1, 70, EventKind::Lost(3)),
        sw(1, 80, 200, "S", 0), // 200's run began before the gap on its CPU
        sw(0, 90, 100, "S", 0),
    ];
    let tasks = per_task(&events, &[100, 200, 300]);
    assert!(tasks[0].wakeup_delays_ns.is_empty());
    assert_eq!(tasks[0].run_ns, 30 * US);
    assert_eq!(tasks[1].run_ns, 0);
    // 300 ran on CPU 0 across CPU 0's gap: its slice is unreliable too.
    assert_eq!(tasks[2].run_ns, 0);
}

#[test]
fn a_task_switched_out_on_another_cpu_than_it_came_in_gets_no_slice() {
    let events = vec![sw(0, 1, 0, "R", 100), sw(1, 9, 100, "S", 0)];
    assert!(timeline(&events, &[100]).is_empty());
}

#[test]
fn a_switch_the_kernel_never_recorded_is_counted_and_not_guessed() {
    let events = vec![
        sw(1, 10, 0, "R", 5),
        wakeup(1, 20, 100),
        sw(1, 40, 100, "S", 0), // 100 leaves a CPU the trace shows running 5: 5 -> 100 is missing
        wakeup(1, 50, 100),
        sw(1, 55, 0, "R", 100), // delay 5 us
        sw(1, 60, 100, "S", 0),
        sw(0, 1, 0, "R", 200),
        sw(0, 9, 7, "S", 0), // 200 -> 7 is missing: 200's slice has no known end
    ];
    let tasks = per_task(&events, &[100, 200]);
    assert_eq!(tasks[0].wakeup_delays_ns, vec![5 * US]);
    assert_eq!((tasks[0].unseen_switch_ins, tasks[0].run_ns), (1, 5 * US));
    assert_eq!(timeline(&events, &[200]), vec![]);
}
