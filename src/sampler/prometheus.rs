//! `--prometheus ADDR`: a small HTTP/1.1 endpoint serving live counters in the Prometheus text
//! format (version 0.0.4) during a run, so a dashboard can watch a long run. `GET /metrics`
//! answers; anything else is 404. One request per connection (`Connection: close`).
//!
//! Exposed:
//! - `tidebench_transactions_total{group,type,outcome}`: transactions ended so far, ramps
//!   included; outcome is `committed`, `expected_rollback` or `failed_<class>`;
//! - `tidebench_retries_total{group,type}` and `tidebench_elapsed_seconds`;
//! - the latest sampling round as gauges `tidebench_<kind>_<metric>`, e.g.
//!   `tidebench_host_cpu_steal_pct`, `tidebench_instance_cpu_seconds{pg_instance="a"}`,
//!   `tidebench_device_write_bytes_per_s{device="vda"}`, `tidebench_db_xact_commit{target=…}`,
//!   `tidebench_server_wal_bytes{server=…}`. (`instance` is Prometheus' own label for the
//!   scraped endpoint, hence `pg_instance`.)
//! - `tidebench_wait_samples_total{group,class}`: sessions seen so far by the wait sampler
//!   (`--sample-waits`), per class (`CPU`, `Lock`, `IdleInTransaction`, ...).
//!
//! It binds loopback unless told otherwise: a bare port means `127.0.0.1:PORT`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::metrics::live::{LiveSnapshot, LiveTotals};
use crate::metrics::{ErrorClass, KeySpace};

use super::run::{LatestSamples, Values};
use super::waits::LiveWaits;

/// Longest request head read; a scrape is a few hundred bytes.
const MAX_REQUEST: usize = 8192;
/// A client that sends nothing for this long is dropped.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// `ADDR` as the user gave it: `HOST:PORT`, `[V6]:PORT`, or a bare port on loopback.
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let t = text.trim();
    // No host (`9187`, `:9187`) or `localhost`: loopback only. Serving other hosts is a choice
    // the user makes by naming an address (e.g. 0.0.0.0:9187).
    let port_only = t.strip_prefix(':').unwrap_or(t);
    let port_only = port_only.strip_prefix("localhost:").unwrap_or(port_only);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    t.parse::<SocketAddr>().map_err(|_| {
        format!(
            "--prometheus '{text}' is not an address; give HOST:PORT (e.g. 127.0.0.1:9187) or a port"
        )
    })
}

/// The endpoint, serving until dropped or stopped.
pub struct Exporter {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Exporter {
    /// Binds `addr` and serves in the background on the current runtime.
    pub async fn start(
        addr: SocketAddr,
        keys: KeySpace,
        live: LiveTotals,
        latest: LatestSamples,
        waits: Option<LiveWaits>,
    ) -> Result<Exporter, String> {
        let listener = TcpListener::bind(addr).await.map_err(|e| {
            format!("--prometheus: cannot listen on {addr}: {e}; choose another address or port")
        })?;
        let addr = listener.local_addr().unwrap_or(addr);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    // Out of file descriptors or similar: back off rather than spin.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let body = Scrape {
                    keys: &keys,
                    live: &live,
                    latest: &latest,
                    waits: waits.as_ref(),
                };
                let page = body.render();
                tokio::spawn(answer(stream, page));
            }
        });
        Ok(Exporter { addr, task })
    }

    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request head and answers it; errors just close the connection.
async fn answer(mut stream: TcpStream, page: String) {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    let head_done = |b: &[u8]| b.windows(4).any(|w| w == b"\r\n\r\n");
    while !head_done(&buf) && buf.len() < MAX_REQUEST {
        match tokio::time::timeout(READ_TIMEOUT, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => return,
        }
    }
    let request_line = String::from_utf8_lossy(&buf);
    let mut words = request_line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let reply = response(method, path, &page);
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn response(method: &str, path: &str, page: &str) -> String {
    let (status, ctype, body) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET", "/metrics") => ("200 OK", "text/plain; version=0.0.4; charset=utf-8", page),
        ("GET", _) => ("404 Not Found", "text/plain", "not found; try /metrics\n"),
        _ => ("405 Method Not Allowed", "text/plain", "only GET\n"),
    };
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

struct Scrape<'a> {
    keys: &'a KeySpace,
    live: &'a LiveTotals,
    latest: &'a LatestSamples,
    waits: Option<&'a LiveWaits>,
}

