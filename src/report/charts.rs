//! Charts of the HTML report, drawn by plotters' SVG backend into strings that the page
//! inlines. Text becomes SVG `<text>` in a generic font family (plotters is built without its
//! `ttf` feature), so the browser renders it with its own fonts and nothing is fetched.
//!
//! Readability with many series: callers keep the top few series and sum or average the rest
//! into "other" ([`keep_top`]), and the legend has its own column beside the plot, so it never
//! hides data.

use std::collections::BTreeMap;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

mod bars;
mod small;
mod xy;
pub use bars::{stacked_bars, Bar, BarGroup};
pub use small::small_time_lines;
pub use xy::{xy_band, Stroke, XyLine};

pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 360;
const LEGEND_WIDTH: u32 = 200;
/// Series beyond this many are combined into "other".
pub const TOP: usize = 8;
/// Points per line beyond which a series is averaged down (the chart is ~700 px wide).
const MAX_POINTS: usize = 600;

/// Colour-blind-friendly categorical colours (Okabe–Ito, then greys for "other").
const PALETTE: [RGBColor; 9] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
    RGBColor(150, 150, 150),
];

fn color(i: usize, name: &str) -> RGBColor {
    if name.starts_with("other (") {
        PALETTE[8]
    } else {
        PALETTE[i % 8]
    }
}

/// One named line: (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// How series beyond the top ones are folded into "other".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Amounts that add up (transactions, bytes per second).
    Sum,
    /// Levels that do not (percentages of one instance).
    Mean,
}

/// The `n` series with the largest sum of y, in their original order, and the rest combined
/// into one series named "other" (points with the same x are combined).
pub fn keep_top(series: Vec<Series>, n: usize, combine: Combine) -> Vec<Series> {
    if series.len() <= n + 1 {
        return series;
    }
    let weight = |s: &Series| s.points.iter().map(|p| p.1).sum::<f64>();
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by(|a, b| weight(&series[*b]).total_cmp(&weight(&series[*a])));
    let mut keep = vec![false; series.len()];
    for i in order.into_iter().take(n) {
        keep[i] = true;
    }
    let mut rest: BTreeMap<i64, (f64, f64, u32)> = BTreeMap::new();
    let mut rest_count = 0;
    let mut out = Vec::with_capacity(n + 1);
    for (s, kept) in series.into_iter().zip(keep) {
        if kept {
            out.push(s);
            continue;
        }
        rest_count += 1;
        for (x, y) in s.points {
            let e = rest
                .entry((x * 1000.0).round() as i64)
                .or_insert((x, 0.0, 0));
            e.1 += y;
            e.2 += 1;
        }
    }
    let points = rest
        .into_values()
        .map(|(x, sum, k)| match combine {
            Combine::Sum => (x, sum),
            Combine::Mean => (x, sum / f64::from(k)),
        })
        .collect();
    out.push(Series {
        name: format!(
            "other ({rest_count}, {})",
            if combine == Combine::Sum {
                "sum"
            } else {
                "mean"
            }
        ),
        points,
    });
    out
}

/// Averages consecutive points so at most `max` remain (x of each average is its first x).
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max);
    points
        .chunks(per)
        .map(|c| (c[0].0, c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64))
        .collect()
}

/// Seconds shown as minutes on long runs, so tick labels stay short.
fn time_scale(x_max: f64) -> (f64, &'static str) {
    if x_max > 1200.0 {
        (60.0, "time since run start (min)")
    } else {
        (1.0, "time since run start (s)")
    }
}

fn y_range(max: f64) -> std::ops::Range<f64> {
    0.0..if max > 0.0 && max.is_finite() {
        max * 1.08
    } else {
        1.0
    }
}

/// The far end of an axis: the largest finite value of `values`, 0 when there is none.
fn axis_max(values: impl IntoIterator<Item = f64>) -> f64 {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

/// One coordinate (`axis` picks it) of every point of `series`.
fn coords<'a, I>(series: I, axis: fn(&(f64, f64)) -> f64) -> impl Iterator<Item = f64> + 'a
where
    I: IntoIterator<Item = &'a Series>,
    I::IntoIter: 'a,
{
    series
        .into_iter()
        .flat_map(move |s| s.points.iter().map(axis))
}

/// Every x of the points of `series`.
fn xs<'a>(
    series: impl IntoIterator<Item = &'a Series, IntoIter: 'a>,
) -> impl Iterator<Item = f64> + 'a {
    coords(series, |p| p.0)
}

