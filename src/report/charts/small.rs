//! Small charts over run time, several to a row: one VM's memory or fault rates in a
//! consolidation experiment, with the phase edges as grey verticals, an optional dashed
//! reference level (the VM's memory limit) and red verticals at marked instants (OOM kills).

use plotters::prelude::*;

use super::{
    axis_max, color, downsample, err, frame_sized, short_number, time_scale, xs, y_range, ys,
    Series, Size,
};

/// Small enough for two side by side in the page's 1000 px.
const SIZE: Size = Size {
    width: 480,
    height: 240,
    legend: 130,
};
/// Points per line beyond which a series is averaged down (the plot is ~300 px wide).
const MAX_POINTS: usize = 300;
const MARK: RGBColor = RGBColor(220, 0, 0);

/// Lines over time (x in seconds since run start) with grey `edges`, a dashed horizontal
/// `reference` (name, y) and red `marks` (named `mark_name` in the legend).
pub fn small_time_lines(
    title: &str,
    y_label: &str,
    series: &[Series],
    edges: &[f64],
    reference: Option<(&str, f64)>,
    marks: (&str, &[f64]),
) -> Result<String, String> {
    let x_max = axis_max(xs(series).chain(marks.1.iter().copied()));
    let y_max = axis_max(ys(series).chain(reference.map(|r| r.1)));
    let (scale, x_label) = time_scale(x_max);
    let y = y_range(y_max);
    let top = y.end;
    let mut legend: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), color(i, &s.name)))
        .collect();
    let ref_color = RGBColor(90, 90, 90);
    if let Some((name, _)) = reference {
        legend.push((name.to_string(), ref_color));
    }
    if !marks.1.is_empty() {
        legend.push((marks.0.to_string(), MARK));
    }
    frame_sized(
        SIZE,
        title,
        x_label,
        y_label,
        0.0..x_max / scale,
        y,
        &|v| {
            if *v == v.trunc() {
                format!("{v:.0}")
            } else {
                short_number(*v)
            }
        },
        &legend,
        &mut |chart| {
            chart
                .draw_series(edges.iter().map(|e| {
                    PathElement::new(
                        vec![(e / scale, 0.0), (e / scale, top)],
                        RGBColor(110, 110, 110).stroke_width(1),
                    )
                }))
                .map_err(err)?;
            if let Some((_, level)) = reference.filter(|r| r.1.is_finite()) {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(0.0, level), (x_max / scale, level)],
                        6,
                        4,
                        ref_color.stroke_width(1),
                    ))
                    .map_err(err)?;
            }
            for (i, s) in series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                chart
                    .draw_series(LineSeries::new(
                        downsample(&pts, MAX_POINTS)
                            .into_iter()
                            .map(|(x, y)| (x / scale, y)),
                        color(i, &s.name).stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            chart
                .draw_series(marks.1.iter().filter(|t| t.is_finite()).map(|t| {
                    PathElement::new(
                        vec![(t / scale, 0.0), (t / scale, top)],
                        MARK.stroke_width(2),
                    )
                }))
                .map_err(err)?;
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_reference_are_in_the_legend_only_when_given() {
        let s = [Series {
            name: "usage".into(),
            points: vec![(0.0, 10.0), (5.0, 20.0)],
        }];
        let plain = small_time_lines("vm1", "MiB", &s, &[2.0], None, ("OOM kill", &[])).unwrap();
        assert!(plain.contains("width=\"480\""), "{plain}");
        assert!(!plain.contains("OOM kill") && !plain.contains("limit"));
        let marked = small_time_lines(
            "vm1",
            "MiB",
            &s,
            &[2.0],
            Some(("limit", 30.0)),
            ("OOM kill", &[3.0]),
        )
        .unwrap();
        assert!(
            marked.contains("OOM kill") && marked.contains("limit"),
            "{marked}"
        );
        assert!(marked.contains("#DC0000"), "{marked}");
    }
}
