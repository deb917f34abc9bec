//! The collector's side of the run's errors (issue 38): the first error of each kind that any
//! driver thread reports is shown at once as an event, and at the end the run's tally becomes
//! `summary.json`'s `errors`, with type names and seconds since the start.

use std::time::Instant;

use crate::event::{ErrorNotice, Event, Sink};
use crate::metrics::errors::{ErrorKey, ErrorSeen, ErrorTally};
use crate::metrics::KeySpace;
use crate::results::errors::ErrorEntry;

/// The kinds already shown.
#[derive(Default)]
pub struct Announced {
    kinds: Vec<ErrorKey>,
}

impl Announced {
    /// Shows each kind in `tally` not shown before (its first error as that thread saw it in
    /// that tick: the earliest the collector knows of).
    pub fn announce(
        &mut self,
        tally: &ErrorTally,
        keys: &KeySpace,
        start: Instant,
        sink: &dyn Sink,
    ) {
        for seen in &tally.kinds {
            if self.kinds.contains(&seen.key) {
                continue;
            }
            self.kinds.push(seen.key);
            let e = entry(seen, keys, start);
            sink.send(Event::FirstError(ErrorNotice {
                kind: e.kind(),
                place: e.place(),
                at_s: e.first_at_s,
                text: e.text(),
            }));
        }
    }
}

/// Every kind of the run's tally as `summary.json` keeps it.
pub fn entries(tally: &ErrorTally, keys: &KeySpace, start: Instant) -> Vec<ErrorEntry> {
    tally.kinds.iter().map(|k| entry(k, keys, start)).collect()
}

fn entry(seen: &ErrorSeen, keys: &KeySpace, start: Instant) -> ErrorEntry {
    let f = &seen.first;
    let more = f.more.clone().unwrap_or_default();
    ErrorEntry {
        class: seen.key.class.name().to_string(),
        sqlstate: seen
            .key
            .sqlstate
            .map(|s| String::from_utf8_lossy(&s).into_owned()),
        severity: (!f.severity.is_empty()).then(|| f.severity.clone()),
        message: f.message.clone(),
        detail: more.detail,
        hint: more.hint,
        context: more.context,
        count: seen.count,
        first_at_s: (f.at.saturating_duration_since(start).as_secs_f64() * 1e3).round() / 1e3,
        client: f.client,
        txn_type: keys
            .txn_types
            .get(f.txn)
            .cloned()
            .unwrap_or_else(|| f.txn.to_string()),
        command: f.command,
    }
}