impl Scrape<'_> {
    fn render(&self) -> String {
        let mut out = transactions(self.keys, &self.live.snapshot());
        samples(&mut out, &self.latest.get());
        if let Some(w) = self.waits {
            wait_samples(&mut out, &w.get());
        }
        out
    }
}

/// Counters summed by (group, type): per target would be 40×10 series in a TPC-V run.
pub fn transactions(keys: &KeySpace, snap: &LiveSnapshot) -> String {
    let mut by: BTreeMap<(usize, usize), [u64; 3 + ErrorClass::ALL.len()]> = BTreeMap::new();
    for (key, s) in snap.slots.iter().enumerate().take(keys.len()) {
        let p = keys.parts(key);
        let e = by.entry((p.group, p.txn)).or_default();
        e[0] += s.committed;
        e[1] += s.expected_rollback;
        e[2] += s.retried;
        for (i, f) in s.failed.iter().enumerate() {
            e[3 + i] += f;
        }
    }
    let mut out = String::new();
    out.push_str(
        "# HELP tidebench_transactions_total Transactions ended so far, ramps included.\n",
    );
    out.push_str("# TYPE tidebench_transactions_total counter\n");
    let name = |names: &[String], i: usize| names.get(i).cloned().unwrap_or_default();
    // Types a group never ran (pgbench groups know three) would be all-zero noise.
    by.retain(|_, c| c.iter().any(|n| *n > 0));
    for ((g, t), c) in &by {
        let labels = format!(
            "group=\"{}\",type=\"{}\"",
            escape(&name(&keys.groups, *g)),
            escape(&name(&keys.txn_types, *t))
        );
        let _ = writeln!(
            out,
            "tidebench_transactions_total{{{labels},outcome=\"committed\"}} {}",
            c[0]
        );
        let _ = writeln!(
            out,
            "tidebench_transactions_total{{{labels},outcome=\"expected_rollback\"}} {}",
            c[1]
        );
        for (i, class) in ErrorClass::ALL.iter().enumerate() {
            let _ = writeln!(
                out,
                "tidebench_transactions_total{{{labels},outcome=\"failed_{}\"}} {}",
                class.name(),
                c[3 + i]
            );
        }
    }
    out.push_str(
        "# HELP tidebench_retries_total Extra tries after serialization failures or deadlocks.\n",
    );
    out.push_str("# TYPE tidebench_retries_total counter\n");
    for ((g, t), c) in &by {
        let _ = writeln!(
            out,
            "tidebench_retries_total{{group=\"{}\",type=\"{}\"}} {}",
            escape(&name(&keys.groups, *g)),
            escape(&name(&keys.txn_types, *t)),
            c[2]
        );
    }
    out.push_str("# TYPE tidebench_elapsed_seconds gauge\n");
    let _ = writeln!(
        out,
        "tidebench_elapsed_seconds {}",
        snap.elapsed.as_secs_f64()
    );
    out
}

/// The latest round as gauges, grouped by metric name (the format wants each name once).
pub fn samples(out: &mut String, v: &Values) {
    let mut by: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
    for (source, metric, value) in &v.rows {
        if !value.is_finite() {
            continue;
        }
        let (kind, label) = match source.split_once(':') {
            Some(("instance", n)) => ("instance", format!("pg_instance=\"{}\"", escape(n))),
            Some(("device", n)) => ("device", format!("device=\"{}\"", escape(n))),
            Some(("db", n)) => ("db", format!("target=\"{}\"", escape(n))),
            Some(("server", n)) => ("server", format!("server=\"{}\"", escape(n))),
            _ => (source.as_str(), String::new()),
        };
        by.entry(format!("tidebench_{kind}_{metric}"))
            .or_default()
            .push((label, *value));
    }
    for (name, series) in by {
        let _ = writeln!(out, "# TYPE {name} gauge");
        for (label, value) in series {
            if label.is_empty() {
                let _ = writeln!(out, "{name} {value}");
            } else {
                let _ = writeln!(out, "{name}{{{label}}} {value}");
            }
        }
    }
}

/// The wait sampler's counts so far as counters.
pub fn wait_samples(out: &mut String, counts: &BTreeMap<(String, String), u64>) {
    out.push_str(
        "# HELP tidebench_wait_samples_total Run sessions seen by the wait sampler, by class.\n",
    );
    out.push_str("# TYPE tidebench_wait_samples_total counter\n");
    for ((group, class), n) in counts {
        let _ = writeln!(
            out,
            "tidebench_wait_samples_total{{group=\"{}\",class=\"{}\"}} {n}",
            escape(group),
            escape(class)
        );
    }
}

