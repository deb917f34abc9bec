//! TPC-H's metrics from what a run's streams recorded (clause 5.4): Power@Size from the power
//! test's stream 0 (its 22 queries and, with the refresh functions, its RF1 and RF2);
//! Throughput@Size from the throughput test's streams over its measurement interval; and
//! QphH@Size when a throughput run is told the Power@Size of the power run before it.
//!
//! A metric is valid when the specification would accept the run it comes from: every unit
//! of every stream completed, both refresh functions in it, and (throughput) at least clause
//! 5.3.4's number of query streams; the note says which rule failed.

use super::power::{min_streams, power_at_size, qphh_at_size, throughput_at_size, QUERIES};
use super::record::Record;
use super::role::Role;
use super::role::Test;
use super::rows::ScaleFactor;
use crate::results::Figure;

impl Record {
    /// The run's figures: Power@Size for a power run; Throughput@Size for a throughput run,
    /// with Power@Size as given and QphH@Size when `power_at_size` is.
    pub fn figures(&self, sf: ScaleFactor, test: Test) -> Vec<Figure> {
        if !test.throughput {
            return vec![self.power(sf, test.refresh)];
        }
        let throughput = self.throughput(sf, test.refresh);
        let Some(power) = test.power_at_size else {
            return vec![throughput];
        };
        let given = Figure {
            label: "Power@Size".into(),
            value: Some(power),
            valid: true,
            note: "from the power test run just before this one (--power-at-size, or --qphh's \
                   power/)"
                .into(),
        };
        let qphh = Figure {
            label: "QphH@Size".into(),
            value: throughput.value.map(|t| qphh_at_size(power, t)),
            valid: throughput.valid,
            note: format!(
                "√(Power@Size × Throughput@Size){}",
                if throughput.valid {
                    ""
                } else {
                    "; Throughput@Size is not valid"
                }
            ),
        };
        vec![given, throughput, qphh]
    }

    /// Power@Size over stream 0's 22 query times and, with `refresh`, its RF1 and RF2.
    pub fn power(&self, sf: ScaleFactor, refresh: bool) -> Figure {
        let label = "Power@Size".to_string();
        let invalid = |note: String| Figure {
            label: label.clone(),
            value: None,
            valid: false,
            note,
        };
        let times = self.query_times(0);
        let missing: Vec<String> = (1..=QUERIES as u8)
            .filter(|q| !times.contains_key(q))
            .map(|q| format!("Q{q}"))
            .collect();
        let refreshes: Vec<f64> = if refresh {
            let done = self.refreshes();
            let of = |name| {
                done.iter()
                    .find(|r| r.stream == "stream 0" && r.unit.name() == name)
                    .map(|r| r.seconds)
            };
            match (of("RF1"), of("RF2")) {
                (Some(a), Some(b)) => vec![a, b],
                _ => return invalid("stream 0 did not complete both RF1 and RF2".into()),
            }
        } else {
            Vec::new()
        };
        if !missing.is_empty() {
            return invalid(format!(
                "stream 0 did not complete {} (failed, timed out or cut)",
                missing.join(", ")
            ));
        }
        let queries: Vec<f64> = times.into_values().collect();
        match power_at_size(sf.get(), &queries, &refreshes) {
            Ok(p) => Figure {
                label,
                value: Some(p.value),
                valid: true,
                note: format!(
                    "SF {sf}, stream 0's 22 queries{}{}",
                    if p.spec_complete {
                        " and RF1, RF2"
                    } else {
                        "; without the refresh functions (--refresh adds them)"
                    },
                    if p.floored {
                        ", short ones raised to max/1000 (clause 5.4.1.4)"
                    } else {
                        ""
                    }
                ),
            },
            Err(e) => invalid(e.to_string()),
        }
    }

