//! Tests of the trace parser on text recorded on the development machine (Linux 6.18).

use super::parser::lost_marker;
use super::*;

// `cat instances/X/trace` after `"/tmp/my (weird) task" 0.1` (header and events verbatim).
const TRACE: &str = r"# tracer: nop
#
# entries-in-buffer/entries-written: 122/122   #P:2
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
            bash-1079    [000] d..2.  5774.293252: sched_wakeup_new: comm=bash pid=1087 prio=120 target_cpu=000
            bash-1079    [000] d..2.  5774.293351: sched_switch: prev_comm=bash prev_pid=1079 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=1087 next_prio=120
 my (weird) task-1087    [000] d..2.  5774.294586: sched_switch: prev_comm=my (weird) task prev_pid=1087 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [001] d.s4.  5774.291808: sched_migrate_task: comm=cp pid=1086 prio=120 orig_cpu=0 dest_cpu=1
          <idle>-0       [000] d.h3.  5774.394680: sched_waking: comm=my (weird) task pid=1087 prio=120 target_cpu=000
          <idle>-0       [000] dNh4.  5774.394699: sched_wakeup: comm=my (weird) task pid=1087 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  5774.394719: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=my (weird) task next_pid=1087 next_prio=120
 my (weird) task-1087    [000] d..2.  5774.395062: sched_switch: prev_comm=my (weird) task prev_pid=1087 prev_prio=120 prev_state=Z ==> next_comm=bash next_pid=1079 next_prio=120
";

// `trace_pipe` of an 8 KiB-per-CPU instance read after a burst: the kernel's lost markers.
const LOST: &str = r"CPU:0 [LOST 38968 EVENTS]
        schedlab-4759    [000] d..3.  5936.606365: sched_waking: comm=schedlab pid=4762 prio=120 target_cpu=000
        schedlab-4412    [000] d..2.  5936.607763: sched_switch: prev_comm=schedlab prev_pid=4412 prev_prio=120 prev_state=D ==> next_comm=schedlab next_pid=4438 next_prio=120
CPU:1 [LOST 129388 EVENTS]
        schedlab-4408    [001] dNs5.  5936.607809: sched_wakeup: comm=schedlab pid=4345 prio=120 target_cpu=001
            true-5185    [001] d..2.  5936.610295: sched_switch: prev_comm=bash prev_pid=5185 prev_prio=120 prev_state=R+ ==> next_comm=migration/1 next_pid=21 next_prio=0
CPU:1 [LOST EVENTS]
";

// Comms set through /proc/PID/comm to imitate the line's own structure.
const IMPOSTORS: &str = r"  x [001] 1.5: y-9931    [001] dN.2.  6128.095407: sched_wakeup_new: comm=x [001] 1.5: y pid=9932 prio=120 target_cpu=001
  x [001] 1.5: y-9931    [001] d..2.  6128.095410: sched_switch: prev_comm=x [001] 1.5: y prev_pid=9931 prev_prio=120 prev_state=R ==> next_comm=x [001] 1.5: y next_pid=9932 next_prio=120
  a prev_pid=1 b-9933    [001] d..2.  6128.132988: sched_switch: prev_comm=a prev_pid=1 b prev_pid=9933 prev_prio=120 prev_state=S ==> next_comm=a prev_pid=1 b next_pid=9934 next_prio=120
";

fn switch(e: &Event) -> (&str, i32, i32, &str, &str, i32, i32) {
    match &e.kind {
        EventKind::Switch {
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state,
            next_comm,
            next_pid,
            next_prio,
        } => (
            prev_comm, *prev_pid, *prev_prio, prev_state, next_comm, *next_pid, *next_prio,
        ),
        other => panic!("not a switch: {other:?}"),
    }
}

#[test]
fn header_comments_are_skipped_and_every_event_line_parses() {
    let events = parse(TRACE).unwrap();
    assert_eq!(events.len(), 8);
    assert_eq!(parse_lenient(TRACE), (events, 0));
}

