//! The interference curve (issue 52): what the neighbours cost a tenant as their load grows,
//! read from the run's [`Interference`] pairs. One series per set of neighbour groups (the
//! placements of preset `ch-interference`: the streams on the tenant's database, or on a
//! database of another instance); x is the neighbours' committed units per hour (CH's
//! analytic queries per hour), y the tenant's headline (NOTPM) and its headline type's p90.
//! A series starts at its first pair's alone phase (x = 0), so a user reads whether moving
//! the streams off the tenant's server keeps its NOTPM up at the same queries per hour.

use super::Interference;

/// One series: a tenant beside one set of neighbour groups, in the phases' order.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The tenant group and its headline's label and type.
    pub tenant: String,
    pub label: String,
    pub txn_type: String,
    /// The neighbour groups, `+`-joined (`A` or `A+B`).
    pub neighbours: String,
    pub points: Vec<CurvePoint>,
}

/// One phase of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    pub phase: String,
    /// The neighbours' clients (CH's streams); 0 for the alone phase.
    pub clients: u32,
    /// The neighbours' committed units per hour.
    pub per_hour: f64,
    /// The tenant's headline and its type's p90 in ms.
    pub headline: f64,
    pub p90_ms: Option<f64>,
}

/// The run's series, in the order their first pair comes.
pub fn curves(pairs: &[Interference]) -> Vec<Curve> {
    let mut out: Vec<Curve> = Vec::new();
    for p in pairs {
        let neighbours = p
            .neighbours
            .iter()
            .map(|n| n.group.as_str())
            .collect::<Vec<_>>()
            .join("+");
        let beside = CurvePoint {
            phase: p.beside.phase.clone(),
            clients: p.neighbours.iter().map(|n| n.clients).sum(),
            per_hour: p.neighbours.iter().map(|n| n.per_hour).sum(),
            headline: p.beside.headline,
            p90_ms: p.beside.p90_ms,
        };
        let at = out
            .iter()
            .position(|c| c.tenant == p.group && c.neighbours == neighbours);
        match at {
            Some(i) => out[i].points.push(beside),
            None => out.push(Curve {
                tenant: p.group.clone(),
                label: p.label.clone(),
                txn_type: p.txn_type.clone(),
                neighbours,
                points: vec![
                    CurvePoint {
                        phase: p.alone.phase.clone(),
                        clients: 0,
                        per_hour: 0.0,
                        headline: p.alone.headline,
                        p90_ms: p.alone.p90_ms,
                    },
                    beside,
                ],
            }),
        }
    }
    out
}

/// Whether the curves say more than the pairs' own lines: two placements, or a placement at
/// two loads or more.
pub fn worth_drawing(curves: &[Curve]) -> bool {
    curves.len() > 1 || curves.iter().any(|c| c.points.len() > 2)
}

#[cfg(test)]
mod tests {
    use super::super::{Interference, Neighbour, Side};
    use super::*;
    use crate::results::headline::Per;

    fn pair(neighbour: &str, clients: u32, alone: &str, beside: &str, notpm: f64) -> Interference {
        let side = |phase: &str, headline: f64| Side {
            iteration: 1,
            phase: phase.into(),
            headline,
            p95_ms: None,
            p90_ms: Some(headline / 100.0),
        };
        Interference {
            group: "O".into(),
            label: "NOTPM".into(),
            txn_type: "new_order".into(),
            per: Per::Minute,
            clients: 1,
            alone: side(alone, 1000.0),
            beside: side(beside, notpm),
            neighbours: vec![Neighbour {
                group: neighbour.into(),
                clients,
                committed: 10,
                per_hour: 100.0 * f64::from(clients),
            }],
            ratio: None,
            p95_ratio: None,
        }
    }

    #[test]
    fn one_series_per_placement_each_from_its_alone_phase() {
        let pairs = [
            pair("A", 1, "alone", "same-1", 900.0),
            pair("A", 2, "alone", "same-2", 800.0),
            pair("B", 1, "alone-2", "split-1", 990.0),
        ];
        let c = curves(&pairs);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!((c[0].neighbours.as_str(), c[0].points.len()), ("A", 3));
        assert_eq!(c[0].points[0].phase, "alone");
        assert_eq!(
            (c[0].points[2].clients, c[0].points[2].per_hour),
            (2, 200.0)
        );
        assert_eq!(
            (c[1].points[0].phase.as_str(), c[1].points[0].clients),
            ("alone-2", 0)
        );
        assert_eq!(c[1].points[1].headline, 990.0);
        assert_eq!(c[1].points[1].p90_ms, Some(9.9));
        assert!(worth_drawing(&c));
        assert!(!worth_drawing(&curves(&pairs[..1])));
    }
}
