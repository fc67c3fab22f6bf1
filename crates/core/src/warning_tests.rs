//! Tests of the warnings: codes, parameters and sentences.

use super::*;

/// One warning of every kind.
fn every_kind() -> Vec<Warning> {
    let over = Some(Over {
        pct: 50.0,
        threshold_pct: 10.0,
    });
    vec![
        Warning::IoDirTmpfs { dir: "/tmp".into() },
        Warning::IoDirShared {
            dir: "/x".into(),
            owner_uid: None,
            mode: 0o40777,
        },
        Warning::RtBudgetDemand {
            cell: "fifo".into(),
            tasks: 2,
            policy: None,
            cpus: 1,
            busy_ms: 1200.0,
            budget: "950 ms per 1000 ms".into(),
            throttle_ms: 50.0,
            runtime_ms: 950.0,
        },
        Warning::RtBudgetPeriodic {
            cell: "rr".into(),
            policy: "rr".into(),
            want_pct: 120.0,
            budget: "950 ms per 1000 ms".into(),
            allowed_pct: 95.0,
        },
        Warning::RtThrottled {
            trial: 3,
            cell: "fifo".into(),
            rt_cpu_ms: 900.0,
            capacity_ms: 1000.0,
            missing_ms: 100.0,
            demand_ms: 1000.0,
            budget: "950 ms per 1000 ms".into(),
        },
        Warning::MachineBusy {
            trial: 1,
            window_ms: 200,
            busy: over,
            steal: None,
            psi_cpu_some: None,
        },
        Warning::TrialNoisy {
            trial: 2,
            cell: "other".into(),
            before_pct: Some(85.0),
            after_pct: None,
            limit_pct: 10.0,
            steady_pct: Some(131.0),
        },
        Warning::TrialDisturbed {
            trial: 4,
            cell: "other".into(),
            share_pct: 42.5,
            threshold_pct: 10.0,
            top: vec![
                OutsideProcess {
                    comm: "rustc".into(),
                    pid: 4242,
                    cpu_ms: 80.25,
                },
                OutsideProcess {
                    comm: "sh".into(),
                    pid: 7,
                    cpu_ms: 3.0,
                },
            ],
            rerun: true,
        },
        Warning::TrialKernelWork {
            trial: 5,
            cell: "fifo io".into(),
            kernel_ms: 120.0,
            expected_ms: 12.5,
        },
        Warning::TrialSlowed {
            trial: 6,
            cell: "rr".into(),
            speed_pct: 55.0,
            limit_pct: 10.0,
            rerun: false,
        },
        Warning::AdaptiveMaxTrials {
            precision: Some(0.05),
            metric: "turnaround".into(),
            until_decided: true,
            rounds: 4,
            max_trials: 4,
        },
        Warning::AdaptiveMaxTime {
            precision: None,
            metric: "turnaround".into(),
            until_decided: true,
            rounds: 2,
        },
        Warning::KnobVaried {
            name: "vm.swappiness".into(),
            file: "/proc/sys/vm/swappiness".into(),
            original: "60".into(),
            journal: None,
        },
        Warning::IoSchedulerVaried {
            device: "sda".into(),
            original: "mq-deadline".into(),
        },
        Warning::CgroupTrial {
            trial: 1,
            cell: "other".into(),
            problem: CgroupEnd::NotRemoved,
            groups: vec!["/sys/fs/cgroup/schedlab-1/t1/a".into()],
            error: "Device or resource busy".into(),
        },
    ]
}

