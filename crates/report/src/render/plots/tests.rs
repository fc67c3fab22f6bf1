//! Tests of the plot functions: well-formed SVG with title, labels and legend; no panic on bad input; PNG output.

use super::*;

const NAN: f64 = f64::NAN;

/// Parses `svg` as usvg would (with the embedded font) and panics with the reason if it fails.
fn parse(svg: &str) {
    if let Err(e) = resvg::usvg::Tree::from_str(svg, &png::usvg_options()) {
        panic!("invalid SVG ({e}):\n{svg}");
    }
    // Also with default options (no fonts at all).
    assert!(resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).is_ok());
}

/// The density plot of raw samples (their curves computed as the model does).
pub(super) fn density_plot(title: &str, x_label: &str, s: &[(String, Vec<f64>)]) -> String {
    super::density_plot(title, x_label, &Densities::of(s))
}

/// The CDF plot of raw samples (their steps computed as the model does).
pub(super) fn cdf_plot(title: &str, x_label: &str, s: &[(String, Vec<f64>)]) -> String {
    super::cdf_plot(title, x_label, &Cdfs::of(s))
}

fn assert_has(svg: &str, texts: &[&str]) {
    parse(svg);
    assert!(
        svg.contains("font-family=\"DejaVu Sans\""),
        "font family missing"
    );
    for t in texts {
        assert!(svg.contains(t), "{t:?} missing from SVG");
    }
}

pub(super) fn bar(series: &str, value: f64, ci: Option<(f64, f64)>) -> Bar {
    Bar {
        series: series.into(),
        value,
        ci,
    }
}

pub(super) fn bar_groups() -> Vec<BarGroup> {
    vec![
        BarGroup {
            category: "10 tasks".into(),
            bars: vec![
                bar("other", 12.0, Some((11.0, 13.5))),
                bar("fifo", 8.0, None),
            ],
        },
        BarGroup {
            category: "50 tasks".into(),
            bars: vec![
                bar("other", 60.0, Some((55.0, 66.0))),
                bar("rr", 40.0, Some((38.0, 41.0))),
            ],
        },
    ]
}

pub(super) fn box_groups() -> Vec<BoxGroup> {
    vec![
        BoxGroup::of(
            "cpu".into(),
            vec![
                (
                    "other".into(),
                    vec![1., 2., 3., 4., 5., 6., 7., 8., 9., 100.],
                ),
                ("fifo".into(), vec![2., 3., 3.5, 4., 5.]),
            ],
        ),
        BoxGroup::of(
            "io".into(),
            vec![("other".into(), vec![10., 11., 12., 13.])],
        ),
    ]
}

fn samples() -> Vec<(String, Vec<f64>)> {
    vec![
        ("other".into(), vec![1., 2., 2.5, 3., 3.2, 4., 7.]),
        ("batch".into(), vec![2., 4., 4.5, 5., 6., 6.5]),
    ]
}

pub(super) fn xy() -> Vec<(String, Vec<(f64, f64)>)> {
    vec![
        ("other".into(), vec![(50., 30.), (10., 5.), (20., 11.)]),
        ("deadline".into(), vec![(10., 2.), (20., 4.5), (50., 9.)]),
    ]
}

pub(super) fn gantt_bars() -> Vec<GanttBar> {
    let g = |lane: &str, label: &str, start, end, series: &str| GanttBar {
        lane: lane.into(),
        label: label.into(),
        start,
        end,
        series: series.into(),
    };
    vec![
        g("CPU 0", "task 0", 0.0, 40.0, "fifo"),
        g("CPU 1", "task 1", 5.0, 30.0, "other"),
        g("CPU 10", "t2", 30.0, 31.0, "other"),
        g("CPU 0", "task 3", 40.0, 80.0, "fifo"),
    ]
}

#[test]
fn bar_chart_has_title_labels_legend() {
    let svg = bar_chart(
        "Turnaround by policy",
        "task count",
        "turnaround (ms)",
        &bar_groups(),
    );
    assert_has(
        &svg,
        &[
            "Turnaround by policy",
            "task count",
            "turnaround (ms)",
            "other",
            "fifo",
            "rr",
            "10 tasks",
            "50 tasks",
        ],
    );
}

