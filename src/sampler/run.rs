//! The sampling loop: every `--sample` period, on the main tokio runtime (never on a driver
//! thread), read the host, the managed instances, the disks and the servers' counters, and
//! append one round to `system.csv`. The managed instances' incidents (OOM kills, crash
//! restarts: see `incidents`) are watched in the same round, sent as events at once and kept
//! for `summary.json`.
//!
//! Its own cost is recorded with every round (`sampler` rows): the round's wall time, the CPU
//! time tidebench spent reading `/proc` and formatting (measured with the thread's CPU clock
//! around the synchronous part only: across an await, other tasks of the runtime would be
//! counted too), and the wall time of the PostgreSQL queries.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::event::{Event, Incident, Sink};
use crate::instance::Instance;
use crate::results::runtime::InstanceDevices;
use crate::results::system::SystemWriter;
use crate::target::ResolvedTarget;

use super::cgroup::{InstanceProbe, InstanceReader};
use super::disk::{self, DiskReader};
use super::host_stats::HostReader;
use super::noise::NoiseProbe;
use super::pg_counters::{self, ServerProbe};
use super::pooler::PoolerProbe;

/// One round's values: (source, metric, value), in the order they were read.
#[derive(Debug, Clone, Default)]
pub struct Values {
    pub rows: Vec<(String, &'static str, f64)>,
}

impl Values {
    pub fn push(&mut self, source: &str, metric: &'static str, value: f64) {
        self.rows.push((source.to_string(), metric, value));
    }

    /// The first value of `metric` from `source`.
    pub fn get(&self, source: &str, metric: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|(s, m, _)| s == source && *m == metric)
            .map(|r| r.2)
    }
}

/// The latest round, shared with live readers (the Prometheus endpoint).
#[derive(Clone, Default)]
pub struct LatestSamples(Arc<Mutex<Values>>);

