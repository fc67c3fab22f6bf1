//! Kernel limits named, not silently measured: RT throttling, warned about when a cell's
//! real-time demand per CPU exceeds the kernel's budget, and detected in every trial it hit.
//!
//! The budget: RT tasks may run `kernel.sched_rt_runtime_us` out of every
//! `kernel.sched_rt_period_us` on each CPU (950 ms per second by default); then they are
//! throttled, not run, until the period ends, however runnable they are (checked on this
//! machine, kernel 6.18: a FIFO spin loop on one CPU stops for 50-54 ms after 950 ms of every
//! second). The period's boundaries run on their own timer, and each boundary forgives up to
//! one runtime of use, so RT work of more than one runtime back to back is throttled only if
//! no boundary falls late in it; beyond two runtimes it always is (two FIFO tasks of 0.82 s
//! on one CPU once ran 1.63 s without a stop). Hence the plan warns of possible throttling
//! and every trial is judged by what happened. Nothing counts these stops where an unprivileged reader can see them (the
//! `rt_throttled` flag is in debugfs only, and it is a state, not a count), so a trial is
//! judged by what its tasks got: CPU-bound RT tasks are runnable from their start to their end,
//! so without throttling they get the whole of their CPUs while enough of them are active.
//! Their exact CPU time ([`schedlab_core::records::TaskRecord::cpu_ns`]) falling short of that by at
//! least half of the least loss throttling causes, more than steal time explains, with demand
//! long enough to reach the budget, is the mark of throttling.

use schedlab_core::policy::PolicyKind;
use schedlab_core::records::{TaskRecord, TrialOutcome};
use schedlab_core::workload::WorkloadKind;
use schedlab_core::Warning;
use schedlab_spec::plan::Cell;

/// The RT bandwidth the kernel allows on each CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtBudget {
    /// `kernel.sched_rt_runtime_us` in ns; None: -1, no limit.
    pub runtime_ns: Option<u64>,
    /// `kernel.sched_rt_period_us` in ns.
    pub period_ns: u64,
}

