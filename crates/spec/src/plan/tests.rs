//! Tests of expanding specs into plans.

use super::*;
use crate::{Orders, WorkloadSpec};
use schedlab_core::workload::{Command, WorkloadKind};

#[test]
fn every_cell_runs_once_per_round_and_warmups_come_first() {
    let t = order(5, 3, 1, 42);
    assert_eq!(t.len(), 20);
    for round in 0..4 {
        let mut cells: Vec<usize> = t
            .iter()
            .filter(|p| p.round == round)
            .map(|p| p.cell)
            .collect();
        cells.sort();
        assert_eq!(cells, vec![0, 1, 2, 3, 4]);
    }
    assert!(t[..5].iter().all(|p| p.warmup));
    assert!(t[5..].iter().all(|p| !p.warmup));
}

#[test]
fn the_order_depends_on_the_seed_only() {
    assert_eq!(order(8, 4, 0, 7), order(8, 4, 0, 7));
    assert_ne!(order(8, 4, 0, 7), order(8, 4, 0, 8));
}

#[test]
fn axis_names_parse_and_reject_with_the_accepted_values() {
    assert_eq!("thread".parse::<TaskKind>().unwrap(), TaskKind::Thread);
    assert_eq!(
        "staggered".parse::<StartMode>().unwrap(),
        StartMode::Staggered
    );
    assert!(matches!(
        "fiber".parse::<TaskKind>(),
        Err(schedlab_core::CoreError::UnknownName {
            what: "task kind",
            accepted: "process, thread",
            ..
        })
    ));
    assert!(matches!(
        "now".parse::<StartMode>(),
        Err(schedlab_core::CoreError::UnknownName {
            what: "start mode",
            accepted: "barrier, staggered",
            ..
        })
    ));
}

#[test]
fn axes_multiply_into_cells() {
    let spec = Spec::from_toml(
        r#"
        name = "t"
        [axes]
        policies = ["other", "fifo", "rr"]
        priorities = ["same", "spread"]
        tasks = [10, 50, 150]
        workloads = [{ kind = "cpu" }, { kind = "io" }, { kind = "mixed" }]
        [settings]
        trials = 4
        "#,
    )
    .unwrap();
    let plan = build(&spec, 1).unwrap();
    assert_eq!(plan.cells.len(), 54);
    assert_eq!(plan.trials.len(), 54 * 4);
}

#[test]
fn the_first_axis_varies_slowest_and_the_last_fastest() {
    let spec = Spec::from_toml(
        "[axes]\npolicies = [\"other\", \"batch\"]\ntasks = [1, 2]\n\
         io_schedulers = [\"none\", \"bfq\"]\n",
    )
    .unwrap();
    let cells = build(&spec, 1).unwrap().cells;
    let got: Vec<(PolicyKind, u32, Option<&str>)> = cells
        .iter()
        .map(|c| (c.policy, c.tasks, c.io_scheduler.as_deref()))
        .collect();
    let (o, b) = (PolicyKind::Other, PolicyKind::Batch);
    assert_eq!(
        got,
        vec![
            (o, 1, Some("none")),
            (o, 1, Some("bfq")),
            (o, 2, Some("none")),
            (o, 2, Some("bfq")),
            (b, 1, Some("none")),
            (b, 1, Some("bfq")),
            (b, 2, Some("none")),
            (b, 2, Some("bfq")),
        ]
    );
    // Axes left empty vary nothing: not pinned, no antagonists.
    assert!(cells.iter().all(|c| c.cpus.is_none() && c.antagonists == 0));
}