#[test]
fn box_plot_has_title_labels_legend_and_outliers() {
    let svg = box_plot("Response", "workload", "response (µs)", &box_groups());
    assert_has(
        &svg,
        &[
            "Response",
            "workload",
            "response (µs)",
            "other",
            "fifo",
            "cpu",
            "io",
        ],
    );
    // Exactly one outlier (100) in the data: one circle (legend swatches are squares).
    assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
    let none = box_plot(
        "t",
        "x",
        "y",
        &[BoxGroup::of(
            "c".into(),
            vec![("rr".into(), vec![1., 2., 3.])],
        )],
    );
    assert_eq!(none.matches("<circle").count(), 0);
}

#[test]
fn density_and_cdf_have_title_labels_legend() {
    let svg = density_plot("Turnaround density", "turnaround (ms)", &samples());
    assert_has(
        &svg,
        &[
            "Turnaround density",
            "turnaround (ms)",
            "density (1/ms)",
            "other",
            "batch",
        ],
    );
    let svg = cdf_plot("Turnaround CDF", "turnaround (ms)", &samples());
    assert_has(
        &svg,
        &[
            "Turnaround CDF",
            "turnaround (ms)",
            "cumulative fraction",
            "other",
            "batch",
        ],
    );
}

#[test]
fn line_and_scatter_have_title_labels_legend() {
    for log_y in [false, true] {
        let svg = line_plot("Makespan", "tasks", "makespan (ms)", &xy(), log_y);
        assert_has(
            &svg,
            &["Makespan", "tasks", "makespan (ms)", "other", "deadline"],
        );
    }
    let svg = scatter_plot("CPU vs wait", "CPU time (ms)", "run-queue wait (ms)", &xy());
    assert_has(
        &svg,
        &[
            "CPU vs wait",
            "CPU time (ms)",
            "run-queue wait (ms)",
            "other",
            "deadline",
        ],
    );
}

#[test]
fn gantt_has_title_labels_legend_lanes() {
    let svg = gantt(
        "Schedule of trial 3",
        "time since release (ms)",
        &gantt_bars(),
    );
    assert_has(
        &svg,
        &[
            "Schedule of trial 3",
            "time since release (ms)",
            "fifo",
            "other",
            "CPU 0",
            "CPU 10",
            "task 0",
        ],
    );
    // Natural lane order: CPU 0 above CPU 1 above CPU 10 (smaller SVG y).
    let y_of = |lane: &str| {
        let at = svg.find(&format!(">\n{lane}\n<")).unwrap();
        let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
        let y = tag.split("y=\"").nth(1).unwrap().split('"').next().unwrap();
        y.parse::<f64>().unwrap()
    };
    assert!(y_of("CPU 0") < y_of("CPU 1") && y_of("CPU 1") < y_of("CPU 10"));
}

#[test]
fn empty_inputs_say_no_data() {
    let empty_series: Vec<(String, Vec<f64>)> = vec![];
    let empty_xy: Vec<(String, Vec<(f64, f64)>)> = vec![];
    let svgs = [
        bar_chart("B", "x (u)", "y (u)", &[]),
        bar_chart(
            "B",
            "x",
            "y",
            &[BarGroup {
                category: "c".into(),
                bars: vec![],
            }],
        ),
        box_plot("X", "x", "y", &[]),
        box_plot(
            "X",
            "x",
            "y",
            &[BoxGroup::of("c".into(), vec![("other".into(), vec![])])],
        ),
        density_plot("D", "x", &empty_series),
        density_plot("D", "x", &[("other".into(), vec![])]),
        cdf_plot("C", "x", &empty_series),
        line_plot("L", "x", "y", &empty_xy, false),
        line_plot("L", "x", "y", &empty_xy, true),
        line_plot("L", "x", "y", &[("rr".into(), vec![(1.0, -2.0)])], true),
        scatter_plot("S", "x", "y", &empty_xy),
        gantt("G", "t", &[]),
    ];
    for svg in &svgs {
        parse(svg);
        assert!(svg.contains("no data"), "{svg}");
    }
    // A series without data is still named in the legend, marked as such.
    assert!(svgs[5].contains("other (no data)"));
}

