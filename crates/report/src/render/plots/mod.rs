//! Plots for reports: pure functions from plain data to a standalone SVG string (800x480 px), plus SVG -> PNG.
//!
//! Every plot has a title, axis labels (the caller puts the unit in the label, e.g.
//! "turnaround (ms)"), and a legend in a band to the right of the plot area, so it never
//! hides data. Colours are per policy and the same in every plot ([`policy_color`]).
//! All text is set in "DejaVu Sans", embedded in the binary (`assets/DejaVuSans.ttf`):
//! plotters measures text with it and [`svg_to_png`] renders with it, offline.
//!
//! Inputs are never trusted: non-finite values (NaN, ±inf) are skipped, an empty input
//! draws the axes and a "no data" note, and no function panics.
//!
//! Bar, line, scatter and CDF plots use plotters' chart machinery; box plots (Tukey),
//! densities (Gaussian KDE) and Gantt charts are drawn with plotters' primitive elements on
//! the same frame, so all plots look alike. The boxes, density curves and CDF steps come
//! computed in the model ([`crate::model::plot_data`]); here only axes ([`axes`]) are laid
//! out.

pub mod axes;
mod bars;
mod boxes;
mod density;
mod frame;
mod gantt;
mod lines;
mod png;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_png;

pub use crate::model::plot_data::{Bar, BarGroup, BoxGroup, Cdfs, Densities, GanttBar};
use crate::model::plot_data::{Figure, Plot};
pub use bars::bar_chart;
pub use boxes::box_plot;
pub use density::{cdf_plot, density_plot};
pub use gantt::gantt;
pub use lines::{line_plot, scatter_plot};
pub use png::svg_to_png;

/// A figure of the report as a standalone SVG document.
pub fn svg(fig: &Figure) -> String {
    let (t, x, y) = (&fig.title, &fig.x_label, &fig.y_label);
    match &fig.plot {
        Plot::Bars(g) => bar_chart(t, x, y, g),
        Plot::Boxes(g) => box_plot(t, x, y, g),
        Plot::Density(s) => density_plot(t, x, s),
        Plot::Lines(s) => line_plot(t, x, y, s, false),
        Plot::LogLines(s) => line_plot(t, x, y, s, true),
        Plot::Scatter(s) => scatter_plot(t, x, y, s),
        Plot::Cdf(s) => cdf_plot(t, x, s),
        Plot::Gantt(b) => gantt(t, x, b),
    }
}

/// Width of every plot, in px.
pub const WIDTH: u32 = 800;
/// Height of every plot, in px.
pub const HEIGHT: u32 = 480;
/// Font family written into every SVG `<text>` element.
pub const FONT_FAMILY: &str = "DejaVu Sans";
/// The embedded font (DejaVu Sans, see `assets/DejaVuSans.LICENSE`).
pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// Fixed colours (tab10 palette) for the CPU policies and the block I/O schedulers.
const FIXED_COLORS: &[(&str, (u8, u8, u8))] = &[
    ("other", (31, 119, 180)),       // blue
    ("batch", (255, 127, 14)),       // orange
    ("idle", (44, 160, 44)),         // green
    ("fifo", (214, 39, 40)),         // red
    ("rr", (148, 103, 189)),         // purple
    ("deadline", (140, 86, 75)),     // brown
    ("none", (227, 119, 194)),       // pink
    ("mq-deadline", (188, 189, 34)), // olive
    ("bfq", (23, 190, 207)),         // cyan
    ("kyber", (127, 127, 127)),      // grey
];

/// The colour (sRGB) of a policy or series name, the same in every plot.
///
/// CPU policies `other`, `batch`, `idle`, `fifo`, `rr`, `deadline` and I/O schedulers
/// `none`, `mq-deadline`, `bfq`, `kyber` have fixed colours (case-insensitive; a
/// `sched_` prefix and `normal` for `other` are accepted). Any other name gets a
/// colour derived from a stable hash (FNV-1a) of the name: the same on every run and
/// machine, but two unknown names may happen to look alike.
pub fn policy_color(name: &str) -> (u8, u8, u8) {
    let lower = name.trim().to_ascii_lowercase();
    let key = lower.strip_prefix("sched_").unwrap_or(&lower);
    let key = if key == "normal" { "other" } else { key };
    if let Some((_, c)) = FIXED_COLORS.iter().find(|(n, _)| *n == key) {
        return *c;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Hue anywhere on the wheel, saturation and lightness in a band that reads on white.
    let hue = (h % 360) as f64;
    let sat = 0.55 + ((h >> 16) % 30) as f64 / 100.0;
    let light = 0.35 + ((h >> 32) % 15) as f64 / 100.0;
    hsl_to_rgb(hue, sat, light)
}

/// HSL (hue in degrees, saturation and lightness in 0..1) to 8-bit sRGB.
fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = (h % 360.0) / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to8 = |v: f64| ((v + m).clamp(0.0, 1.0) * 255.0).round() as u8;
    (to8(r), to8(g), to8(b))
}
