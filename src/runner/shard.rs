//! A shard's start (issue 26): once its clients are connected and its baseline is read, it
//! measures its clock against every target server's and waits for the run's start instant, so
//! every shard's clients start together and their phase edges fall at the same instants.
//!
//! The offset is read the way NTP reads one: the local clock before and after a
//! `clock_timestamp()` query, the server's reading set against their midpoint, within half the
//! round trip. A shard further off than `--max-clock-offset` (beyond that bound), or one that
//! reaches the instant late, refuses to run and names itself and the fix: a merge of shards on
//! skewed clocks would put their intervals side by side at the wrong times, silently.
//!
//! `TIDEBENCH_CLOCK_SKEW` (a duration, `-` for behind) shifts this process's clock for both
//! checks: how the test suite makes a skewed host on one machine.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::config::duration::parse_duration;
use crate::config::shard::ShardPlan;
use crate::driver::Stop;
use crate::event::{Event, Sink};
use crate::results::shard::{ClockOffset, ShardFacts};

use super::databases::Databases;
use super::RunError;

/// The clock offsets read, within the bound; an error naming the shard and the fix otherwise.
pub async fn check_clocks(shard: &ShardPlan, dbs: &Databases) -> Result<ShardFacts, RunError> {
    let skew = test_skew()?;
    let mut offsets = Vec::new();
    for (server, client) in dbs.stats_sessions() {
        let before = now_with(skew);
        let row = client
            .query_one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8",
                &[],
            )
            .await
            .map_err(|e| RunError::ShardClock {
                shard: shard.label(),
                server: server.to_string(),
                message: crate::target::describe_pg_error(&e),
            })?;
        let after = now_with(skew);
        let server_us: i64 = row.get(0);
        let mid_us = (micros(before) + micros(after)) / 2;
        let offset = ClockOffset {
            server: server.to_string(),
            offset_ms: round3((mid_us - server_us) as f64 / 1e3),
            within_ms: round3((micros(after) - micros(before)) as f64 / 2e3),
        };
        let beyond = offset.offset_ms.abs() - offset.within_ms;
        if beyond > shard.max_clock_offset.as_secs_f64() * 1e3 {
            return Err(RunError::ClockOffset {
                shard: shard.label(),
                host: shard.host.clone(),
                server: server.to_string(),
                offset_ms: offset.offset_ms,
                within_ms: offset.within_ms,
                bound_ms: shard.max_clock_offset.as_millis(),
            });
        }
        offsets.push(offset);
    }
    Ok(ShardFacts {
        run_id: shard.run_id.clone(),
        index: shard.index,
        count: shard.count,
        host: shard.host.clone(),
        start_at: humantime::format_rfc3339_millis(shard.start_at).to_string(),
        clock_offsets: offsets,
        merged: Vec::new(),
    })
}

/// Waits for the start instant; an error when it has passed (the shard would start late and
/// miss the other shards' first moments) or when the run is stopped meanwhile.
pub async fn wait_for_start(
    shard: &ShardPlan,
    stop: &Stop,
    events: &dyn Sink,
) -> Result<(), RunError> {
    let now = now_with(test_skew()?);
    let Ok(wait) = shard.start_at.duration_since(now) else {
        let late = now.duration_since(shard.start_at).unwrap_or_default();
        return Err(RunError::StartLate {
            shard: shard.label(),
            host: shard.host.clone(),
            start_at: humantime::format_rfc3339_millis(shard.start_at).to_string(),
            late_s: late.as_secs_f64(),
        });
    };
    events.send(Event::Note(format!(
        "shard {} of run {} on {}: connected, starting in {:.1} s at {}",
        shard.label(),
        shard.run_id,
        shard.host,
        wait.as_secs_f64(),
        humantime::format_rfc3339_millis(shard.start_at)
    )));
    tokio::select! {
        _ = tokio::time::sleep(wait) => Ok(()),
        _ = stop.wait() => Err(RunError::interrupted(&format!(
            "shard {} stopped before its start instant",
            shard.label()
        ))),
    }
}

/// This process's clock, shifted by the test knob.
fn now_with(skew: Option<(bool, Duration)>) -> SystemTime {
    let now = SystemTime::now();
    match skew {
        Some((true, d)) => now - d,
        Some((false, d)) => now + d,
        None => now,
    }
}

/// `TIDEBENCH_CLOCK_SKEW`: (behind, amount).
fn test_skew() -> Result<Option<(bool, Duration)>, RunError> {
    let Ok(text) = std::env::var("TIDEBENCH_CLOCK_SKEW") else {
        return Ok(None);
    };
    let (behind, amount) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    parse_duration(amount)
        .map(|d| Some((behind, d)))
        .map_err(|e| RunError::ClockSkewKnob {
            value: text.clone(),
            message: e.to_string(),
        })
}

fn micros(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}
