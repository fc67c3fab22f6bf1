use super::*;
use crate::plan::build_from_text;
use schedlab_core::metric::Metric;

/// Every example spec, planned: (file name, the spec as given, the plan's spec as run).
fn examples() -> Vec<(String, Spec, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let (spec, plan) = build_from_text(&path.display().to_string(), &text, 7).unwrap();
        out.push((path.display().to_string(), spec, plan.spec_toml));
    }
    assert!(out.len() >= 5, "examples not found in {}", dir.display());
    out
}

#[test]
fn every_example_reads_back_as_the_spec_it_was_run_from() {
    for (name, spec, as_run) in examples() {
        let back = Spec::read_as_run(&as_run).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut expected = spec.clone();
        expected.settings.seed = Some(7);
        // An adaptive spec is run with its defaults written out: the first look after the
        // trials, and the key metric makespan.
        let e = &mut expected.settings;
        if e.until_decided || e.precision.is_some() {
            e.min_trials = e.min_trials.or(Some(e.trials.max(2)));
            e.precision_metric = e.precision_metric.clone().or(Some("makespan".into()));
        }
        assert_eq!(back, expected, "{name}");
        // Written again, it is the same text: nothing is lost or added on the way.
        assert_eq!(back.to_as_run(7, None).unwrap(), as_run, "{name}");
        assert_eq!(back.policy_order(), spec.axes.policies.as_slice(), "{name}");
    }
}

#[test]
fn an_adaptive_run_reads_back_with_its_limits_and_key_metric() {
    let text = "name = \"adaptive\"\n[axes]\npolicies = [\"fifo\", \"other\"]\n[settings]\n\
                trials = 3\nprecision = \"2.5%\"\nprecision_metric = \"turnaround\"\nmax_time = \"10m\"\n";
    let (_, plan) = build_from_text("x", text, 9).unwrap();
    let back = Spec::read_as_run(&plan.spec_toml).unwrap();
    let a = back.adaptive().unwrap();
    assert_eq!(
        (a.precision, a.metric, a.min_trials, a.max_trials),
        (
            Some(0.025),
            Metric::Turnaround,
            3,
            crate::adaptive::DEFAULT_MAX_TRIALS
        )
    );
    assert_eq!(a.max_time_ns, Some(600_000_000_000));
    assert_eq!(Some(a), plan.settings.adaptive);
    assert_eq!(Spec::read_as_run("name = \"x\"").unwrap().adaptive(), None);
}

/// A spec as run written before antagonists, I/O schedulers, slices, knobs and adaptive runs
/// existed (their keys missing, as schedlab wrote them then).
const OLD_FORMAT: &str = r#"name = "old"
description = ""

[axes]
policies = ["other", "fifo"]
priorities = ["same"]
tasks = [4]
kind = ["process"]
start = ["barrier"]
cpus = ["0"]

[[axes.workloads]]
kind = "cpu"
cpu_kernel = "pi"

[settings]
trials = 5
warmup = 1
work = "50ms"
seed = 42

[settings.deadline]
"#;

#[test]
fn an_old_format_spec_reads_with_the_new_keys_at_their_defaults() {
    let spec = Spec::read_as_run(OLD_FORMAT).unwrap();
    assert_eq!(spec.policy_order(), [PolicyKind::Other, PolicyKind::Fifo]);
    assert_eq!((spec.settings.trials, spec.settings.seed), (5, Some(42)));
    assert_eq!(spec.axes.antagonists, [0]);
    assert!(spec.axes.io_schedulers.is_empty() && spec.axes.slices.is_empty());
    assert_eq!(spec.adaptive(), None);
}

#[test]
fn a_spec_this_version_cannot_read_fails_with_what_to_do() {
    // A key no version of schedlab had stands for one a later version would remove.
    let removed = OLD_FORMAT.replace("warmup = 1", "quantum_ms = 4");
    let e = Spec::read_as_run(&removed).unwrap_err().to_string();
    assert!(e.contains("does not read as a spec of schedlab"), "{e}");
    assert!(e.contains("settings.quantum_ms"), "{e}");
    assert!(e.contains("line 18"), "{e}");
    assert!(e.contains("schedlab show"), "{e}");
    let e = Spec::read_as_run("not toml [").unwrap_err().to_string();
    assert!(e.contains("does not read as a spec"), "{e}");
}

#[test]
fn the_hash_leaves_the_seed_out_and_is_the_one_older_versions_gave() {
    let text = "name = \"adaptive\"\n[axes]\npolicies = [\"fifo\", \"other\"]\n[settings]\n\
                trials = 3\nprecision = \"2.5%\"\nprecision_metric = \"turnaround\"\nmax_time = \"10m\"\n";
    let (_, a) = build_from_text("x", text, 9).unwrap();
    let (_, b) = build_from_text("x", text, 10).unwrap();
    assert_ne!(a.spec_toml, b.spec_toml);
    assert_eq!(spec_hash(&a.spec_toml), spec_hash(&b.spec_toml));
    // The hash schedlab 0.1 gave this run (it hashed the TOML table without the seed): the
    // hashes of stored runs must not change with the way the spec is read.
    assert_eq!(spec_hash(&a.spec_toml), "d675991b631d0c09");
    // A spec written short hashes as the same spec written in full.
    let short = "name = \"synthetic\"";
    let full = Spec::read_as_run(short)
        .unwrap()
        .to_as_run(3, None)
        .unwrap();
    assert_eq!(spec_hash(short), spec_hash(&full));
    let (_, c) = build_from_text("x", &text.replace("trials = 3", "trials = 4"), 9).unwrap();
    assert_ne!(spec_hash(&a.spec_toml), spec_hash(&c.spec_toml));
    // Text that is no spec is hashed as it is (FNV-1a 64 of "" is its offset basis).
    assert_eq!(fnv_hex(""), "cbf29ce484222325");
    assert_eq!(spec_hash("not toml ["), fnv_hex("not toml ["));
}
