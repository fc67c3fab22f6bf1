//! Real cgroups on this machine's hierarchies (v1 here; the same code runs on v2 elsewhere):
//! bandwidth limits, weights, a partition for a pinned DEADLINE task, and recovery after a
//! SIGKILL. Figures are printed; bounds are what the kernel's rules guarantee.

use crate::child::task_cpu_ns;
use crate::common::*;
use schedlab_cgroup::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(10);

/// 100 ms of CPU under 20ms/100ms is throttled; the same under `max` is not.
///
/// Bound: with quota Q per period P the task gets at most Q per period, and the period's phase
/// is fixed by the kernel's timer, not by the task's start; a task needing n·Q of CPU ends at
/// the earliest after (n − 2)·P + 2·Q (a full quota just before a period boundary and another
/// just after it). n = 5: 3 × 100 + 40 = 340 ms; 320 ms is asserted for the slack of the
/// kernel's 5 ms runtime slices. (Asserting 400 ms, (n − 1)·P, would fail when the task starts
/// late in a period.)
pub fn bandwidth() -> Result<(), Skip> {
    let caps = caps()?;
    need(&caps, Controller::Cpu)?;
    let limited = GroupSettings {
        max: Some(CpuMax::limit(20_000, 100_000).expect("limit")),
        ..GroupSettings::default()
    };
    let free = GroupSettings {
        max: Some(CpuMax::Unlimited),
        ..GroupSettings::default()
    };
    let spec = trial("bandwidth", vec![("limited", limited), ("free", free)]);
    let s = session(&caps, &[&spec]);
    let t = s
        .create_trial(s.plan_trial(&spec).expect("plan"))
        .expect("create");
    let (mut a, mut b) = (Kid::spawn("burn:100"), Kid::spawn("burn:100"));
    t.add_process(0, a.pid()).expect("place a");
    t.add_process(1, b.pid()).expect("place b");
    let (sa, sb) = (t.stat(0).expect("stat"), t.stat(1).expect("stat"));
    a.start();
    b.start();
    let (wall_a, cpu_a) = a.done();
    let (wall_b, cpu_b) = b.done();
    assert!(a.finish(LIMIT).0 && b.finish(LIMIT).0);
    let (da, db) = (
        t.stat(0).expect("stat").since(&sa),
        t.stat(1).expect("stat").since(&sb),
    );
    let ms = |ns: Option<u64>| ns.unwrap_or(0) as f64 / 1e6;
    println!(
        "    limited 20ms/100ms: wall {wall_a:.0} ms for {cpu_a:.1} ms CPU; group usage {:.1} ms, nr_periods {:?}, nr_throttled {:?}, throttled {:.0} ms",
        ms(da.usage_ns), da.nr_periods, da.nr_throttled, ms(da.throttled_ns)
    );
    println!(
        "    unlimited:          wall {wall_b:.0} ms for {cpu_b:.1} ms CPU; group usage {:.1} ms, nr_periods {:?}, nr_throttled {:?}",
        ms(db.usage_ns), db.nr_periods, db.nr_throttled
    );
    assert!(wall_a >= 320.0, "limited: {wall_a:.0} ms");
    // The group's usage (kernel accounting of the cgroup) against the task's own schedstat.
    if let Some(u) = da.usage_ns {
        let u = u as f64 / 1e6;
        assert!(
            u >= cpu_a * 0.95 && u <= cpu_a + 30.0,
            "usage {u:.1} ms, task {cpu_a:.1} ms"
        );
    }
    assert_eq!(
        (db.nr_throttled, db.throttled_ns),
        (Some(0), Some(0)),
        "unlimited: {db:?}"
    );
    t.remove().expect("remove");
    s.close().expect("close");
    // The kernel throttles a group only when it used its quota: that needs the CPU share the
    // unlimited task got to exceed the quota's 20 %; on a machine busier than that the limit
    // never binds, and only the bound above holds: a skip, failed under SCHEDLAB_TEST_REQUIRE.
    if cpu_b / wall_b < 0.3 {
        return Err(Skip::Busy(format!(
            "the unlimited task got {:.0} % of a CPU: too busy a machine to exhaust a 20 % quota; throttling not checked",
            100.0 * cpu_b / wall_b
        )));
    }
    assert!(da.nr_throttled.expect("nr_throttled") >= 3, "{da:?}");
    assert!(da.throttled_ns.expect("throttled") > 0);
    Ok(())
}

