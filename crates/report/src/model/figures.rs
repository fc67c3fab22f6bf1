//! The figures of a report: which plots make sense for the run's axes, with their data
//! (drawn by the renderers' plots module).
//!
//! One set per panel (cells sharing every axis but policy and task count): makespan and
//! switch bars (study 000), turnaround box plots and densities (003), per-task wall time
//! and switches vs load (002), response vs turnaround (001), makespan range vs load (003).

use super::plot_data::{Bar, BarGroup, BoxGroup, Densities, Figure, Plot};
use super::{tasks_phrase, Metric, Panel, Report};

/// Distributions are thinned to at most this many evenly spaced order statistics before
/// plotting, which keeps their shape and keeps SVGs small at any sample size.
pub const MAX_POINTS: usize = 2000;

/// Densities are drawn at no more than this many task counts per panel.
const DENSITY_TASK_COUNTS: usize = 4;

/// At most `max` evenly spaced order statistics of `xs` (all of them, sorted, if fewer).
pub fn thin(xs: &[f64], max: usize) -> Vec<f64> {
    let mut sorted: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    if sorted.len() <= max || max < 2 {
        return sorted;
    }
    let step = (sorted.len() - 1) as f64 / (max - 1) as f64;
    (0..max)
        .map(|i| sorted[((i as f64 * step).round() as usize).min(sorted.len() - 1)])
        .collect()
}

/// Lowercase letters and digits, other runs of characters as one '-'.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Builds the figures of one panel.
struct PanelFigures<'a> {
    r: &'a Report,
    index: usize,
    panel: &'a Panel,
    out: Vec<Figure>,
}