/// Every y of the points of `series`.
fn ys<'a>(
    series: impl IntoIterator<Item = &'a Series, IntoIter: 'a>,
) -> impl Iterator<Item = f64> + 'a {
    coords(series, |p| p.1)
}

fn err(e: impl std::fmt::Display) -> String {
    format!("cannot draw a chart: {e}")
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart's size in pixels and the width of its legend column.
#[derive(Debug, Clone, Copy)]
struct Size {
    width: u32,
    height: u32,
    legend: u32,
}

/// The size of the report's charts.
const FULL: Size = Size {
    width: WIDTH,
    height: HEIGHT,
    legend: LEGEND_WIDTH,
};

/// Draws the frame (title, axes, mesh), then lets `body` draw into it, then the legend column.
#[allow(clippy::too_many_arguments)]
fn frame(
    title: &str,
    x_label: &str,
    y_label: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    x_format: &dyn Fn(&f64) -> String,
    legend: &[String],
    body: &mut dyn FnMut(&mut Chart) -> Result<(), String>,
) -> Result<String, String> {
    let legend: Vec<(String, RGBColor)> = legend
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), color(i, n)))
        .collect();
    frame_sized(FULL, title, x_label, y_label, x, y, x_format, &legend, body)
}

/// [`frame`] at another size, with each legend entry's colour given.
#[allow(clippy::too_many_arguments)]
fn frame_sized(
    size: Size,
    title: &str,
    x_label: &str,
    y_label: &str,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
    x_format: &dyn Fn(&f64) -> String,
    legend: &[(String, RGBColor)],
    body: &mut dyn FnMut(&mut Chart) -> Result<(), String>,
) -> Result<String, String> {
    // plotters computes its grid lines by stepping through the range: an infinite or NaN
    // bound (a damaged results file) would loop forever, so such a chart is refused.
    if ![x.start, x.end, y.start, y.end]
        .iter()
        .all(|v| v.is_finite())
    {
        return Err(format!(
            "'{title}': an axis has no finite range (a damaged value in the results?)"
        ));
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (size.width, size.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, key) = root.split_horizontally(size.width - size.legend);
        let x = if x.end > x.start {
            x
        } else {
            x.start..x.start + 1.0
        };
        // Small charts get fainter minor lines: at their size the grid would hide the data.
        let small = size.height < HEIGHT;
        let (light, light_small) = (RGBColor(235, 235, 235), RGBColor(246, 246, 246));
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", if small { 14 } else { 18 }))
            .margin(if small { 6 } else { 10 })
            .x_label_area_size(if small { 34 } else { 40 })
            .y_label_area_size(if small { 56 } else { 70 })
            .build_cartesian_2d(x, y)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(x_format)
            .y_label_formatter(&|v| short_number(*v))
            .light_line_style(if small { light_small } else { light })
            .draw()
            .map_err(err)?;
        body(&mut chart)?;
        draw_legend(&key, legend, if small { 16 } else { 26 })?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The legend column: a swatch and a name per entry, names cut at `chars`.
fn draw_legend(
    key: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    legend: &[(String, RGBColor)],
    chars: usize,
) -> Result<(), String> {
    for (i, (name, c)) in legend.iter().enumerate() {
        let y = 40 + 18 * i as i32;
        key.draw(&Rectangle::new([(8, y), (22, y + 10)], c.filled()))
            .map_err(err)?;
        key.draw(&Text::new(
            truncate(name, chars),
            (28, y - 1),
            ("sans-serif", 12),
        ))
        .map_err(err)?;
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).chain(['…']).collect()
    }
}

/// 1234567 as "1.23M": tick labels stay narrow whatever the unit.
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Colour of incident marks (OOM kills, crash restarts): they must stand out from the grey
/// phase edges and from the palette's lines.
const INCIDENT: RGBColor = RGBColor(200, 0, 0);
const EVENT: RGBColor = RGBColor(120, 40, 170);

fn draw_edges(chart: &mut Chart, edges: &[f64], scale: f64, y_top: f64) -> Result<(), String> {
    draw_verticals(chart, edges, scale, y_top, RGBColor(120, 120, 120))
}

fn draw_verticals(
    chart: &mut Chart,
    at: &[f64],
    scale: f64,
    y_top: f64,
    color: RGBColor,
) -> Result<(), String> {
    chart
        .draw_series(at.iter().map(|e| {
            PathElement::new(
                vec![(e / scale, 0.0), (e / scale, y_top)],
                color.stroke_width(1),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// A chart over run time with a legend of `series`: x (seconds up to `max.0`) in a readable
/// unit, y from 0 to a round number above `max.1`. `body` draws with the x scale and y top.
fn time_frame(
    title: &str,
    y_label: &str,
    max: (f64, f64),
    series: &[Series],
    body: &mut dyn FnMut(&mut Chart, f64, f64) -> Result<(), String>,
) -> Result<String, String> {
    let (scale, x_label) = time_scale(max.0);
    let y = y_range(max.1);
    let top = y.end;
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    frame(
        title,
        x_label,
        y_label,
        0.0..max.0 / scale,
        y,
        &|v| short_number(*v),
        &names,
        &mut |chart| body(chart, scale, top),
    )
}

/// Lines over time (x in seconds since run start), with phase edges as grey verticals.
pub fn time_lines(
    title: &str,
    y_label: &str,
    series: &[Series],
    edges: &[f64],
) -> Result<String, String> {
    time_lines_marked(title, y_label, series, edges, &Marks::default())
}

/// The times marked on a chart over the run: the managed instances' incidents (OOM kills,
/// crash restarts) as red verticals, the run's own events (`[[event]]`) as dashed purple ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    pub incidents: Vec<f64>,
    pub events: Vec<f64>,
}

impl Marks {
    pub fn is_empty(&self) -> bool {
        self.incidents.is_empty() && self.events.is_empty()
    }
}

/// Draws `marks`: incidents red, events dashed purple.
fn draw_marks(chart: &mut Chart, marks: &Marks, scale: f64, y_top: f64) -> Result<(), String> {
    draw_verticals(chart, &marks.incidents, scale, y_top, INCIDENT)?;
    // A dash every twentieth of the height, so an event reads apart from an incident.
    let dashes = 20;
    chart
        .draw_series(marks.events.iter().flat_map(|e| {
            (0..dashes).step_by(2).map(move |k| {
                let (lo, hi) = (
                    y_top * f64::from(k) / f64::from(dashes),
                    y_top * f64::from(k + 1) / f64::from(dashes),
                );
                PathElement::new(
                    vec![(e / scale, lo), (e / scale, hi)],
                    EVENT.stroke_width(2),
                )
            })
        }))
        .map_err(err)?;
    Ok(())
}

/// As [`time_lines`], with the run's incidents and events marked (see [`Marks`]).
pub fn time_lines_marked(
    title: &str,
    y_label: &str,
    series: &[Series],
    edges: &[f64],
    marks: &Marks,
) -> Result<String, String> {
    let x_max = axis_max(xs(series));
    let y_max = axis_max(ys(series));
    time_frame(
        title,
        y_label,
        (x_max, y_max),
        series,
        &mut |chart, scale, top| {
            draw_edges(chart, edges, scale, top)?;
            draw_marks(chart, marks, scale, top)?;
            for (i, s) in series.iter().enumerate() {
                let pts = downsample(&s.points, MAX_POINTS);
                chart
                    .draw_series(LineSeries::new(
                        pts.into_iter().map(|(x, y)| (x / scale, y)),
                        color(i, &s.name).stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            Ok(())
        },
    )
}

/// Layers stacked over time: `layers[i].1[k]` is layer i's value at `x[k]` (seconds).
pub fn stacked_time(
    title: &str,
    y_label: &str,
    x: &[f64],
    layers: &[Series],
    edges: &[f64],
) -> Result<String, String> {
    stacked_time_marked(title, y_label, x, layers, edges, &Marks::default())
}

/// As [`stacked_time`], with the run's incidents and events marked (see [`Marks`]).
pub fn stacked_time_marked(
    title: &str,
    y_label: &str,
    x: &[f64],
    layers: &[Series],
    edges: &[f64],
    marks: &Marks,
) -> Result<String, String> {
    let x_max = axis_max(x.iter().copied());
    // Cumulative tops, bottom layer first.
    let mut tops: Vec<Vec<f64>> = Vec::with_capacity(layers.len());
    for (i, layer) in layers.iter().enumerate() {
        let below = if i == 0 { None } else { tops.get(i - 1) };
        let row = (0..x.len())
            .map(|k| {
                let v = layer.points.get(k).map_or(0.0, |p| p.1);
                v + below.map_or(0.0, |b| b[k])
            })
            .collect();
        tops.push(row);
    }
    let y_max = tops.last().map_or(0.0, |t| axis_max(t.iter().copied()));
    time_frame(
        title,
        y_label,
        (x_max, y_max),
        layers,
        &mut |chart, scale, top| {
            // Highest layer first: each lower layer is painted over the one above it.
            for (i, t) in tops.iter().enumerate().rev() {
                let c = color(i, &layers[i].name);
                let pts: Vec<(f64, f64)> = x.iter().zip(t).map(|(x, y)| (*x, *y)).collect();
                let pts = downsample(&pts, MAX_POINTS);
                chart
                    .draw_series(
                        AreaSeries::new(
                            pts.into_iter().map(|(x, y)| (x / scale, y)),
                            0.0,
                            c.mix(0.85),
                        )
                        .border_style(c.stroke_width(1)),
                    )
                    .map_err(err)?;
            }
            draw_edges(chart, edges, scale, top)?;
            draw_marks(chart, marks, scale, top)
        },
    )
}

/// Latency by percentile: x is the number of nines (0 = p0, 2 = p99, 3 = p99.9), y ms.
pub fn percentile_curves(title: &str, series: &[Series]) -> Result<String, String> {
    let x_max = axis_max(xs(series));
    let y_max = axis_max(ys(series));
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let nines = |v: &f64| {
        let p = 100.0 * (1.0 - 10f64.powf(-*v));
        if p >= 99.0 {
            format!("p{p:.2}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            format!("p{p:.0}")
        }
    };
    frame(
        title,
        "percentile (log scale of 1 - q)",
        "latency (ms)",
        0.0..x_max.max(1.0),
        y_range(y_max),
        &nines,
        &names,
        &mut |chart| {
            for (i, s) in series.iter().enumerate() {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        color(i, &s.name).stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, ys: &[f64]) -> Series {
        Series {
            name: name.into(),
            points: ys.iter().enumerate().map(|(i, y)| (i as f64, *y)).collect(),
        }
    }

    #[test]
    fn keep_top_sums_the_rest() {
        let all: Vec<Series> = (0..12)
            .map(|i| s(&format!("g{i}"), &[i as f64; 3]))
            .collect();
        let top = keep_top(all, 8, Combine::Sum);
        assert_eq!(top.len(), 9);
        assert_eq!(top[0].name, "g4", "original order of the kept ones");
        assert_eq!(top[8].name, "other (4, sum)");
        assert_eq!(top[8].points[0], (0.0, 0.0 + 1.0 + 2.0 + 3.0));
    }

    #[test]
    fn svg_has_size_text_and_no_fetch() {
        let svg = time_lines(
            "T",
            "tps",
            &[s("a", &[1.0, 2.0]), s("b", &[3.0, 1.0])],
            &[1.0],
        )
        .unwrap();
        assert!(svg.contains(&format!("width=\"{WIDTH}\"")), "{svg}");
        assert!(svg.contains("<text"), "{svg}");
        assert!(!svg.contains("<script") && !svg.contains("@import"));
    }

    #[test]
    fn downsample_keeps_the_mean() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 1.0)).collect();
        let d = downsample(&pts, 3);
        assert!(d.len() <= 3);
        assert!(d.iter().all(|p| p.1 == 1.0));
    }
}
