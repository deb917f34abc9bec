//! TPC-H's metrics (clause 5.4): Power@Size (5.4.1), Throughput@Size (5.4.2) and QphH@Size
//! (5.4.3), with the timing rules they rest on.
//!
//! - A timing interval is in seconds, rounded to the nearest 0.1 s, and one under 0.05 s
//!   counts as 0.1 s so none is zero (clause 5.3.7.5).
//! - Power@Size = 3600 × SF / (∏ QI(i,0) × ∏ RI(j,0))^(1/24): the inverse of the geometric
//!   mean of the power test's 22 query and 2 refresh intervals, per hour, times SF (5.4.1.3).
//! - If the longest query interval is more than 1000 times the shortest, every query interval
//!   under max/1000 is raised to max/1000, itself a timing interval as above (5.4.1.4); this
//!   keeps one over-tuned query from dominating the geometric mean.
//! - Throughput@Size = S × 22 × 3600 / Ts × SF, S query streams run in Ts seconds (5.4.2.1).
//! - QphH@Size = √(Power@Size × Throughput@Size) (5.4.3.1).
//! - Reported metrics are rounded to one decimal place.
//!
//! A power test run without the refresh functions (the `refresh` option off) gives
//! [`power_at_size`] an empty refresh list: the geometric mean is then over the 22 queries
//! alone, and [`Power::spec_complete`] says so.
//!
//! The throughput test's streams: clause 5.3.4's minimum number S of query streams for a
//! scale factor, [`min_streams`].

/// The number of queries in a TPC-H stream.
pub const QUERIES: usize = 22;
/// The number of refresh functions in the power test (RF1, RF2).
pub const REFRESHES: usize = 2;

/// Why a metric cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricError {
    #[error("Power@Size needs the {QUERIES} query times, got {0}")]
    QueryCount(usize),
    #[error("Power@Size takes both refresh times or neither, got {0}")]
    RefreshCount(usize),
    #[error("a timing interval of {0} s is not a finite time of zero or more")]
    BadInterval(f64),
    #[error("Throughput@Size needs at least one stream and a measurement interval above zero")]
    EmptyThroughput,
    #[error("the scale factor {0} is not a positive finite number")]
    BadScale(f64),
}

/// Clause 5.3.7.5: `secs` to the nearest 0.1 s, and at least 0.1 s.
pub fn timing_interval(secs: f64) -> Result<f64, MetricError> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(MetricError::BadInterval(secs));
    }
    if secs < 0.05 {
        return Ok(0.1);
    }
    Ok((secs * 10.0).round() / 10.0)
}

/// A metric as reported: one decimal place.
pub fn reported(metric: f64) -> f64 {
    (metric * 10.0).round() / 10.0
}

/// Power@Size with the intervals it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Power {
    /// Power@Size, rounded for reporting.
    pub value: f64,
    /// The 22 query intervals after rounding and the clause 5.4.1.4 floor, in query order.
    pub query_intervals: Vec<f64>,
    /// The refresh intervals after rounding (empty until the refresh functions exist).
    pub refresh_intervals: Vec<f64>,
    /// Whether the clause 5.4.1.4 floor raised any query interval.
    pub floored: bool,
    /// Whether both refresh functions were timed, as the spec's metric requires.
    pub spec_complete: bool,
}

fn check_scale(sf: f64) -> Result<(), MetricError> {
    if sf.is_finite() && sf > 0.0 {
        Ok(())
    } else {
        Err(MetricError::BadScale(sf))
    }
}

