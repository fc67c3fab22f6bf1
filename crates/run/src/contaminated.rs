//! Contaminated trials: which are (disturbed by other processes, or slowed in-trial), whether
//! one is run again at the end of its round, the warnings that say so, and the warning about
//! kernel work that the trial's own I/O does not explain.

use super::cells::CellState;
use super::noise;
use schedlab_core::records::{TrialMeta, TrialOutcome, TrialStatus, DISTURBED_PCT, SLOWED_PCT};
use schedlab_core::warning::OutsideProcess;
use schedlab_core::Warning;

/// Kernel work more than this many times the cell's usual ...
const KERNEL_FACTOR: f64 = 3.0;
/// ... and more than this share of the trial's CPUs' time beyond it, in percent, is more than
/// the trial's own I/O explains.
const KERNEL_WARN_PCT: f64 = 5.0;
/// Earlier trials of a cell with files that tell what its own I/O costs the kernel.
const KERNEL_HISTORY: usize = 2;

/// Whether a trial that ended with `outcome` and `meta` is contaminated: ok, and disturbed or
/// slowed.
pub fn is_contaminated(meta: &TrialMeta, outcome: &TrialOutcome) -> bool {
    outcome.status == TrialStatus::Ok && (meta.disturbed || meta.slowed == Some(true))
}

/// Whether the trial is run again at the end of its round: contaminated, measured (not a
/// warm-up), and re-run fewer than `retries` times so far.
pub fn rerun(meta: &TrialMeta, outcome: &TrialOutcome, warmup: bool, retries: u32) -> bool {
    is_contaminated(meta, outcome) && !warmup && meta.retry < retries
}

/// The warnings about trial `trial` of `cell` from its `meta`: noisy, disturbed (naming the
/// outside processes `top`), slowed.
pub fn warnings(
    meta: &TrialMeta,
    top: Vec<OutsideProcess>,
    (trial, cell): (usize, &str),
) -> Vec<Warning> {
    let mut out = Vec::new();
    if meta.noisy {
        out.push(noise::noisy_warning(meta, trial, cell));
    }
    if meta.disturbed {
        out.push(Warning::TrialDisturbed {
            trial,
            cell: cell.to_string(),
            share_pct: meta.outside_process_share.unwrap_or(0.0) * 100.0,
            threshold_pct: DISTURBED_PCT,
            top,
            rerun: meta.retried,
        });
    }
    if meta.slowed == Some(true) {
        out.push(Warning::TrialSlowed {
            trial,
            cell: cell.to_string(),
            speed_pct: meta.speed_in_trial.unwrap_or(0.0) / steady_in_trial(meta) * 100.0,
            limit_pct: SLOWED_PCT,
            rerun: meta.retried,
        });
    }
    out
}

/// The steady in-trial speed a trial was judged against (1 when unknown).
fn steady_in_trial(meta: &TrialMeta) -> f64 {
    meta.speed_in_trial_steady
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0)
}

