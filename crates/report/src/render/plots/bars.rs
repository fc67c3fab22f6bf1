//! Grouped bar chart with confidence-interval error bars (one group per category, one bar per series).

use plotters::prelude::*;

use super::axes::nice_axis;
use super::frame::{
    builder, categories_under, color_of, darker, draw_axes, err, layout, legend, note_center,
    render, unique_in_order, wrap_categories, Axes, Chart, DResult, Swatch, Y_AREA,
};
use super::{Bar, BarGroup};

/// Grouped bar chart as an SVG string. Bars start at 0; error bars show `ci`; the y axis
/// covers every value and CI end (and 0). The legend lists every series, in order of
/// first appearance. No finite value at all: axes and "no data".
pub fn bar_chart(title: &str, x_label: &str, y_label: &str, groups: &[BarGroup]) -> String {
    render(title, |root| draw(root, title, x_label, y_label, groups))
}

fn finite_ci(b: &Bar) -> Option<(f64, f64)> {
    match b.ci {
        Some((lo, hi)) if lo.is_finite() && hi.is_finite() => Some((lo.min(hi), lo.max(hi))),
        _ => None,
    }
}

/// The range of every finite value and CI end, with 0 (bars start at zero); `None` without
/// a finite value.
fn value_range(groups: &[BarGroup]) -> Option<(f64, f64)> {
    let mut range: Option<(f64, f64)> = None;
    for b in groups
        .iter()
        .flat_map(|g| &g.bars)
        .filter(|b| b.value.is_finite())
    {
        let (mut lo, mut hi) = range.unwrap_or((0.0, 0.0));
        lo = lo.min(b.value);
        hi = hi.max(b.value);
        if let Some((a, z)) = finite_ci(b) {
            lo = lo.min(a);
            hi = hi.max(z);
        }
        range = Some((lo, hi));
    }
    range
}

/// The y axis (start, end, tick count) over `range`, with 3% headroom so that no bar or
/// error bar ends exactly on the frame; (0, 1, 0) without data.
fn y_axis(range: Option<(f64, f64)>) -> (f64, f64, usize) {
    match range {
        Some((lo, hi)) if hi > lo => {
            let pad = (hi - lo) * 0.03;
            nice_axis(
                if lo < 0.0 { lo - pad } else { lo },
                if hi > 0.0 { hi + pad } else { hi },
            )
        }
        _ => (0.0, 1.0, 0),
    }
}

/// One bar from `base` to its value between x0 and x1, with its CI as an error bar.
fn draw_bar(chart: &mut Chart<'_, '_>, b: &Bar, (x0, x1): (f64, f64), base: f64) -> DResult {
    let c = color_of(&b.series);
    chart
        .draw_series([
            Rectangle::new([(x0, base), (x1, b.value)], c.mix(0.85).filled()),
            Rectangle::new([(x0, base), (x1, b.value)], darker(c).stroke_width(1)),
        ])
        .map_err(err)?;
    if let Some((a, z)) = finite_ci(b) {
        let xm = (x0 + x1) / 2.0;
        let cap = (x1 - x0) * 0.22;
        let dark = RGBColor(25, 25, 25).stroke_width(2);
        chart
            .draw_series([
                PathElement::new(vec![(xm, a), (xm, z)], dark),
                PathElement::new(vec![(xm - cap, a), (xm + cap, a)], dark),
                PathElement::new(vec![(xm - cap, z), (xm + cap, z)], dark),
            ])
            .map_err(err)?;
    }
    Ok(())
}

fn draw(
    root: &super::frame::Area,
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[BarGroup],
) -> DResult {
    let series = unique_in_order(
        groups
            .iter()
            .flat_map(|g| g.bars.iter().map(|b| b.series.as_str())),
    );
    let has_data: Vec<(String, bool)> = series
        .iter()
        .map(|s| {
            let any = groups
                .iter()
                .flat_map(|g| &g.bars)
                .any(|b| &b.series == s && b.value.is_finite());
            (s.clone(), any)
        })
        .collect();
    let plot = layout(root, title, &legend(&has_data, Swatch::Fill))?;

    let range = value_range(groups);
    let any = range.is_some();
    let (y0, y1, y_count) = y_axis(range);
    let n_groups = groups.len().max(1);
    let x_range = -0.5..(n_groups as f64 - 0.5);

    let names: Vec<&str> = groups.iter().map(|g| g.category.as_str()).collect();
    let (cat_lines, x_area) = wrap_categories(&plot, &names);
    let mut chart = builder(&plot, Y_AREA, x_area)
        .build_cartesian_2d(x_range, y0..y1)
        .map_err(err)?;
    let axes = Axes {
        x_desc: x_label,
        y_desc: y_label,
        x_ticks: false,
        y_ticks: any,
        x_grid: false,
        y_count,
    };
    draw_axes(&mut chart, &axes)?;
    if !any {
        return note_center(root, &chart, "no data");
    }

    // Each group uses 80% of its slot; each series gets an equal share of that.
    let share = 0.8 / series.len().max(1) as f64;
    let base = 0.0f64.clamp(y0, y1);
    for (gi, g) in groups.iter().enumerate() {
        for b in g.bars.iter().filter(|b| b.value.is_finite()) {
            let si = series.iter().position(|s| *s == b.series).unwrap_or(0) as f64;
            let left = gi as f64 - 0.4 + si * share;
            draw_bar(
                &mut chart,
                b,
                (left + share * 0.06, left + share * 0.94),
                base,
            )?;
        }
    }
    if base > y0 && base < y1 {
        let zero = RGBColor(90, 90, 90).stroke_width(1);
        chart
            .draw_series([PathElement::new(
                vec![(-0.5, 0.0), (n_groups as f64 - 0.5, 0.0)],
                zero,
            )])
            .map_err(err)?;
    }

    categories_under(root, &chart, &cat_lines, y0)
}