#[test]
fn a_command_workload_is_one_cell_per_order_with_one_task_per_program() {
    let mut spec = Spec::default_quick();
    spec.axes.tasks = vec![4, 8];
    spec.axes.workloads = vec![WorkloadSpec {
        kind: WorkloadKind::Command,
        commands: ["a", "b", "c"]
            .iter()
            .map(|p| Command {
                name: None,
                argv: vec![p.to_string()],
                cwd: None,
                env: Default::default(),
            })
            .collect(),
        orders: Some(Orders::List(vec![vec![2, 0, 1], vec![0, 1, 2]])),
        ..WorkloadSpec::default()
    }];
    spec.axes.policies = vec![PolicyKind::Other];
    spec.claims.clear();
    let cells = build(&spec, 1).unwrap().cells;
    let programs: Vec<Vec<&str>> = cells
        .iter()
        .map(|c| c.workload.commands.iter().map(|c| c.name()).collect())
        .collect();
    assert_eq!(programs, vec![vec!["c", "a", "b"], vec!["a", "b", "c"]]);
    assert!(cells
        .iter()
        .all(|c| c.tasks == 3 && c.size == WorkSize::Iterations(1)));
}

#[test]
fn the_plan_carries_the_typed_settings_and_the_spec_as_run() {
    let (spec, plan) = build_from_text(
        "f.toml",
        "name = \"s\"\n[axes]\ntasks = [1, 2]\n[settings]\ntrials = 2\nwarmup = 1\n\
         timeout = \"2s\"\nsample_interval = \"250ms\"\ndevice = \"vda\"\ntrace = true\nretries = 1\n",
        9,
    )
    .unwrap();
    assert_eq!(plan.cells.len(), 2);
    assert_eq!(plan.trials.len(), 2 * 3);
    assert_eq!(
        plan.settings,
        RunSettings {
            trials: 2,
            warmup: 1,
            retries: 1,
            timeout_ns: Some(2_000_000_000),
            io_dir: PathBuf::from("/var/tmp"),
            sample_interval_ns: Some(250_000_000),
            device: Some("vda".into()),
            trace: true,
            allow_knobs: Vec::new(),
            adaptive: None,
        }
    );
    assert_eq!(plan.name, "s");
    // The stored spec reads back as the spec with its seed set.
    let stored = Spec::from_toml(&plan.spec_toml).unwrap();
    assert_eq!(stored.settings.seed, Some(9));
    assert_eq!(stored.axes, spec.axes);
    assert_eq!(build(&stored, 9).unwrap(), plan);
}

#[test]
fn a_file_mistake_is_positioned_and_a_flag_mistake_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, "[axes]\ntasks = [4, 0]\n").unwrap();
    let spec = Spec::from_toml(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let e = build_for_file(&path, &spec, 1).unwrap_err();
    assert_eq!(e.key(), Some("axes.tasks[1]"));
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2:13: axes.tasks[1]: 0 is not a usable task count (accepted: 1..=100000)",
            path.display()
        )
    );
    let mut flagged = spec.clone();
    flagged.axes.tasks = vec![0];
    let e = build_for_file(&path, &flagged, 1).unwrap_err();
    assert!(matches!(e, SpecError::Invalid(_)), "{e}");
    assert_eq!(
        e.to_string(),
        "axes.tasks[0]: 0 is not a usable task count (accepted: 1..=100000)"
    );
}

#[test]
fn a_seed_toml_cannot_hold_is_a_usage_error() {
    let e = build(&Spec::default_quick(), u64::MAX).unwrap_err();
    assert!(matches!(e, SpecError::AsRun(_)), "{e}");
}

#[test]
fn an_adaptive_plan_holds_its_minimum_rounds_and_later_rounds_continue_the_same_shuffle() {
    let mut spec = Spec::default_quick();
    spec.settings.warmup = 1;
    spec.settings.precision = Some("2%".into());
    spec.settings.min_trials = Some(3);
    spec.settings.max_trials = Some(8);
    let plan = build(&spec, 5).unwrap();
    let a = plan.settings.adaptive.clone().expect("adaptive");
    assert_eq!((a.min_trials, a.max_trials), (3, 8));
    assert_eq!(plan.trials.len(), 3 * (1 + 3), "warm-up and minimum rounds");
    // Round k of the extended plan is round k of a fixed plan with more rounds.
    let fixed = order(plan.cells.len(), 6, 1, 5);
    for r in 0..7 {
        let expected: Vec<_> = fixed.iter().copied().filter(|t| t.round == r).collect();
        assert_eq!(round(&plan, r), expected, "round {r}");
    }
    // The spec as run names the limits and the metric, and plans the same again.
    let stored = Spec::from_toml(&plan.spec_toml).unwrap();
    assert_eq!(stored.settings.max_trials, Some(8));
    assert_eq!(
        stored.settings.precision_metric.as_deref(),
        Some("makespan")
    );
    assert_eq!(build(&stored, 5).unwrap(), plan);
    assert!(round(&plan, 0).iter().all(|t| t.warmup));
    assert!(round(&plan, 5)
        .iter()
        .all(|t| !t.warmup && t.trial_index == 5));
}

