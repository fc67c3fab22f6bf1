//! Which cell of each group the other policies are compared with: the first policy of the
//! run's policy axis (as its stored spec lists it, else cell order), or the one named with
//! `--baseline`.

use super::{CellKey, ReportInput};
use schedlab_core::policy::PolicyKind;
use schedlab_core::records::TrialStatus;
use schedlab_store::query::RunInfo;

/// What a cell compares when the run varied the I/O scheduler or kernel settings: with one
/// policy in the run the scheduler ("bfq") or the settings ("slice=0.1ms"), else the policy
/// with them ("other io=bfq", "other slice=0.1ms"); None when it varied neither.
pub fn treatment(c: &schedlab_store::query::CellView, one_policy: bool) -> Option<String> {
    let io = c.io_scheduler.as_ref().map(|io| format!("io={io}"));
    let parts: Vec<String> = io.into_iter().chain(c.settings.clone()).collect();
    match (one_policy, c.io_scheduler.as_ref(), c.settings.is_some()) {
        _ if parts.is_empty() => None,
        (true, Some(io), false) => Some(io.clone()),
        (true, _, _) => Some(parts.join(" ")),
        (false, _, _) => Some(format!("{} {}", c.policy, parts.join(" "))),
    }
}

/// The names `--baseline` accepts for a run: every compared treatment (the policy, or e.g.
/// "bfq" / "other io=bfq" when the run varied the I/O scheduler) and every plain policy
/// name, in cell order without repeats.
pub fn choices(input: &ReportInput) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let keys = CellKey::all_of(&input.cells);
    for (k, c) in keys.iter().zip(&input.cells) {
        for name in [k.policy.as_str(), c.policy.name()] {
            if !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// `Ok` if `name` is a baseline the run can use; else the run's policies it accepts (the
/// command turns them into `ReportError::UnknownBaseline`).
pub fn check(input: &ReportInput, name: &str) -> Result<(), Vec<String>> {
    let accepted = choices(input);
    match accepted.iter().any(|a| a == name) {
        true => Ok(()),
        false => Err(accepted),
    }
}

/// The policies of the policy axis of the run's spec as run, in order; empty if the spec
/// does not read (the report warns about it).
pub fn spec_policies(run: &RunInfo) -> Vec<PolicyKind> {
    run.spec()
        .map(|s| s.policy_order().to_vec())
        .unwrap_or_default()
}

/// The baseline cell among `cells` (indices into `input.cells`, in cell order): the cell
/// whose treatment or policy is `chosen`, else the one whose policy comes first in `order`
/// (the spec's policy axis; unlisted policies after listed ones), ties to the earlier cell.
/// Without `chosen`, cells with no ok trial are passed over while another cell has some.
pub fn pick(
    input: &ReportInput,
    keys: &[CellKey],
    cells: &[usize],
    order: &[PolicyKind],
    chosen: Option<&str>,
) -> Option<usize> {
    if let Some(name) = chosen {
        return cells
            .iter()
            .copied()
            .find(|&c| keys[c].policy == name)
            .or_else(|| {
                cells
                    .iter()
                    .copied()
                    .find(|&c| input.cells[c].policy.name() == name)
            });
    }
    let rank = |c: usize| {
        let has_data = input.cells[c].count(TrialStatus::Ok) > 0;
        let pos = order
            .iter()
            .position(|p| *p == input.cells[c].policy)
            .unwrap_or(order.len());
        (!has_data, pos, c)
    };
    cells.iter().copied().min_by_key(|&c| rank(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_store::query::CellView;

    fn cell(policy: &str, ok: i64) -> CellView {
        CellView {
            policy: policy.parse().unwrap(),
            workload: "cpu:pi".into(),
            tasks: 2,
            statuses: vec![(schedlab_store::query::Tally::Status(TrialStatus::Ok), ok)],
            ..CellView::default()
        }
    }

    fn input(cells: Vec<CellView>) -> ReportInput {
        ReportInput {
            cells,
            ..ReportInput::default()
        }
    }

    #[test]
    fn the_first_policy_of_the_spec_axis_with_data_is_the_baseline_unless_one_is_chosen() {
        let inp = input(vec![cell("rr", 0), cell("fifo", 3), cell("other", 3)]);
        let keys = CellKey::all_of(&inp.cells);
        let all = [0, 1, 2];
        let run = |spec: &str| {
            let mut run = RunInfo::default();
            run.set_spec_toml(spec.into());
            run
        };
        let order = spec_policies(&run("[axes]\npolicies = [\"rr\", \"other\", \"fifo\"]\n"));
        assert_eq!(
            order,
            vec![PolicyKind::Rr, PolicyKind::Other, PolicyKind::Fifo]
        );
        // rr comes first but has no ok trial: other, the next in the axis.
        assert_eq!(pick(&inp, &keys, &all, &order, None), Some(2));
        // Without a spec: cell order (rr still passed over).
        assert_eq!(pick(&inp, &keys, &all, &[], None), Some(1));
        assert_eq!(pick(&inp, &keys, &all, &order, Some("rr")), Some(0));
        assert_eq!(pick(&inp, &keys, &[1, 2], &order, Some("rr")), None);
        // A spec without a policy axis ran the default one.
        assert_eq!(spec_policies(&run("name = \"x\"")), vec![PolicyKind::Other]);
        assert!(spec_policies(&run("not toml [")).is_empty());
    }

    #[test]
    fn an_unknown_baseline_is_refused_with_the_accepted_names() {
        let mut io = cell("other", 3);
        io.io_scheduler = Some("bfq".into());
        let inp = input(vec![cell("other", 3), cell("fifo", 3), io]);
        assert_eq!(choices(&inp), vec!["other", "fifo", "other io=bfq"]);
        assert!(check(&inp, "fifo").is_ok());
        assert_eq!(
            check(&inp, "deadline").unwrap_err(),
            vec!["other", "fifo", "other io=bfq"]
        );
    }
}
