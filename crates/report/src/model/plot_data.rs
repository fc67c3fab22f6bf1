//! The data of the report's plots, as the model produces them and the plots module
//! (`render::plots`) draws them: bars, box groups, Gantt intervals.

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

/// The raw values of every series in one category on the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxGroup {
    /// Label under the group (e.g. "10 tasks").
    pub category: String,
    /// Per series (a policy name, which picks the colour) its raw values, in the unit of
    /// the y axis; non-finite values are skipped.
    pub series: Vec<(String, Vec<f64>)>,
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
