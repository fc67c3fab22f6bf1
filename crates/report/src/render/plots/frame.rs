//! The shared look of every plot: canvas, fonts, title, legend band, axes, category labels, "no data" note.

use std::sync::OnceLock;

use plotters::chart::ChartContext;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axes::fmt_tick;
use super::{policy_color, FONT_BYTES, FONT_FAMILY, HEIGHT, WIDTH};
use crate::error::PlotError;

/// The whole canvas (or a part of it) in pixel coordinates.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// A chart with f64 axes on an SVG canvas.
pub(crate) type Chart<'a, 'b, Y = RangedCoordf64> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;
/// What drawing gives: the value, or why plotters could not draw.
pub(crate) type DResult<T = ()> = Result<T, PlotError>;

/// Font sizes in plotters' units (the SVG font-size is this / 1.24, in px).
pub(crate) const TITLE_SIZE: f64 = 24.0;
pub(crate) const DESC_SIZE: f64 = 18.0;
pub(crate) const TICK_SIZE: f64 = 15.0;
pub(crate) const LEGEND_SIZE: f64 = 16.0;
pub(crate) const NOTE_SIZE: f64 = 22.0;
pub(crate) const TEXT: RGBColor = RGBColor(30, 30, 30);
pub(crate) const AXIS: RGBColor = RGBColor(90, 90, 90);
pub(crate) const GRID: RGBColor = RGBColor(226, 226, 226);
/// Height of the band reserved for the title, px.
const TITLE_BAND: u32 = 40;
/// Height of one legend row, px.
const LEGEND_ROW: i32 = 22;

pub(crate) fn err<E: std::error::Error + Send + Sync + 'static>(e: E) -> PlotError {
    PlotError::Draw(Box::new(e))
}

/// The embedded font under [`FONT_FAMILY`], registered with plotters once.
fn font_registered() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES).is_ok())
}

pub(crate) fn font(size: f64) -> TextStyle<'static> {
    (FONT_FAMILY, size).into_font().color(&TEXT)
}

/// `c` at 70% brightness: outlines that separate touching bars of the same colour.
pub(crate) fn darker(c: RGBColor) -> RGBColor {
    let f = |v: u8| (f64::from(v) * 0.7) as u8;
    RGBColor(f(c.0), f(c.1), f(c.2))
}

pub(crate) fn color_of(name: &str) -> RGBColor {
    let (r, g, b) = policy_color(name);
    RGBColor(r, g, b)
}

/// Draws a plot with `draw` on a fresh white canvas and returns the SVG. If drawing fails
/// (it should not), a small hand-written SVG with the title and the error is returned.
pub(crate) fn render(title: &str, draw: impl FnOnce(&Area) -> DResult) -> String {
    if !font_registered() {
        return fallback_svg(title, "embedded font could not be loaded");
    }
    let mut buf = String::new();
    let res = {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        let drawn = root.fill(&WHITE).map_err(err).and_then(|_| draw(&root));
        drawn.and(root.present().map_err(err))
    };
    match res {
        Ok(()) => buf,
        Err(e) => fallback_svg(title, &format!("plot failed: {e}")),
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fallback_svg(title: &str, msg: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\"><rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{}\" y=\"30\" text-anchor=\"middle\" font-family=\"{FONT_FAMILY}\" \
         font-size=\"18\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" \
         font-family=\"{FONT_FAMILY}\" font-size=\"16\" fill=\"#666\">{}</text></svg>",
        WIDTH / 2,
        xml_escape(title),
        WIDTH / 2,
        HEIGHT / 2,
        xml_escape(msg)
    )
}

/// Width of `text` in `style`, px (0 if it cannot be measured).
pub(crate) fn text_width(area: &Area, text: &str, style: &TextStyle) -> i32 {
    area.estimate_text_size(text, style)
        .map(|(w, _)| w as i32)
        .unwrap_or(0)
}

/// `text` cut with an ellipsis at the end so that it is at most `max_w` px wide.
pub(crate) fn fit_text(area: &Area, text: &str, style: &TextStyle, max_w: i32) -> String {
    fit(area, text, style, max_w, false)
}

/// `text` with its middle replaced by an ellipsis so that it is at most `max_w` px wide:
/// names that differ only at the end ("… number 12") stay distinguishable.
pub(crate) fn fit_text_middle(area: &Area, text: &str, style: &TextStyle, max_w: i32) -> String {
    fit(area, text, style, max_w, true)
}

fn fit(area: &Area, text: &str, style: &TextStyle, max_w: i32, middle: bool) -> String {
    if text_width(area, text, style) <= max_w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    for n in (0..chars.len()).rev() {
        let (head, tail) = if middle { (n - n / 2, n / 2) } else { (n, 0) };
        let mut s: String = chars[..head].iter().collect();
        s.push('…');
        s.extend(&chars[chars.len() - tail..]);
        if text_width(area, &s, style) <= max_w {
            return s;
        }
    }
    String::new()
}

/// How a legend entry shows its series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Swatch {
    /// A filled square (bars, boxes, Gantt bars).
    Fill,
    /// A line with a dot (line plots, densities, CDFs).
    Line,
    /// A dot (scatter plots).
    Point,
}