#[test]
fn timestamps_become_nanoseconds_and_the_cpu_comes_from_its_marker() {
    let events = parse(TRACE).unwrap();
    assert_eq!((events[0].cpu, events[0].ts_ns), (0, 5_774_293_252_000));
    assert_eq!((events[3].cpu, events[3].ts_ns), (1, 5_774_291_808_000));
}

#[test]
fn a_task_named_with_spaces_and_parentheses_keeps_its_name_everywhere() {
    let events = parse(TRACE).unwrap();
    assert_eq!(
        switch(&events[2]),
        ("my (weird) task", 1087, 120, "S", "swapper/0", 0, 120)
    );
    assert_eq!(
        events[4].kind,
        EventKind::Waking {
            comm: "my (weird) task".into(),
            pid: 1087,
            prio: 120,
            target_cpu: 0
        }
    );
    assert_eq!(
        events[5].kind,
        EventKind::Wakeup {
            comm: "my (weird) task".into(),
            pid: 1087,
            prio: 120,
            target_cpu: 0
        }
    );
    assert_eq!(
        switch(&events[6]),
        ("swapper/0", 0, 120, "R", "my (weird) task", 1087, 120)
    );
    assert_eq!(switch(&events[7]).3, "Z");
}

#[test]
fn wakeup_new_and_migrate_fields_are_read() {
    let events = parse(TRACE).unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::WakeupNew {
            comm: "bash".into(),
            pid: 1087,
            prio: 120,
            target_cpu: 0
        }
    );
    assert_eq!(
        events[3].kind,
        EventKind::Migrate {
            comm: "cp".into(),
            pid: 1086,
            prio: 120,
            orig_cpu: 0,
            dest_cpu: 1
        }
    );
}

#[test]
fn lost_markers_carry_their_cpu_count_and_the_time_of_the_next_event() {
    let events = parse(LOST).unwrap();
    assert_eq!(events.len(), 7);
    assert_eq!(
        events[0],
        Event {
            cpu: 0,
            ts_ns: 5_936_606_365_000,
            kind: EventKind::Lost(38968)
        }
    );
    assert_eq!(
        events[3],
        Event {
            cpu: 1,
            ts_ns: 5_936_607_809_000,
            kind: EventKind::Lost(129388)
        }
    );
    // A marker with no event after it keeps the time of the last event.
    assert_eq!(
        events[6],
        Event {
            cpu: 1,
            ts_ns: 5_936_610_295_000,
            kind: EventKind::Lost(0)
        }
    );
    assert_eq!(switch(&events[5]).3, "R+");
    assert_eq!(lost_marker("CPU:12 [LOST 5 EVENTS]"), Some((12, 5)));
    assert_eq!(lost_marker("CPU:1 [LOST EVENTS]"), Some((1, 0)));
    assert_eq!(lost_marker("CPU:1 [LOST x EVENTS]"), None);
}

#[test]
fn comms_that_imitate_the_line_structure_do_not_confuse_the_parser() {
    let events = parse(IMPOSTORS).unwrap();
    assert_eq!(
        events[0],
        Event {
            cpu: 1,
            ts_ns: 6_128_095_407_000,
            kind: EventKind::WakeupNew {
                comm: "x [001] 1.5: y".into(),
                pid: 9932,
                prio: 120,
                target_cpu: 1
            },
        }
    );
    assert_eq!(
        switch(&events[1]),
        (
            "x [001] 1.5: y",
            9931,
            120,
            "R",
            "x [001] 1.5: y",
            9932,
            120
        )
    );
    assert_eq!(
        switch(&events[2]),
        (
            "a prev_pid=1 b",
            9933,
            120,
            "S",
            "a prev_pid=1 b",
            9934,
            120
        )
    );
}

