//! The whole report computed from the stored rows of a run ([`build`]): layout, summaries,
//! tests, exploratory comparisons, quality, notes, and the claims decided
//! ([`crate::claims::eval::build`]).

use super::layout::Layout;
use super::warning::MethodNote;
use super::{
    baseline, cell_samples, exploratory, notes, par_map, quality, trial_values, trials, CellKey,
    CellReport, ExploratoryComparison, Group, Metric, MetricSummary, Report, ReportInput,
};
use schedlab_store::query::CellView;

/// Computes the whole report from the stored rows of a run: its summaries, tests and figures
/// from the clean trials ([`quality::clean`]), its claims from every stored trial (they leave
/// out the same ones, [`quality::excluded_trials`]).
pub fn build(all: &ReportInput) -> Report {
    let input = &quality::clean(all);
    let seed = input.run.seed;
    let keys = CellKey::all_of(&input.cells);
    let Layout {
        mut cells,
        mut groups,
        panels,
    } = Layout::of(input, &keys);
    let trial_values: TrialValues = par_map(&input.cells, trial_values);
    let samples = summarize(&input.cells, &trial_values, &mut cells);
    let order = baseline::spec_policies(&input.run);
    for g in &mut groups {
        g.baseline = baseline::pick(input, &keys, &g.cells, &order, input.baseline.as_deref());
    }
    let exploratory = test_groups(&keys, &trial_values, &mut groups);
    let quality = quality::build(input, &cells, &groups);
    let mut warnings = notes::warnings(input, &cells, &groups);
    // Before the stored warnings, which are many and shown only in part.
    let at = warnings.len() - input.warnings.len();
    warnings.splice(at..at, quality::warnings(&quality));
    let warning_kinds = notes::warning_kinds(
        &warnings[..warnings.len() - input.warnings.len()],
        &input.warnings,
    );
    let mut methods = notes::methods(
        &notes::MethodsInput {
            seed,
            include_warmup: input.include_warmup,
            baseline: input.baseline.clone(),
        },
        &exploratory,
    );
    methods.notes.extend(quality::notes(&quality));
    let claims = crate::claims::eval::build(all);
    methods.notes.extend(
        claims
            .iter()
            .flat_map(|c| c.methods.iter().cloned().map(MethodNote::Claims)),
    );
    Report {
        run: input.run.clone(),
        include_warmup: input.include_warmup,
        primary_metric: input
            .run
            .spec()
            .map_or(Metric::Makespan, |s| s.primary_metric()),
        methods,
        warnings,
        warning_kinds,
        cells,
        groups,
        panels,
        exploratory,
        quality,
        claims,
        samples,
        trial_values,
        kernel: input.kernel.clone(),
        iosched: input.iosched.clone(),
        cgroups: input.cgroups.clone(),
    }
}

/// Every cell's samples and its summaries per metric: over the trial values for every metric,
/// and pooled over the tasks for per-task metrics, on every CPU.
fn summarize(
    input: &[CellView],
    trial_values: &TrialValues,
    cells: &mut [CellReport],
) -> Vec<Vec<Vec<f64>>> {
    let samples: Vec<Vec<Vec<f64>>> = par_map(input, cell_samples);
    // (cell, metric, pooled)
    let jobs: Vec<(usize, Metric, bool)> = (0..cells.len())
        .flat_map(|c| Metric::ALL.map(|m| (c, m, false)))
        .chain((0..cells.len()).flat_map(|c| {
            Metric::ALL
                .into_iter()
                .filter(|m| m.per_task())
                .map(move |m| (c, m, true))
        }))
        .collect();
    let summaries = par_map(&jobs, |&(c, m, pooled)| {
        if pooled {
            // No interval: the tasks of one trial share its conditions (correlated), so an
            // interval with n = tasks would claim coverage it does not have (0.56-0.84 in
            // the audit's simulation). The trial-level summaries carry the intervals.
            schedlab_analyze::summarize(&samples[c][m.index()]).map(|s| schedlab_analyze::Summary {
                median_ci: (f64::NAN, f64::NAN),
                median_ci_coverage: f64::NAN,
                mean_ci: (f64::NAN, f64::NAN),
                ..s
            })
        } else {
            schedlab_analyze::summarize(&trials::values(&trial_values[c][m.index()]))
        }
    });
    for (&(c, metric, pooled), s) in jobs.iter().zip(summaries) {
        if let Some(summary) = s {
            let m = MetricSummary { metric, summary };
            if pooled {
                cells[c].pooled.push(m);
            } else {
                cells[c].summaries.push(m);
            }
        }
    }
    samples
}

/// Trial values per cell and metric
type TrialValues = Vec<Vec<Vec<(i64, f64)>>>;

/// The tests on one value per trial: every group's pairwise tests per tested metric (stored
/// in the groups), and the exploratory comparisons with each group's baseline.
fn test_groups(
    keys: &[CellKey],
    trial_values: &TrialValues,
    groups: &mut [Group],
) -> Vec<ExploratoryComparison> {
    let policies: Vec<String> = keys.iter().map(|k| k.policy.clone()).collect();
    let jobs: Vec<(usize, Metric)> = (0..groups.len())
        .flat_map(|g| {
            Metric::ALL
                .into_iter()
                .filter(|m| m.tested())
                .map(move |m| (g, m))
        })
        .collect();
    let tests = par_map(&jobs, |&(g, m)| {
        exploratory::compare_metric(&groups[g], m, &policies, trial_values)
    });
    for (&(g, m), t) in jobs.iter().zip(tests) {
        if let Some(c) = t {
            groups[g].tests.push((m, c));
        }
    }
    par_map(&jobs, |&(g, m)| {
        exploratory::against_baseline(g, &groups[g], m, &policies, trial_values)
    })
    .into_iter()
    .flatten()
    .collect()
}