pub(crate) struct LegendEntry {
    pub name: String,
    pub color: RGBColor,
    pub swatch: Swatch,
}

/// One legend entry per name, coloured by [`policy_color`]; names with no data get a
/// " (no data)" note so that their absence from the plot is explained.
pub(crate) fn legend(names: &[(String, bool)], swatch: Swatch) -> Vec<LegendEntry> {
    names
        .iter()
        .map(|(n, has_data)| LegendEntry {
            name: if *has_data {
                n.clone()
            } else {
                format!("{n} (no data)")
            },
            color: color_of(n),
            swatch,
        })
        .collect()
}

/// Draws the title and the legend band on `root` and returns the area left for the chart.
pub(crate) fn layout<'a>(
    root: &Area<'a>,
    title: &str,
    entries: &[LegendEntry],
) -> DResult<Area<'a>> {
    // Title: shrink (down to 70%) and then cut to fit the width.
    let max_w = WIDTH as i32 - 20;
    let mut size = TITLE_SIZE;
    let w = text_width(root, title, &font(size));
    if w > max_w {
        size = (size * max_w as f64 / w as f64).max(TITLE_SIZE * 0.7);
    }
    let style = font(size).pos(Pos::new(HPos::Center, VPos::Center));
    let shown = fit_text(root, title, &style, max_w);
    root.draw_text(
        &shown,
        &style,
        (WIDTH as i32 / 2, TITLE_BAND as i32 / 2 + 2),
    )
    .map_err(err)?;
    let body = root.margin(TITLE_BAND, 0, 0, 0);
    if entries.is_empty() {
        return Ok(body);
    }
    let lstyle = font(LEGEND_SIZE);
    let widest = entries
        .iter()
        .map(|e| text_width(root, &e.name, &lstyle))
        .max()
        .unwrap_or(0);
    let band = (widest + 44).clamp(90, 230);
    let (plot, band_area) = body.split_horizontally(WIDTH as i32 - band);
    draw_legend(&band_area, entries, band)?;
    Ok(plot)
}

fn draw_legend(area: &Area, entries: &[LegendEntry], band: i32) -> DResult {
    let style = font(LEGEND_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    let (_, h) = area.dim_in_pixel();
    let rows = ((h as i32 - 30) / LEGEND_ROW).max(1) as usize;
    let (shown, rest) = if entries.len() > rows {
        (rows - 1, entries.len() - rows + 1)
    } else {
        (entries.len(), 0)
    };
    let text_w = band - 40;
    for (i, e) in entries.iter().take(shown).enumerate() {
        let y = 16 + i as i32 * LEGEND_ROW;
        match e.swatch {
            Swatch::Fill => {
                area.draw(&Rectangle::new(
                    [(6, y - 7), (20, y + 7)],
                    e.color.mix(0.8).filled(),
                ))
                .map_err(err)?;
                area.draw(&Rectangle::new(
                    [(6, y - 7), (20, y + 7)],
                    e.color.stroke_width(1),
                ))
                .map_err(err)?;
            }
            Swatch::Line => {
                area.draw(&PathElement::new(
                    vec![(2, y), (24, y)],
                    e.color.stroke_width(3),
                ))
                .map_err(err)?;
                area.draw(&Circle::new((13, y), 3, e.color.filled()))
                    .map_err(err)?;
            }
            Swatch::Point => {
                area.draw(&Circle::new((13, y), 5, e.color.mix(0.7).filled()))
                    .map_err(err)?;
            }
        }
        let name = fit_text_middle(area, &e.name, &style, text_w);
        area.draw_text(&name, &style, (30, y)).map_err(err)?;
    }
    if rest > 0 {
        let y = 16 + shown as i32 * LEGEND_ROW;
        area.draw_text(&format!("+{rest} more"), &style, (30, y))
            .map_err(err)?;
    }
    Ok(())
}

/// Width reserved left of the plot for y tick labels and the y axis label, px.
pub(crate) const Y_AREA: u32 = 78;
/// Height reserved below the plot for x tick labels (one or two lines) and the x axis label, px.
pub(crate) const X_AREA: u32 = 60;
/// Horizontal margins of the chart inside its area (left + right), px.
const MARGINS_X: u32 = 24;
/// Line height of category labels, px.
const CAT_LINE: i32 = 17;

/// A chart builder with the standard margins; `y_area` and `x_area` are the room for the
/// tick and axis labels ([`Y_AREA`], [`X_AREA`] unless labels need more), px.
pub(crate) fn builder<'a, 'b>(
    plot: &'a Area<'b>,
    y_area: u32,
    x_area: u32,
) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(plot);
    b.margin_top(10)
        .margin_right(18)
        .margin_left(6)
        .margin_bottom(4);
    b.x_label_area_size(x_area).y_label_area_size(y_area);
    b
}

