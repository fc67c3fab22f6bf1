//! Tests of the cgroup axes in plans: layouts, values per group, the spec as run.

use crate::plan::build_from_text;
use schedlab_cgroup::CpuMax;

#[test]
fn layouts_and_values_become_each_cells_groups() {
    let text = r#"
        name = "g"
        [axes]
        policies = ["other"]
        groups = [[{ name = "a", tasks = 1 }, { name = "b", tasks = 1 }],
                  [{ name = "a", tasks = 1 }, { name = "b", tasks = 4 }]]
        cpu_weight = ["100:100", "100:300"]
        cpu_max = ["max", "50ms/100ms:-"]
    "#;
    let (spec, plan) = build_from_text("g.toml", text, 1).unwrap();
    assert_eq!(plan.cells.len(), 2 * 2 * 2);
    let c = &plan.cells[3];
    assert_eq!(
        c.tasks, 2,
        "the layout's tasks, whatever the tasks axis says"
    );
    assert_eq!(c.groups[1].settings.weight.unwrap().get(), 300);
    assert_eq!(
        c.groups[0].settings.max,
        Some(CpuMax::limit(50_000, 100_000).unwrap())
    );
    assert_eq!(c.groups[1].settings.max, None, "- leaves the default");
    assert_eq!(
        c.groups_label().unwrap(),
        "cg[a:1 w=100 max=50ms/100ms | b:1 w=300]"
    );
    assert_eq!(plan.cells[7].tasks, 5);
    assert_eq!(
        (
            plan.cells[7].group_of(0),
            plan.cells[7].group_of(4),
            plan.cells[7].group_of(5)
        ),
        (Some(0), Some(1), None)
    );
    assert!(c.label().contains("cg[a:1"), "{}", c.label());
    // The spec as run reads back to the same plan.
    let again = crate::Spec::from_toml(&plan.spec_toml).unwrap();
    assert_eq!(again.axes, spec.axes);
    assert_eq!(crate::plan::build(&again, 1).unwrap().cells, plan.cells);
}

#[test]
fn without_groups_the_tasks_form_one_group_and_a_partition_takes_the_pinned_cpus() {
    let text = r#"
        [axes]
        policies = ["deadline"]
        tasks = [2]
        cpus = ["1"]
        partition = [true]
    "#;
    let (_, plan) = build_from_text("p.toml", text, 1).unwrap();
    let g = &plan.cells[0].groups;
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].name.as_str(), g[0].tasks), ("all", 2));
    assert!(g[0].settings.partition);
    assert!(
        g[0].settings.rt_tasks,
        "the DEADLINE trial's host holds the RT guard"
    );
    assert_eq!(g[0].settings.cpus.as_ref().unwrap().to_string(), "1");
    assert_eq!(
        plan.cells[0].groups_label().unwrap(),
        "cg[2 cpus=1 partition]"
    );
    let spec = plan.cells[0].trial_spec("c0-t0").unwrap();
    assert_eq!(spec.groups.len(), 1);
    assert!(!spec.threads);
}

#[test]
fn tasks_are_divided_evenly_when_the_layout_gives_none() {
    let text = r#"
        [axes]
        tasks = [5]
        groups = [{ name = "a" }, { name = "b" }]
        cpu_idle = [false, true]
    "#;
    let (_, plan) = build_from_text("e.toml", text, 1).unwrap();
    assert_eq!(plan.cells.len(), 2);
    let counts: Vec<u32> = plan.cells[0].groups.iter().map(|g| g.tasks).collect();
    assert_eq!(counts, [3, 2]);
    assert_eq!(plan.cells[1].groups[0].settings.idle, Some(true));
}

#[test]
fn mistakes_are_positioned_or_name_the_cell() {
    let bad = "[axes]\ncpu_max = [\"20ms\"]\n";
    let e = build_from_text("b.toml", bad, 1).unwrap_err().to_string();
    assert!(
        e.starts_with("b.toml:2:") && e.contains("axes.cpu_max[0]"),
        "{e}"
    );
    let idle_weight = "[axes]\ncpu_weight = [100]\ncpu_idle = [true]\n";
    let e = build_from_text("i.toml", idle_weight, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("axes.cpu_weight and axes.cpu_idle (--cpu-weight, --cpu-idle)"),
        "{e}"
    );
    let shared = "[axes]\ngroups = [{ name = \"a\" }, { name = \"b\" }]\ntasks = [2]\ncpuset = [\"0:0\"]\npartition = [true]\n";
    let e = build_from_text("a.toml", shared, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("axes.cpuset (--cpuset)") && e.contains("groups a and b share CPUs 0"),
        "{e}"
    );
    let outside = "[axes]\ncpus = [\"0\"]\ncpuset = [\"1\"]\n";
    let e = build_from_text("o.toml", outside, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("axes.cpus (--cpus) and axes.cpuset (--cpuset)")
            && e.contains("pinned only within its cpuset"),
        "{e}"
    );
    let part = "[axes]\npartition = [true]\n";
    let e = build_from_text("q.toml", part, 1).unwrap_err().to_string();
    assert!(
        e.starts_with("q.toml:2:") && e.contains("no group has CPUs"),
        "{e}"
    );
}