impl PanelFigures<'_> {
    /// Index of the cell of `policy` in group `g`.
    fn cell(&self, g: usize, policy: &str) -> Option<usize> {
        self.r.groups[g]
            .cells
            .iter()
            .copied()
            .find(|&c| self.r.cells[c].key.policy == policy)
    }

    /// (tasks, median, CI of the median, range) of `metric` for `policy` in group `g`.
    fn point(&self, g: usize, policy: &str, metric: Metric) -> Option<(f64, f64, (f64, f64), f64)> {
        let c = self.cell(g, policy)?;
        let s = &self.r.cells[c].summary(metric)?.summary;
        Some((
            self.r.groups[g].tasks as f64,
            s.median,
            s.median_ci,
            s.range,
        ))
    }

    /// The samples of `metric` for `policy` in group `g`, thinned.
    fn samples(&self, g: usize, policy: &str, metric: Metric) -> Option<Vec<f64>> {
        let c = self.cell(g, policy)?;
        let xs = &self.r.samples[c][metric.index()];
        (!xs.is_empty()).then(|| thin(xs, MAX_POINTS))
    }

    fn push(
        &mut self,
        what: &str,
        title: String,
        caption: String,
        axes: (String, String),
        plot: Plot,
    ) {
        self.out.push(Figure {
            id: format!("{}-{}-{what}", self.index + 1, slug(&self.panel.label)),
            panel: self.index,
            title,
            caption,
            x_label: axes.0,
            y_label: axes.1,
            plot,
        });
    }

    /// Bars of the median of `metric` per policy and task count, with CI error bars.
    fn bars(&mut self, metric: Metric, what: &str) {
        let groups: Vec<BarGroup> = self
            .panel
            .groups
            .iter()
            .map(|&g| BarGroup {
                category: tasks_phrase(self.r.groups[g].tasks),
                bars: self
                    .panel
                    .policies
                    .iter()
                    .filter_map(|p| {
                        let (_, median, ci, _) = self.point(g, p, metric)?;
                        Some(Bar {
                            series: p.clone(),
                            value: median,
                            ci: Some(ci),
                        })
                    })
                    .collect(),
            })
            .collect();
        if groups.iter().all(|g| g.bars.is_empty()) {
            return;
        }
        let title = format!(
            "{}: {} {}",
            self.panel.label,
            metric.label(),
            metric.level()
        );
        let caption = format!(
            "Median {} {} per policy and task count{}; error bars: 95% CI of the median.",
            metric.label(),
            metric.level(),
            if metric.per_task() {
                " (the median over trials of each trial's median over its tasks)"
            } else {
                ""
            }
        );
        self.push(
            what,
            title,
            caption,
            ("tasks".into(), metric.with_unit()),
            Plot::Bars(groups),
        );
    }

    /// Lines of one value per policy against the task count.
    fn lines(
        &mut self,
        what: &str,
        title: String,
        caption: String,
        y: String,
        value: impl Fn(&Self, usize, &str) -> Option<f64>,
    ) {
        let series: Vec<(String, Vec<(f64, f64)>)> = self
            .panel
            .policies
            .iter()
            .map(|p| {
                let pts = self
                    .panel
                    .groups
                    .iter()
                    .filter_map(|&g| Some((self.r.groups[g].tasks as f64, value(self, g, p)?)))
                    .collect();
                (p.clone(), pts)
            })
            .collect();
        if series.iter().all(|(_, pts)| pts.len() < 2) {
            return;
        }
        self.push(
            what,
            title,
            caption,
            ("tasks".into(), y),
            Plot::Lines(series),
        );
    }

    /// Every figure of the panel, in the report's order.
    fn build(mut self) -> Vec<Figure> {
        self.bars(Metric::Makespan, "makespan");
        self.bars(Metric::TrialVcsw, "vcsw");
        self.bars(Metric::TrialIvcsw, "ivcsw");
        self.turnaround_boxes();
        self.turnaround_densities();
        self.per_task_lines();
        self.response_turnaround();
        self.makespan_range();
        self.out
    }

    /// Box plots of the per-task turnaround per policy and task count.
    fn turnaround_boxes(&mut self) {
        let boxes: Vec<BoxGroup> = self
            .panel
            .groups
            .iter()
            .map(|&g| {
                BoxGroup::of(
                    tasks_phrase(self.r.groups[g].tasks),
                    self.panel
                        .policies
                        .iter()
                        .filter_map(|p| Some((p.clone(), self.samples(g, p, Metric::Turnaround)?)))
                        .collect(),
                )
            })
            .collect();
        if boxes.iter().any(|b| !b.series.is_empty()) {
            self.push(
                "turnaround-box",
                format!("{}: per-task turnaround", self.panel.label),
                "Per-task turnaround per policy and task count: box from the 1st to the 3rd quartile, line at the median, whiskers to the furthest value within 1.5 IQR, points beyond.".into(),
                ("tasks".into(), Metric::Turnaround.with_unit()),
                Plot::Boxes(boxes),
            );
        }
    }

    /// Turnaround densities for at most [`DENSITY_TASK_COUNTS`] task counts, spread over the
    /// panel's range.
    fn turnaround_densities(&mut self) {
        let label = self.panel.label.clone();
        let groups = self.panel.groups.clone();
        let picks: Vec<usize> = if groups.len() <= DENSITY_TASK_COUNTS {
            groups
        } else {
            (0..DENSITY_TASK_COUNTS)
                .map(|i| groups[i * (groups.len() - 1) / (DENSITY_TASK_COUNTS - 1)])
                .collect()
        };
        for g in picks {
            let series: Vec<(String, Vec<f64>)> = self
                .panel
                .policies
                .iter()
                .filter_map(|p| Some((p.clone(), self.samples(g, p, Metric::Turnaround)?)))
                .collect();
            if series.iter().all(|(_, xs)| xs.len() < 2) {
                continue;
            }
            let n = self.r.groups[g].tasks;
            self.push(
                &format!("turnaround-density-{n}"),
                format!("{label}, {}: per-task turnaround density", tasks_phrase(n)),
                format!("Kernel density of the per-task turnaround (completion) times with {}, per policy; groups of tasks finishing together show as separate peaks.", tasks_phrase(n)),
                (Metric::Turnaround.with_unit(), "density".into()),
                Plot::Density(Densities::of(&series)),
            );
        }
    }

    /// Makespan and context switches per task against the task count (study 002).
    fn per_task_lines(&mut self) {
        let label = self.panel.label.clone();
        self.lines(
            "wall-per-task",
            format!("{label}: makespan per task vs load"),
            "Median of makespan / task count per policy against the task count (study 002's per-process wall time).".into(),
            Metric::MakespanPerTask.with_unit(),
            |s, g, p| Some(s.point(g, p, Metric::MakespanPerTask)?.1),
        );
        self.lines(
            "switches-per-task",
            format!("{label}: context switches per task vs load"),
            "Median of (voluntary + involuntary switches) / task count per policy against the task count (study 002).".into(),
            Metric::CswPerTask.with_unit(),
            |s, g, p| Some(s.point(g, p, Metric::CswPerTask)?.1),
        );
    }

    /// Median response against median turnaround, a point per policy and task count (study 001).
    fn response_turnaround(&mut self) {
        let scatter: Vec<(String, Vec<(f64, f64)>)> = self
            .panel
            .policies
            .iter()
            .map(|p| {
                let pts = self
                    .panel
                    .groups
                    .iter()
                    .filter_map(|&g| {
                        let r = self.point(g, p, Metric::Response)?.1;
                        let t = self.point(g, p, Metric::Turnaround)?.1;
                        Some((r, t))
                    })
                    .collect();
                (p.clone(), pts)
            })
            .collect();
        if scatter.iter().any(|(_, pts)| !pts.is_empty()) {
            self.push(
                "response-turnaround",
                format!("{}: response vs turnaround", self.panel.label),
                "Median response time against median turnaround time (over trials, of each trial's median over its tasks), one point per policy and task count (study 001).".into(),
                (Metric::Response.with_unit(), Metric::Turnaround.with_unit()),
                Plot::Scatter(scatter),
            );
        }
    }

    /// The makespan's range against the task count (study 003), when some cell has 2 trials.
    fn makespan_range(&mut self) {
        let has_spread = self.panel.groups.iter().any(|&g| {
            self.r.groups[g]
                .cells
                .iter()
                .any(|&c| self.r.cells[c].trials_ok >= 2)
        });
        if has_spread {
            self.lines(
                "makespan-range",
                format!("{}: makespan range vs load", self.panel.label),
                "Range (max - min) of the per-trial makespan per policy against the task count (study 003).".into(),
                "makespan range (ms)".into(),
                |s, g, p| Some(s.point(g, p, Metric::Makespan)?.3),
            );
        }
    }
}

