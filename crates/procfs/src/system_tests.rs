//! Tests of the system-wide parsers and of [`SystemReader`] (on a directory tree and on /proc).

use super::system::*;
use std::time::Duration;

// Contents below are copied from a 2-CPU Firecracker VM (kernel 6.18) unless noted.
const STAT: &str = "\
cpu  26419 0 3935 830646 585 0 86 138 0 0
cpu0 12882 0 1632 416203 85 0 30 68 0 0
cpu1 13537 0 2303 414442 500 0 56 70 0 0
intr 274875 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 10 0 0 0 0 862 54 0 82
ctxt 342020
btime 1795380621
processes 5748
procs_running 4
procs_blocked 0
softirq 197863 0 45382 4 4501 33593 0 103 84559 0 29721
";

#[test]
fn stat_reads_aggregate_and_per_cpu_ticks_and_counters() {
    let s = parse_stat(STAT).unwrap();
    assert_eq!(s.cpu.user, 26419);
    assert_eq!(s.cpu.idle, 830646);
    assert_eq!(s.cpu.steal, 138);
    assert_eq!(s.cpu.total(), 26419 + 3935 + 830646 + 585 + 86 + 138);
    assert_eq!(s.cpu.busy(), 26419 + 3935 + 86);
    let per_cpu = parse_per_cpu_ticks(STAT);
    assert_eq!(per_cpu.len(), 2);
    assert_eq!(per_cpu[1].0, 1);
    assert_eq!(per_cpu[1].1.iowait, 500);
    assert_eq!(s.intr_total, Some(274875));
    assert_eq!(s.ctxt, Some(342020));
    assert_eq!(s.procs_running, Some(4));
    assert_eq!(s.procs_blocked, Some(0));
}

#[test]
fn stat_from_an_old_kernel_with_four_columns_and_a_gap_in_cpu_numbers_still_parses() {
    let text = "cpu 10 1 5 100\ncpu0 5 0 2 50\ncpu2 5 1 3 50\nctxt 7\n";
    let s = parse_stat(text).unwrap();
    assert_eq!(s.cpu.steal, 0);
    assert_eq!(s.cpu.total(), 116);
    let cpus: Vec<usize> = parse_per_cpu_ticks(text).iter().map(|c| c.0).collect();
    assert_eq!(cpus, [0, 2]);
    assert_eq!(s.procs_running, None);
    assert_eq!(parse_stat("cpu0 1 2 3 4\n"), None);
    assert_eq!(parse_stat("cpu 1 2 3\n"), None);
}

#[test]
fn stat_numbers_that_are_not_plain_digits_or_overflow_are_refused() {
    assert_eq!(parse_stat("cpu 1 2 -3 4\n"), None);
    assert_eq!(parse_stat("cpu 1 2 3 18446744073709551616\n"), None);
    let s = parse_stat("cpu 1 2 3 18446744073709551615\nctxt 1x\n").unwrap();
    assert_eq!(s.cpu.idle, u64::MAX);
    assert_eq!(s.ctxt, None);
}

#[test]
fn vmstat_gives_the_paging_and_swapping_counters_and_skips_garbage() {
    let text = "nr_free_pages 1145376\npgpgin 2041409\npgpgout 1156136\npswpin 0\n\
                pswpout 0\nbroken line here\nnr_dirty x\n";
    let [pgpgin, pgpgout, pswpout, dirty, broken, absent] = vmstat_values(
        text,
        [
            "pgpgin", "pgpgout", "pswpout", "nr_dirty", "broken", "pgfault",
        ],
    );
    assert_eq!((pgpgin, pgpgout), (Some(2041409), Some(1156136)));
    assert_eq!(pswpout, Some(0));
    assert_eq!((dirty, broken, absent), (None, None, None));
    // The first occurrence counts, as the kernel prints each name once.
    assert_eq!(vmstat_values("pgpgin 1\npgpgin 2\n", ["pgpgin"]), [Some(1)]);
}

#[test]
fn pressure_reads_some_and_full_in_percent_and_microseconds() {
    let p = parse_pressure(
        "some avg10=0.00 avg60=0.07 avg300=0.32 total=4788976\n\
         full avg10=1.25 avg60=0.06 avg300=0.29 total=4441971\n",
    )
    .unwrap();
    assert_eq!(p.some.avg300_pct, 0.32);
    assert_eq!(p.some.total_us, 4788976);
    let full = p.full.unwrap();
    assert_eq!(full.avg10_pct, 1.25);
    assert_eq!(full.total_us, 4441971);
}

#[test]
fn cpu_pressure_from_a_kernel_before_5_13_has_no_full_line() {
    let p = parse_pressure("some avg10=3.50 avg60=0.83 avg300=1.43 total=11953681\n").unwrap();
    assert_eq!(p.some.avg10_pct, 3.5);
    assert_eq!(p.full, None);
    assert_eq!(parse_pressure("some avg10=0.00 avg60=0.83\n"), None);
    assert_eq!(parse_pressure(""), None);
}

#[test]
fn loadavg_reads_loads_runnable_tasks_and_last_pid() {
    let l = parse_loadavg("0.24 0.51 0.25 2/81 5752\n").unwrap();
    assert_eq!((l.load1, l.load5, l.load15), (0.24, 0.51, 0.25));
    assert_eq!((l.runnable, l.tasks, l.last_pid), (2, 81, 5752));
    assert_eq!(parse_loadavg("0.24 0.51 0.25 2 5752"), None);
}

