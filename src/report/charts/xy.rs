//! Charts over a numeric x that is not time (clients, scale, instances): lines with point
//! markers, an optional shaded band (min–max over repeats) and crosses at the bottom for x
//! values that have no data. A non-finite y breaks a line or the band, so a missing point is
//! never bridged: an experiment page must not draw a value nobody measured.

use plotters::prelude::*;

use super::{axis_max, color, err, frame, short_number, xs, y_range, ys, Chart, Series, PALETTE};

/// How a line of an [`xy_band`] chart is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    /// One repeat among several.
    Thin,
    /// The line the chart is about (the median).
    Bold,
    /// A reference (the ideal of n independent instances).
    Dashed,
}

/// One line of an [`xy_band`] chart; its colour is its place in the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct XyLine {
    pub series: Series,
    pub stroke: Stroke,
}

/// Splits `items` into the runs of consecutive items that are `ok`.
fn segments<T: Copy>(items: &[T], ok: impl Fn(&T) -> bool) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    let mut current = Vec::new();
    for item in items {
        if ok(item) {
            current.push(*item);
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Lines against a numeric x with a shaded `band` of (x, low, high) behind them and a red
/// cross at the bottom for each x in `missing`. The band takes the colour of the first bold
/// line. x starts at 0 when every x is positive, so a line through the origin reads as such.
pub fn xy_band(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[XyLine],
    band: &[(f64, f64, f64)],
    missing: &[f64],
) -> Result<String, String> {
    let series = || lines.iter().map(|l| &l.series);
    let y = y_range(axis_max(ys(series()).chain(band.iter().map(|b| b.2))));
    let top = y.end;
    let names: Vec<String> = lines.iter().map(|l| l.series.name.clone()).collect();
    let band_color = lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.stroke == Stroke::Bold)
        .map_or(PALETTE[0], |(i, l)| color(i, &l.series.name));
    // Counts (clients, instances) get whole-number ticks only: "1.5 clients" reads as data.
    let whole = xs(series())
        .chain(missing.iter().copied())
        .all(|x| !x.is_finite() || x == x.trunc());
    let x_format = |v: &f64| {
        if !whole {
            short_number(*v)
        } else if *v == v.trunc() {
            format!("{v:.0}")
        } else {
            String::new()
        }
    };
    frame(
        title,
        x_label,
        y_label,
        x_span(lines, band, missing),
        y,
        &x_format,
        &names,
        &mut |chart| {
            draw_band(chart, band, band_color)?;
            draw_lines(chart, lines)?;
            chart
                .draw_series(
                    missing
                        .iter()
                        .filter(|x| x.is_finite())
                        .map(|x| Cross::new((*x, top * 0.03), 6, RED.stroke_width(2))),
                )
                .map_err(err)?;
            Ok(())
        },
    )
}

/// The x axis: every finite x of the lines, the band and the missing points, from 0 when
/// they are all positive, padded on the right (and on the left below 0).
fn x_span(lines: &[XyLine], band: &[(f64, f64, f64)], missing: &[f64]) -> std::ops::Range<f64> {
    let xs = xs(lines.iter().map(|l| &l.series))
        .chain(band.iter().map(|b| b.0))
        .chain(missing.iter().copied())
        .filter(|x| x.is_finite());
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let (lo, hi) = if lo.is_finite() {
        (lo.min(0.0), hi)
    } else {
        (0.0, 1.0)
    };
    let pad = ((hi - lo) * 0.04).max(0.5);
    let x_start = if lo < 0.0 { lo - pad } else { lo };
    x_start..hi + pad
}

/// The band, shaded in `band_color`; a stretch of one point is a bar from low to high, so it
/// is still seen.
fn draw_band(
    chart: &mut Chart,
    band: &[(f64, f64, f64)],
    band_color: RGBColor,
) -> Result<(), String> {
    let finite = |b: &(f64, f64, f64)| b.0.is_finite() && b.1.is_finite() && b.2.is_finite();
    for seg in segments(band, finite) {
        if let [(x, low, high)] = seg[..] {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, low), (x, high)],
                    band_color.mix(0.3).stroke_width(6),
                )))
                .map_err(err)?;
            continue;
        }
        let outline: Vec<(f64, f64)> = seg
            .iter()
            .map(|b| (b.0, b.2))
            .chain(seg.iter().rev().map(|b| (b.0, b.1)))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                band_color.mix(0.18).filled(),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// The lines with their point markers, bold lines last, so the median is drawn over the
/// repeats it summarises.
fn draw_lines(chart: &mut Chart, lines: &[XyLine]) -> Result<(), String> {
    let order = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.stroke != Stroke::Bold)
        .chain(
            lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.stroke == Stroke::Bold),
        );
    for (i, line) in order {
        let c = color(i, &line.series.name);
        let (width, radius) = match line.stroke {
            Stroke::Thin => (1, 2),
            Stroke::Bold => (3, 4),
            Stroke::Dashed => (2, 2),
        };
        let style = c.stroke_width(width);
        for seg in segments(&line.series.points, |p| p.0.is_finite() && p.1.is_finite()) {
            if line.stroke == Stroke::Dashed {
                chart
                    .draw_series(DashedLineSeries::new(seg.clone(), 8, 5, style))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(seg.clone(), style))
                    .map_err(err)?;
            }
            chart
                .draw_series(seg.iter().map(|p| Circle::new(*p, radius, c.filled())))
                .map_err(err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(points: &[(f64, f64)], stroke: Stroke) -> XyLine {
        XyLine {
            series: Series {
                name: "median".into(),
                points: points.to_vec(),
            },
            stroke,
        }
    }

    #[test]
    fn a_missing_point_breaks_the_line() {
        let whole = [(1.0, 10.0), (2.0, 20.0), (4.0, 30.0), (8.0, 35.0)];
        let mut gap = whole;
        gap[2].1 = f64::NAN;
        let count = |svg: &str| svg.matches("<polyline").count();
        let a = xy_band("T", "x", "tps", &[line(&whole, Stroke::Bold)], &[], &[]).unwrap();
        let b = xy_band("T", "x", "tps", &[line(&gap, Stroke::Bold)], &[], &[4.0]).unwrap();
        assert_eq!(count(&b), count(&a) + 1, "two pieces instead of one:\n{b}");
        assert!(!b.contains("NaN"), "{b}");
    }

    #[test]
    fn the_band_is_a_polygon_and_text_is_escaped() {
        let band = [(1.0, 8.0, 12.0), (2.0, 18.0, 22.0)];
        let svg = xy_band(
            "tps vs x (k=<b>)",
            "x",
            "tps",
            &[line(&[(1.0, 10.0), (2.0, 20.0)], Stroke::Bold)],
            &band,
            &[],
        )
        .unwrap();
        assert!(svg.contains("<polygon"), "{svg}");
        assert!(svg.contains("k=&lt;b&gt;") && !svg.contains("<b>"), "{svg}");
    }

    #[test]
    fn segments_split_on_gaps() {
        let v = [1.0, f64::NAN, 2.0, 3.0, f64::NAN];
        assert_eq!(
            segments(&v, |x| x.is_finite()),
            vec![vec![1.0], vec![2.0, 3.0]]
        );
    }
}