impl LatestSamples {
    pub fn get(&self) -> Values {
        match self.0.lock() {
            Ok(v) => v.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set(&self, v: Values) {
        match self.0.lock() {
            Ok(mut g) => *g = v,
            Err(poisoned) => *poisoned.into_inner() = v,
        }
    }
}

/// Everything to sample, opened before the run starts.
pub struct Sampler {
    every: Duration,
    host: HostReader,
    instances: InstanceReader,
    disks: DiskReader,
    servers: Vec<ServerProbe>,
    /// The consoles of the poolers in front of servers, and whether the last read failed.
    poolers: Vec<(PoolerProbe, bool)>,
    /// The groups of the run's noise events.
    noise: Vec<NoiseProbe>,
    devices: Vec<InstanceDevices>,
}

/// What sampling cost, for the end of the run.
#[derive(Debug, Clone, Default)]
pub struct SamplerReport {
    pub rounds: u64,
    /// CPU time of the synchronous part of all rounds.
    pub cpu: Duration,
    /// Longest round (wall time).
    pub max_round: Duration,
    pub warnings: Vec<String>,
    /// What happened to the managed instances, in time order.
    pub incidents: Vec<Incident>,
}

impl Sampler {
    /// Opens the servers' stats sessions and finds the instances' devices. `instances` are
    /// the managed instances behind the targets (none for external targets).
    pub async fn open(
        every: Duration,
        targets: &[ResolvedTarget],
        instances: &[Instance],
    ) -> Result<Sampler, String> {
        let servers = pg_counters::open(targets).await?;
        let devices: Vec<InstanceDevices> = instances
            .iter()
            .map(|i| InstanceDevices {
                instance: i.name.clone(),
                data_device: disk::device_of(&i.data_dir()),
                wal_device: disk::device_of(&i.data_dir().join("pg_wal")),
            })
            .collect();
        let extra: Vec<String> = devices
            .iter()
            .flat_map(|d| [d.data_device.clone(), d.wal_device.clone()])
            .flatten()
            .collect();
        Ok(Sampler {
            every,
            host: HostReader::default(),
            instances: InstanceReader::new(InstanceProbe::for_instances(instances)),
            disks: DiskReader::new(&extra),
            servers,
            poolers: Vec::new(),
            noise: Vec::new(),
            devices,
        })
    }

    /// Also reads the counters of the poolers in front of `pooled` (targets the pooler probe
    /// found sharing server sessions). Returns what it could not open, to be said: the run
    /// goes on without those counters.
    pub async fn add_poolers(&mut self, pooled: &[&ResolvedTarget]) -> Vec<String> {
        let mut unread = Vec::new();
        for t in pooled {
            let source = format!("pooler:{}", t.label);
            if self.poolers.iter().any(|(p, _)| p.source == source) {
                continue;
            }
            match PoolerProbe::open(t).await {
                Ok(p) => self.poolers.push((p, false)),
                Err(e) => unread.push(format!(
                    "{}: the pooler's counters are not sampled: its admin console (database \
                     '{}') refused: {e}; to sample them, add the user to the pooler's \
                     stats_users",
                    t.label,
                    super::pooler::CONSOLE
                )),
            }
        }
        unread
    }

    /// Also reads the CPU of the groups of the noise events numbered `events` (from 1).
    pub fn add_noise(&mut self, events: &[usize]) {
        self.noise = NoiseProbe::for_events(events);
    }

    /// Which device holds each instance's data dir and WAL (for `runtime.toml`).
    pub fn devices(&self) -> &[InstanceDevices] {
        &self.devices
    }

    /// Creates `system.csv` in `dir` and starts sampling: a first round at once, then every
    /// period counted from `t0` (the run's start, the zero of `t_s`). A server that stops
    /// answering is a warning to `events` at once (and in the report at the end).
    pub fn start(
        self,
        dir: &Path,
        t0: Instant,
        latest: LatestSamples,
        events: Arc<dyn Sink>,
    ) -> Result<RunningSampler, String> {
        let writer = SystemWriter::create(dir).map_err(|e| e.to_string())?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(self.run(writer, t0, latest, stopped, events));
        Ok(RunningSampler { stop, task })
    }

    async fn run(
        mut self,
        mut writer: SystemWriter,
        t0: Instant,
        latest: LatestSamples,
        mut stopped: oneshot::Receiver<()>,
        events: Arc<dyn Sink>,
    ) -> SamplerReport {
        let mut report = SamplerReport::default();
        let mut ticker = tokio::time::interval_at(t0.into(), self.every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut last: Option<Instant> = None;
        let mut writing = true;
        let mut outages = vec![Outages::default(); self.servers.len()];
        loop {
            let stop = tokio::select! {
                _ = &mut stopped => true,
                _ = ticker.tick() => false,
            };
            // The last round is taken at the stop, so cumulative counters cover the whole run;
            // it usually comes a few ms after a regular round, and rates over such a sliver
            // (a few clock ticks of CPU, a handful of IOs) are noise, so it reports none.
            let rates = !stop || has_rate_window(last.map(|l| l.elapsed()), self.every);
            let values = self
                .round(t0, &mut last, rates, &mut report, &mut outages, &*events)
                .await;
            if writing {
                let at = last.map_or(Duration::ZERO, |l| l.saturating_duration_since(t0));
                let rows = values.rows.iter().map(|(s, m, v)| (s.as_str(), *m, *v));
                if let Err(e) = writer.write_round(at, rows) {
                    // Said at once (a full disk also fails the intervals, which stops the run);
                    // the samples still feed the live output and Prometheus.
                    let said = format!("sampling stopped writing system.csv: {e}");
                    events.send(Event::Warning(said.clone()));
                    report.warnings.push(said);
                    writing = false;
                }
            }
            latest.set(values);
            if stop {
                break;
            }
        }
        if let Err(e) = writer.finish() {
            report
                .warnings
                .push(format!("system.csv may be incomplete: {e}"));
        }
        for (s, o) in self.servers.iter().zip(&outages) {
            let unread = format!(
                "{} round(s) could not read it{}",
                o.failed_rounds,
                if o.down {
                    ", the last one included"
                } else {
                    ""
                }
            );
            if s.reconnects() > 0 {
                report.warnings.push(format!(
                    "sampler: the server closed the statistics session of {} {} time(s) \
                     (restarts) and it reconnected; {unread}",
                    s.source,
                    s.reconnects()
                ));
            } else if o.failed_rounds > 1 {
                report
                    .warnings
                    .push(format!("sampler: {}: {unread}", s.source));
            }
        }
        report
    }

    /// One round; without `rates` the readers report cumulative values and gauges only.
    async fn round(
        &mut self,
        t0: Instant,
        last: &mut Option<Instant>,
        rates: bool,
        report: &mut SamplerReport,
        outages: &mut [Outages],
        events: &dyn Sink,
    ) -> Values {
        let began = Instant::now();
        let dt_s = match last {
            Some(l) if rates => began.saturating_duration_since(*l).as_secs_f64(),
            _ => 0.0,
        };
        *last = Some(began);
        let cpu0 = thread_cpu();
        let mut v = Values::default();
        self.host.sample(dt_s, &mut v);
        // The round's time as system.csv writes it.
        let t_s = (began.saturating_duration_since(t0).as_secs_f64() * 1e3).round() / 1e3;
        let incidents = self.instances.sample(dt_s, t_s, &mut v);
        for n in &mut self.noise {
            n.sample(dt_s, &mut v);
        }
        self.disks.sample(dt_s, &mut v);
        let cpu = thread_cpu().saturating_sub(cpu0);
        if !incidents.is_empty() {
            events.send(Event::Incidents(incidents.clone()));
            report.incidents.extend(incidents);
        }
        let pg_began = Instant::now();
        for (s, o) in self.servers.iter_mut().zip(outages.iter_mut()) {
            let read = tokio::time::timeout(SERVER_WITHIN, s.sample(&mut v))
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "{} did not answer the statistics queries within {SERVER_WITHIN:?} \
                         (stopped or hung?)",
                        s.source
                    ))
                });
            match read {
                Ok(()) => o.down = false,
                // Warned once per outage, not once per second; the end report names the first
                // only and counts the rest (a server OOM-killed again and again restarts often).
                Err(e) => {
                    o.failed_rounds += 1;
                    if !o.down {
                        events.send(Event::Warning(format!(
                            "sampler: {e} (trying again every round)"
                        )));
                        if o.failed_rounds == 1 {
                            report.warnings.push(e);
                        }
                    }
                    o.down = true;
                }
            }
        }
        self.sample_poolers(&mut v, report, events).await;
        let pg = pg_began.elapsed();
        let round = began.elapsed();
        report.rounds += 1;
        report.cpu += cpu;
        report.max_round = report.max_round.max(round);
        v.push("sampler", "round_ms", ms(round));
        v.push("sampler", "cpu_ms", ms(cpu));
        v.push("sampler", "pg_ms", ms(pg));
        v.push("driver", "cpu_seconds", process_cpu().as_secs_f64());
        v
    }
}