#[test]
fn knob_axes_multiply_the_cells_and_a_slice_only_fair_ones() {
    let text = "[axes]\npolicies = [\"other\", \"rr\"]\nslices = [\"0.1ms\", \"3ms\"]\n\
                scx = [\"scx_lavd --performance\"]\n\
                [[axes.knobs]]\nname = \"kernel.sched_rr_timeslice_ms\"\nvalues = [10, 100]\n\
                [[axes.knobs]]\nname = \"/sys/kernel/mm/transparent_hugepage/enabled\"\nvalues = [\"never\"]\n";
    let (spec, plan) = crate::plan::build_from_text("k.toml", text, 1).unwrap();
    // other: 2 slices x 2 quanta x 1 x 1 BPF scheduler; rr: no slice x 2 x 1 x 1.
    assert_eq!(plan.cells.len(), 6);
    assert_eq!(
        plan.cells[0].label(),
        "other/same cpu:pi x4 process barrier slice=0.1ms kernel.sched_rr_timeslice_ms=10 \
         /sys/kernel/mm/transparent_hugepage/enabled=never scx=lavd"
    );
    let rr: Vec<_> = plan
        .cells
        .iter()
        .filter(|c| c.policy == PolicyKind::Rr)
        .collect();
    assert_eq!(rr.len(), 2);
    assert!(rr.iter().all(|c| c.slice_ns.is_none()));
    assert_eq!(
        rr[1].knobs[0].path,
        "/proc/sys/kernel/sched_rr_timeslice_ms"
    );
    assert_eq!(rr[1].knobs[0].value, "100");
    assert_eq!(
        rr[1].scx.as_ref().unwrap().argv,
        ["scx_lavd", "--performance"]
    );
    // The spec as run keeps the knob axes and plans the same again.
    let stored = Spec::from_toml(&plan.spec_toml).unwrap();
    assert_eq!(stored.axes, spec.axes);
    assert_eq!(build(&stored, 1).unwrap().cells, plan.cells);
    // A spec without them writes none of their keys.
    let quick = build(&Spec::default_quick(), 1).unwrap();
    assert!(!quick.spec_toml.contains("slices") && !quick.spec_toml.contains("knobs"));
}

#[test]
fn knob_mistakes_are_positioned_at_their_key() {
    let text = "[axes]\npolicies = [\"fifo\"]\nslices = [\"1ms\"]\n";
    let e = crate::plan::build_from_text("k.toml", text, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("k.toml:3:1: axes.slices: an EEVDF slice applies"),
        "{e}"
    );
    let text = "[[axes.knobs]]\nname = \"/etc/passwd\"\nvalues = [1]\n";
    let e = crate::plan::build_from_text("k.toml", text, 1)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("k.toml:2:8: axes.knobs[0].name: /etc/passwd is outside"),
        "{e}"
    );
}

#[test]
fn retries_default_to_two_and_are_bounded() {
    let plan = |settings: &str| {
        build_from_text(
            "f.toml",
            &format!("name = \"s\"\n[axes]\ntasks = [1]\n[settings]\n{settings}"),
            1,
        )
        .map(|(_, p)| p.settings.retries)
    };
    assert_eq!(plan("").unwrap(), crate::DEFAULT_RETRIES);
    assert_eq!(plan("retries = 0\n").unwrap(), 0);
    let e = plan("retries = 11\n").unwrap_err().to_string();
    assert!(
        e.contains("settings.retries") && e.contains("0 (never) to 10"),
        "{e}"
    );
}
