//! Which stored cells a claim compares: each cell's axis values, the claim's scope, and its
//! claim cells (A's cell and each B's cell in one combination of the other axes' values; for
//! a trend, one such pair per level of its axis).

use schedlab_spec::claims::{Claim, ClaimAxis, ClaimRelation, Treatment};
use schedlab_store::query::CellView;

/// A cell's value of every axis a claim can name, as the store writes them.
pub(super) type AxisValues = Vec<(ClaimAxis, String)>;

/// The axis values of a stored cell, from its fields (never from its labels). Absent settings
/// read as "default" (slice), "none" (BPF scheduler) or "" (I/O scheduler, CPUs, host, kernel).
pub(super) fn axis_values(c: &CellView) -> AxisValues {
    let mut out: AxisValues = c
        .knobs
        .iter()
        .map(|(name, v)| (ClaimAxis::Knob(name.clone()), v.clone()))
        .collect();
    let slice = c.slice.clone().unwrap_or_else(|| "default".into());
    let scx = c.scx.clone().unwrap_or_else(|| "none".into());
    out.extend([
        (ClaimAxis::Policy, c.policy.name().to_string()),
        (ClaimAxis::Priorities, c.priorities.name().to_string()),
        (ClaimAxis::Workload, c.workload.clone()),
        (ClaimAxis::Tasks, c.tasks.to_string()),
        (ClaimAxis::Kind, c.kind.name().to_string()),
        (ClaimAxis::Start, c.start.name().to_string()),
        (ClaimAxis::Cpus, c.cpus.clone().unwrap_or_default()),
        (ClaimAxis::Antagonists, c.antagonists.to_string()),
        (
            ClaimAxis::IoScheduler,
            c.io_scheduler.clone().unwrap_or_default(),
        ),
        (ClaimAxis::Slice, slice),
        (ClaimAxis::Scx, scx),
        (ClaimAxis::Host, c.host.clone().unwrap_or_default()),
        (ClaimAxis::Kernel, c.kernel.clone().unwrap_or_default()),
    ]);
    out.sort();
    out
}

fn value<'a>(values: &'a AxisValues, axis: &ClaimAxis) -> &'a str {
    values
        .iter()
        .find(|(a, _)| a == axis)
        .map_or("", |(_, v)| v.as_str())
}

/// Whether cell `c`, with `values`, has `wanted` on `axis` (a workload by its kind's name or by
/// its label).
fn matches(c: &CellView, values: &AxisValues, axis: &ClaimAxis, wanted: &str) -> bool {
    value(values, axis) == wanted || (*axis == ClaimAxis::Workload && c.work.kind.name() == wanted)
}

fn is(c: &CellView, values: &AxisValues, t: &Treatment) -> bool {
    t.values.iter().all(|(axis, v)| matches(c, values, axis, v))
}

/// One place a claim is tested: A's cell and each B's (None where B has no cell here), or for
/// a trend the (level, A cell, B cell) pairs in axis order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ClaimCell {
    /// The other axes' values that vary in the run, as "cpu:pi, 10 tasks".
    pub label: String,
    /// A's cell (the first level's for a trend).
    pub a: usize,
    /// Each B's cell, in the claim's order.
    pub others: Vec<Option<usize>>,
    /// A trend's levels: (level, A's cell, B's cell).
    pub levels: Vec<(String, usize, Option<usize>)>,
}

/// The claim cells of `claim` among `cells`, in cell order.
pub(super) fn claim_cells(claim: &Claim, cells: &[CellView]) -> Vec<ClaimCell> {
    let values: Vec<AxisValues> = cells.iter().map(axis_values).collect();
    let along = match &claim.relation {
        ClaimRelation::Trend { along, .. } => Some(along.clone()),
        ClaimRelation::Pair(_) => None,
    };
    let mut dropped = claim.a.axes();
    dropped.extend(along.clone());
    let context = |i: usize| -> AxisValues {
        values[i]
            .iter()
            .filter(|(a, _)| !dropped.contains(a))
            .cloned()
            .collect()
    };
    let in_scope = |i: usize| {
        claim.scope.iter().all(|(axis, wanted)| {
            wanted
                .iter()
                .any(|w| matches(&cells[i], &values[i], axis, w))
        })
    };
    let varying = varying_axes(&values, &dropped);
    let mut out: Vec<ClaimCell> = Vec::new();
    for i in (0..cells.len()).filter(|&i| in_scope(i) && is(&cells[i], &values[i], &claim.a)) {
        let ctx = context(i);
        let find = |t: &Treatment, level: Option<&str>| {
            (0..cells.len()).find(|&k| {
                in_scope(k)
                    && is(&cells[k], &values[k], t)
                    && context(k) == ctx
                    && level
                        .is_none_or(|l| along.as_ref().is_some_and(|a| value(&values[k], a) == l))
            })
        };
        match &along {
            None => out.push(ClaimCell {
                label: label(&ctx, &varying),
                a: i,
                others: claim.others.iter().map(|t| find(t, None)).collect(),
                levels: Vec::new(),
            }),
            Some(axis) => {
                let level = value(&values[i], axis).to_string();
                let b = find(&claim.others[0], Some(&level));
                match out.iter_mut().find(|c| c.label == label(&ctx, &varying)) {
                    Some(c) => c.levels.push((level, i, b)),
                    None => out.push(ClaimCell {
                        label: label(&ctx, &varying),
                        a: i,
                        others: vec![b],
                        levels: vec![(level, i, b)],
                    }),
                }
            }
        }
    }
    for c in &mut out {
        c.levels
            .sort_by(|x, y| level_number(&x.0).total_cmp(&level_number(&y.0)));
    }
    out
}

