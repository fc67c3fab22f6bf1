//! Line plots (points joined in x order, optional log y) and scatter plots of (x, y) series.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;

use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axes::{fmt_tick, log_range, nice_axis, padded_range};
use super::frame::{
    builder, color_of, draw_axes, err, font, layout, legend, note_center, render, Area, Axes,
    Chart, DResult, Swatch, TICK_SIZE, X_AREA, Y_AREA,
};

/// Colour of the minor grid lines of a log axis (lighter than the main grid).
const MINOR: RGBColor = RGBColor(240, 240, 240);

/// Line plot as an SVG string: per series, its points (non-finite ones skipped) sorted by
/// x, joined by a line, each marked with a dot. With `log_y` the y axis is logarithmic
/// (whole decades) and points with y <= 0 are left out. The axes' units come from the
/// labels. No point at all: axes and "no data".
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_y: bool,
) -> String {
    render(title, |root| {
        draw(root, title, x_label, y_label, series, log_y, true)
    })
}

/// Scatter plot as an SVG string: one translucent dot per (x, y) point (non-finite ones
/// skipped), coloured by series. No point at all: axes and "no data".
pub fn scatter_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    render(title, |root| {
        draw(root, title, x_label, y_label, series, false, false)
    })
}

type Points = Vec<(String, Vec<(f64, f64)>)>;

fn clean(series: &[(String, Vec<(f64, f64)>)], log_y: bool, sort: bool) -> Points {
    series
        .iter()
        .map(|(name, pts)| {
            let mut p: Vec<(f64, f64)> = pts
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log_y || *y > 0.0))
                .collect();
            if sort {
                p.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            (name.clone(), p)
        })
        .collect()
}

fn bounds(v: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    v.fold(None, |acc, x| match acc {
        None => Some((x, x)),
        Some((a, b)) => Some((a.min(x), b.max(x))),
    })
}

fn draw(
    root: &Area,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_y: bool,
    lines: bool,
) -> DResult {
    let pts = clean(series, log_y, lines);
    let names: Vec<(String, bool)> = pts
        .iter()
        .map(|(n, p)| (n.clone(), !p.is_empty()))
        .collect();
    let swatch = if lines { Swatch::Line } else { Swatch::Point };
    let plot = layout(root, title, &legend(&names, swatch))?;

    let xb = bounds(pts.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)));
    let yb = bounds(pts.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)));
    let (x0, x1) = xb.map_or((0.0, 1.0), |(a, b)| padded_range(a, b, 0.04));
    let no_data = if log_y {
        "no data (a log axis needs values > 0)"
    } else {
        "no data"
    };
    let has = yb.is_some();
    let mut axes = Axes {
        x_desc: x_label,
        y_desc: y_label,
        x_ticks: has,
        y_ticks: has,
        x_grid: true,
        y_count: 0,
    };
    if log_y {
        let (y0, y1) = yb.map_or((1.0, 10.0), |(a, b)| log_range(a, b));
        let mut chart = builder(&plot, Y_AREA, X_AREA)
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(err)?;
        draw_axes(&mut chart, &axes)?;
        match yb {
            None => note_center(root, &chart, no_data),
            Some(_) => {
                log_minor_grid(root, &mut chart, (x0, x1), (y0, y1))?;
                draw_points(&mut chart, &pts, lines)
            }
        }
    } else {
        // 3% headroom so that no marker sits on the frame.
        let (y0, y1, y_count) = yb.map_or((0.0, 1.0, 0), |(a, b)| {
            let (a, b) = padded_range(a, b, 0.03);
            nice_axis(a, b)
        });
        axes.y_count = y_count;
        let mut chart = builder(&plot, Y_AREA, X_AREA)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        draw_axes(&mut chart, &axes)?;
        match yb {
            None => note_center(root, &chart, no_data),
            Some(_) => draw_points(&mut chart, &pts, lines),
        }
    }
}

/// Light grid lines at 2..9 times each power of ten of a log y axis (plotters labels only
/// the decades); with at most two decades, the 2x and 5x lines are labelled too.
fn log_minor_grid<Y>(
    root: &Area,
    chart: &mut Chart<'_, '_, Y>,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> DResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let decades = (y1 / y0).log10().round().max(1.0) as i32;
    let label = decades <= 2;
    let style = font(TICK_SIZE).pos(Pos::new(HPos::Right, VPos::Center));
    let (xr, _) = chart.plotting_area().get_pixel_range();
    for k in 0..decades {
        let base = y0 * 10f64.powi(k);
        for m in 2..=9 {
            let v = base * f64::from(m);
            chart
                .draw_series([PathElement::new(
                    vec![(x0, v), (x1, v)],
                    MINOR.stroke_width(1),
                )])
                .map_err(err)?;
            if label && (m == 2 || m == 5) {
                let py = chart.backend_coord(&(x0, v)).1;
                root.draw_text(&fmt_tick(v), &style, (xr.start - 9, py))
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

fn draw_points<Y>(chart: &mut Chart<'_, '_, Y>, pts: &Points, lines: bool) -> DResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    for (name, p) in pts.iter().filter(|(_, p)| !p.is_empty()) {
        let c = color_of(name);
        if lines {
            chart
                .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
                .map_err(err)?;
            let r = if p.len() > 80 { 2 } else { 3 };
            chart
                .draw_series(p.iter().map(|q| Circle::new(*q, r, c.filled())))
                .map_err(err)?;
        } else {
            let r = if p.len() > 500 { 3 } else { 4 };
            chart
                .draw_series(p.iter().map(|q| Circle::new(*q, r, c.mix(0.7).filled())))
                .map_err(err)?;
        }
    }
    Ok(())
}