/// What the axes show.
pub(crate) struct Axes<'s> {
    pub x_desc: &'s str,
    pub y_desc: &'s str,
    /// Numeric tick labels on x (false for category axes, labelled by [`category_labels`]).
    pub x_ticks: bool,
    /// Numeric tick labels on y (false for Gantt lanes).
    pub y_ticks: bool,
    /// Vertical grid lines.
    pub x_grid: bool,
    /// Number of y labels plotters may place (0: up to 8); pass the count from
    /// [`super::axes::nice_axis`] so that labels fall on its ticks.
    pub y_count: usize,
}

/// Draws grid, axes, tick labels and axis labels in the common style.
pub(crate) fn draw_axes<Y>(chart: &mut Chart<'_, '_, Y>, axes: &Axes) -> DResult
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let fmt = |v: &f64| fmt_tick(*v);
    let blank = |_: &f64| String::new();
    let mut m = chart.configure_mesh();
    m.x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .axis_desc_style(font(DESC_SIZE))
        .label_style(font(TICK_SIZE))
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_labels(9)
        .y_labels(if axes.y_count > 0 { axes.y_count } else { 8 })
        .x_label_formatter(if axes.x_ticks { &fmt } else { &blank })
        .y_label_formatter(if axes.y_ticks { &fmt } else { &blank });
    if !axes.x_grid {
        m.disable_x_mesh();
    }
    if !axes.x_ticks {
        m.x_labels(0);
    }
    if !axes.y_ticks {
        m.y_labels(0);
    }
    m.draw().map_err(err)
}

/// Category names of an x axis with `n` slots on `plot`, word-wrapped to the slot width
/// (at most 3 lines, the last cut with an ellipsis if needed), and the x label area
/// height they need. Call before building the chart; draw with [`category_labels`].
pub(crate) fn wrap_categories(plot: &Area, names: &[&str]) -> (Vec<Vec<String>>, u32) {
    let style = font(TICK_SIZE);
    let width = plot.dim_in_pixel().0.saturating_sub(Y_AREA + MARGINS_X) as i32;
    let max_w = (width / names.len().max(1) as i32 - 8).max(24);
    let wrapped: Vec<Vec<String>> = names
        .iter()
        .map(|n| wrap_text(plot, n, &style, max_w, 3))
        .collect();
    let lines = wrapped.iter().map(Vec::len).max().unwrap_or(1) as u32;
    (wrapped, X_AREA + lines.saturating_sub(2) * CAT_LINE as u32)
}

/// `text` word-wrapped (at spaces) into at most `max_lines` lines of at most `max_w` px.
pub(crate) fn wrap_text(
    area: &Area,
    text: &str,
    style: &TextStyle,
    max_w: i32,
    max_lines: usize,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(last) if text_width(area, &format!("{last} {word}"), style) <= max_w => {
                last.push(' ');
                last.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    if lines.len() > max_lines {
        let rest = lines.split_off(max_lines - 1).join(" ");
        lines.push(rest);
    }
    lines
        .iter()
        .map(|l| fit_text(area, l, style, max_w))
        .collect()
}

/// Draws wrapped category names under the x axis (at pixel row `axis_y`), centred at
/// the given pixel columns.
pub(crate) fn category_labels(root: &Area, axis_y: i32, cats: &[(i32, &Vec<String>)]) -> DResult {
    let style = font(TICK_SIZE).pos(Pos::new(HPos::Center, VPos::Top));
    for (x, lines) in cats {
        for (i, line) in lines.iter().enumerate() {
            root.draw_text(line, &style, (*x, axis_y + 8 + CAT_LINE * i as i32))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Draws the wrapped category names `cat_lines` under a chart whose category `i` sits at
/// x = i and whose y axis starts at `y0`.
pub(crate) fn categories_under(
    root: &Area,
    chart: &Chart<'_, '_>,
    cat_lines: &[Vec<String>],
    y0: f64,
) -> DResult {
    let axis_y = chart.backend_coord(&(0.0, y0)).1;
    let cats: Vec<(i32, &Vec<String>)> = cat_lines
        .iter()
        .enumerate()
        .map(|(i, l)| (chart.backend_coord(&(i as f64, y0)).0, l))
        .collect();
    category_labels(root, axis_y, &cats)
}

/// Writes `text` ("no data") in grey in the middle of the chart's plotting area.
pub(crate) fn note_center<Y: Ranged>(root: &Area, chart: &Chart<'_, '_, Y>, text: &str) -> DResult {
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let style = font(NOTE_SIZE)
        .color(&RGBColor(120, 120, 120))
        .pos(Pos::new(HPos::Center, VPos::Center));
    root.draw_text(
        text,
        &style,
        ((xr.start + xr.end) / 2, (yr.start + yr.end) / 2),
    )
    .map_err(err)
}

/// Series names in order of first appearance, without duplicates.
pub(crate) fn unique_in_order<'s>(names: impl IntoIterator<Item = &'s str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    }
    out
}