#[test]
fn nan_and_single_values_do_not_panic() {
    let nan_bars = [BarGroup {
        category: "c".into(),
        bars: vec![
            bar("other", NAN, Some((NAN, 1.0))),
            bar("fifo", 3.0, Some((NAN, NAN))),
            bar("rr", f64::INFINITY, None),
        ],
    }];
    let svg = bar_chart("nan bars", "x", "y", &nan_bars);
    assert_has(&svg, &["nan bars", "fifo"]);
    assert!(!svg.contains("no data\""), "one finite bar is data");
    let all_nan = [BarGroup {
        category: "c".into(),
        bars: vec![bar("other", NAN, None)],
    }];
    assert!(bar_chart("t", "x", "y", &all_nan).contains("no data"));

    let one = vec![("other".to_string(), vec![5.0])];
    let with_nan = vec![
        ("other".to_string(), vec![NAN, 5.0, NAN]),
        ("idle".to_string(), vec![NAN]),
    ];
    for s in [&one, &with_nan] {
        assert_has(&density_plot("d", "x", s), &["other"]);
        assert_has(&cdf_plot("c", "x", s), &["other"]);
        let g = [BoxGroup::of("c".into(), s.clone())];
        assert_has(&box_plot("b", "x", "y", &g), &["other"]);
    }
    assert!(density_plot("d", "x", &with_nan).contains("idle (no data)"));
    let zero = vec![("other".to_string(), vec![0.0, 0.0])];
    parse(&density_plot("d", "x", &zero));

    let pts = vec![
        ("other".to_string(), vec![(1.0, 1.0)]),
        ("rr".to_string(), vec![(NAN, 1.0), (2.0, NAN)]),
    ];
    for log_y in [false, true] {
        assert_has(
            &line_plot("l", "x", "y", &pts, log_y),
            &["other", "rr (no data)"],
        );
    }
    assert_has(&scatter_plot("s", "x", "y", &pts), &["other"]);
    let g = [
        GanttBar {
            lane: "CPU 0".into(),
            label: "a".into(),
            start: NAN,
            end: 1.0,
            series: "x".into(),
        },
        GanttBar {
            lane: "CPU 0".into(),
            label: "b".into(),
            start: 3.0,
            end: 3.0,
            series: "y".into(),
        },
        GanttBar {
            lane: "CPU 1".into(),
            label: "c".into(),
            start: 5.0,
            end: 4.0,
            series: "y".into(),
        },
    ];
    assert_has(&gantt("g", "t", &g), &["CPU 0", "CPU 1", "x (no data)"]);
}

#[test]
fn special_characters_are_escaped() {
    let svg = bar_chart(
        "A & B <1>",
        "x \"q\"",
        "y",
        &[BarGroup {
            category: "<c>".into(),
            bars: vec![bar("o&o", 1.0, None)],
        }],
    );
    parse(&svg);
    assert!(svg.contains("A &amp; B &lt;1&gt;"));
}

#[test]
fn many_series_and_long_names_fit() {
    let series: Vec<(String, Vec<f64>)> = (0..40)
        .map(|i| {
            (
                format!("a rather long series name number {i}"),
                vec![i as f64, i as f64 + 1.0],
            )
        })
        .collect();
    let svg = cdf_plot("A title that is much too long to fit on one line of an eight hundred pixel wide plot, really", "x", &series);
    parse(&svg);
    assert!(
        svg.contains("more"),
        "overflowing legend says how many are not shown"
    );
}

#[test]
fn policy_colors_fixed_distinct_stable() {
    let fixed = [
        "other",
        "batch",
        "idle",
        "fifo",
        "rr",
        "deadline",
        "none",
        "mq-deadline",
        "bfq",
        "kyber",
    ];
    let colors: Vec<_> = fixed.iter().map(|n| policy_color(n)).collect();
    for i in 0..colors.len() {
        for j in 0..i {
            assert_ne!(colors[i], colors[j], "{} and {}", fixed[i], fixed[j]);
        }
    }
    assert_eq!(policy_color("other"), (31, 119, 180));
    assert_eq!(policy_color("SCHED_FIFO"), policy_color("fifo"));
    assert_eq!(policy_color(" Other "), policy_color("other"));
    assert_eq!(policy_color("my-policy"), policy_color("my-policy"));
    assert_ne!(policy_color("my-policy"), policy_color("your-policy"));
}
