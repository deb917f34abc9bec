//! The parts of the shards' summaries that are not rebuilt from their intervals: added up into
//! the merged summary. Emulated sets' work is summed per set (each shard ran a market of its
//! own for its clients' trades); per-command figures are summed per command (their means
//! weighted by count), loaded bytes per type; incidents, down windows and aborted clients are
//! listed from every shard (client ids are the run's, so they stay apart); errors are merged
//! by kind (the earliest first kept); the margins of the server check add up; the units
//! each shard's streams timed are listed from every shard.

use super::super::{CommandStats, EmulatorEnd, Summary, Volume};

pub fn add(merged: &mut Summary, shards: &[&Summary]) {
    merged.emulators = emulators(shards);
    merged.commands = commands(shards);
    merged.volumes = volumes(shards);
    // Each shard ran its own streams: their unit times side by side, in shard order.
    merged.unit_times = shards.iter().flat_map(|s| s.unit_times.clone()).collect();
    merged.incidents = shards.iter().flat_map(|s| s.incidents.clone()).collect();
    merged.incidents.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    merged.down_windows = shards.iter().flat_map(|s| s.down_windows.clone()).collect();
    merged
        .down_windows
        .sort_by(|a, b| a.from_s.total_cmp(&b.from_s));
    merged.aborted_clients = shards
        .iter()
        .flat_map(|s| s.aborted_clients.clone())
        .collect();
    merged.errors = crate::results::errors::merge(shards.iter().flat_map(|s| s.errors.clone()));
    merged.on_error = shards.iter().find_map(|s| s.on_error);
    merged.cut_in_flight = shards.iter().map(|s| s.cut_in_flight).sum();
    merged.committed_after_end = shards.iter().map(|s| s.committed_after_end).sum();
    merged.overrun_s = shards.iter().filter_map(|s| s.overrun_s).reduce(f64::max);
    let failures: Vec<String> = shards
        .iter()
        .filter_map(|s| {
            let shard = s.shard.as_ref().map_or(0, |f| f.index);
            s.failure.as_ref().map(|f| format!("shard {shard}: {f}"))
        })
        .collect();
    if !failures.is_empty() {
        merged.failure = Some(failures.join("; "));
    }
}

fn emulators(shards: &[&Summary]) -> Vec<EmulatorEnd> {
    let mut out: Vec<EmulatorEnd> = Vec::new();
    for e in shards.iter().flat_map(|s| &s.emulators) {
        match out
            .iter_mut()
            .find(|o| o.group == e.group && o.set == e.set)
        {
            Some(o) => {
                o.issued += e.issued;
                o.abandoned += e.abandoned;
                o.pending_at_end += e.pending_at_end;
                o.overdue_at_end += e.overdue_at_end;
                o.lag_ms_at_end = o.lag_ms_at_end.max(e.lag_ms_at_end);
            }
            None => out.push(e.clone()),
        }
    }
    out
}

fn volumes(shards: &[&Summary]) -> Vec<Volume> {
    let mut out: Vec<Volume> = Vec::new();
    for v in shards.iter().flat_map(|s| &s.volumes) {
        match out.iter_mut().find(|o| o.txn_type == v.txn_type) {
            Some(o) => o.add(v),
            None => out.push(v.clone()),
        }
    }
    out
}

fn commands(shards: &[&Summary]) -> Vec<CommandStats> {
    let mut out: Vec<CommandStats> = Vec::new();
    for c in shards.iter().flat_map(|s| &s.commands) {
        match out
            .iter_mut()
            .find(|o| o.txn_type == c.txn_type && o.command == c.command)
        {
            Some(o) => {
                let n = o.count + c.count;
                if n > 0 {
                    o.mean_ms =
                        (o.mean_ms * o.count as f64 + c.mean_ms * c.count as f64) / n as f64;
                }
                o.count = n;
                o.failed += c.failed;
                o.max_ms = o.max_ms.max(c.max_ms);
            }
            None => out.push(c.clone()),
        }
    }
    out
}