impl Sampler {
    /// The poolers' rows of a round; a pooler that stops answering is warned once per outage.
    async fn sample_poolers(
        &mut self,
        v: &mut Values,
        report: &mut SamplerReport,
        events: &dyn Sink,
    ) {
        for (p, down) in self.poolers.iter_mut() {
            let read = tokio::time::timeout(SERVER_WITHIN, p.sample(v))
                .await
                .unwrap_or_else(|_| Err(format!("{} did not answer in time", p.source)));
            match read {
                Ok(()) => *down = false,
                Err(e) => {
                    if !*down {
                        events.send(Event::Warning(format!("sampler: {e}")));
                        report.warnings.push(e);
                    }
                    *down = true;
                }
            }
        }
    }
}

/// How long one server's statistics queries may take in a round: a stopped or hung server
/// must not hold the round (nor the run's end, which waits for the last round).
const SERVER_WITHIN: Duration = Duration::from_millis(500);

/// A server's stretches without counters during the run.
#[derive(Debug, Clone, Copy, Default)]
struct Outages {
    /// The last round could not read it.
    down: bool,
    failed_rounds: u32,
}

/// A round `since` the previous one is long enough to report rates over: at least half a
/// sampling period (regular rounds are a whole period apart).
fn has_rate_window(since: Option<Duration>, every: Duration) -> bool {
    since.is_some_and(|d| d >= every / 2)
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// User + system CPU time of the whole tidebench process so far (the clients' driver threads,
/// the runtime, the sampler): the client side's cost, which `compare` judges as `client_cpu`
/// (issue 55). Zero when the clock cannot be read.
fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// A sampler running beside the driver.
pub struct RunningSampler {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<SamplerReport>,
}

impl RunningSampler {
    /// Takes a last round, closes `system.csv` and reports what sampling cost.
    pub async fn stop(self) -> SamplerReport {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(r) => r,
            Err(e) => SamplerReport {
                warnings: vec![format!("the sampler stopped abnormally: {e}")],
                ..SamplerReport::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sliver_of_a_round_reports_no_rates() {
        let every = Duration::from_secs(1);
        assert!(has_rate_window(Some(Duration::from_millis(990)), every));
        assert!(has_rate_window(Some(Duration::from_millis(500)), every));
        assert!(!has_rate_window(Some(Duration::from_millis(39)), every));
        assert!(!has_rate_window(None, every));
    }

    #[tokio::test]
    async fn samples_the_host_into_system_csv() {
        let tmp = tempfile::tempdir().unwrap();
        let sampler = Sampler::open(Duration::from_millis(100), &[], &[])
            .await
            .unwrap();
        let latest = LatestSamples::default();
        let running = sampler
            .start(
                tmp.path(),
                Instant::now(),
                latest.clone(),
                crate::event::Recorded::new(),
            )
            .unwrap();
        tokio::time::sleep(Duration::from_millis(350)).await;
        let report = running.stop().await;
        assert!(report.rounds >= 3, "{report:?}");
        let rows = crate::results::system::read(tmp.path()).unwrap().unwrap();
        let has = |s: &str, m: &str| rows.iter().any(|r| r.source == s && r.metric == m);
        assert!(has("host", "mem_used_bytes") && has("sampler", "cpu_ms"));
        assert!(has("driver", "cpu_seconds"));
        if cfg!(target_os = "linux") {
            assert!(has("host", "cpu_user_pct"), "{rows:?}");
        }
        assert!(latest.get().get("sampler", "round_ms").is_some());
    }
}
