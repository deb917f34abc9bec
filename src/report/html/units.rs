//! The per-unit times of `report.html`, for workloads whose streams run a fixed list of timed
//! units (TPC-H's 22 queries and its refresh functions): a bar per (unit, stream) grouped by
//! unit, a colour per stream, and the same seconds as a table of units by streams, so one
//! slow query of one stream shows at a glance and its figure is there to quote.

use std::fmt::Write as _;

use super::markup::{chart_to, esc, note_to};
use crate::report::charts::{self, Bar, BarGroup};
use crate::results::UnitTime;

/// Under the chart.
const NOTE: &str = "Seconds per unit as its workload timed it, one bar per stream (a stream \
    that ran a unit more than once, as a refresh stream runs its pairs, has one bar per run).";

/// The units in their first-listed order and the streams in theirs.
fn names(times: &[UnitTime]) -> (Vec<&str>, Vec<&str>) {
    let mut units: Vec<&str> = Vec::new();
    let mut streams: Vec<&str> = Vec::new();
    for t in times {
        if !units.contains(&t.unit.as_str()) {
            units.push(&t.unit);
        }
        if !streams.contains(&t.stream.as_str()) {
            streams.push(&t.stream);
        }
    }
    (units, streams)
}

/// The chart's groups: per unit, a bar per time, coloured as its stream's layer.
fn groups(times: &[UnitTime], units: &[&str], streams: &[&str]) -> Vec<BarGroup> {
    units
        .iter()
        .map(|u| BarGroup {
            outer: String::new(),
            inner: (*u).to_string(),
            bars: times
                .iter()
                .filter(|t| t.unit == *u)
                .map(|t| {
                    let layer = streams.iter().position(|s| *s == t.stream).unwrap_or(0);
                    let mut values = vec![f64::NAN; streams.len()];
                    values[layer] = t.seconds;
                    Bar {
                        label: String::new(),
                        values,
                    }
                })
                .collect(),
        })
        .collect()
}

/// The chart and the table, or nothing for a run whose workload timed no units.
pub fn units_to(times: &[UnitTime], p: &mut String) {
    if times.is_empty() {
        return;
    }
    let (units, streams) = names(times);
    let layers: Vec<String> = streams.iter().map(|s| s.to_string()).collect();
    chart_to(
        p,
        charts::stacked_bars(
            "Time per unit and stream",
            "unit",
            "seconds",
            &layers,
            &groups(times, &units, &streams),
            0.0,
        ),
    );
    note_to(p, NOTE);
    // The table: a row per unit, a column per stream; repeated runs joined by " / ".
    p.push_str("<div class=\"wide\"><table><tr><th>unit</th>");
    for s in &streams {
        let _ = write!(p, "<th>{} s</th>", esc(s));
    }
    p.push_str("</tr>\n");
    for u in &units {
        let _ = write!(p, "<tr><td>{}</td>", esc(u));
        for s in &streams {
            let cell: Vec<String> = times
                .iter()
                .filter(|t| t.unit == *u && t.stream == *s)
                .map(|t| format!("{:.3}", t.seconds))
                .collect();
            let _ = write!(p, "<td>{}</td>", cell.join(" / "));
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(stream: &str, unit: &str, seconds: f64) -> UnitTime {
        UnitTime::new(stream, unit, seconds)
    }

    #[test]
    fn a_bar_per_unit_and_stream_and_a_table_of_the_seconds() {
        let times = vec![
            t("stream 1", "Q1", 1.5),
            t("stream 1", "Q2", 0.25),
            t("stream 2", "Q1", 2.0),
            t("refresh", "RF1", 0.5),
            t("refresh", "RF1", 0.75),
        ];
        let mut p = String::new();
        units_to(&times, &mut p);
        // One rect per bar (5), besides the plot's own background rects.
        let (units, streams) = names(&times);
        assert_eq!(units, ["Q1", "Q2", "RF1"]);
        assert_eq!(streams, ["stream 1", "stream 2", "refresh"]);
        let g = groups(&times, &units, &streams);
        assert_eq!(g.iter().map(|g| g.bars.len()).sum::<usize>(), 5);
        assert_eq!(g[0].bars[1].values[1], 2.0);
        assert!(g[0].bars[1].values[0].is_nan());
        assert!(p.contains("<svg"), "{p}");
        assert!(p.contains("<tr><td>RF1</td><td></td><td></td><td>0.500 / 0.750</td></tr>"));
        assert!(p.contains("<th>stream 2 s</th>"));
    }

    #[test]
    fn a_run_without_unit_times_draws_nothing() {
        let mut p = String::new();
        units_to(&[], &mut p);
        assert!(p.is_empty());
    }
}