/// Two spinning processes pinned to CPU 0 in groups of weight 100 and 300 share it 1:3.
pub fn weights() -> Result<(), Skip> {
    let caps = caps()?;
    need(&caps, Controller::Cpu)?;
    need(&caps, Controller::Cpuset)?;
    let pinned = |w| GroupSettings {
        weight: Some(Weight::new(w).expect("weight")),
        cpus: Some(CpuList::parse("0").expect("cpu")),
        ..GroupSettings::default()
    };
    let spec = trial(
        "weights",
        vec![("light", pinned(100)), ("heavy", pinned(300))],
    );
    let s = session(&caps, &[&spec]);
    let plan = s.plan_trial(&spec).expect("plan");
    for line in plan.describe(&caps) {
        println!("    {line}");
    }
    let t = s.create_trial(plan).expect("create");
    let (mut a, mut b) = (Kid::spawn("spin"), Kid::spawn("spin"));
    t.add_process(0, a.pid()).expect("place light");
    t.add_process(1, b.pid()).expect("place heavy");
    a.start();
    b.start();
    std::thread::sleep(Duration::from_millis(200));
    let take = || {
        (
            t.stat(0).expect("stat"),
            t.stat(1).expect("stat"),
            task_cpu_ns(a.pid()).expect("a's schedstat"),
            task_cpu_ns(b.pid()).expect("b's schedstat"),
        )
    };
    let (s0, w0) = (take(), Instant::now());
    std::thread::sleep(Duration::from_millis(1500));
    let (s1, wall) = (take(), w0.elapsed());
    let d = |x: Option<u64>, y: Option<u64>| (x.unwrap_or(0) - y.unwrap_or(0)) as f64 / 1e6;
    let (ga, gb) = (
        d(s1.0.usage_ns, s0.0.usage_ns),
        d(s1.1.usage_ns, s0.1.usage_ns),
    );
    let (ta, tb) = ((s1.2 - s0.2) as f64 / 1e6, (s1.3 - s0.3) as f64 / 1e6);
    println!(
        "    over {:.0} ms: cgroup usage light {ga:.0} ms, heavy {gb:.0} ms (ratio {:.3}); tasks' schedstat {ta:.0} / {tb:.0} ms (ratio {:.3}); CPU 0 busy {:.0} %",
        wall.as_secs_f64() * 1e3,
        gb / ga,
        tb / ta,
        (ta + tb) / wall.as_secs_f64() / 10.0
    );
    assert!(
        ta > 20.0 && tb > 20.0,
        "both ran: {ta:.0} ms and {tb:.0} ms"
    );
    for (what, r) in [("tasks' schedstat", tb / ta), ("cgroup usage", gb / ga)] {
        if ga > 0.0 || what == "tasks' schedstat" {
            assert!(
                (2.55..=3.45).contains(&r),
                "{what}: {r:.3} is not 3 within 15 %"
            );
        }
    }
    drop((a, b));
    t.remove().expect("remove");
    s.close().expect("close");
    Ok(())
}

/// A pinned DEADLINE task is refused on CPU 1 without a partition and admitted in one, where
/// CBS throttles it: 30 ms of CPU at 5 ms per 20 ms ends after about 5 × 20 + 5 = 105 ms.
pub fn partition_deadline() -> Result<(), Skip> {
    let caps = caps()?;
    need(&caps, Controller::Cpuset)?;
    if !caps.partition.present {
        return Err(Skip::Machine(
            "the kernel cannot make a cpuset partition here".into(),
        ));
    }
    if caps.online_cpus.len() < 2 || !caps.online_cpus.iter().any(|c| c == 1) {
        return Err(Skip::Machine("needs CPUs 0 and 1".into()));
    }
    if std::process::Command::new("chrt")
        .arg("--version")
        .output()
        .is_err()
    {
        return Err(Skip::Machine(
            "needs chrt (util-linux) to start a DEADLINE task".into(),
        ));
    }
    let on_cpu1 = |partition| GroupSettings {
        cpus: Some(CpuList::parse("1").expect("cpu")),
        partition,
        ..GroupSettings::default()
    };
    let pinned = trial("pinned", vec![("dl", on_cpu1(false))]);
    let parted = trial("parted", vec![("dl", on_cpu1(true))]);
    let s = session(&caps, &[&pinned, &parted]);
    let dl = "dl:5000000:20000000:30";
    {
        let t = s
            .create_trial(s.plan_trial(&pinned).expect("plan"))
            .expect("create");
        let mut k = Kid::spawn(dl);
        t.add_process(0, k.pid()).expect("place");
        k.start();
        let (ok, err) = k.finish(LIMIT);
        println!(
            "    pinned to CPU 1 without a partition: chrt says {:?}",
            err.trim()
        );
        assert!(!ok && err.contains("Operation not permitted"), "{ok} {err}");
        t.remove().expect("remove");
    }
    let plan = s.plan_trial(&parted).expect("plan");
    for line in plan.describe(&caps) {
        println!("    {line}");
    }
    let settings: Vec<RootSetting> = plan.root_settings().to_vec();
    let t = s.create_trial(plan).expect("create");
    let guards: Vec<Setting> = settings.iter().map(Setting::set).collect();
    t.partition_ready().expect("partition in effect");
    let mut k = Kid::spawn(dl);
    t.add_process(0, k.pid()).expect("place");
    k.start();
    let (wall, cpu) = k.done();
    let (ok, err) = k.finish(LIMIT);
    println!("    in a partition: admitted; {cpu:.1} ms CPU took {wall:.0} ms (CBS 5 ms per 20 ms: about 105 ms)");
    assert!(ok, "{err}");
    assert!(wall >= 95.0, "CBS throttling: {wall:.0} ms");
    drop(guards); // the root setting comes back before the groups go
    t.remove().expect("remove");
    s.close().expect("close");
    Ok(())
}

