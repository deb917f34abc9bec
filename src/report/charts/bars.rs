//! Stacked bars in labelled groups (the vPostgres study's Figures 11 and 12: per scheme, per
//! overcommitment rate, one bar per traffic period with each database's rate stacked). The
//! x axis has three rows of labels: each bar's own (the period), its group's (the rate) and
//! the outer group's (the scheme). A group with no bar is drawn as an empty slot with a red
//! cross, never as a zero.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{color, draw_legend, err, short_number, truncate, y_range, Chart, LEGEND_WIDTH, WIDTH};

/// One bar: its label and each layer's value, in layer order (a non-finite value draws no
/// segment).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub values: Vec<f64>,
}

/// Consecutive bars under one `inner` label, itself under an `outer` label shared by the
/// consecutive groups that have the same one.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    pub outer: String,
    pub inner: String,
    /// Empty: nothing was measured (an empty slot with a cross).
    pub bars: Vec<Bar>,
}

const HEIGHT: u32 = 400;
/// Gaps between groups, in bar widths.
const INNER_GAP: f64 = 0.6;
const OUTER_GAP: f64 = 1.4;

/// The x at which each group's first bar stands, and the end of the x range.
fn layout(groups: &[BarGroup]) -> (Vec<f64>, f64) {
    let mut starts = Vec::with_capacity(groups.len());
    let mut x = 0.2;
    for (i, g) in groups.iter().enumerate() {
        if i > 0 {
            x += if g.outer == groups[i - 1].outer {
                INNER_GAP
            } else {
                OUTER_GAP
            };
        }
        starts.push(x);
        x += g.bars.len().max(1) as f64;
    }
    (starts, x + 0.2)
}

/// The height of a stack: the sum of its finite values.
fn stack(bar: &Bar) -> f64 {
    bar.values.iter().filter(|v| v.is_finite()).sum()
}