/// An ordered axis value as a number: counts as they are, durations ("0.1ms") in ns.
fn level_number(v: &str) -> f64 {
    v.parse::<f64>()
        .ok()
        .or_else(|| {
            schedlab_spec::parse_duration_ns("level", v)
                .ok()
                .map(|n| n as f64)
        })
        .unwrap_or(f64::INFINITY)
}

/// The axes (other than `dropped`) whose values differ among the cells.
fn varying_axes(values: &[AxisValues], dropped: &[ClaimAxis]) -> Vec<ClaimAxis> {
    let Some(first) = values.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|(a, _)| a.clone())
        .filter(|a| !dropped.contains(a))
        .filter(|a| values.iter().any(|v| value(v, a) != value(first, a)))
        .collect()
}

/// "cpu:pi, 10 tasks, slice=3ms", naming only the axes that vary; "every cell" when none do.
fn label(ctx: &AxisValues, varying: &[ClaimAxis]) -> String {
    let parts: Vec<String> = ctx
        .iter()
        .filter(|(a, _)| varying.contains(a))
        .map(|(a, v)| match a {
            ClaimAxis::Workload => v.clone(),
            ClaimAxis::Tasks => crate::model::tasks_phrase(v.parse().unwrap_or(0)),
            ClaimAxis::Policy | ClaimAxis::IoScheduler => v.clone(),
            _ if v.is_empty() => format!("no {}", a.key()),
            _ => format!("{}={v}", a.key()),
        })
        .collect();
    if parts.is_empty() {
        "every cell".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::policy::PriorityMode;
    use schedlab_core::records::{StartMode, TaskKind};
    use schedlab_spec::claims::check_claims;
    use schedlab_spec::Spec;

    fn cell(policy: &str, tasks: i64, slice: Option<&str>) -> CellView {
        CellView {
            policy: policy.parse().unwrap(),
            priorities: PriorityMode::Same,
            workload: "cpu:pi".into(),
            kind: TaskKind::Process,
            start: StartMode::Barrier,
            tasks,
            settings: slice.map(|s| format!("slice={s}")),
            slice: slice.map(String::from),
            ..CellView::default()
        }
    }

    fn claim(toml_claims: &str) -> Claim {
        let text = format!("[axes]\npolicies = [\"other\", \"fifo\", \"rr\"]\ntasks = [4, 10, 50]\nslices = [\"0.1ms\", \"3ms\"]\n{toml_claims}");
        check_claims(&Spec::from_toml(&text).expect("parses")).expect("valid")[0].clone()
    }

    #[test]
    fn each_combination_of_the_other_axes_is_one_claim_cell() {
        let cells = vec![
            cell("other", 4, None),
            cell("fifo", 4, None),
            cell("rr", 4, None),
            cell("other", 10, None),
            cell("fifo", 10, None),
        ];
        let c = claim("[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = [\"other\", \"rr\"]\n");
        let got = claim_cells(&c, &cells);
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].label.as_str(), got[0].a, got[0].others.clone()),
            ("4 tasks", 1, vec![Some(0), Some(2)])
        );
        // No rr cell with 10 tasks: that B is missing there.
        assert_eq!(got[1].others, vec![Some(3), None]);
        let scoped = claim("[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nlower = \"fifo\"\nthan = \"other\"\nwhere = { tasks = 10 }\n");
        assert_eq!(claim_cells(&scoped, &cells).len(), 1);
    }

    #[test]
    fn slices_come_from_the_cells_settings_and_trends_collect_their_levels_in_order() {
        let cells = vec![
            cell("other", 4, Some("3ms")),
            cell("other", 4, Some("0.1ms")),
            cell("other", 50, Some("3ms")),
            cell("other", 50, Some("0.1ms")),
            cell("other", 10, Some("0.1ms")),
            cell("other", 10, Some("3ms")),
        ];
        let v = axis_values(&cells[0]);
        assert!(v.contains(&(ClaimAxis::Slice, "3ms".into())));
        assert!(v.contains(&(ClaimAxis::Scx, "none".into())));
        let c = claim("[[claims]]\nname = \"x\"\nmetric = \"makespan\"\nratio = [{ slice = \"0.1ms\" }, { slice = \"3ms\" }]\ntrend = { along = \"tasks\", toward = 1 }\n");
        let got = claim_cells(&c, &cells);
        assert_eq!(got.len(), 1);
        let levels: Vec<(&str, usize, Option<usize>)> = got[0]
            .levels
            .iter()
            .map(|(l, a, b)| (l.as_str(), *a, *b))
            .collect();
        assert_eq!(
            levels,
            vec![("4", 1, Some(0)), ("10", 4, Some(5)), ("50", 3, Some(2))]
        );
        assert_eq!(got[0].label, "every cell");
    }
}