/// Clause 5.4.1: Power@Size from the power test's 22 query times (seconds, in query-number
/// order) and its 2 refresh times (or none, see the module notes).
pub fn power_at_size(sf: f64, queries: &[f64], refreshes: &[f64]) -> Result<Power, MetricError> {
    check_scale(sf)?;
    if queries.len() != QUERIES {
        return Err(MetricError::QueryCount(queries.len()));
    }
    if !refreshes.is_empty() && refreshes.len() != REFRESHES {
        return Err(MetricError::RefreshCount(refreshes.len()));
    }
    let mut query_intervals = queries
        .iter()
        .map(|&q| timing_interval(q))
        .collect::<Result<Vec<_>, _>>()?;
    let refresh_intervals = refreshes
        .iter()
        .map(|&r| timing_interval(r))
        .collect::<Result<Vec<_>, _>>()?;
    let longest = query_intervals.iter().cloned().fold(0.0, f64::max);
    let shortest = query_intervals
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    let mut floored = false;
    if longest / shortest > 1000.0 {
        let floor = timing_interval(longest / 1000.0)?;
        for q in query_intervals.iter_mut().filter(|q| **q < floor) {
            *q = floor;
            floored = true;
        }
    }
    // The geometric mean through logarithms, so 24 long intervals cannot overflow.
    let all: Vec<f64> = query_intervals
        .iter()
        .chain(&refresh_intervals)
        .cloned()
        .collect();
    let mean_ln = all.iter().map(|t| t.ln()).sum::<f64>() / all.len() as f64;
    Ok(Power {
        value: reported(3600.0 * sf / mean_ln.exp()),
        query_intervals,
        spec_complete: refresh_intervals.len() == REFRESHES,
        refresh_intervals,
        floored,
    })
}

/// Clause 5.4.2: Throughput@Size for `streams` query streams that ran in `elapsed_secs`
/// (the throughput test's measurement interval Ts), rounded for reporting.
pub fn throughput_at_size(sf: f64, streams: u32, elapsed_secs: f64) -> Result<f64, MetricError> {
    check_scale(sf)?;
    let ts = timing_interval(elapsed_secs)?;
    if streams == 0 {
        return Err(MetricError::EmptyThroughput);
    }
    Ok(reported(
        f64::from(streams) * QUERIES as f64 * 3600.0 / ts * sf,
    ))
}

/// Clause 5.4.3: QphH@Size from the two metrics, rounded for reporting.
pub fn qphh_at_size(power: f64, throughput: f64) -> f64 {
    reported((power * throughput).sqrt())
}

