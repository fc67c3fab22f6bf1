//! Distributions of one variable per series, as the model computed them: Gaussian kernel density curves and empirical CDFs.

use plotters::prelude::*;

use super::axes::{nice_axis, padded_range};
use super::frame::{
    builder, color_of, draw_axes, err, layout, legend, note_center, render, Area, Axes, DResult,
    Swatch, X_AREA, Y_AREA,
};
use super::{Cdfs, Densities};

/// Density plot as an SVG string: per series its Gaussian kernel density curve
/// ([`Densities`]), drawn as a line over a light fill. The y axis is the density in 1/(x
/// unit): "density (1/ms)" when `x_label` ends in "(ms)". No finite value at all: axes and
/// "no data".
pub fn density_plot(title: &str, x_label: &str, series: &Densities) -> String {
    render(title, |root| draw_density(root, title, x_label, series))
}

/// Empirical CDF plot as an SVG string: per series the fraction of its finite values
/// <= x ([`Cdfs`]), as steps from 0 to 1 (the y axis, a fraction without unit). No finite
/// value at all: axes and "no data".
pub fn cdf_plot(title: &str, x_label: &str, series: &Cdfs) -> String {
    render(title, |root| draw_cdf(root, title, x_label, series))
}

/// "density (1/unit)" if the x label ends in "(unit)", else "density".
pub(crate) fn density_label(x_label: &str) -> String {
    let t = x_label.trim_end();
    if let (Some(stripped), Some(open)) = (t.strip_suffix(')'), t.rfind('(')) {
        let unit = stripped[open + 1..].trim();
        if !unit.is_empty() {
            return format!("density (1/{unit})");
        }
    }
    "density".to_string()
}

fn draw_density(root: &Area, title: &str, x_label: &str, d: &Densities) -> DResult {
    let names: Vec<(String, bool)> = d
        .curves
        .iter()
        .map(|(n, v)| (n.clone(), !v.is_empty()))
        .collect();
    let plot = layout(root, title, &legend(&names, Swatch::Line))?;
    let y_label = density_label(x_label);
    let has = d.x_range.is_some();
    let mut axes = Axes {
        x_desc: x_label,
        y_desc: &y_label,
        x_ticks: has,
        y_ticks: has,
        x_grid: true,
        y_count: 0,
    };
    let Some((g0, g1)) = d.x_range else {
        let mut chart = builder(&plot, Y_AREA, X_AREA)
            .build_cartesian_2d(0.0..1.0, 0.0..1.0)
            .map_err(err)?;
        draw_axes(&mut chart, &axes)?;
        return note_center(root, &chart, "no data");
    };

    let curves = d.curves.iter().filter(|(_, p)| !p.is_empty());
    let ymax = curves
        .clone()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0, f64::max);
    let (_, y1, y_count) = nice_axis(0.0, if ymax > 0.0 { ymax } else { 1.0 });
    axes.y_count = y_count;
    let mut chart = builder(&plot, Y_AREA, X_AREA)
        .build_cartesian_2d(g0..g1, 0.0..y1)
        .map_err(err)?;
    draw_axes(&mut chart, &axes)?;
    for (n, p) in curves {
        let c = color_of(n);
        chart
            .draw_series(
                AreaSeries::new(p.iter().copied(), 0.0, c.mix(0.12))
                    .border_style(c.stroke_width(2)),
            )
            .map_err(err)?;
    }
    Ok(())
}

fn draw_cdf(root: &Area, title: &str, x_label: &str, cdfs: &Cdfs) -> DResult {
    let range = cdfs.x_range;
    let names: Vec<(String, bool)> = cdfs
        .steps
        .iter()
        .map(|(n, v)| (n.clone(), !v.is_empty()))
        .collect();
    let plot = layout(root, title, &legend(&names, Swatch::Line))?;
    let (x0, x1) = range.map_or((0.0, 1.0), |(a, b)| padded_range(a, b, 0.04));
    let mut chart = builder(&plot, Y_AREA, X_AREA)
        .build_cartesian_2d(x0..x1, 0.0..1.0)
        .map_err(err)?;
    let has = range.is_some();
    let axes = Axes {
        x_desc: x_label,
        y_desc: "cumulative fraction",
        x_ticks: has,
        y_ticks: has,
        x_grid: true,
        y_count: 6,
    };
    draw_axes(&mut chart, &axes)?;
    if range.is_none() {
        return note_center(root, &chart, "no data");
    }
    for (n, steps) in cdfs.steps.iter().filter(|(_, s)| !s.is_empty()) {
        let c = color_of(n);
        let path = std::iter::once((x0, 0.0))
            .chain(steps.iter().copied())
            .chain(std::iter::once((x1, 1.0)));
        chart
            .draw_series(LineSeries::new(path, c.stroke_width(2)))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_axis_label_takes_the_unit() {
        assert_eq!(density_label("turnaround (ms)"), "density (1/ms)");
        assert_eq!(density_label("run-queue wait"), "density");
        assert_eq!(density_label("x ()"), "density");
    }
}
