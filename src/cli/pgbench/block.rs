//! pgbench 15's words for a run, made from tidebench's summary and the command line's facts:
//! the summary block pgbench prints on stdout (which scripts grep), its per-script blocks,
//! and its `-P` progress line. Pure functions: `cmd` prints what they return.

use std::fmt::Write;
use std::time::Duration;

use super::abort;
use super::plan::{Facts, Length, Script};
use crate::event::{ProgressLine, TryError};
use crate::results::{Stats, Summary};

/// What the run learnt of pgbench's tables: the data's scale and pgbench_accounts'
/// partitioning (method, count), used when a built-in script ran.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tables {
    pub scale: Option<u32>,
    pub partitions: Option<(&'static str, i64)>,
}

/// pgbench's summary block (and per-script blocks when several scripts ran); `connect` is how
/// long opening the sessions took.
pub fn render(facts: &Facts, summary: &Summary, tables: &Tables, connect: Duration) -> String {
    let mut out = String::new();
    let t = &summary.totals;
    let desc = match facts.scripts.as_slice() {
        [one] => one.desc.as_str(),
        _ => "multiple scripts",
    };
    let scale = match tables.scale {
        Some(s) if facts.internal => i64::from(s),
        _ => facts.scale,
    };
    let _ = writeln!(out, "transaction type: {desc}");
    let _ = writeln!(out, "scaling factor: {scale}");
    if let (Some((method, count)), true) = (tables.partitions, facts.internal) {
        let _ = writeln!(out, "partition method: {method}\npartitions: {count}");
    }
    let _ = writeln!(out, "query mode: {}", facts.protocol);
    let _ = writeln!(out, "number of clients: {}", facts.clients);
    let _ = writeln!(out, "number of threads: {}", facts.threads);
    if facts.max_tries > 0 {
        let _ = writeln!(out, "maximum number of tries: {}", facts.max_tries);
    }
    let done = t.committed + t.expected_rollback;
    match facts.length {
        Length::PerClient(n) => {
            let _ = writeln!(out, "number of transactions per client: {n}");
            let _ = writeln!(
                out,
                "number of transactions actually processed: {done}/{}",
                n * facts.clients
            );
        }
        Length::Seconds(s) => {
            let _ = writeln!(out, "duration: {s} s");
            let _ = writeln!(out, "number of transactions actually processed: {done}");
        }
    }
    // The transaction that aborted a client is in tidebench's failures (class other);
    // pgbench leaves it out of every count.
    let aborted = summary.aborted_clients.len() as u64;
    let failed = t.failed - aborted.min(t.failed_by_class.other).min(t.failed);
    let all = done + failed;
    let _ = writeln!(
        out,
        "number of failed transactions: {failed} ({:.3}%)",
        percent(failed, all)
    );
    if facts.failures_detailed {
        let by = &t.failed_by_class;
        let _ = writeln!(
            out,
            "number of serialization failures: {} ({:.3}%)",
            by.serialization,
            percent(by.serialization, all)
        );
        let _ = writeln!(
            out,
            "number of deadlock failures: {} ({:.3}%)",
            by.deadlock,
            percent(by.deadlock, all)
        );
    }
    if facts.max_tries != 1 {
        // pgbench 15 counts a transaction once however many retries it took, committed or
        // failed in the end; the retries themselves are the second line.
        let _ = writeln!(
            out,
            "number of transactions retried: {} ({:.3}%)",
            t.retried_txns,
            percent(t.retried_txns, all)
        );
        let _ = writeln!(out, "total number of retries: {}", t.retried);
    }
    let skipped = summary.latency_limit.map_or(0, |l| l.skipped);
    if done + skipped == 0 {
        return out;
    }
    if let Some(l) = &summary.latency_limit {
        if facts.rate {
            let _ = writeln!(
                out,
                "number of transactions skipped: {} ({:.3}%)",
                l.skipped,
                percent(l.skipped, all + l.skipped)
            );
        }
        let _ = writeln!(
            out,
            "number of transactions above the {:.1} ms latency limit: {}/{done} ({:.3}%)",
            l.limit_ms,
            l.late,
            percent(l.late, done)
        );
    }
    if done == 0 {
        return out;
    }
    latency_lines(&mut out, facts, summary, all, failed);
    let tps = rate(done, summary.duration_s);
    if facts.connect_each {
        // pgbench divides the time all connections took by the transactions, failed ones
        // included.
        let total_ms = summary
            .connections
            .as_ref()
            .map_or(0.0, |c| c.total_s * 1000.0);
        let _ = writeln!(
            out,
            "average connection time = {:.3} ms",
            total_ms / all.max(1) as f64
        );
        let _ = writeln!(out, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(
            out,
            "initial connection time = {:.3} ms",
            connect.as_secs_f64() * 1000.0
        );
        let _ = writeln!(out, "tps = {tps:.6} (without initial connection time)");
    }
    match facts.scripts.as_slice() {
        [one] if facts.per_command => commands(&mut out, summary, &one.txn_type, ""),
        [_] => {}
        _ => scripts(&mut out, facts, summary, done),
    }
    out
}

/// pgbench 15's `--verbose-errors` line for one step of a failed try (without the
/// `pgbench: ` prefix). `max_tries` is pgbench's (0: unlimited, shown without a bound).
pub fn try_error_line(e: &TryError, scripts: &[Script], max_tries: i64) -> String {
    match e {
        TryError::Got {
            client,
            txn_type,
            command,
            text,
        } => {
            let script = abort::script_index(scripts, txn_type)
                .map_or_else(|| format!("\"{txn_type}\""), |s| s.to_string());
            let command = command.unwrap_or(0);
            format!("client {client} got an error in command {command} (SQL) of script {script}; {text}")
        }
        TryError::Next {
            client,
            try_no,
            max_tries: tries,
            again,
            limit_used,
        } => {
            let what = if *again {
                "repeats the transaction after the error"
            } else {
                "ends the failed transaction"
            };
            let bound = if max_tries == 0 {
                String::new()
            } else {
                format!("/{tries}")
            };
            let used = limit_used.map_or(String::new(), |p| {
                format!(", {p:.3}% of the maximum time of tries was used")
            });
            format!("client {client} {what} (try {try_no}{bound}{used})")
        }
    }
}

/// pgbench's `-r` lines of one script: each command's mean latency, its failures, its text.
fn commands(out: &mut String, summary: &Summary, txn_type: &str, indent: &str) {
    let _ = writeln!(
        out,
        "{indent}statement latencies in milliseconds and failures:"
    );
    let mut mine: Vec<_> = summary
        .commands
        .iter()
        .filter(|c| c.txn_type == txn_type)
        .collect();
    mine.sort_by_key(|c| c.command);
    for c in mine {
        let _ = writeln!(out, "   {:11.3}  {:10}  {}", c.mean_ms, c.failed, c.text);
    }
}

/// Latency as pgbench gives it: average and stddev of the samples with -P, -R or -L; else
/// the average the clients' time implies (duration × clients / transactions).
fn latency_lines(out: &mut String, facts: &Facts, summary: &Summary, all: u64, failed: u64) {
    let t = &summary.totals;
    match (&t.latency_ms, facts.latency_samples) {
        (Some(l), true) => {
            let _ = writeln!(out, "latency average = {:.3} ms", l.mean);
            let _ = writeln!(out, "latency stddev = {:.3} ms", l.stddev);
        }
        _ => {
            let _ = writeln!(
                out,
                "latency average = {:.3} ms{}",
                summary.duration_s * 1000.0 * facts.clients as f64 / all as f64,
                if failed > 0 {
                    " (including failures)"
                } else {
                    ""
                }
            );
        }
    }
    if facts.rate {
        if let Some(lag) = &t.lag_ms {
            let _ = writeln!(
                out,
                "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
                lag.mean, lag.max
            );
        }
    }
}

/// pgbench's block per script, when more than one ran.
fn scripts(out: &mut String, facts: &Facts, summary: &Summary, done: u64) {
    let weights: i64 = facts.scripts.iter().map(|s| s.weight).sum();
    for (i, s) in facts.scripts.iter().enumerate() {
        let _ = writeln!(out, "SQL script {}: {}", i + 1, s.desc);
        let _ = writeln!(
            out,
            " - weight: {} (targets {:.1}% of total)",
            s.weight,
            100.0 * s.weight as f64 / weights.max(1) as f64
        );
        let stats: Vec<&Stats> = summary
            .by_target_and_type
            .iter()
            .filter(|r| r.txn_type == s.txn_type)
            .map(|r| &r.stats)
            .collect();
        let n: u64 = stats
            .iter()
            .map(|s| s.committed + s.expected_rollback)
            .sum();
        let failed: u64 = stats.iter().map(|s| s.failed).sum();
        // As in the totals: the transactions that aborted clients are not pgbench's failures.
        let other: u64 = stats.iter().map(|s| s.failed_by_class.other).sum();
        let aborted = summary
            .aborted_clients
            .iter()
            .filter(|a| abort::script_of(a, &facts.scripts) == Some(i))
            .count() as u64;
        let failed = failed - aborted.min(other).min(failed);
        let _ = writeln!(
            out,
            " - {n} transactions ({:.1}% of total, tps = {:.6})",
            percent(n, done),
            rate(n, summary.duration_s)
        );
        let _ = writeln!(
            out,
            " - number of failed transactions: {failed} ({:.3}%)",
            percent(failed, n + failed)
        );
        if let [one] = stats.as_slice() {
            if let Some(l) = &one.latency_ms {
                let _ = writeln!(out, " - latency average = {:.3} ms", l.mean);
                let _ = writeln!(out, " - latency stddev = {:.3} ms", l.stddev);
            }
        }
        if facts.per_command {
            commands(out, summary, &s.txn_type, " - ");
        }
    }
}

/// pgbench's `-P` line: `progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev 0.123, 0 failed`,
/// with the schedule lag under -R and, when tries are more than one, the transactions retried
/// and the retries.
///
/// With `--progress-timestamp` (`unix` given: seconds since the epoch when
/// the line is made) it starts with the Unix time to the millisecond, as pgbench's does,
/// instead of the elapsed time.
pub fn progress_line(p: &ProgressLine, max_tries: i64, unix: Option<f64>) -> String {
    let (lat, stddev) = p
        .latency
        .as_ref()
        .map_or((0.0, 0.0), |l| (l.mean_ms, l.stddev_ms));
    let when = match unix {
        Some(t) => format!("{t:.3}"),
        None => format!("{:.1}", p.elapsed.as_secs_f64()),
    };
    let mut out = format!(
        "progress: {when} s, {:.1} tps, lat {lat:.3} ms stddev {stddev:.3}, {} failed",
        p.tps, p.failed
    );
    if let Some(lag) = p.lag_ms {
        let _ = write!(out, ", lag {lag:.3} ms");
    }
    if max_tries != 1 {
        let _ = write!(out, ", {} retried, {} retries", p.retried_txns, p.retried);
    }
    out
}

/// A share in percent; of nothing it is NaN, which pgbench prints as `NaN` (as Rust does).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        f64::NAN
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn rate(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        n as f64 / seconds
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Latency;

    /// A stored tidebench summary: 3,953 tpcb transactions over 3.005 s, mean 1.514 ms.
    fn summary() -> Summary {
        serde_json::from_str(include_str!(
            "../../../tests/fuzz-corpus/results/summary.json"
        ))
        .expect("the fixture is a summary")
    }

    fn tables(scale: u32) -> Tables {
        Tables {
            scale: Some(scale),
            partitions: None,
        }
    }

    fn facts() -> Facts {
        Facts {
            scripts: vec![Script {
                desc: "<builtin: TPC-B (sort of)>".into(),
                weight: 1,
                txn_type: "tpcb".into(),
            }],
            internal: true,
            scale: 1,
            scale_given: false,
            protocol: "simple".into(),
            clients: 2,
            threads: 1,
            max_tries: 1,
            length: Length::Seconds(3),
            latency_samples: false,
            rate: false,
            failures_detailed: false,
            per_command: false,
            debug: false,
            connect_each: false,
            progress_timestamp: false,
            vacuum: true,
            vacuum_accounts: false,
            target: "dbname=x".into(),
            seed_given: false,
        }
    }

    #[test]
    fn the_block_is_pgbench_15_s_line_for_line() {
        let block = render(
            &facts(),
            &summary(),
            &tables(10),
            Duration::from_micros(4917),
        );
        assert_eq!(
            block,
            "transaction type: <builtin: TPC-B (sort of)>\n\
             scaling factor: 10\n\
             query mode: simple\n\
             number of clients: 2\n\
             number of threads: 1\n\
             maximum number of tries: 1\n\
             duration: 3 s\n\
             number of transactions actually processed: 3953\n\
             number of failed transactions: 0 (0.000%)\n\
             latency average = 1.520 ms\n\
             initial connection time = 4.917 ms\n\
             tps = 1315.474210 (without initial connection time)\n"
        );
        // With -P (or -R) the samples' average and stddev; -t counts per client.
        let f = Facts {
            latency_samples: true,
            length: Length::PerClient(2000),
            max_tries: 3,
            ..facts()
        };
        let block = render(&f, &summary(), &tables(10), Duration::ZERO);
        for line in [
            "number of transactions per client: 2000\n",
            "number of transactions actually processed: 3953/4000\n",
            "number of transactions retried: 0 (0.000%)\ntotal number of retries: 0\n",
            "latency average = 1.514 ms\nlatency stddev = 0.000 ms\n",
        ] {
            assert!(block.contains(line), "{line} not in\n{block}");
        }
    }

    #[test]
    fn a_partitioned_table_and_connect_each_add_pgbench_s_lines() {
        let tables = Tables {
            scale: Some(10),
            partitions: Some(("hash", 4)),
        };
        let f = Facts {
            connect_each: true,
            ..facts()
        };
        let block = render(&f, &summary(), &tables, Duration::ZERO);
        assert!(
            block
                .contains("scaling factor: 10\npartition method: hash\npartitions: 4\nquery mode:"),
            "{block}"
        );
        assert!(
            block.contains("\naverage connection time = ")
                && block.contains("\ntps = ")
                && block.ends_with("(including reconnection times)\n"),
            "{block}"
        );
    }

    #[test]
    fn transactions_retried_are_counted_apart_from_retries() {
        // 3953 processed; 40 transactions needed retries, 100 retries in all.
        let mut s = summary();
        s.totals.retried = 100;
        s.totals.retried_txns = 40;
        let f = Facts {
            max_tries: 3,
            ..facts()
        };
        let block = render(&f, &s, &tables(10), Duration::ZERO);
        assert!(
            block.contains(
                "number of transactions retried: 40 (1.012%)\ntotal number of retries: 100\n"
            ),
            "{block}"
        );
    }

    #[test]
    fn an_aborted_client_s_transaction_is_not_a_failure_and_nothing_is_nan_percent() {
        let mut s = summary();
        s.totals.committed = 0;
        s.totals.expected_rollback = 0;
        s.totals.failed = 1;
        s.totals.failed_by_class.other = 1;
        s.aborted_clients = vec![crate::results::down::AbortedClient {
            client: 0,
            at_s: 0.0,
            message: "\"bad\" command 1: ERROR:  boom".into(),
        }];
        let f = Facts {
            length: Length::PerClient(1),
            clients: 1,
            ..facts()
        };
        let block = render(&f, &s, &tables(1), Duration::ZERO);
        assert!(
            block.ends_with(
                "number of transactions actually processed: 0/1\n\
                 number of failed transactions: 0 (NaN%)\n"
            ),
            "{block}"
        );
    }

    #[test]
    fn the_progress_line_is_pgbench_s() {
        let p = ProgressLine {
            elapsed: Duration::from_secs(5),
            window: Duration::from_secs(5),
            tps: 1234.54,
            headline: None,
            latency: Some(Latency {
                mean_ms: 0.8104,
                p95_ms: 2.0,
                stddev_ms: 0.1234,
            }),
            lag_ms: None,
            failed: 0,
            retried: 5,
            retried_txns: 2,
            backlog: None,
            running: Vec::new(),
            running_more: 0,
        };
        assert_eq!(
            progress_line(&p, 1, None),
            "progress: 5.0 s, 1234.5 tps, lat 0.810 ms stddev 0.123, 0 failed"
        );
        let p = ProgressLine {
            lag_ms: Some(0.25),
            latency: None,
            ..p
        };
        assert_eq!(
            progress_line(&p, 2, None),
            "progress: 5.0 s, 1234.5 tps, lat 0.000 ms stddev 0.000, 0 failed, lag 0.250 ms, 2 retried, 5 retries"
        );
        assert!(progress_line(&p, 1, Some(1_700_000_000.25))
            .starts_with("progress: 1700000000.250 s, 1234.5 tps"));
    }

    #[test]
    fn verbose_errors_lines_are_pgbench_s() {
        let scripts: Vec<Script> = ["a.sql", "b.sql"]
            .iter()
            .map(|n| Script {
                desc: n.to_string(),
                weight: 1,
                txn_type: n.to_string(),
            })
            .collect();
        let got = TryError::Got {
            client: 3,
            txn_type: "b.sql".into(),
            command: Some(2),
            text: "ERROR:  could not serialize access due to concurrent update".into(),
        };
        assert_eq!(
            try_error_line(&got, &scripts, 2),
            "client 3 got an error in command 2 (SQL) of script 1; \
             ERROR:  could not serialize access due to concurrent update"
        );
        let next = |again| TryError::Next {
            client: 3,
            try_no: 1,
            max_tries: 2,
            again,
            limit_used: None,
        };
        assert_eq!(
            try_error_line(&next(true), &scripts, 2),
            "client 3 repeats the transaction after the error (try 1/2)"
        );
        assert_eq!(
            try_error_line(&next(false), &scripts, 2),
            "client 3 ends the failed transaction (try 1/2)"
        );
        // --max-tries 0: unlimited, so pgbench shows no bound.
        assert_eq!(
            try_error_line(&next(true), &scripts, 0),
            "client 3 repeats the transaction after the error (try 1)"
        );
        let late = TryError::Next {
            client: 3,
            try_no: 1,
            max_tries: 2,
            again: true,
            limit_used: Some(12.5),
        };
        assert_eq!(
            try_error_line(&late, &scripts, 2),
            "client 3 repeats the transaction after the error \
             (try 1/2, 12.500% of the maximum time of tries was used)"
        );
    }
}
