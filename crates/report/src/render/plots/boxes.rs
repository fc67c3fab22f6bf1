//! Tukey box plots of the model's boxes ([`TukeyBox`], computed by the analysis), drawn here (plotters' Boxplot neither clamps whiskers to data nor draws outliers).

use plotters::prelude::*;

use super::axes::{nice_axis, padded_range};
use super::frame::{
    builder, categories_under, color_of, draw_axes, err, layout, legend, note_center, render,
    unique_in_order, wrap_categories, Area, Axes, Chart, DResult, Swatch, Y_AREA,
};
use super::BoxGroup;
use schedlab_analyze::TukeyBox;

/// Box plot as an SVG string: per category and series its Tukey box — box from Q1 to Q3
/// (numpy linear quartiles), a line at the median, whiskers to the most extreme values
/// within 1.5 IQR of the box (always data values), every value beyond them as a hollow
/// dot. The y axis covers all values, outliers included. No finite value at all: axes
/// and "no data".
pub fn box_plot(title: &str, x_label: &str, y_label: &str, groups: &[BoxGroup]) -> String {
    render(title, |root| draw(root, title, x_label, y_label, groups))
}

/// One Tukey box centred at `xm`, `half` wide each side: whiskers with caps, the box, the
/// median line and the outliers as hollow dots.
fn draw_box(chart: &mut Chart<'_, '_>, b: &TukeyBox, c: RGBColor, xm: f64, half: f64) -> DResult {
    let cap = half * 0.5;
    let line = c.stroke_width(2);
    chart
        .draw_series([
            PathElement::new(vec![(xm, b.lo_whisker), (xm, b.q1)], line),
            PathElement::new(vec![(xm, b.q3), (xm, b.hi_whisker)], line),
            PathElement::new(
                vec![(xm - cap, b.lo_whisker), (xm + cap, b.lo_whisker)],
                line,
            ),
            PathElement::new(
                vec![(xm - cap, b.hi_whisker), (xm + cap, b.hi_whisker)],
                line,
            ),
        ])
        .map_err(err)?;
    chart
        .draw_series([
            Rectangle::new([(xm - half, b.q1), (xm + half, b.q3)], c.mix(0.3).filled()),
            Rectangle::new([(xm - half, b.q1), (xm + half, b.q3)], c.stroke_width(2)),
        ])
        .map_err(err)?;
    let median = RGBColor(25, 25, 25).stroke_width(3);
    chart
        .draw_series([PathElement::new(
            vec![(xm - half, b.median), (xm + half, b.median)],
            median,
        )])
        .map_err(err)?;
    chart
        .draw_series(
            b.outliers
                .iter()
                .map(|y| Circle::new((xm, *y), 3, c.stroke_width(2))),
        )
        .map_err(err)?;
    Ok(())
}

fn draw(root: &Area, title: &str, x_label: &str, y_label: &str, groups: &[BoxGroup]) -> DResult {
    let series = unique_in_order(
        groups
            .iter()
            .flat_map(|g| g.series.iter().map(|(n, _)| n.as_str())),
    );
    // (group index, series index, box) for every cell with data.
    let boxes: Vec<(usize, usize, String, &TukeyBox)> = groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| {
            let series = &series;
            g.series.iter().filter_map(move |(n, b)| {
                let si = series.iter().position(|s| s == n)?;
                Some((gi, si, n.clone(), b.as_ref()?))
            })
        })
        .collect();
    let names: Vec<(String, bool)> = series
        .iter()
        .map(|s| (s.clone(), boxes.iter().any(|(_, _, n, _)| n == s)))
        .collect();
    let plot = layout(root, title, &legend(&names, Swatch::Fill))?;

    let lo = boxes
        .iter()
        .map(|b| b.3.outliers.first().copied().unwrap_or(b.3.lo_whisker))
        .reduce(f64::min);
    let hi = boxes
        .iter()
        .map(|b| b.3.outliers.last().copied().unwrap_or(b.3.hi_whisker))
        .reduce(f64::max);
    let (y0, y1, y_count) = match lo.zip(hi) {
        Some((a, b)) => {
            let (a, b) = padded_range(a, b, 0.03);
            nice_axis(a, b)
        }
        None => (0.0, 1.0, 0),
    };
    let n_groups = groups.len().max(1);
    let names: Vec<&str> = groups.iter().map(|g| g.category.as_str()).collect();
    let (cat_lines, x_area) = wrap_categories(&plot, &names);
    let x_range = -0.5..(n_groups as f64 - 0.5);
    let mut chart = builder(&plot, Y_AREA, x_area)
        .build_cartesian_2d(x_range, y0..y1)
        .map_err(err)?;
    let has = !boxes.is_empty();
    let axes = Axes {
        x_desc: x_label,
        y_desc: y_label,
        x_ticks: false,
        y_ticks: has,
        x_grid: false,
        y_count,
    };
    draw_axes(&mut chart, &axes)?;
    if boxes.is_empty() {
        return note_center(root, &chart, "no data");
    }

    let share = 0.8 / series.len().max(1) as f64;
    for (gi, si, name, b) in &boxes {
        let xm = *gi as f64 - 0.4 + (*si as f64 + 0.5) * share;
        draw_box(&mut chart, b, color_of(name), xm, share * 0.35)?;
    }

    categories_under(root, &chart, &cat_lines, y0)
}
