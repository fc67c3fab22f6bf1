//! The data of the report's figures, as the model produces them and the plots module
//! (`render::plots`) draws them: a [`Figure`] with its [`Plot`] of bars, Tukey boxes,
//! density curves, CDF steps, lines, points or Gantt intervals. Every statistic is computed here (by `schedlab_analyze::shape`); the plots
//! only place and draw.

use schedlab_analyze::{
    ecdf_steps, kde_at, silverman_bandwidth, sorted_finite, tukey_box, TukeyBox,
};

/// Points per density curve.
pub const DENSITY_POINTS: usize = 240;

/// The data of one plot, in the form the plots module takes.
#[derive(Debug, Clone)]
pub enum Plot {
    /// Grouped bars with CI error bars.
    Bars(Vec<BarGroup>),
    /// Tukey box plots, grouped.
    Boxes(Vec<BoxGroup>),
    /// Kernel density estimates, one per series.
    Density(Densities),
    /// Lines through points, one per series.
    Lines(Vec<(String, Vec<(f64, f64)>)>),
    /// Lines through points on a logarithmic y axis (latency percentiles).
    LogLines(Vec<(String, Vec<(f64, f64)>)>),
    /// Points, one colour per series.
    Scatter(Vec<(String, Vec<(f64, f64)>)>),
    /// Empirical CDFs, one per series.
    Cdf(Cdfs),
    /// A per-CPU timeline.
    Gantt(Vec<GanttBar>),
}

/// One figure of the report.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem, unique in the report, e.g. "1-cpu-pi-makespan".
    pub id: String,
    /// Index of its panel in [`super::Report::panels`].
    pub panel: usize,
    /// Title drawn on the plot.
    pub title: String,
    /// What the figure shows and how it was computed.
    pub caption: String,
    /// x axis label, with unit.
    pub x_label: String,
    /// y axis label, with unit (unused by densities).
    pub y_label: String,
    /// The data.
    pub plot: Plot,
}

/// One bar: the value of one series (a policy name, which picks the colour) in a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Series name; bars of the same series share colour and position in every group.
    pub series: String,
    /// Bar height, in the unit of the y axis. Non-finite: the bar is left out.
    pub value: f64,
    /// Confidence interval (low, high) in the same unit, drawn as an error bar; skipped if
    /// either end is not finite.
    pub ci: Option<(f64, f64)>,
}

/// The bars of one category on the x axis (e.g. "10 tasks").
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    /// Label under the group.
    pub category: String,
    /// One bar per series; a series missing here leaves a gap at its position.
    pub bars: Vec<Bar>,
}

/// The Tukey box of every series in one category on the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxGroup {
    /// Label under the group (e.g. "10 tasks").
    pub category: String,
    /// Per series (a policy name, which picks the colour) the box of its finite values, in
    /// the unit of the y axis; `None`: no finite value (the legend says "no data").
    pub series: Vec<(String, Option<TukeyBox>)>,
}

impl BoxGroup {
    /// The boxes of `series`' raw values (non-finite values skipped).
    pub fn of(category: String, series: Vec<(String, Vec<f64>)>) -> BoxGroup {
        BoxGroup {
            category,
            series: series
                .into_iter()
                .map(|(n, v)| (n, tukey_box(&v)))
                .collect(),
        }
    }
}

/// Gaussian kernel density curves, one per series, on one grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Densities {
    /// Per series (a policy name) its curve: (x, density in 1/(x unit)) at
    /// [`DENSITY_POINTS`] points; empty: no finite value.
    pub curves: Vec<(String, Vec<(f64, f64)>)>,
    /// The grid's ends: the data's range plus three of the widest bandwidth on each side
    /// (tails near zero); `None`: no finite value in any series.
    pub x_range: Option<(f64, f64)>,
}

impl Densities {
    /// The densities of `series`' finite values, each with Silverman's rule-of-thumb
    /// bandwidth (R's `bw.nrd0`; a series without spread is a narrow bump).
    pub fn of(series: &[(String, Vec<f64>)]) -> Densities {
        let data: Vec<(&String, Vec<f64>)> =
            series.iter().map(|(n, v)| (n, sorted_finite(v))).collect();
        let Some((lo, hi)) = finite_range(data.iter().map(|(_, v)| v.as_slice())) else {
            let curves = series
                .iter()
                .map(|(n, _)| (n.clone(), Vec::new()))
                .collect();
            return Densities {
                curves,
                x_range: None,
            };
        };
        let bws: Vec<Option<f64>> = data.iter().map(|(_, v)| silverman_bandwidth(v)).collect();
        let hmax = bws.iter().flatten().copied().fold(0.0, f64::max);
        let (g0, g1) = (lo - 3.0 * hmax, hi + 3.0 * hmax);
        let curves = data
            .iter()
            .zip(&bws)
            .map(|((n, v), h)| {
                let pts = h.map_or_else(Vec::new, |h| {
                    (0..DENSITY_POINTS)
                        .map(|i| {
                            let x = g0 + (g1 - g0) * i as f64 / (DENSITY_POINTS - 1) as f64;
                            (x, kde_at(v, h, x))
                        })
                        .collect()
                });
                ((*n).clone(), pts)
            })
            .collect();
        Densities {
            curves,
            x_range: Some((g0, g1)),
        }
    }
}

/// Empirical CDFs, one per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdfs {
    /// Per series (a policy name) the steps of its empirical CDF (x, fraction of values <=
    /// x); empty: no finite value.
    pub steps: Vec<(String, Vec<(f64, f64)>)>,
    /// The smallest and largest finite value of all series; `None`: none.
    pub x_range: Option<(f64, f64)>,
}

impl Cdfs {
    /// The empirical CDFs of `series`' finite values.
    pub fn of(series: &[(String, Vec<f64>)]) -> Cdfs {
        let data: Vec<(&String, Vec<f64>)> =
            series.iter().map(|(n, v)| (n, sorted_finite(v))).collect();
        Cdfs {
            x_range: finite_range(data.iter().map(|(_, v)| v.as_slice())),
            steps: data
                .iter()
                .map(|(n, v)| ((*n).clone(), ecdf_steps(v)))
                .collect(),
        }
    }
}

/// The smallest first and largest last value of ascending samples; `None` if all are empty.
fn finite_range<'a>(sorted: impl Iterator<Item = &'a [f64]> + Clone) -> Option<(f64, f64)> {
    let lo = sorted
        .clone()
        .filter_map(|v| v.first())
        .copied()
        .reduce(f64::min);
    let hi = sorted.filter_map(|v| v.last()).copied().reduce(f64::max);
    lo.zip(hi)
}

/// One interval of a Gantt chart.
#[derive(Debug, Clone, PartialEq)]
pub struct GanttBar {
    /// Row it is drawn in (e.g. "CPU 0"); rows are ordered naturally ("CPU 2" before "CPU 10").
    pub lane: String,
    /// Text written inside the bar when it fits (e.g. "task 3").
    pub label: String,
    /// Start, in the unit of the x axis (e.g. ms since release).
    pub start: f64,
    /// End, same unit; swapped with `start` if smaller. Non-finite start or end: skipped.
    pub end: f64,
    /// Policy or task group; picks the colour and the legend entry.
    pub series: String,
}