impl RtBudget {
    /// The budget in force now, from /proc/sys/kernel; None if unreadable.
    pub fn current() -> Option<RtBudget> {
        let read = |name: &str| -> Option<i64> {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let runtime = read("sched_rt_runtime_us")?;
        let period = read("sched_rt_period_us")?;
        Some(RtBudget {
            runtime_ns: (runtime >= 0).then(|| runtime as u64 * 1000),
            period_ns: period.max(1) as u64 * 1000,
        })
    }

    /// The budget `cell`'s trials run under: the one in force now, with the values of the
    /// cell's own `kernel.sched_rt_runtime_us` / `sched_rt_period_us` knobs, if it sets them.
    pub fn for_cell(cell: &Cell) -> Option<RtBudget> {
        let mut b = RtBudget::current()?;
        for k in &cell.knobs {
            let Ok(v) = k.value.trim().parse::<i64>() else {
                continue;
            };
            match k.path.as_str() {
                "/proc/sys/kernel/sched_rt_runtime_us" => {
                    // A knob's value is the user's: saturate rather than wrap.
                    b.runtime_ns = (v >= 0).then(|| (v as u64).saturating_mul(1000));
                }
                "/proc/sys/kernel/sched_rt_period_us" => {
                    b.period_ns = (v.max(1) as u64).saturating_mul(1000)
                }
                _ => {}
            }
        }
        Some(b)
    }

    /// "950 ms per 1000 ms" or "no limit".
    pub fn describe(&self) -> String {
        match self.runtime_ns {
            Some(r) => format!(
                "{} ms per {} ms",
                r as f64 / 1e6,
                self.period_ns as f64 / 1e6
            ),
            None => "no limit (sched_rt_runtime_us = -1)".into(),
        }
    }

    /// How long RT tasks stay throttled once they used the runtime: period - runtime, ns.
    fn throttle_ns(&self) -> Option<u64> {
        self.runtime_ns
            .filter(|&r| r < self.period_ns)
            .map(|r| self.period_ns - r)
    }
}

pub use schedlab_core::warning::THROTTLE_REMEDY;

/// The CPUs `cell`'s tasks may use.
fn cpu_count(cell: &Cell) -> usize {
    cell.cpus
        .as_ref()
        .map_or_else(|| schedlab_sys::allowed_cpus().len(), Vec::len)
        .max(1)
}

/// Whether tasks of `policy` running `kind` work are RT tasks that keep a CPU busy.
fn rt_cpu_bound(policy: PolicyKind, kind: WorkloadKind) -> bool {
    matches!(policy, PolicyKind::Fifo | PolicyKind::Rr) && kind == WorkloadKind::Cpu
}

/// The plan-time warning for `cell`, whose tasks each need `alone_ns` of CPU alone and whose
/// trial lasts about `trial_ns`: RT demand per CPU above `budget`, with cause and remedy.
pub fn demand_warning(
    cell: &Cell,
    alone_ns: u64,
    trial_ns: u64,
    budget: RtBudget,
) -> Option<Warning> {
    let runtime = budget.runtime_ns?;
    let k = cpu_count(cell) as u64;
    let ms = |ns: u64| ns as f64 / 1e6;
    let periodic_rt = matches!(cell.policy, PolicyKind::Fifo | PolicyKind::Rr)
        && cell.workload.kind == WorkloadKind::Periodic;
    let (tasks, policy, busy_ns) =
        if rt_cpu_bound(cell.antagonist_policy, cell.antagonist_workload) && cell.antagonists > 0 {
            // RT hogs run until the measured tasks end: the whole trial.
            (cell.antagonists, None, trial_ns)
        } else if rt_cpu_bound(cell.policy, cell.workload.kind) {
            let n = u64::from(cell.tasks);
            // Tasks spread over the CPUs: each CPU runs n/k of them back to back (one at least).
            let per_cpu = alone_ns.saturating_mul(n.div_ceil(k));
            (cell.tasks, Some(cell.policy.to_string()), per_cpu)
        } else if periodic_rt {
            let share = cell.workload.run_ns as f64 / cell.workload.period_ns.max(1) as f64
                * f64::from(cell.tasks)
                / k as f64;
            let allowed = runtime as f64 / budget.period_ns as f64;
            return (share > allowed && trial_ns > budget.period_ns).then(|| {
                Warning::RtBudgetPeriodic {
                    cell: cell.label(),
                    policy: cell.policy.to_string(),
                    want_pct: share * 100.0,
                    budget: budget.describe(),
                    allowed_pct: allowed * 100.0,
                }
            });
        } else {
            return None;
        };
    (busy_ns > runtime).then(|| Warning::RtBudgetDemand {
        cell: cell.label(),
        tasks,
        policy,
        cpus: k,
        busy_ms: ms(busy_ns),
        budget: budget.describe(),
        throttle_ms: ms(budget.throttle_ns().unwrap_or(0)),
        runtime_ms: ms(runtime),
    })
}

/// The plan-time warning for `cell` (see [`demand_warning`]) with the budget its trials run
/// under ([`RtBudget::for_cell`]) and `alone_ns` of work per task; None when the budget cannot
/// be read or is not exceeded.
pub fn cell_warning(cell: &Cell, alone_ns: u64) -> Option<Warning> {
    let trial_ns = super::estimate_trial_ns(cell, alone_ns);
    demand_warning(cell, alone_ns, trial_ns, RtBudget::for_cell(cell)?)
}

/// Judges a finished trial for RT throttling with the budget in force now, records the
/// verdict in `meta` (`rt_throttled`), and returns the warning for a throttled trial (trial
/// number `trial`, from 1).
pub fn judge(
    cell: &Cell,
    trial: usize,
    outcome: &TrialOutcome,
    meta: &mut schedlab_core::records::TrialMeta,
) -> Option<Warning> {
    if outcome.status != schedlab_core::records::TrialStatus::Ok {
        return None;
    }
    let budget = RtBudget::current()?;
    let t = detect(cell, outcome, budget, meta.trial_steal_pct)?;
    meta.rt_throttled = Some(t.throttled);
    t.throttled
        .then(|| throttled_warning(&t, budget, trial, &cell.label()))
}

/// The evidence of RT throttling in one trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throttling {
    /// CPU time the CPU-bound RT tasks could have had: the integral over the trial of
    /// min(CPUs, RT tasks between their start and end), ns.
    pub capacity_ns: u64,
    /// The CPU time they had (sum of their exact `cpu_ns`), ns.
    pub rt_cpu_ns: u64,
    /// Longest time some RT task was active (at least one CPU wanted by RT), ns.
    pub busy_ns: u64,
    /// Shortfall after removing steal: capacity x (1 - steal) - CPU time, ns.
    pub shortfall_ns: i64,
    /// Whether the shortfall is throttling: demand reached the runtime and at least half of
    /// the least loss that throttling would cause went missing.
    pub throttled: bool,
}