/// Every figure of the report, panel by panel, then the kernel's view (latency, trace).
pub fn figures(r: &Report) -> Vec<Figure> {
    let kernel = super::kernel::figures(&r.kernel, &r.panels)
        .into_iter()
        .chain(super::iosched::figures(&r.iosched, &r.panels))
        .chain(super::cgroups::figures(&r.cgroups))
        .chain(super::workload_plots::figures(r));
    r.panels
        .iter()
        .enumerate()
        .flat_map(|(index, panel)| {
            PanelFigures {
                r,
                index,
                panel,
                out: Vec::new(),
            }
            .build()
        })
        .chain(kernel)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_extremes_and_the_median_of_a_large_sample() {
        let xs: Vec<f64> = (0..100_001).rev().map(f64::from).collect();
        let t = thin(&xs, 101);
        assert_eq!(t.len(), 101);
        assert_eq!((t[0], t[50], t[100]), (0.0, 50_000.0, 100_000.0));
        assert_eq!(thin(&[3.0, f64::NAN, 1.0], 10), vec![1.0, 3.0]);
    }

    #[test]
    fn slugs_are_lowercase_words_joined_by_dashes() {
        assert_eq!(
            slug("cpu:pi, spread priorities"),
            "cpu-pi-spread-priorities"
        );
        assert_eq!(slug("io (sync-copy)"), "io-sync-copy");
    }
}