/// Clause 5.3.4's minimum number of query streams in the throughput test at scale factor
/// `sf`: the listed scale factors' (SF 1: 2 … SF 100,000: 11); a scale between two listed ones
/// takes the lower one's, and one under 1 (a test scale) takes SF 1's.
pub fn min_streams(sf: f64) -> u32 {
    const TABLE: [(f64, u32); 10] = [
        (1.0, 2),
        (10.0, 3),
        (30.0, 4),
        (100.0, 5),
        (300.0, 6),
        (1_000.0, 7),
        (3_000.0, 8),
        (10_000.0, 9),
        (30_000.0, 10),
        (100_000.0, 11),
    ];
    TABLE
        .iter()
        .rev()
        .find(|(at, _)| sf >= *at)
        .map_or(2, |(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_intervals_round_to_a_tenth_and_never_reach_zero() {
        assert_eq!(timing_interval(0.0).unwrap(), 0.1);
        assert_eq!(timing_interval(0.049).unwrap(), 0.1);
        assert_eq!(timing_interval(0.05).unwrap(), 0.1);
        assert_eq!(timing_interval(0.16).unwrap(), 0.2);
        assert_eq!(timing_interval(12.34).unwrap(), 12.3);
        assert!(timing_interval(-1.0).is_err());
        assert!(timing_interval(f64::NAN).is_err());
    }

    #[test]
    fn power_of_equal_times_is_3600_sf_over_the_time() {
        // By hand: every interval 10 s, so the geometric mean is 10 and 3600 × 1 / 10 = 360.
        let p = power_at_size(1.0, &[10.0; 22], &[10.0, 10.0]).unwrap();
        assert_eq!(p.value, 360.0);
        assert!(p.spec_complete && !p.floored);
        // SF 10: ten times the power.
        assert_eq!(
            power_at_size(10.0, &[10.0; 22], &[10.0, 10.0])
                .unwrap()
                .value,
            3600.0
        );
    }

    #[test]
    fn power_of_mixed_times_matches_a_hand_computation() {
        // 11 queries of 1 s, 11 of 100 s, refreshes of 10 s: the log10 sum is
        // 11·0 + 11·2 + 2·1 = 24, so the mean of 24 is 10^1 = 10 and Power = 360.0.
        let mut q = vec![1.0; 11];
        q.extend([100.0; 11]);
        assert_eq!(power_at_size(1.0, &q, &[10.0, 10.0]).unwrap().value, 360.0);
        // 22 queries of 2 s, refreshes of 4 s and 8 s: ln-mean = (22 ln 2 + ln 4 + ln 8)/24
        // = (22 + 2 + 3)/24 · ln 2 = 1.125 ln 2, mean = 2^1.125 = 2.181015…,
        // 3600 / 2.181015 = 1650.6.
        assert_eq!(
            power_at_size(1.0, &[2.0; 22], &[4.0, 8.0]).unwrap().value,
            1650.6
        );
    }

    #[test]
    fn very_short_queries_are_raised_to_a_thousandth_of_the_longest() {
        // The longest is 500 s and the shortest 0.1 s (0.04 rounded up): a ratio of 5000,
        // so the 21 short ones become 500/1000 = 0.5 s. By hand, with refreshes of 1 s:
        // mean = exp((21 ln 0.5 + ln 500)/24) = exp(-0.3475618) = 0.7064084,
        // and 3600 / 0.7064084 = 5096.2.
        let mut q = vec![0.04; 21];
        q.push(500.0);
        let p = power_at_size(1.0, &q, &[1.0, 1.0]).unwrap();
        assert!(p.floored);
        assert_eq!(p.query_intervals[0], 0.5);
        assert_eq!(p.value, 5096.2);
        // A ratio of exactly 1000 is not over it: nothing is raised.
        let mut q = vec![0.1; 21];
        q.push(100.0);
        assert!(!power_at_size(1.0, &q, &[]).unwrap().floored);
    }

    #[test]
    fn without_refreshes_the_mean_is_over_the_queries_alone() {
        let p = power_at_size(1.0, &[4.0; 22], &[]).unwrap();
        assert_eq!(p.value, 900.0);
        assert!(!p.spec_complete);
        assert!(power_at_size(1.0, &[4.0; 21], &[]).is_err());
        assert!(power_at_size(1.0, &[4.0; 22], &[1.0]).is_err());
        assert!(power_at_size(0.0, &[4.0; 22], &[]).is_err());
    }

    #[test]
    fn the_minimum_streams_follow_the_table() {
        assert_eq!(min_streams(0.01), 2);
        assert_eq!(min_streams(1.0), 2);
        assert_eq!(min_streams(10.0), 3);
        assert_eq!(min_streams(99.0), 4);
        assert_eq!(min_streams(1_000.0), 7);
        assert_eq!(min_streams(1e6), 11);
    }

    #[test]
    fn throughput_and_composite_match_hand_computations() {
        // 2 streams of 22 queries in one hour at SF 1: 2 × 22 × 3600 / 3600 = 44.0.
        assert_eq!(throughput_at_size(1.0, 2, 3600.0).unwrap(), 44.0);
        // SF 10, 3 streams in 1800 s: 3 × 22 × 3600 / 1800 × 10 = 1320.0.
        assert_eq!(throughput_at_size(10.0, 3, 1800.0).unwrap(), 1320.0);
        // √(360 × 44) = √15840 = 125.857…
        assert_eq!(qphh_at_size(360.0, 44.0), 125.9);
        assert!(throughput_at_size(1.0, 0, 10.0).is_err());
    }
}