/// The warning about a trial (number `trial` of `cell`, whose state `cs` keeps the kernel
/// work of its earlier trials) whose kernel work beyond the settle window's rate is far above
/// what the cell's own I/O explains: the median of its earlier trials (with `files`), or none
/// (without). `capacity_ns`: the trial's CPUs' time.
pub fn kernel_work(
    meta: &TrialMeta,
    cs: &mut CellState,
    (files, capacity_ns): (bool, f64),
    (trial, cell): (usize, &str),
) -> Option<Warning> {
    let kernel = meta.kernel_cpu_ns?.max(0) as u64;
    let earlier: Vec<f64> = cs.kernel_ns.iter().map(|&k| k as f64).collect();
    cs.kernel_ns.push(kernel);
    let expected = match files {
        true if earlier.len() < KERNEL_HISTORY => return None,
        true => noise::median(&earlier)?,
        false => 0.0,
    };
    let limit = expected * KERNEL_FACTOR + capacity_ns * KERNEL_WARN_PCT / 100.0;
    (kernel as f64 > limit).then(|| Warning::TrialKernelWork {
        trial,
        cell: cell.to_string(),
        kernel_ms: kernel as f64 / 1e6,
        expected_ms: expected / 1e6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> TrialOutcome {
        TrialOutcome::not_run(TrialStatus::Ok, "")
    }

    #[test]
    fn a_disturbed_or_slowed_measured_trial_is_run_again_while_retries_last() {
        let disturbed = TrialMeta {
            disturbed: true,
            ..TrialMeta::default()
        };
        assert!(rerun(&disturbed, &ok(), false, 2));
        assert!(!rerun(&disturbed, &ok(), true, 2), "not a warm-up");
        assert!(!rerun(&disturbed, &ok(), false, 0));
        let second = TrialMeta {
            retry: 2,
            ..disturbed.clone()
        };
        assert!(
            !rerun(&second, &ok(), false, 2),
            "its second re-run is the last"
        );
        let slowed = TrialMeta {
            slowed: Some(true),
            ..TrialMeta::default()
        };
        assert!(rerun(&slowed, &ok(), false, 1));
        let clean = TrialMeta {
            slowed: Some(false),
            noisy: true,
            ..TrialMeta::default()
        };
        assert!(
            !rerun(&clean, &ok(), false, 2),
            "noisy alone is not contaminated"
        );
        let failed = TrialOutcome::not_run(TrialStatus::Failed, "x");
        assert!(!rerun(&disturbed, &failed, false, 2));
    }

    #[test]
    fn the_warnings_name_the_outside_processes_and_say_whether_it_is_run_again() {
        let meta = TrialMeta {
            disturbed: true,
            outside_process_share: Some(0.42),
            slowed: Some(true),
            speed_in_trial: Some(0.6),
            speed_in_trial_steady: Some(1.2),
            retried: true,
            ..TrialMeta::default()
        };
        let top = vec![OutsideProcess {
            comm: "sh".into(),
            pid: 9,
            cpu_ms: 70.0,
        }];
        let w = warnings(&meta, top, (3, "other"));
        let codes: Vec<&str> = w.iter().map(Warning::code).collect();
        assert_eq!(codes, ["trial_disturbed", "trial_slowed"]);
        let text = w[0].to_string();
        assert!(
            text.contains("42.0 %") && text.contains("sh (pid 9, 70.0 ms)"),
            "{text}"
        );
        assert!(
            w[1].to_string().contains("at 50 % of the run's steady"),
            "{}",
            w[1]
        );
    }

    #[test]
    fn kernel_work_far_above_the_cells_own_is_warned_about() {
        let mut cs = CellState::default();
        let meta = |ms: i64| TrialMeta {
            kernel_cpu_ns: Some(ms * 1_000_000),
            ..TrialMeta::default()
        };
        // A trial of 100 ms on 2 CPUs: 200 ms of CPU time, 10 ms of which is 5 %.
        let cap = 200e6;
        // With files: the first two trials teach the cell's own (20 and 24 ms).
        assert!(kernel_work(&meta(20), &mut cs, (true, cap), (1, "io")).is_none());
        assert!(kernel_work(&meta(24), &mut cs, (true, cap), (2, "io")).is_none());
        // Median 22 ms: up to 3 x 22 + 10 = 76 ms is the trial's own.
        assert!(kernel_work(&meta(70), &mut cs, (true, cap), (3, "io")).is_none());
        let w = kernel_work(&meta(150), &mut cs, (true, cap), (4, "io")).expect("warned");
        assert_eq!(w.code(), "trial_kernel_work");
        assert!(
            w.to_string().contains("150.0 ms") && w.to_string().contains("(24.0 ms in"),
            "{w}"
        );
        // Without files: anything above 5 % of the CPUs' time.
        let mut cpu = CellState::default();
        assert!(kernel_work(&meta(9), &mut cpu, (false, cap), (1, "cpu")).is_none());
        assert!(kernel_work(&meta(11), &mut cpu, (false, cap), (2, "cpu")).is_some());
    }
}