/// Judges `outcome` of a trial of `cell` for RT throttling under `budget`, with `steal_pct` of
/// its CPUs' time stolen during it. None when the trial has no CPU-bound RT task, or no
/// budget applies.
pub fn detect(
    cell: &Cell,
    outcome: &TrialOutcome,
    budget: RtBudget,
    steal_pct: Option<f64>,
) -> Option<Throttling> {
    let runtime = budget.runtime_ns?;
    let throttle = budget.throttle_ns()?;
    let rt: Vec<&TaskRecord> = outcome
        .tasks
        .iter()
        .filter(|t| {
            let kind = if t.antagonist {
                cell.antagonist_workload
            } else {
                cell.workload.kind
            };
            t.policy.is_some_and(|p| rt_cpu_bound(p, kind)) && t.t_start_ns > 0 && t.t_end_ns > 0
        })
        .collect();
    if rt.is_empty() {
        return None;
    }
    let spans: Vec<(u64, u64)> = rt.iter().map(|t| (t.t_start_ns, t.t_end_ns)).collect();
    let (capacity_ns, busy_ns) = capacity(&spans, cpu_count(cell));
    let rt_cpu_ns: u64 = rt.iter().filter_map(|t| t.cpu_ns).sum();
    let unstolen = 1.0 - steal_pct.unwrap_or(0.0).clamp(0.0, 100.0) / 100.0;
    let shortfall_ns = (capacity_ns as f64 * unstolen) as i64 - rt_cpu_ns as i64;
    // Each throttle takes `throttle` ns from every CPU it hits; beyond one runtime plus one
    // period of demand at least one more falls in every period. Half of the least expected
    // loss is the mark; losses without throttling (higher-priority RT threads, steal
    // mis-measured) stayed below 10 ms in 1.6 s here.
    let least = (busy_ns.saturating_sub(runtime) / budget.period_ns).max(1);
    let enough = (least * throttle / 2) as i64;
    Some(Throttling {
        capacity_ns,
        rt_cpu_ns,
        busy_ns,
        shortfall_ns,
        throttled: busy_ns >= runtime && shortfall_ns >= enough,
    })
}

/// For task spans `(start, end)` on `cpus` CPUs: the integral of min(cpus, active tasks) over
/// time, and the time at least one task was active, both in ns.
pub fn capacity(spans: &[(u64, u64)], cpus: usize) -> (u64, u64) {
    let mut events: Vec<(u64, i64)> = spans
        .iter()
        .filter(|(s, e)| e > s)
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    events.sort_unstable();
    let (mut active, mut last, mut cap, mut busy) = (0i64, 0u64, 0u64, 0u64);
    for (t, d) in events {
        if active > 0 {
            let dt = t - last;
            cap += dt * (active as u64).min(cpus as u64);
            busy += dt;
        }
        active += d;
        last = t;
    }
    (cap, busy)
}