    /// Throughput@Size over the query streams' count and the measurement interval from the
    /// first unit's start to the last one's end.
    pub fn throughput(&self, sf: ScaleFactor, refresh: bool) -> Figure {
        let roles = self.roles();
        let streams: Vec<u32> = roles
            .iter()
            .filter_map(|r| match r {
                Role::Queries { stream, .. } => Some(*stream),
                Role::Refresh { .. } => None,
            })
            .collect();
        let s = streams.len() as u32;
        let mut problems = Vec::new();
        for stream in &streams {
            let done = self.query_times(*stream).len();
            if done < QUERIES {
                problems.push(format!("stream {stream} completed {done} of 22 queries"));
            }
        }
        if refresh {
            let want = 2 * s as usize;
            let done = self.refreshes().len();
            if done < want {
                problems.push(format!(
                    "the refresh stream completed {done} of {want} refresh functions"
                ));
            }
        } else {
            problems.push("without the refresh stream (--refresh adds it)".into());
        }
        let min = min_streams(sf.get());
        if s < min {
            problems.push(format!(
                "{s} query stream(s), under the {min} clause 5.3.4 asks at SF {sf}"
            ));
        }
        let span = self.span().unwrap_or(0.0);
        let value = throughput_at_size(sf.get(), s, span).ok();
        let mut note = format!("SF {sf}, {s} query stream(s) in {span:.1} s");
        if !problems.is_empty() {
            note = format!("{note}; {}", problems.join("; "));
        }
        Figure {
            label: "Throughput@Size".into(),
            valid: problems.is_empty() && value.is_some(),
            value,
            note,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::workload::streams::record::tests::done;
    use crate::workload::streams::Unit;
    use crate::workload::tpch::record::{Done, Refreshed};

    fn sf(x: f64) -> ScaleFactor {
        ScaleFactor::new(x).unwrap()
    }

    #[test]
    fn power_needs_every_query_of_stream_zero_and_with_refresh_both_functions() {
        let r = crate::workload::tpch::record::new();
        for q in 1..=21 {
            r.done(done(0, q, 1.0));
        }
        r.done(done(1, 22, 1.0));
        let f = r.power(sf(1.0), false);
        assert!(
            !f.valid && f.value.is_none() && f.note.contains("Q22"),
            "{f:?}"
        );
        r.done(done(0, 22, 1.0));
        // 22 intervals of 1 s: 3600 × 1 / 1.
        let f = r.power(sf(1.0), false);
        assert_eq!((f.value, f.valid), (Some(3600.0), true));
        assert!(!r.power(sf(1.0), true).valid);
        let rf = |unit, seconds| Refreshed {
            stream: "stream 0".into(),
            unit,
            started: Instant::now(),
            seconds,
        };
        r.refreshed(rf(Unit::Rf1(1), 4.0));
        r.refreshed(rf(Unit::Rf2(1), 8.0));
        // By hand: (22 ln 1 + ln 4 + ln 8) / 24 = 5 ln 2 / 24, 2^(5/24) = 1.155353…,
        // 3600 / 1.155353 = 3115.9.
        let f = r.power(sf(1.0), true);
        assert_eq!((f.value, f.valid), (Some(3115.9), true), "{f:?}");
    }

    #[test]
    fn throughput_counts_streams_over_the_measured_interval() {
        let r = crate::workload::tpch::record::new();
        let t0 = Instant::now();
        r.joined(Role::Queries {
            stream: 1,
            refresh_pair: None,
        });
        r.joined(Role::Queries {
            stream: 2,
            refresh_pair: None,
        });
        r.joined(Role::Refresh {
            first_pair: 1,
            pairs: 2,
        });
        // Stream 1 runs its 22 queries in 1 s each from t0; stream 2 ends at t0 + 36 s.
        for q in 1..=22u8 {
            r.done(Done {
                started: t0 + Duration::from_secs(u64::from(q) - 1),
                ..done(1, q, 1.0)
            });
            r.done(Done {
                started: t0 + Duration::from_secs(u64::from(q) + 13),
                ..done(2, q, 1.0)
            });
        }
        let f = r.throughput(sf(1.0), true);
        assert!(!f.valid && f.note.contains("0 of 4"), "{f:?}");
        for unit in [Unit::Rf1(1), Unit::Rf2(1), Unit::Rf1(2), Unit::Rf2(2)] {
            r.refreshed(Refreshed {
                stream: "refresh".into(),
                unit,
                started: t0,
                seconds: 2.0,
            });
        }
        // By hand: Ts = 36 s, 2 × 22 × 3600 / 36 × 1 = 4400.
        let f = r.throughput(sf(1.0), true);
        assert_eq!((f.value, f.valid), (Some(4400.0), true), "{f:?}");
        // At SF 10 two streams are under the minimum of 3: computed, not valid.
        let f = r.throughput(sf(10.0), true);
        assert_eq!(f.value, Some(44000.0));
        assert!(!f.valid && f.note.contains("under the 3"), "{f:?}");
        let test = Test {
            refresh: true,
            throughput: true,
            first_pair: 1,
            power_at_size: Some(1100.0),
        };
        let all = r.figures(sf(1.0), test);
        // √(1100 × 4400) = 2200.
        assert_eq!(all[2].label, "QphH@Size");
        assert_eq!((all[2].value, all[2].valid), (Some(2200.0), true));
    }
}
