//! Each target's down windows, from what the clients saw: a client's session to a target is
//! down from the moment it was lost (the server went away, or a try on it timed out) until it
//! was open again. A target's window is the union of its clients' outages: the time at least
//! one client was without a session to it. It starts with the first client that noticed and
//! ends with the last that got back, so it may outlast the server's own outage by a
//! reconnection backoff (at most 2 s).

use std::time::{Duration, Instant};

/// One outage of one client's session: (target, lost at, open again at).
pub type Outage = (usize, Instant, Option<Instant>);

/// A stretch of a run during which a target was down for at least one client.
#[derive(Debug, Clone, PartialEq)]
pub struct DownWindow {
    pub target: usize,
    /// Offset from the run's start.
    pub from: Duration,
    /// `None`: still down when the run ended.
    pub to: Option<Duration>,
    /// Sessions lost in the window (over all clients).
    pub sessions_lost: u64,
}

/// Merges the clients' outages into windows per target, in (target, start) order; offsets
/// are from `start`, and an outage still open at `end` stays open.
pub fn down_windows(mut outages: Vec<Outage>, start: Instant) -> Vec<DownWindow> {
    outages.sort_by_key(|(t, lost, _)| (*t, *lost));
    let at = |i: Instant| i.saturating_duration_since(start);
    let mut out: Vec<DownWindow> = Vec::new();
    for (target, lost, back) in outages {
        let (from, to) = (at(lost), back.map(at));
        match out.last_mut() {
            Some(w) if w.target == target && w.to.is_none_or(|end| from <= end) => {
                w.to = match (w.to, to) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
                w.sessions_lost += 1;
            }
            _ => out.push(DownWindow {
                target,
                from,
                to,
                sessions_lost: 1,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_outages_of_a_target_make_one_window_and_targets_stay_apart() {
        let t0 = Instant::now();
        let s = |secs: f64| t0 + Duration::from_secs_f64(secs);
        let w = down_windows(
            vec![
                (1, s(6.2), Some(s(8.0))),
                (0, s(9.0), None),
                (1, s(6.0), Some(s(7.5))),
                (1, s(7.9), Some(s(9.1))),
                (1, s(20.0), Some(s(20.5))),
            ],
            t0,
        );
        let secs = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 10.0).round() / 10.0);
        let got: Vec<(usize, f64, Option<f64>, u64)> = w
            .iter()
            .map(|w| {
                (
                    w.target,
                    secs(Some(w.from)).unwrap(),
                    secs(w.to),
                    w.sessions_lost,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 9.0, None, 1),
                (1, 6.0, Some(9.1), 3),
                (1, 20.0, Some(20.5), 1),
            ]
        );
    }

    #[test]
    fn an_outage_still_open_keeps_the_window_open() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let w = down_windows(vec![(0, s(1), None), (0, s(2), Some(s(3)))], t0);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].to, None);
        assert_eq!(w[0].sessions_lost, 2);
    }
}