#[test]
fn a_pressure_field_without_equals_sign_spoils_its_line() {
    let p = parse_pressure(
        "some avg10=0.00 avg60=0.07 avg300=0.32 total=4788976\n\
         full avg10=1.25 avg60 avg300=0.29 total=4441971\n",
    )
    .unwrap();
    assert_eq!(p.full, None);
    assert_eq!(
        parse_pressure("some avg10=1 avg60=2 avg300=3 total\n"),
        None
    );
}

const VMSTAT: &str = "nr_free_pages 1145376\npgpgin 2041409\npgpgout 1156136\npswpin 0\n";
const PSI_CPU: &str = "some avg10=0.00 avg60=0.07 avg300=0.32 total=4788976\n\
                       full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
const LOADAVG: &str = "0.24 0.51 0.25 2/81 5752\n";

#[test]
fn the_reader_follows_rewritten_files_grows_its_buffer_and_leaves_missing_ones_none() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("stat", STAT);
    write("vmstat", VMSTAT);
    write("pressure/cpu", PSI_CPU);
    write("loadavg", LOADAVG);
    let mut reader = SystemReader::open_in(dir.path());
    let a = reader.read();
    assert_eq!(a.stat, parse_stat(STAT));
    assert_eq!(a.pgpg_kib, Some((2041409, 1156136)));
    assert_eq!(a.psi[0].unwrap().some.total_us, 4788976);
    assert_eq!((a.psi[1], a.psi[2]), (None, None));
    assert_eq!(a.loadavg.unwrap().last_pid, 5752);

    // The same open files, rewritten: vmstat now far longer than the reader's first buffer.
    let filler: String = (0..2_000).map(|i| format!("nr_filler_{i} {i}\n")).collect();
    assert!(filler.len() > 16 << 10);
    write("vmstat", &format!("{filler}pgpgin 7\npgpgout 8\n"));
    write("stat", &STAT.replace("ctxt 342020", "ctxt 342999"));
    write("loadavg", "1.50 0.51 0.25 3/81 5800\n");
    let b = reader.read();
    assert_eq!(b.pgpg_kib, Some((7, 8)));
    assert_eq!(b.stat.unwrap().ctxt, Some(342999));
    assert_eq!(b.loadavg.unwrap().load1, 1.5);
    assert!(b.t_ns >= a.t_ns);

    // What the reader computed is what parsing the files' bytes computes.
    let texts = SYSTEM_FILES.map(|f| std::fs::read(dir.path().join(f)).ok());
    assert_eq!(
        SystemCounters::parse(b.t_ns, texts.each_ref().map(|t| t.as_deref())),
        b
    );

    // A /proc/stat longer than the buffer, which the vmstat above made 64 KiB (a machine with
    // many CPUs), is read to its end.
    let many_cpus: String = (0..4_000)
        .map(|i| format!("cpu{i} 1 0 1 100 0 0 0 0 0 0\n"))
        .collect();
    assert!(filler.len() < 64 << 10 && many_cpus.len() > 64 << 10);
    write("stat", &format!("cpu 1 2 3 4\n{many_cpus}ctxt 77\n"));
    assert_eq!(reader.read().stat.and_then(|s| s.ctxt), Some(77));

    // A last line without its newline is read to the end of the file, not cut short.
    write("vmstat", "pgpgin 9\npgpgout 10");
    assert_eq!(reader.read().pgpg_kib, Some((9, 10)));
    write("vmstat", "pgpgin 9\npgpgout 1234567");
    assert_eq!(reader.read().pgpg_kib, Some((9, 1234567)));
}

#[test]
fn the_reader_rereads_proc_and_sees_counters_advance_between_plain_reads() {
    let plain = || {
        let stat = std::fs::read("/proc/stat").expect("/proc/stat is readable");
        let vmstat = std::fs::read("/proc/vmstat").expect("/proc/vmstat is readable");
        let [pgpgin, pgpgout] = vmstat_values(vmstat, ["pgpgin", "pgpgout"]);
        let ctxt = parse_stat(stat).and_then(|s| s.ctxt);
        (ctxt.unwrap(), pgpgin.unwrap(), pgpgout.unwrap())
    };
    let ours = |c: &SystemCounters| {
        let (pgpgin, pgpgout) = c.pgpg_kib.expect("pgpg in the reading");
        (c.stat.and_then(|s| s.ctxt).unwrap(), pgpgin, pgpgout)
    };
    let mut reader = SystemReader::open();
    let before = plain();
    let a = ours(&reader.read());
    // Every sleep is two context switches of this thread.
    for _ in 0..10 {
        std::thread::sleep(Duration::from_micros(200));
    }
    // The second and third readings ask for only the head of /proc/vmstat.
    let reading = reader.read();
    let b = ours(&reading);
    let c = ours(&reader.read());
    let after = plain();
    assert!(a.0 + 20 <= b.0, "{a:?} {b:?}");
    for (i, what) in ["ctxt", "pgpgin", "pgpgout"].iter().enumerate() {
        let seq = [before, a, b, c, after].map(|x| [x.0, x.1, x.2][i]);
        assert!(seq.is_sorted(), "{what} does not grow: {seq:?}");
    }
    assert!(reading.loadavg.is_some(), "{reading:?}");
    for (i, psi) in reading.psi.iter().enumerate() {
        let readable = std::fs::read(format!("/proc/{}", SYSTEM_FILES[2 + i])).is_ok();
        assert_eq!(psi.is_some(), readable, "{}", SYSTEM_FILES[2 + i]);
    }
}