/// v1 with RT group scheduling: a FIFO task runs in a group given an RT budget and is refused
/// in one without (its `cpu.rt_runtime_us` stays 0).
pub fn rt_budget() -> Result<(), Skip> {
    let caps = caps()?;
    need(&caps, Controller::Cpu)?;
    if !caps.rt_group_sched.present {
        return Err(Skip::Machine(
            "the kernel has no RT group scheduling (no cpu.rt_runtime_us)".into(),
        ));
    }
    let rt = GroupSettings {
        rt_tasks: true,
        ..GroupSettings::default()
    };
    let spec = trial(
        "rt",
        vec![
            ("a", rt.clone()),
            ("b", rt),
            ("plain", GroupSettings::default()),
        ],
    );
    let s = session(&caps, &[&spec]);
    let plan = s.plan_trial(&spec).expect("plan");
    let share = plan.rt_share_us().expect("a share");
    for line in plan.describe(&caps) {
        println!("    {line}");
    }
    let t = s.create_trial(plan).expect("create");
    let dir = |g: &str| s.paths()[0].join("rt").join(g);
    let read = |g: &str| {
        std::fs::read_to_string(dir(g).join("cpu.rt_runtime_us"))
            .expect("read")
            .trim()
            .to_string()
    };
    assert_eq!(read("a"), share.to_string());
    assert_eq!(read("plain"), "0");
    let root = caps.rt_root.expect("root RT bandwidth");
    assert!(
        share * 2 <= root.runtime_us as u64,
        "{share} × 2 within the root's {}",
        root.runtime_us
    );
    let run = |g: usize| {
        let mut k = Kid::spawn("fifo:10");
        t.add_process(g, k.pid()).expect("place");
        k.start();
        k.finish(LIMIT)
    };
    let (ok_a, err_a) = run(0);
    let (ok_plain, err_plain) = run(2);
    println!(
        "    FIFO in a (budget {share} µs): {}; in plain (0 µs): {:?}",
        if ok_a { "ran" } else { "refused" },
        err_plain.trim()
    );
    assert!(ok_a, "{err_a}");
    assert!(
        !ok_plain && err_plain.contains("Operation not permitted"),
        "{err_plain}"
    );
    t.remove().expect("remove");
    s.close().expect("close");
    Ok(())
}

/// A process that created groups and put a task in them is SIGKILLed; the journal's paths and
/// the sweep of the next command remove its trees and move the task out.
pub fn sigkill_recovery() -> Result<(), Skip> {
    let caps = caps()?;
    need(&caps, Controller::Cpu)?;
    for use_journal in [true, false] {
        let mut k = Kid::spawn("make-groups");
        let line = k.line();
        let mut f = line.split_whitespace();
        assert_eq!(f.next(), Some("ready"), "child said {line:?}");
        let sleeper: u32 = f.next().and_then(|p| p.parse().ok()).expect("sleeper pid");
        let _sleeper = KillOnDrop(sleeper);
        let paths: Vec<PathBuf> = f.map(PathBuf::from).collect();
        assert!(
            paths.len() >= 3 && paths.iter().all(|p| p.exists()),
            "{paths:?}"
        );
        k.child.kill().expect("SIGKILL");
        k.child.wait().expect("reap");
        assert!(paths.iter().all(|p| p.exists()), "nothing removed them yet");
        let owner = OwnerId::from_dir_name(
            paths[0]
                .parent()
                .and_then(|p| p.file_name())
                .map_or("", |n| n.to_str().unwrap_or("")),
        )
        .or_else(|| {
            OwnerId::from_dir_name(paths[0].file_name().and_then(|n| n.to_str()).unwrap_or(""))
        })
        .expect("owner from the path");
        let trees: Vec<StaleTree> = if use_journal {
            remove_recorded(&RealFs, &caps, &paths, &|o| o.alive())
                .into_iter()
                .map(|r| r.expect("a tree of a dead owner"))
                .collect()
        } else {
            remove_stale(&RealFs, &caps)
                .into_iter()
                .filter(|t| t.owner == owner)
                .collect()
        };
        let moved: Vec<u32> = trees
            .iter()
            .flat_map(|t| t.result.as_ref().expect("removed").tasks_moved.clone())
            .collect();
        println!(
            "    {}: removed {:?}, tasks moved out {moved:?}",
            if use_journal {
                "from the journal"
            } else {
                "by the sweep"
            },
            trees
                .iter()
                .map(|t| t.path.display().to_string())
                .collect::<Vec<_>>()
        );
        let _ = std::process::Command::new("kill")
            .arg(sleeper.to_string())
            .status();
        assert!(!trees.is_empty());
        assert!(
            moved.contains(&sleeper),
            "the orphaned sleeper was moved out: {moved:?}"
        );
        assert!(paths.iter().all(|p| !p.exists()), "{paths:?}");
        assert!(
            remove_stale(&RealFs, &caps)
                .iter()
                .all(|t| t.owner != owner),
            "nothing more to find"
        );
    }
    Ok(())
}

/// Kills a process that is not this one's child (an orphan of a killed child) when dropped.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &self.0.to_string()])
            .status();
    }
}
