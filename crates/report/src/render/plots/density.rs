//! Distributions of one variable per series: Gaussian kernel density curves and empirical CDFs.

use plotters::prelude::*;

use super::frame::{
    builder, color_of, draw_axes, err, layout, legend, note_center, render, Area, Axes, DResult,
    Swatch, X_AREA, Y_AREA,
};
use super::stats::{kde_at, nice_axis, padded_range, silverman_bandwidth, sorted_finite};

/// Points per density curve.
const GRID: usize = 240;

/// Density plot as an SVG string: per series a Gaussian kernel density estimate of its
/// finite values, hand-written here ([`kde_at`]) with Silverman's rule-of-thumb bandwidth
/// ([`silverman_bandwidth`], R's `bw.nrd0`), drawn as a line over a light fill. The y axis
/// is the density in 1/(x unit): "density (1/ms)" when `x_label` ends in "(ms)". Each
/// curve integrates to 1; a series with one value (or no spread) is a narrow bump.
/// No finite value at all: axes and "no data".
pub fn density_plot(title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> String {
    render(title, |root| draw_density(root, title, x_label, series))
}

/// Empirical CDF plot as an SVG string: per series the fraction of its finite values
/// <= x, as steps from 0 to 1 (the y axis, a fraction without unit). No finite value at
/// all: axes and "no data".
pub fn cdf_plot(title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> String {
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

type Cleaned = Vec<(String, Vec<f64>)>;

fn clean(series: &[(String, Vec<f64>)]) -> (Cleaned, Option<(f64, f64)>) {
    let c: Cleaned = series
        .iter()
        .map(|(n, v)| (n.clone(), sorted_finite(v)))
        .collect();
    let lo = c
        .iter()
        .filter_map(|(_, v)| v.first())
        .copied()
        .reduce(f64::min);
    let hi = c
        .iter()
        .filter_map(|(_, v)| v.last())
        .copied()
        .reduce(f64::max);
    (c, lo.zip(hi))
}

fn draw_density(root: &Area, title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> DResult {
    let (data, range) = clean(series);
    let names: Vec<(String, bool)> = data
        .iter()
        .map(|(n, v)| (n.clone(), !v.is_empty()))
        .collect();
    let plot = layout(root, title, &legend(&names, Swatch::Line))?;
    let y_label = density_label(x_label);
    let has = range.is_some();
    let mut axes = Axes {
        x_desc: x_label,
        y_desc: &y_label,
        x_ticks: has,
        y_ticks: has,
        x_grid: true,
        y_count: 0,
    };
    let Some((lo, hi)) = range else {
        let mut chart = builder(&plot, Y_AREA, X_AREA)
            .build_cartesian_2d(0.0..1.0, 0.0..1.0)
            .map_err(err)?;
        draw_axes(&mut chart, &axes)?;
        return note_center(root, &chart, "no data");
    };

    // Curves over the data range plus three bandwidths on each side (tails near zero).
    let bws: Vec<Option<f64>> = data.iter().map(|(_, v)| silverman_bandwidth(v)).collect();
    let hmax = bws.iter().flatten().copied().fold(0.0, f64::max);
    let (g0, g1) = (lo - 3.0 * hmax, hi + 3.0 * hmax);
    let curves: Vec<(String, Vec<(f64, f64)>)> = data
        .iter()
        .zip(&bws)
        .filter_map(|((n, v), h)| {
            let h = (*h)?;
            let pts = (0..GRID)
                .map(|i| {
                    let x = g0 + (g1 - g0) * i as f64 / (GRID - 1) as f64;
                    (x, kde_at(v, h, x))
                })
                .collect();
            Some((n.clone(), pts))
        })
        .collect();
    let ymax = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0, f64::max);
    let (_, y1, y_count) = nice_axis(0.0, if ymax > 0.0 { ymax } else { 1.0 });
    axes.y_count = y_count;
    let mut chart = builder(&plot, Y_AREA, X_AREA)
        .build_cartesian_2d(g0..g1, 0.0..y1)
        .map_err(err)?;
    draw_axes(&mut chart, &axes)?;
    for (n, p) in &curves {
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

fn draw_cdf(root: &Area, title: &str, x_label: &str, series: &[(String, Vec<f64>)]) -> DResult {
    let (data, range) = clean(series);
    let names: Vec<(String, bool)> = data
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
    for (n, v) in data.iter().filter(|(_, v)| !v.is_empty()) {
        let c = color_of(n);
        chart
            .draw_series(LineSeries::new(ecdf_steps(v, x0, x1), c.stroke_width(2)))
            .map_err(err)?;
    }
    Ok(())
}

/// The step path of the empirical CDF of ascending `sorted`, from (`x0`, 0) to (`x1`, 1).
pub(crate) fn ecdf_steps(sorted: &[f64], x0: f64, x1: f64) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut path = vec![(x0, 0.0)];
    let mut y = 0.0;
    for (i, x) in sorted.iter().enumerate() {
        // Ties make one taller step: only the last of equal values rises to its level.
        if sorted.get(i + 1) == Some(x) {
            continue;
        }
        path.push((*x, y));
        y = (i + 1) as f64 / n;
        path.push((*x, y));
    }
    path.push((x1, 1.0));
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecdf_steps_rise_at_each_distinct_value() {
        let p = ecdf_steps(&[1.0, 2.0, 2.0, 4.0], 0.0, 5.0);
        assert_eq!(
            p,
            vec![
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 0.25),
                (2.0, 0.25),
                (2.0, 0.75),
                (4.0, 0.75),
                (4.0, 1.0),
                (5.0, 1.0)
            ]
        );
        assert_eq!(ecdf_steps(&[], 0.0, 1.0), vec![(0.0, 0.0), (1.0, 1.0)]);
    }

    #[test]
    fn density_axis_label_takes_the_unit() {
        assert_eq!(density_label("turnaround (ms)"), "density (1/ms)");
        assert_eq!(density_label("run-queue wait"), "density");
        assert_eq!(density_label("x ()"), "density");
    }
}
