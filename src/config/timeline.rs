//! The run's clock laid out in advance: ramp-up, each phase of each iteration, ramp-down.
//! Clients look up the segment they are in before each transaction; results rows and
//! recorder keys carry the segment, so no row ever mixes two phases.

use std::time::Duration;

use serde::Serialize;

use super::plan::RunPlan;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentKind {
    RampUp,
    Phase,
    RampDown,
}

/// One stretch of the run with fixed settings.
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    pub kind: SegmentKind,
    /// 1-based; ramp-up belongs to iteration 1, ramp-down to the last.
    pub iteration: u32,
    /// Index into `RunPlan::phases` whose settings apply.
    pub phase: usize,
    /// Display name: the phase's name, or `ramp-up` / `ramp-down`.
    pub label: String,
    /// Offsets from the run's start.
    #[serde(with = "super::duration::serde_duration")]
    pub start: Duration,
    #[serde(with = "super::duration::serde_duration")]
    pub end: Duration,
    pub measured: bool,
}

/// The measured window as offsets from the run's start: the first measured phase's start to
/// the last one's end (the whole run when none is measured).
pub fn measured_span(plan: &RunPlan) -> (Duration, Duration) {
    let all = segments(plan);
    let measured = all.iter().filter(|s| s.measured);
    match (
        measured.clone().map(|s| s.start).min(),
        measured.map(|s| s.end).max(),
    ) {
        (Some(from), Some(to)) => (from, to),
        _ => (Duration::ZERO, plan.total_duration()),
    }
}

/// The segments of `plan`, in time order, covering `[0, plan.total_duration())`.
pub fn segments(plan: &RunPlan) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut at = Duration::ZERO;
    let last_phase = plan.phases.len().saturating_sub(1);
    if !plan.ramp_up.is_zero() {
        out.push(Segment {
            kind: SegmentKind::RampUp,
            iteration: 1,
            phase: 0,
            label: "ramp-up".into(),
            start: at,
            end: at + plan.ramp_up,
            measured: false,
        });
        at += plan.ramp_up;
    }
    let first = plan.measure_first.max(1);
    let window = first..first.saturating_add(plan.measure_count);
    let mut ordinal = 0u32;
    for iteration in 1..=plan.iterations {
        for (i, p) in plan.phases.iter().enumerate() {
            ordinal += 1;
            out.push(Segment {
                kind: SegmentKind::Phase,
                iteration,
                phase: i,
                label: p.name.clone(),
                start: at,
                end: at + p.duration,
                measured: window.contains(&ordinal),
            });
            at += p.duration;
        }
    }
    if !plan.ramp_down.is_zero() {
        out.push(Segment {
            kind: SegmentKind::RampDown,
            iteration: plan.iterations,
            phase: last_phase,
            label: "ramp-down".into(),
            start: at,
            end: at + plan.ramp_down,
            measured: false,
        });
    }
    out
}
