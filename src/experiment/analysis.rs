//! The analysis of an experiment's complete runs: per-point medians, the sweep curve's peak,
//! linear region and saturation, and density's percent of ideal. Pure functions over
//! `results::experiment` values, so they are tested on synthetic curves.

use crate::results::experiment::{Analysis, Point};

/// Fills each point's `median`, `min`, `max` and `headline_median` from its complete runs.
pub fn summarize_points(points: &mut [Point]) {
    let _ = points;
    todo!("helper")
}

/// A sweep's analysis: one series per combination of the other varied keys, the last
/// numeric key on x. `varied` is in grid order.
pub fn sweep(varied: &[String], points: &[Point]) -> Analysis {
    let _ = (varied, points);
    todo!("helper")
}

/// A density series' analysis; each point's values hold `instances`.
pub fn density(points: &[Point]) -> Analysis {
    let _ = points;
    todo!("helper")
}
