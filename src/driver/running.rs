//! What is in flight, for the progress line: a run of a few long operations (the Greenplum study's
//! reports and loads) shows each running one's elapsed time, not only what finished.
//!
//! The hot path adds one `Cell` store per transaction (its type, beside the start its
//! [`Watch`](super::watchdog::Watch) already keeps). Each driver thread's watchdog copies its
//! clients' tries into this board every [`PUBLISH`], and the collector reads the board when it
//! writes a progress line, so no lock is taken per transaction; a try that ended since the
//! last copy may still be listed, at most [`PUBLISH`] late.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a watchdog publishes its thread's tries: four wakeups a second per driver
/// thread, against a list that may be that stale.
pub const PUBLISH: Duration = Duration::from_millis(250);
/// Tries younger than this are not listed: short transactions would only be noise.
pub const LISTED_FROM: Duration = Duration::from_secs(1);
/// The longest tries listed; the rest are counted.
pub const LISTED_MOST: usize = 4;

/// Every driver thread's tries in flight: (when it began, its global type index).
#[derive(Debug, Default)]
pub struct Running {
    by_thread: Mutex<Vec<Vec<(Instant, u32)>>>,
}

impl Running {
    pub fn new(threads: usize) -> Running {
        Running {
            by_thread: Mutex::new(vec![Vec::new(); threads]),
        }
    }

    /// Replaces thread `thread`'s tries.
    pub fn publish(&self, thread: usize, tries: impl Iterator<Item = (Instant, u32)>) {
        let mut by = self.by_thread.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = by.get_mut(thread) {
            slot.clear();
            slot.extend(tries);
        }
    }

    /// The tries running for [`LISTED_FROM`] or longer at `now`, longest first: the
    /// [`LISTED_MOST`] longest as (type index, elapsed), and how many more there are.
    pub fn longest(&self, now: Instant) -> (Vec<(u32, Duration)>, usize) {
        let by = self.by_thread.lock().unwrap_or_else(|p| p.into_inner());
        let mut long: Vec<(u32, Duration)> = by
            .iter()
            .flatten()
            .map(|(since, txn)| (*txn, now.saturating_duration_since(*since)))
            .filter(|(_, d)| *d >= LISTED_FROM)
            .collect();
        long.sort_by_key(|t| std::cmp::Reverse(t.1));
        let more = long.len().saturating_sub(LISTED_MOST);
        long.truncate(LISTED_MOST);
        (long, more)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_tries_of_every_thread_are_listed_first() {
        let board = Running::new(2);
        let now = Instant::now();
        let ago = |s: u64| now - Duration::from_secs(s);
        board.publish(0, [(ago(3), 0), (ago(0), 1), (ago(9), 2)].into_iter());
        board.publish(
            1,
            [(ago(5), 1), (ago(2), 0), (ago(4), 0), (ago(1), 2)].into_iter(),
        );
        let (long, more) = board.longest(now);
        let listed: Vec<(u32, u64)> = long.iter().map(|(t, d)| (*t, d.as_secs())).collect();
        assert_eq!(listed, vec![(2, 9), (1, 5), (0, 4), (0, 3)]);
        assert_eq!(
            more, 2,
            "2 s and 1 s: listed from a second on, past the first four"
        );
        // A thread's new publication replaces its old one.
        board.publish(0, std::iter::empty());
        assert_eq!(board.longest(now).0[0], (1, Duration::from_secs(5)));
    }
}