/// The warning stored with a throttled trial: the evidence, the cause and the remedy.
pub fn throttled_warning(t: &Throttling, budget: RtBudget, trial: usize, cell: &str) -> Warning {
    let ms = |ns: f64| ns / 1e6;
    Warning::RtThrottled {
        trial,
        cell: cell.to_string(),
        rt_cpu_ms: ms(t.rt_cpu_ns as f64),
        capacity_ms: ms(t.capacity_ns as f64),
        missing_ms: ms(t.shortfall_ns as f64),
        demand_ms: ms(t.busy_ns as f64),
        budget: budget.describe(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::records::TrialStatus;
    use schedlab_spec::plan::Cell;

    const MS: u64 = 1_000_000;
    const BUDGET: RtBudget = RtBudget {
        runtime_ns: Some(950 * MS),
        period_ns: 1000 * MS,
    };

    #[test]
    fn capacity_counts_at_most_one_task_per_cpu() {
        // Two tasks on one CPU, 0..100 and 50..200: the CPU is wanted 0..200.
        assert_eq!(capacity(&[(0, 100), (50, 200)], 1), (200, 200));
        // On two CPUs, 50..100 has both: 100 + 50 + 100.
        assert_eq!(capacity(&[(0, 100), (50, 200)], 2), (250, 200));
        assert_eq!(capacity(&[], 2), (0, 0));
    }

    #[test]
    fn a_huge_budget_knob_saturates_instead_of_wrapping() {
        let mut cell = fifo_cell(None);
        for name in ["sched_rt_runtime_us", "sched_rt_period_us"] {
            cell.knobs.push(schedlab_core::records::KnobSetting {
                name: format!("kernel.{name}"),
                path: format!("/proc/sys/kernel/{name}"),
                value: i64::MAX.to_string(),
            });
        }
        let Some(b) = RtBudget::for_cell(&cell) else {
            return schedlab_testkit::skip(
                schedlab_testkit::Need::Kernel,
                "no /proc/sys/kernel/sched_rt_* (RT throttling) on this kernel",
            );
        };
        assert_eq!((b.runtime_ns, b.period_ns), (Some(u64::MAX), u64::MAX));
    }

    fn fifo_cell(cpus: Option<Vec<usize>>) -> Cell {
        Cell {
            policy: PolicyKind::Fifo,
            priorities: schedlab_core::policy::PriorityMode::Same,
            workload: schedlab_core::workload::Workload::default(),
            size: schedlab_core::records::WorkSize::WorkNs(300 * MS),
            split: false,
            tasks: 4,
            kind: schedlab_core::records::TaskKind::Process,
            start: schedlab_core::records::StartMode::Barrier,
            cpus,
            nice: None,
            rt_priority: None,
            deadline: schedlab_core::policy::DeadlineParams {
                runtime_ns: 5 * MS,
                deadline_ns: 50 * MS,
                period_ns: 50 * MS,
            },
            antagonists: 0,
            antagonist_policy: PolicyKind::Other,
            antagonist_workload: WorkloadKind::Cpu,
            io_scheduler: None,
            slice_ns: None,
            knobs: Vec::new(),
            scx: None,
            groups: Vec::new(),
        }
    }

    /// An outcome of FIFO tasks on CPU 0 running back to back for `spans_ms`, each getting
    /// its span's CPU time less `lost_ms`.
    fn outcome(spans_ms: &[(u64, u64)], lost_ms: u64) -> TrialOutcome {
        let mut o = TrialOutcome::not_run(TrialStatus::Ok, "");
        o.tasks = spans_ms
            .iter()
            .map(|&(s, e)| TaskRecord {
                policy: Some(PolicyKind::Fifo),
                t_start_ns: 1 + s * MS,
                t_end_ns: 1 + e * MS,
                cpu_ns: Some((e - s - lost_ms) * MS),
                ..TaskRecord::default()
            })
            .collect();
        o
    }

    #[test]
    fn a_shortfall_of_one_throttle_after_the_runtime_is_throttling() {
        let cell = fifo_cell(Some(vec![0]));
        // Two tasks back to back for 1250 ms; 50 ms lost to one throttle.
        let o = outcome(&[(0, 650), (650, 1250)], 25);
        let t = detect(&cell, &o, BUDGET, Some(0.0)).expect("RT tasks");
        assert_eq!(t.capacity_ns, 1250 * MS);
        assert_eq!(t.rt_cpu_ns, 1200 * MS);
        assert!(t.throttled, "{t:?}");
        let w = throttled_warning(&t, BUDGET, 1, "fifo").to_string();
        assert!(w.contains("950 ms per 1000 ms") && w.contains("sched_rt_runtime_us=-1"));
    }

    #[test]
    fn no_throttling_below_the_runtime_nor_when_steal_explains_the_shortfall() {
        let cell = fifo_cell(Some(vec![0]));
        // 900 ms of demand cannot reach 950 ms of runtime, whatever went missing.
        let short = outcome(&[(0, 450), (450, 900)], 30);
        assert!(!detect(&cell, &short, BUDGET, None).unwrap().throttled);
        // 1250 ms with 50 ms missing, but 5 % of the CPU's time was stolen: 62 ms explained.
        let stolen = outcome(&[(0, 650), (650, 1250)], 25);
        assert!(!detect(&cell, &stolen, BUDGET, Some(5.0)).unwrap().throttled);
        // Nothing missing: not throttled.
        let full = outcome(&[(0, 650), (650, 1250)], 0);
        assert!(!detect(&cell, &full, BUDGET, None).unwrap().throttled);
        // 3.6 s of demand must lose at least two throttles (100 ms): 40 ms missing is not it,
        // 60 ms is (half the least loss).
        let long = |lost| outcome(&[(0, 1200), (1200, 2400), (2400, 3600)], lost);
        assert!(!detect(&cell, &long(13), BUDGET, None).unwrap().throttled);
        assert!(detect(&cell, &long(20), BUDGET, None).unwrap().throttled);
        // No limit, or no RT task: nothing to judge.
        let unlimited = RtBudget {
            runtime_ns: None,
            ..BUDGET
        };
        assert!(detect(&cell, &stolen, unlimited, None).is_none());
        let mut other = stolen.clone();
        other
            .tasks
            .iter_mut()
            .for_each(|t| t.policy = Some(PolicyKind::Other));
        assert!(detect(&cell, &other, BUDGET, None).is_none());
    }

    #[test]
    fn the_plan_warns_when_back_to_back_rt_work_per_cpu_exceeds_the_runtime() {
        let pinned = fifo_cell(Some(vec![0]));
        // 4 tasks x 300 ms on one CPU: 1.2 s back to back.
        let w = demand_warning(&pinned, 300 * MS, 1300 * MS, BUDGET).expect("over budget");
        assert_eq!(w.code(), "rt_budget_demand");
        let w = w.to_string();
        assert!(w.contains("1200 ms") && w.contains("Remedy"), "{w}");
        // 4 x 200 ms = 800 ms: within the runtime.
        assert!(demand_warning(&pinned, 200 * MS, 900 * MS, BUDGET).is_none());
        let mut other = pinned.clone();
        other.policy = PolicyKind::Other;
        assert!(demand_warning(&other, 300 * MS, 1300 * MS, BUDGET).is_none());
        let unlimited = RtBudget {
            runtime_ns: None,
            ..BUDGET
        };
        assert!(demand_warning(&pinned, 300 * MS, 1300 * MS, unlimited).is_none());
        // A cell that lifts the budget with a knob is not warned about.
        let mut lifted = pinned.clone();
        lifted.knobs.push(schedlab_core::records::KnobSetting {
            name: "kernel.sched_rt_runtime_us".into(),
            path: "/proc/sys/kernel/sched_rt_runtime_us".into(),
            value: "-1".into(),
        });
        if let Some(b) = RtBudget::for_cell(&lifted) {
            assert_eq!(b.runtime_ns, None);
            assert!(cell_warning(&lifted, 300 * MS).is_none());
        }
    }
}
