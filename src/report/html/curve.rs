//! The interference curve's charts (issue 52): the tenant's headline (NOTPM) and its
//! headline type's p90 against the neighbours' queries per hour, one line per placement
//! (see `results::interference::curve`), drawn when the run has two placements or one at
//! several loads (preset `ch-interference`).

use crate::report::charts::{self, Series, Stroke, XyLine};
use crate::results::interference::curve::{curves, worth_drawing, Curve};
use crate::results::Summary;

use super::markup::{chart_to, note_to};

/// Both charts and their note; nothing when the pairs' table says it all.
pub fn curve_to(p: &mut String, s: &Summary) {
    let all = curves(&s.interference);
    if !worth_drawing(&all) {
        return;
    }
    let Some(first) = all.first() else {
        return;
    };
    let x = "neighbours' queries per hour";
    let lines = |y: fn(&crate::results::interference::curve::CurvePoint) -> f64| {
        all.iter()
            .map(|c: &Curve| XyLine {
                series: Series {
                    name: format!("beside {}", c.neighbours),
                    points: c.points.iter().map(|pt| (pt.per_hour, y(pt))).collect(),
                },
                stroke: Stroke::Bold,
            })
            .collect::<Vec<_>>()
    };
    let title = format!(
        "{} of {} against the neighbours' load",
        first.label, first.tenant
    );
    chart_to(
        p,
        charts::xy_band(&title, x, &first.label, &lines(|pt| pt.headline), &[], &[]),
    );
    let p90 = format!("{} p90 (ms)", first.txn_type);
    chart_to(
        p,
        charts::xy_band(
            &format!("{p90} of {}", first.tenant),
            x,
            &p90,
            &lines(|pt| pt.p90_ms.unwrap_or(f64::NAN)),
            &[],
            &[],
        ),
    );
    note_to(
        p,
        &format!(
            "The interference curve: one line per placement of the neighbours, each from the \
             phase where {} ran alone (x = 0) through each phase beside them; x is what the \
             neighbours committed per hour (CH's analytic queries per hour). A placement whose \
             line stays higher on the first chart and lower on the second costs the tenant \
             less at the same load.",
            first.tenant
        ),
    );
}