/// Stacked bars of `layers` (the legend, bottom layer first) in `groups`, y from 0 to above
/// `y_max` (pass the largest stack of every chart that should share one scale; 0 lets the
/// bars decide).
pub fn stacked_bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    layers: &[String],
    groups: &[BarGroup],
    y_max: f64,
) -> Result<String, String> {
    let tallest = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(stack))
        .fold(y_max, f64::max);
    let y = y_range(tallest);
    let top = y.end;
    let (starts, x_end) = layout(groups);
    let legend: Vec<(String, RGBColor)> = layers
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), color(i, n)))
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (plot, key) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(78)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_end, y)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(y_label)
            .y_label_formatter(&|v| short_number(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        draw_stacks(&mut chart, groups, &starts, layers, top)?;
        draw_labels(&plot, &chart, groups, &starts, x_label, x_end)?;
        draw_legend(&key, &legend, 26)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Each bar as its layers' segments stacked from 0; a red cross at the bottom of a group
/// with no bar.
fn draw_stacks(
    chart: &mut Chart,
    groups: &[BarGroup],
    starts: &[f64],
    layers: &[String],
    top: f64,
) -> Result<(), String> {
    for (g, start) in groups.iter().zip(starts) {
        for (k, bar) in g.bars.iter().enumerate() {
            let left = start + k as f64 + 0.1;
            let mut bottom = 0.0;
            for (i, v) in bar.values.iter().enumerate() {
                if !v.is_finite() || *v <= 0.0 {
                    continue;
                }
                let c = color(i, &layers.get(i).cloned().unwrap_or_default());
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(left, bottom), (left + 0.8, bottom + v)],
                        c.filled(),
                    )))
                    .map_err(err)?;
                bottom += v;
            }
        }
        if g.bars.is_empty() {
            chart
                .draw_series(std::iter::once(Cross::new(
                    (start + 0.5, top * 0.03),
                    6,
                    RED.stroke_width(2),
                )))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// The three label rows under the plot (bars, inner groups, runs of outer groups), in
/// pixels below its bottom edge, and the x axis' label.
fn draw_labels(
    plot: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    chart: &Chart,
    groups: &[BarGroup],
    starts: &[f64],
    x_label: &str,
    x_end: f64,
) -> Result<(), String> {
    let at = |x: f64| chart.backend_coord(&(x, 0.0));
    let label = |size: u32| {
        TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Top))
    };
    let px_per_bar = (at(1.0).0 - at(0.0).0).max(1);
    let fits = |text: &str, width: i32| (text.chars().count() as i32) * 6 <= width;
    let mut outer_from = 0;
    for (i, (g, start)) in groups.iter().zip(starts).enumerate() {
        let (x0, y0) = at(*start);
        for (k, bar) in g.bars.iter().enumerate() {
            if fits(&bar.label, px_per_bar) {
                let (x, _) = at(start + k as f64 + 0.5);
                plot.draw(&Text::new(bar.label.clone(), (x, y0 + 4), label(11)))
                    .map_err(err)?;
            }
        }
        let width = g.bars.len().max(1) as f64;
        let (mid, _) = at(start + width / 2.0);
        let room = (at(start + width).0 - x0) + (px_per_bar as f64 * INNER_GAP) as i32;
        let inner = truncate(&g.inner, (room / 6).max(2) as usize);
        plot.draw(&Text::new(inner, (mid, y0 + 18), label(11)))
            .map_err(err)?;
        // The outer label once under its run of groups, with a tick where it starts.
        let last = !matches!(groups.get(i + 1), Some(n) if n.outer == g.outer);
        if last {
            let (from, _) = at(starts[outer_from]);
            let (to, _) = at(start + width);
            plot.draw(&PathElement::new(
                vec![(from, y0 + 34), (to, y0 + 34)],
                RGBColor(150, 150, 150),
            ))
            .map_err(err)?;
            let room = (to - from).max(12);
            let outer = truncate(&g.outer, (room / 7).max(2) as usize);
            plot.draw(&Text::new(outer, ((from + to) / 2, y0 + 38), label(12)))
                .map_err(err)?;
            outer_from = i + 1;
        }
    }
    let (x_mid, y_bottom) = at(x_end / 2.0);
    plot.draw(&Text::new(
        x_label.to_string(),
        (x_mid, y_bottom + 56),
        label(12),
    ))
    .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, values: &[f64]) -> Bar {
        Bar {
            label: label.into(),
            values: values.to_vec(),
        }
    }

    fn group(outer: &str, inner: &str, bars: Vec<Bar>) -> BarGroup {
        BarGroup {
            outer: outer.into(),
            inner: inner.into(),
            bars,
        }
    }

    #[test]
    fn one_rect_per_layer_and_bar_and_a_cross_for_an_empty_group() {
        let layers = vec!["db1".to_string(), "db<2>".to_string()];
        let groups = vec![
            group(
                "s1",
                "0 %",
                vec![bar("1", &[10.0, 2.0]), bar("2", &[3.0, 9.0])],
            ),
            group("s1", "40 %", vec![]),
            group("s2", "0 %", vec![bar("1", &[5.0, f64::NAN])]),
        ];
        let svg =
            stacked_bars("T", "scheme, rate, period", "NOTPM", &layers, &groups, 0.0).unwrap();
        // Background, plot and legend swatches aside: 5 segments.
        let without = stacked_bars("T", "x", "NOTPM", &layers, &[], 0.0).unwrap();
        assert_eq!(
            svg.matches("<rect").count() - without.matches("<rect").count(),
            5,
            "{svg}"
        );
        assert!(
            svg.contains("db&lt;2&gt;") && !svg.contains("db<2>"),
            "{svg}"
        );
        assert!(
            svg.contains(">\n40 %\n<") && svg.contains(">\ns2\n<"),
            "{svg}"
        );
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn groups_of_the_same_outer_label_stand_closer() {
        let g = |o: &str| group(o, "r", vec![bar("1", &[1.0])]);
        let (starts, end) = layout(&[g("a"), g("a"), g("b")]);
        assert!((starts[1] - starts[0] - (1.0 + INNER_GAP)).abs() < 1e-9);
        assert!((starts[2] - starts[1] - (1.0 + OUTER_GAP)).abs() < 1e-9);
        assert!(end > starts[2] + 1.0);
    }
}
