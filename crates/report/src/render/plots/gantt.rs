//! Gantt chart: time intervals as bars in lanes (e.g. one lane per CPU), coloured by series.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axes::{natural_cmp, padded_range};
use super::frame::{
    builder, color_of, darker, draw_axes, err, font, layout, legend, note_center, render,
    text_width, unique_in_order, Area, Axes, Chart, DResult, Swatch, TICK_SIZE, X_AREA,
};
use super::GanttBar;

/// Gantt chart as an SVG string: one row per lane, one bar per interval (at least 1 px
/// wide), its label inside when it fits, legend by series. No finite interval: axes and
/// "no data".
pub fn gantt(title: &str, x_label: &str, bars: &[GanttBar]) -> String {
    render(title, |root| draw(root, title, x_label, bars))
}

fn draw(root: &Area, title: &str, x_label: &str, bars: &[GanttBar]) -> DResult {
    let ok: Vec<&GanttBar> = bars
        .iter()
        .filter(|b| b.start.is_finite() && b.end.is_finite())
        .collect();
    let series = unique_in_order(bars.iter().map(|b| b.series.as_str()));
    let names: Vec<(String, bool)> = series
        .iter()
        .map(|s| (s.clone(), ok.iter().any(|b| &b.series == s)))
        .collect();
    let plot = layout(root, title, &legend(&names, Swatch::Fill))?;

    let mut lanes = unique_in_order(ok.iter().map(|b| b.lane.as_str()));
    lanes.sort_by(|a, b| natural_cmp(a, b));
    let lane_style = font(TICK_SIZE).pos(Pos::new(HPos::Right, VPos::Center));
    let widest = lanes
        .iter()
        .map(|l| text_width(root, l, &lane_style))
        .max()
        .unwrap_or(0);
    let y_area = (widest + 18).clamp(40, 200) as u32;

    let lo = ok.iter().map(|b| b.start.min(b.end)).reduce(f64::min);
    let hi = ok.iter().map(|b| b.start.max(b.end)).reduce(f64::max);
    let (x0, x1) = match lo.zip(hi) {
        Some((a, b)) => padded_range(a, b, 0.02),
        None => (0.0, 1.0),
    };
    let n = lanes.len().max(1);
    let mut chart = builder(&plot, y_area, X_AREA)
        .build_cartesian_2d(x0..x1, -0.5..(n as f64 - 0.5))
        .map_err(err)?;
    let has = !ok.is_empty();
    draw_axes(
        &mut chart,
        &Axes {
            x_desc: x_label,
            y_desc: "",
            x_ticks: has,
            y_ticks: false,
            x_grid: true,
            y_count: 0,
        },
    )?;
    if ok.is_empty() {
        return note_center(root, &chart, "no data");
    }

    // Lane i (in natural order) is row n-1-i, so the first lane is on top.
    let row = |lane: &str| (n - 1 - lanes.iter().position(|l| l == lane).unwrap_or(0)) as f64;
    for b in &ok {
        draw_interval(root, &mut chart, b, row(&b.lane))?;
    }

    // Lane names left of the axis, thinned so that they stay at least 16 px apart.
    lane_names(root, &chart, &lanes, &row, x0)
}

/// One interval in row `y`, its label inside when it fits (dark or white ink by the fill).
fn draw_interval(root: &Area, chart: &mut Chart<'_, '_>, b: &GanttBar, y: f64) -> DResult {
    let label_style = font(TICK_SIZE - 2.0).pos(Pos::new(HPos::Center, VPos::Center));
    let (s, e) = (b.start.min(b.end), b.start.max(b.end));
    let c = color_of(&b.series);
    chart
        .draw_series([
            Rectangle::new([(s, y - 0.35), (e, y + 0.35)], c.mix(0.85).filled()),
            Rectangle::new([(s, y - 0.35), (e, y + 0.35)], darker(c).stroke_width(1)),
        ])
        .map_err(err)?;
    if b.label.is_empty() {
        return Ok(());
    }
    let (px0, py0) = chart.backend_coord(&(s, y + 0.35));
    let (px1, py1) = chart.backend_coord(&(e, y - 0.35));
    let fits = text_width(root, &b.label, &label_style) + 6 <= px1 - px0 && py1 - py0 >= 14;
    if !fits {
        return Ok(());
    }
    let (r, g, bl) = (c.0 as f64, c.1 as f64, c.2 as f64);
    let ink = if 0.299 * r + 0.587 * g + 0.114 * bl > 150.0 {
        RGBColor(20, 20, 20)
    } else {
        WHITE
    };
    root.draw_text(
        &b.label,
        &label_style.color(&ink),
        ((px0 + px1) / 2, (py0 + py1) / 2),
    )
    .map_err(err)
}

/// The lane names left of the axis, every few lanes so that they stay 16 px apart.
fn lane_names(
    root: &Area,
    chart: &Chart<'_, '_>,
    lanes: &[String],
    row: &dyn Fn(&str) -> f64,
    x0: f64,
) -> DResult {
    let lane_style = font(TICK_SIZE).pos(Pos::new(HPos::Right, VPos::Center));
    let (xr, _) = chart.plotting_area().get_pixel_range();
    let row_px = (chart.backend_coord(&(x0, 0.0)).1 - chart.backend_coord(&(x0, 1.0)).1).max(1);
    let every = (16 + row_px - 1) / row_px;
    for lane in lanes.iter().step_by(every.max(1) as usize) {
        let y = chart.backend_coord(&(x0, row(lane))).1;
        root.draw_text(
            lane,
            &lane_style.color(&RGBColor(30, 30, 30)),
            (xr.start - 8, y),
        )
        .map_err(err)?;
    }
    Ok(())
}
