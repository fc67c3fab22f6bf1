//! Tests of PNG output: embedded-font text, scale, bad input, and every kind of plot.

use super::tests::{bar, bar_groups, box_groups, cdf_plot, density_plot, gantt_bars, xy};
use super::*;
use resvg::tiny_skia::Pixmap;

/// Number of pixels that are not (nearly) white.
fn inked(png: &[u8]) -> usize {
    let p = Pixmap::decode_png(png).unwrap();
    p.pixels()
        .iter()
        .filter(|c| c.alpha() > 0 && (c.red() < 240 || c.green() < 240 || c.blue() < 240))
        .count()
}

#[test]
fn svg_to_png_renders_text_with_embedded_font() {
    let svg = bar_chart(
        "Turnaround by policy",
        "task count",
        "turnaround (ms)",
        &bar_groups(),
    );
    let png = svg_to_png(&svg, 1.0).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let p = Pixmap::decode_png(&png).unwrap();
    assert_eq!((p.width(), p.height()), (WIDTH, HEIGHT));
    // The same plot with all text removed has fewer inked pixels: the text was rendered.
    let mut no_text = String::new();
    let mut rest = svg.as_str();
    while let Some(a) = rest.find("<text") {
        no_text.push_str(&rest[..a]);
        let b = rest[a..].find("</text>").unwrap() + a + "</text>".len();
        rest = &rest[b..];
    }
    no_text.push_str(rest);
    let (with, without) = (inked(&png), inked(&svg_to_png(&no_text, 1.0).unwrap()));
    assert!(with > without + 500, "text pixels: {with} vs {without}");
    // A text-only SVG in a family that is not installed still renders (fallback to DejaVu Sans).
    let t = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"40\"><text x=\"5\" y=\"25\" \
             font-family=\"No Such Font\" font-size=\"16\">Hello</text></svg>";
    assert!(inked(&svg_to_png(t, 1.0).unwrap()) > 20);
    // Scale, and bad input.
    let p2 = Pixmap::decode_png(&svg_to_png(&svg, 2.0).unwrap()).unwrap();
    assert_eq!((p2.width(), p2.height()), (2 * WIDTH, 2 * HEIGHT));
    assert!(svg_to_png("not svg", 1.0).is_err());
    assert!(svg_to_png(&svg, 0.0).is_err());
    assert!(svg_to_png(&svg, f32::NAN).is_err());
    assert!(svg_to_png(&svg, 1000.0).is_err());
}

/// Every kind of plot, on awkward data too (empty, NaN, 40 series, negative bars), renders to a
/// PNG of the plot's size with more than its frame inked. With `SCHEDLAB_PLOT_DIR=DIR` the SVGs
/// and PNGs are also written there for a visual check.
#[test]
fn every_kind_of_plot_renders_to_a_png_with_content() {
    let out_dir = std::env::var_os("SCHEDLAB_PLOT_DIR").map(std::path::PathBuf::from);
    let mut groups = bar_groups();
    groups[0].bars.push(bar("deadline", 9.5, Some((7.0, 12.0))));
    groups.push(BarGroup {
        category: "100 tasks, spread priorities".into(),
        bars: vec![
            bar("other", 130.0, Some((120.0, 140.0))),
            bar("fifo", 90.0, Some((70.0, 115.0))),
            bar("rr", 95.0, Some((93.0, 97.0))),
        ],
    });
    let mut boxes = box_groups();
    boxes[1].series.push((
        "fifo".into(),
        schedlab_analyze::tukey_box(&[9., 9.5, 10., 30., 10.2, 9.8]),
    ));
    let mut lots = Vec::new();
    let mut r = 1u64;
    let mut rnd = || {
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (r >> 11) as f64 / (1u64 << 53) as f64
    };
    for (name, mu) in [
        ("other", 20.0),
        ("fifo", 12.0),
        ("rr", 14.0),
        ("batch", 26.0),
    ] {
        lots.push((
            name.to_string(),
            (0..200)
                .map(|_| mu + 6.0 * (rnd() + rnd() + rnd() - 1.5))
                .collect::<Vec<f64>>(),
        ));
    }
    let mut gb = gantt_bars();
    for i in 0..12 {
        gb.push(GanttBar {
            lane: format!("CPU {}", i % 4),
            label: format!("task {i}"),
            start: 80.0 + i as f64 * 7.0,
            end: 86.0 + i as f64 * 7.0,
            series: ["other", "fifo", "rr"][i % 3].into(),
        });
    }
    let many: Vec<BarGroup> = (0..7)
        .map(|i| BarGroup {
            category: format!(
                "{} / {} tasks / spread",
                ["cpu", "io", "mixed"][i % 3],
                10 * (i + 1)
            ),
            bars: ["fifo", "rr", "batch", "idle", "custom-x"]
                .iter()
                .enumerate()
                .map(|(j, s)| {
                    bar(
                        s,
                        (i as f64 - 3.0) * 4.0 + j as f64 * 2.0,
                        Some((-3.0 + i as f64, 2.0 + i as f64 * 2.0)),
                    )
                })
                .collect(),
        })
        .collect();
    let forty: Vec<(String, Vec<f64>)> = (0..40)
        .map(|i| {
            (
                format!("a rather long series name number {i}"),
                vec![i as f64, i as f64 + 3.0],
            )
        })
        .collect();
    let plots = [
        (
            "bars",
            bar_chart(
                "Mean turnaround per policy (95% CI)",
                "tasks per trial",
                "turnaround (ms)",
                &groups,
            ),
        ),
        (
            "boxes",
            box_plot(
                "Response time per policy",
                "workload",
                "response (ms)",
                &boxes,
            ),
        ),
        (
            "density",
            density_plot("Turnaround distribution", "turnaround (ms)", &lots),
        ),
        ("cdf", cdf_plot("Turnaround CDF", "turnaround (ms)", &lots)),
        (
            "lines",
            line_plot("Makespan vs tasks", "tasks", "makespan (ms)", &xy(), true),
        ),
        (
            "scatter",
            scatter_plot("Wait vs CPU", "CPU time (ms)", "wait (ms)", &xy()),
        ),
        (
            "gantt",
            gantt("Schedule, trial 1", "time since release (ms)", &gb),
        ),
        (
            "empty",
            box_plot("Nothing measured", "workload", "response (ms)", &[]),
        ),
        (
            "single",
            density_plot(
                "One value and a NaN",
                "response (µs)",
                &[
                    ("other".into(), vec![5.0, f64::NAN]),
                    ("fifo".into(), vec![]),
                ],
            ),
        ),
        ("legend_overflow", cdf_plot("Forty series", "x (s)", &forty)),
        (
            "bars_many",
            bar_chart(
                "Throughput change vs other, all cells of a long study (percent)",
                "cell",
                "change (%)",
                &many,
            ),
        ),
    ];
    let frame_only = inked(&svg_to_png(&box_plot("", "", "", &[]), 1.0).unwrap());
    for (name, svg) in plots {
        let png = svg_to_png(&svg, 1.0).unwrap_or_else(|e| panic!("{name}: {e}"));
        let p = Pixmap::decode_png(&png).unwrap();
        assert_eq!((p.width(), p.height()), (WIDTH, HEIGHT), "{name}");
        let ink = inked(&png);
        assert!(
            ink > frame_only + 200,
            "{name}: {ink} inked pixels, an empty frame has {frame_only}"
        );
        if let Some(dir) = &out_dir {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{name}.svg")), &svg).unwrap();
            std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
        }
    }
}
