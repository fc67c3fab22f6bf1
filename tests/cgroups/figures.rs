//! A run's task groups downstream: each task row carries its group, `export --table groups`
//! gives the stored figures, `stats` shows each group's CPU share as computed here by hand
//! from the stored rows, `report` draws the share and throttling figures and writes
//! groups.csv, and the run's environment record says where each controller is.

use super::*;

/// One row of the groups table as stored: (trial, group, usage, nr_periods, nr_throttled,
/// throttled ns, contended usage ns).
type Stored = (i64, String, i64, i64, i64, i64, i64);

fn stored(s: &Scratch) -> Vec<Stored> {
    rows(
        &s.conn(),
        "SELECT trial_id, name, usage_ns, nr_periods, nr_throttled, throttled_ns, usage_contended_ns
             FROM task_groups ORDER BY trial_id, group_index",
    )
}

/// `schedlab CMD --db SCRATCH ARGS`, which must succeed; its standard output.
fn read(s: &Scratch, cmd: &str, args: &[&str]) -> String {
    let o = schedlab_in(s)
        .arg(cmd)
        .args(["--db", s.db().to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{cmd}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn groups_are_stored_exported_shown_and_plotted() {
    if !ready("groups_are_stored_exported_shown_and_plotted") {
        return;
    }
    let _turn = rt_turn();
    let s = Scratch::new();
    let o = run(
        &s,
        &[
            "--groups",
            "a=1:b=1",
            "--cpu-weight",
            "100:300",
            "--cpu-max",
            "30ms/100ms:max",
            "--cpus",
            "0",
            "--work",
            "100ms",
            "--trials",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows = stored(&s);
    assert_eq!(rows.len(), 4, "{rows:?}");
    let names = ints(
        &s.conn(),
        "SELECT COUNT(*) FROM tasks WHERE group_name IN ('a', 'b') GROUP BY group_name",
    );
    assert_eq!(names, [2, 2], "each task row carries its group");
    // The kernel's counters are consistent with each other and with the tasks' own clocks:
    // a throttled period is a period, and a task is throttled only while it does not run.
    let spans = ints(
        &s.conn(),
        "SELECT turnaround_ns - cpu_ns FROM tasks WHERE group_name = 'a' ORDER BY trial_id",
    );
    for (r, off_cpu) in rows.iter().filter(|r| r.1 == "a").zip(&spans) {
        assert!(r.4 <= r.3, "nr_throttled {} > nr_periods {}", r.4, r.3);
        assert!(
            r.5 <= off_cpu + 5 * MS,
            "throttled {} ns, off the CPU {off_cpu} ns",
            r.5
        );
    }
    for r in rows.iter().filter(|r| r.1 == "b") {
        assert_eq!((r.3, r.4, r.5), (0, 0, 0), "b has no limit: {r:?}");
    }

    // export --table groups: the stored figures, by column name.
    let csv = read(&s, "export", &["--table", "groups"]);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name} in {header:?}"))
    };
    let exported: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(exported.len(), 4, "{csv}");
    for (e, r) in exported.iter().zip(&rows) {
        assert_eq!(e[col("group_name")], r.1);
        assert_eq!(e[col("usage_ns")], r.2.to_string());
        assert_eq!(e[col("nr_throttled")], r.4.to_string());
        assert_eq!(e[col("throttled_ns")], r.5.to_string());
        assert_eq!(e[col("weight")], if r.1 == "a" { "100" } else { "300" });
    }

    // stats: b's share while both ran, the median over the two trials (their mean), by hand.
    let shares: Vec<f64> = rows
        .chunks(2)
        .map(|t| t[1].6 as f64 / (t[0].6 + t[1].6) as f64)
        .collect();
    let share_b = (shares[0] + shares[1]) / 2.0;
    let stats = read(&s, "stats", &["--wide"]);
    let b_row = stats
        .lines()
        .find(|l| l.contains("300 (0.750)"))
        .unwrap_or_else(|| panic!("no row of group b in\n{stats}"));
    println!("    b's share {shares:.3?}: {}", b_row.trim());
    assert!(
        b_row.contains(&format!("{share_b:.3}")),
        "{share_b:.3} in {b_row}"
    );
    assert!(stats.contains("Task groups (CPU cgroups)"), "{stats}");

    // report: the figures and groups.csv.
    let out = s.path().join("report");
    read(
        &s,
        "report",
        &["--format", "html,csv", "--out", out.to_str().unwrap()],
    );
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for title in [
        "CPU share of each task group against its weight share",
        "Throttled time against the CPU limit",
    ] {
        assert!(html.contains(title), "{title} missing from the report");
    }
    let groups_csv = std::fs::read_to_string(dir.join("csv/groups.csv")).unwrap();
    assert_eq!(
        groups_csv.lines().count(),
        3,
        "header and 2 groups:\n{groups_csv}"
    );

    // The environment record names the hierarchies.
    let env = s
        .conn()
        .query_row("SELECT env_json FROM runs", [], |r| r.get::<_, String>(0))
        .unwrap();
    assert!(
        env.contains("cpu: cgroup v1 at /sys/fs/cgroup/cpu"),
        "{env}"
    );
    assert_nothing_left();
}