#[test]
fn a_cgroup_trial_warning_keeps_its_code_and_says_what_happened_to_which_groups() {
    let w = |problem| Warning::CgroupTrial {
        trial: 3,
        cell: "other x2".into(),
        problem,
        groups: vec!["/g/t3/a".into(), "/g/t3/b".into()],
        error: "EBUSY".into(),
    };
    let v = serde_json::to_value(w(CgroupEnd::JournalNotUpdated)).unwrap();
    assert_eq!(v["code"], "cgroup_trial");
    assert_eq!(v["problem"], "journal_not_updated");
    assert_eq!(v["groups"][1], "/g/t3/b");
    for (problem, says) in [
        (CgroupEnd::RootsNotReset, "could not be put back"),
        (CgroupEnd::NotRemoved, "could not be removed"),
        (CgroupEnd::JournalNotUpdated, "restore journal"),
        (CgroupEnd::Outlived, "internal error"),
    ] {
        let text = w(problem).to_string();
        let named = problem == CgroupEnd::Outlived || text.contains("/g/t3/a, /g/t3/b");
        assert!(
            text.starts_with("trial 3 (other x2): ")
                && named
                && text.contains("EBUSY")
                && text.contains(says),
            "{text}"
        );
    }
}

#[test]
fn every_kind_has_its_own_listed_code() {
    let codes: Vec<&str> = every_kind().iter().map(Warning::code).collect();
    assert_eq!(codes, CODES, "CODES lists every kind once, in order");
}

#[test]
fn the_serde_tag_is_the_code_and_code_and_parameters_give_the_warning_back() {
    for w in every_kind() {
        let v = serde_json::to_value(&w).unwrap();
        assert_eq!(v["code"], w.code(), "{v}");
        let back: Warning = serde_json::from_value(v).unwrap();
        assert_eq!(back, w);
    }
}

#[test]
fn the_sentences_carry_their_parameters() {
    let w = every_kind();
    assert!(w[1]
        .to_string()
        .contains("without the sticky bit (mode 0777)"));
    assert!(w[2].to_string().starts_with(
        "fifo: its 2 RT antagonists keep each of its 1 CPU(s) busy for about 1200 ms"
    ));
    assert!(w[2]
        .to_string()
        .contains("(certain beyond 1900 ms back to back"));
    assert!(w[4]
        .to_string()
        .starts_with("trial 3 (fifo): RT throttling:"));
    assert!(w[5].to_string().starts_with(
        "before trial 1: the machine was not idle in the 200 ms before this trial: the CPUs were 50.0% busy (threshold 10%)."
    ));
    assert!(w[6].to_string().contains(
        "ran at 85 % of the run's steady speed (131 % of its stored calibration) before the trial and - after it"
    ));
    assert!(w[7].to_string().contains(
        "other processes used 42.5 % of its CPUs' time while it ran (threshold 10 %), most of all rustc (pid 4242, 80.2 ms), sh (pid 7, 3.0 ms);"
    ));
    assert!(w[7]
        .to_string()
        .ends_with("run again at the end of its round"));
    assert!(
        w[8].to_string().contains("worked 120.0 ms on its CPUs")
            && w[8]
                .to_string()
                .contains("(12.5 ms in the cell's other trials)")
    );
    assert!(
        w[9].to_string()
            .contains("at 55 % of the run's steady in-trial speed")
            && w[9].to_string().contains("--include-slowed")
            && w[9].to_string().contains("no retry is left")
    );
    assert!(w[10].to_string().contains(
        "not yet every cell's 95% confidence sequence within ±5% of the median turnaround and every claim decided after 4 rounds (--max-trials 4)"
    ));
    assert!(w[11]
        .to_string()
        .contains("--max-time, not yet every claim decided ("));
    assert!(w[12].to_string().contains("(restore journal -)"));
}

#[test]
fn a_noisy_warning_stored_before_schema_8_reads_back_against_the_calibration() {
    let old = serde_json::json!({"code": "trial_noisy", "trial": 1, "cell": "x",
        "before_pct": 70.0, "after_pct": 71.0, "limit_pct": 10.0});
    let w: Warning = serde_json::from_value(old).unwrap();
    assert!(
        w.to_string()
            .contains("ran at 70 % of the calibrated speed before"),
        "{w}"
    );
}