/// Label values escape backslash, double quote and line feed.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::live::LiveSlot;
    use crate::metrics::TargetKey;

    fn keys() -> KeySpace {
        let target = |group| TargetKey {
            label: "t".into(),
            group,
            set: "1".into(),
        };
        KeySpace {
            segments: vec![crate::config::timeline::Segment {
                kind: crate::config::timeline::SegmentKind::Phase,
                phase: 0,
                iteration: 1,
                label: "p1".into(),
                measured: true,
                start: Duration::ZERO,
                end: Duration::from_secs(10),
            }],
            targets: vec![target(0), target(0), target(1)],
            groups: vec!["g\"1".into(), "g2".into()],
            txn_types: vec!["tpcb".into()],
            txn_roles: vec!["oltp".into()],
            txn_emulated: Vec::new(),
        }
    }

    #[test]
    fn sums_by_group_and_type() {
        let k = keys();
        let slot = |c| LiveSlot {
            committed: c,
            ..LiveSlot::default()
        };
        let snap = LiveSnapshot {
            elapsed: Duration::from_secs(3),
            slots: vec![slot(5), slot(7), slot(1)],
        };
        let text = transactions(&k, &snap);
        assert!(
            text.contains("tidebench_transactions_total{group=\"g\\\"1\",type=\"tpcb\",outcome=\"committed\"} 12\n"),
            "{text}"
        );
        assert!(text.contains("group=\"g2\",type=\"tpcb\",outcome=\"committed\"} 1\n"));
        assert!(text.contains("outcome=\"failed_deadlock\"} 0\n"));
        assert!(text.contains("tidebench_elapsed_seconds 3\n"));
    }

    #[test]
    fn samples_become_labelled_gauges() {
        let mut v = Values::default();
        v.push("host", "cpu_steal_pct", 1.5);
        v.push("instance:a", "cpu_seconds", 2.0);
        v.push("instance:b", "cpu_seconds", 3.0);
        v.push("db:instance:a/tidebench", "xact_commit", 10.0);
        let mut out = String::new();
        samples(&mut out, &v);
        assert!(out.contains("tidebench_host_cpu_steal_pct 1.5\n"), "{out}");
        assert_eq!(
            out.matches("# TYPE tidebench_instance_cpu_seconds gauge")
                .count(),
            1
        );
        assert!(out.contains("tidebench_instance_cpu_seconds{pg_instance=\"b\"} 3\n"));
        assert!(out.contains("tidebench_db_xact_commit{target=\"instance:a/tidebench\"} 10\n"));
    }

    #[test]
    fn addresses_default_to_loopback() {
        assert_eq!(parse_addr("9187").unwrap().to_string(), "127.0.0.1:9187");
        assert_eq!(parse_addr(":9187").unwrap().to_string(), "127.0.0.1:9187");
        assert_eq!(
            parse_addr("localhost:9187").unwrap().to_string(),
            "127.0.0.1:9187"
        );
        assert_eq!(parse_addr("0.0.0.0:9000").unwrap().port(), 9000);
        assert!(parse_addr("localhost").unwrap_err().contains("HOST:PORT"));
    }

    #[test]
    fn only_get_metrics_is_served() {
        assert!(response("GET", "/metrics", "x 1\n").starts_with("HTTP/1.1 200 OK"));
        assert!(response("GET", "/", "").starts_with("HTTP/1.1 404"));
        assert!(response("POST", "/metrics", "").starts_with("HTTP/1.1 405"));
    }

    #[tokio::test]
    async fn serves_a_scrape() {
        let exporter = Exporter::start(
            parse_addr("0").unwrap(),
            keys(),
            LiveTotals::default(),
            LatestSamples::default(),
            Some(LiveWaits::default()),
        )
        .await
        .unwrap();
        let addr = exporter.addr;
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).await.unwrap();
        assert!(text.contains("tidebench_elapsed_seconds"), "{text}");
        assert!(
            text.contains("# TYPE tidebench_wait_samples_total counter"),
            "{text}"
        );
        exporter.stop();
    }

    #[test]
    fn wait_samples_are_counters_by_group_and_class() {
        let mut counts = BTreeMap::new();
        counts.insert(("a".to_string(), "Lock".to_string()), 7);
        let mut out = String::new();
        wait_samples(&mut out, &counts);
        assert!(
            out.contains("tidebench_wait_samples_total{group=\"a\",class=\"Lock\"} 7\n"),
            "{out}"
        );
    }
}