#[test]
fn a_comm_imitating_the_context_and_an_event_name_is_still_read_as_a_comm() {
    // Recorded with comm "[0] 1.5: a: b"; the prefix comm (saved-cmdlines, which showed the
    // exec'd name on this line) was set to the same text to imitate "[CPU] TS: event: ".
    let line = "   [0] 1.5: a: b-14473   [000] d..2.  6264.072789: sched_switch: prev_comm=[0] 1.5: a: b prev_pid=14473 prev_prio=120 prev_state=S ==> next_comm=rustc next_pid=14463 next_prio=120";
    let events = parse(line).unwrap();
    assert_eq!((events[0].cpu, events[0].ts_ns), (0, 6_264_072_789_000));
    assert_eq!(
        switch(&events[0]),
        ("[0] 1.5: a: b", 14473, 120, "S", "rustc", 14463, 120)
    );
}

#[test]
fn a_foreign_event_is_an_error_in_strict_mode_and_skipped_in_lenient_mode() {
    let text = format!(
        "{TRACE}            bash-3634    [000] ...1.  5919.605598: tracing_mark_write: marker\n\
         garbage\n"
    );
    let err = parse(&text).unwrap_err();
    assert_eq!(err.line_no, 21);
    assert_eq!(
        err.reason,
        LineFault::Foreign {
            event: "tracing_mark_write".into()
        }
    );
    assert!(err.to_string().contains("\"tracing_mark_write\""), "{err}");
    let (events, skipped) = parse_lenient(&text);
    assert_eq!((events.len(), skipped), (8, 2));
}

#[test]
fn a_line_without_irq_info_flags_still_parses() {
    let line = "            bash-1079    [003]  5774.293252: sched_wakeup: comm=bash pid=7 prio=-1 target_cpu=002";
    let events = parse(line).unwrap();
    assert_eq!(
        events,
        vec![Event {
            cpu: 3,
            ts_ns: 5_774_293_252_000,
            kind: EventKind::Wakeup {
                comm: "bash".into(),
                pid: 7,
                prio: -1,
                target_cpu: 2
            },
        }]
    );
}

#[test]
fn an_empty_comm_and_a_truncated_switch_are_told_apart() {
    let ok = "  -5 [000] d..2.  1.000001: sched_switch: prev_comm= prev_pid=5 prev_prio=120 prev_state=S ==> next_comm= next_pid=6 next_prio=120";
    assert_eq!(
        switch(&parse(ok).unwrap()[0]),
        ("", 5, 120, "S", "", 6, 120)
    );
    let cut = "  -5 [000] d..2.  1.000001: sched_switch: prev_comm=a prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=b next_pid=6";
    assert!(parse(cut).is_err());
}

#[test]
fn an_unknown_prefix_task_and_a_compiler_thread_with_a_space_parse() {
    // Real lines: the kernel prints <...> when its saved-cmdlines cache lost the name.
    let text = "           <...>-15657   [001] d.s3.  6334.976010: sched_waking: comm=rcu_preempt pid=15 prio=120 target_cpu=000
      lto cgu.08-24274   [001] d..2.  6453.921160: sched_switch: prev_comm=lto cgu.08 prev_pid=24274 prev_prio=120 prev_state=R ==> next_comm=perl next_pid=24454 next_prio=120
";
    let events = parse(text).unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::Waking {
            comm: "rcu_preempt".into(),
            pid: 15,
            prio: 120,
            target_cpu: 0
        }
    );
    assert_eq!(
        switch(&events[1]),
        ("lto cgu.08", 24274, 120, "R", "perl", 24454, 120)
    );
}

#[test]
fn a_comm_starting_with_a_hash_is_an_event_not_a_header_comment() {
    let line = "           #hash-13883   [001] d..2.  6775.696690: sched_switch: prev_comm=#hash prev_pid=13883 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120";
    let events = parse(line).unwrap();
    assert_eq!(
        switch(&events[0]),
        ("#hash", 13883, 120, "S", "swapper/1", 0, 120)
    );
}
