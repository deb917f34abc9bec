//! pgbench's transaction log (`-l`, issue 38): one text file per driver thread in the working
//! directory, named as pgbench 15 names them (`PREFIX.PID` for thread 0, `PREFIX.PID.TID` for
//! the others), with pgbench 15's lines, so the scripts people keep for pgbench's logs read
//! tidebench's.
//!
//! One line per transaction (`--sampling-rate`: a random share of them):
//! `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`,
//! time and lag in µs, the lag with a rate (-R) only, the retries when tries are not 1; a
//! failed transaction has `failed` in place of its time, as pgbench writes it (with
//! `--failures-detailed`, its kind: `serialization` or `deadlock`).
//!
//! With `--aggregate-interval N`, one line per N seconds instead, pgbench 15's fixed columns:
//! `interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency sum_lag
//! sum_lag_2 min_lag max_lag skipped retried retries serialization_failures deadlock_failures`
//! (lag columns 0 without -R, retries 0 when tries are 1, the failures by kind 0 without
//! `--failures-detailed`, as pgbench's).
//!
//! Written on the driver thread as transactions end, into a buffer flushed once a tick: no
//! lock, no allocation per line. A write error is kept and said once at the end.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::config::TxnLogPlan;
use crate::metrics::ErrorClass;
use crate::prng::{splitmix, PgPrng};

/// One thread's log as the driver opens it: the plan, the columns the run calls for, and the
/// run's start as Unix time in µs.
#[derive(Debug, Clone)]
pub struct TxnLogSpec {
    pub plan: TxnLogPlan,
    /// A rate (-R) is set: lines carry the schedule lag.
    pub lag: bool,
    /// Tries are not 1: lines carry the retries.
    pub retries: bool,
    pub start_unix_us: u64,
    pub seed: u64,
}

impl TxnLogSpec {
    /// The same log for a run that started at `start_unix_us`.
    pub fn starting(self, start_unix_us: u64) -> TxnLogSpec {
        TxnLogSpec {
            start_unix_us,
            ..self
        }
    }

    /// pgbench's file name for driver thread `thread` of process `pid`, in the working dir.
    pub fn path(&self, pid: u32, thread: usize) -> PathBuf {
        if thread == 0 {
            PathBuf::from(format!("{}.{pid}", self.plan.prefix))
        } else {
            PathBuf::from(format!("{}.{pid}.{thread}", self.plan.prefix))
        }
    }
}

/// One transaction as the log sees it.
#[derive(Debug, Clone, Copy)]
pub struct TxnEntry {
    pub client: u32,
    /// The client's transactions so far, this one included.
    pub count: u64,
    pub latency_us: u64,
    pub lag_us: u64,
    /// The group and the type's index in its workload.
    pub group: usize,
    pub script: usize,
    /// µs since the run's start when it ended.
    pub end_us: u64,
    pub retries: u32,
    /// Failed, and why.
    pub failed: Option<ErrorClass>,
    /// Not run: already later than the latency limit when due (pgbench's `skipped`).
    pub skipped: bool,
}

/// One aggregation interval's sums, in µs as pgbench's.
#[derive(Debug, Clone, Copy, Default)]
struct Agg {
    start_us: u64,
    cnt: u64,
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
    lag_sum: f64,
    lag_sum2: f64,
    lag_min: f64,
    lag_max: f64,
    skipped: u64,
    retried: u64,
    retries: u64,
    serialization: u64,
    deadlock: u64,
}

impl Agg {
    fn at(start_us: u64) -> Agg {
        Agg {
            start_us,
            ..Agg::default()
        }
    }

    fn add(&mut self, e: &TxnEntry) {
        if e.skipped {
            self.skipped += 1;
            return;
        }
        if e.retries > 0 {
            self.retried += 1;
            self.retries += u64::from(e.retries);
        }
        match e.failed {
            Some(ErrorClass::Serialization) => self.serialization += 1,
            Some(ErrorClass::Deadlock) => self.deadlock += 1,
            _ => {}
        }
        if e.failed.is_some() {
            return;
        }
        let (lat, lag) = (e.latency_us as f64, e.lag_us as f64);
        if self.cnt == 0 {
            (self.min, self.max, self.lag_min, self.lag_max) = (lat, lat, lag, lag);
        }
        self.cnt += 1;
        self.sum += lat;
        self.sum2 += lat * lat;
        self.min = self.min.min(lat);
        self.max = self.max.max(lat);
        self.lag_sum += lag;
        self.lag_sum2 += lag * lag;
        self.lag_min = self.lag_min.min(lag);
        self.lag_max = self.lag_max.max(lag);
    }
}

/// A driver thread's transaction log.
pub struct TxnLog {
    out: BufWriter<File>,
    line: String,
    spec: TxnLogSpec,
    /// Per group, per transaction type: its `script_no`.
    script_of: Vec<Vec<u32>>,
    sample: PgPrng,
    agg: Option<Agg>,
    error: Option<io::Error>,
}

impl TxnLog {
    pub fn create(
        path: &Path,
        spec: TxnLogSpec,
        script_of: Vec<Vec<u32>>,
        thread: usize,
    ) -> io::Result<TxnLog> {
        let out = BufWriter::with_capacity(256 * 1024, File::create(path)?);
        let agg = spec.plan.aggregate_interval.map(|_| Agg::at(0));
        let sample = PgPrng::seeded(splitmix(spec.seed, thread as u64));
        Ok(TxnLog {
            out,
            line: String::with_capacity(128),
            spec,
            script_of,
            sample,
            agg,
            error: None,
        })
    }

    /// Logs one transaction (or, sampling, maybe not; aggregating, adds it to its interval).
    pub fn write(&mut self, e: &TxnEntry) {
        if self.error.is_some() {
            return;
        }
        if let Some(rate) = self.spec.plan.sampling_rate {
            if self.sample.double() > rate {
                return;
            }
        }
        self.line.clear();
        if self.agg.is_some() {
            self.aggregate(e);
        } else {
            self.format(e);
        }
        if !self.line.is_empty() {
            if let Err(err) = self.out.write_all(self.line.as_bytes()) {
                self.error = Some(err);
            }
        }
    }

    fn format(&mut self, e: &TxnEntry) {
        let end = self.spec.start_unix_us + e.end_us;
        let script = self
            .script_of
            .get(e.group)
            .and_then(|g| g.get(e.script))
            .map_or(e.script as u64, |&n| u64::from(n));
        let l = &mut self.line;
        let _ = write!(l, "{} {} ", e.client, e.count);
        if e.skipped {
            l.push_str("skipped");
        } else if let Some(class) = e.failed {
            l.push_str(match class {
                ErrorClass::Serialization if self.spec.plan.failures_detailed => "serialization",
                ErrorClass::Deadlock if self.spec.plan.failures_detailed => "deadlock",
                _ => "failed",
            });
        } else {
            let _ = write!(l, "{}", e.latency_us);
        }
        let _ = write!(l, " {script} {} {}", end / 1_000_000, end % 1_000_000);
        if self.spec.lag {
            let _ = write!(l, " {}", e.lag_us);
        }
        if self.spec.retries {
            let _ = write!(l, " {}", e.retries);
        }
        l.push('\n');
    }

    /// Closes the intervals that ended before this transaction, then adds it.
    fn aggregate(&mut self, e: &TxnEntry) {
        let every = u64::from(self.spec.plan.aggregate_interval.unwrap_or(1)) * 1_000_000;
        let Some(mut agg) = self.agg.take() else {
            return;
        };
        while agg.start_us + every <= e.end_us {
            self.agg_line(&agg);
            agg = Agg::at(agg.start_us + every);
        }
        agg.add(e);
        self.agg = Some(agg);
    }

    fn agg_line(&mut self, a: &Agg) {
        let start = (self.spec.start_unix_us + a.start_us) / 1_000_000;
        let (lag_sum, lag_sum2, lag_min, lag_max) = if self.spec.lag {
            (a.lag_sum, a.lag_sum2, a.lag_min, a.lag_max)
        } else {
            (0.0, 0.0, 0.0, 0.0)
        };
        let (retried, retries) = if self.spec.retries {
            (a.retried, a.retries)
        } else {
            (0, 0)
        };
        let (serialization, deadlock) = if self.spec.plan.failures_detailed {
            (a.serialization, a.deadlock)
        } else {
            (0, 0)
        };
        let _ = writeln!(
            self.line,
            "{start} {} {:.0} {:.0} {:.0} {:.0} {lag_sum:.0} {lag_sum2:.0} {lag_min:.0} \
             {lag_max:.0} {} {retried} {retries} {serialization} {deadlock}",
            a.cnt, a.sum, a.sum2, a.min, a.max, a.skipped
        );
    }

    /// Flushes what is buffered; returns the first error seen so far, if any.
    pub fn flush(&mut self) -> Option<String> {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        self.error.as_ref().map(|e| e.to_string())
    }

    /// At the thread's end: the interval in progress (pgbench writes it too), then a flush.
    pub fn finish(&mut self) -> Option<String> {
        if let Some(agg) = self.agg.take() {
            self.line.clear();
            self.agg_line(&agg);
            if self.error.is_none() {
                if let Err(e) = self.out.write_all(self.line.as_bytes()) {
                    self.error = Some(e);
                }
            }
        }
        self.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(sampling: Option<f64>, aggregate: Option<u32>, lag: bool, retries: bool) -> TxnLogSpec {
        TxnLogSpec {
            plan: TxnLogPlan {
                prefix: "lg".into(),
                sampling_rate: sampling,
                aggregate_interval: aggregate,
                scripts: vec!["b".into(), "a".into()],
                failures_detailed: false,
            },
            lag,
            retries,
            start_unix_us: 1_700_000_000_500_000,
            seed: 7,
        }
    }

    fn entry(client: u32, count: u64, end_us: u64, failed: bool) -> TxnEntry {
        TxnEntry {
            client,
            count,
            latency_us: 912,
            lag_us: 82,
            group: 0,
            script: 1,
            end_us,
            retries: 1,
            failed: failed.then_some(ErrorClass::Serialization),
            skipped: false,
        }
    }

    fn written(spec: TxnLogSpec, entries: &[TxnEntry]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let script_of = spec.plan.script_numbers(["a", "b"].into_iter());
        let mut log = TxnLog::create(&path, spec, vec![script_of], 0).unwrap();
        for e in entries {
            log.write(e);
        }
        assert_eq!(log.finish(), None);
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn lines_have_pgbench_s_columns() {
        let text = written(
            spec(None, None, false, false),
            &[entry(0, 1, 10, false), entry(1, 1, 600_000, true)],
        );
        assert_eq!(
            text,
            "0 1 912 0 1700000000 500010\n1 1 failed 0 1700000001 100000\n"
        );
        let text = written(spec(None, None, true, true), &[entry(2, 3, 10, false)]);
        assert_eq!(text, "2 3 912 0 1700000000 500010 82 1\n");
    }

    #[test]
    fn file_names_are_pgbench_s() {
        let s = spec(None, None, false, false);
        assert_eq!(s.path(42, 0), PathBuf::from("lg.42"));
        assert_eq!(s.path(42, 1), PathBuf::from("lg.42.1"));
    }

    #[test]
    fn sampling_keeps_about_the_rate() {
        let all: Vec<TxnEntry> = (0..2000).map(|i| entry(0, i, i, false)).collect();
        let n = written(spec(Some(0.25), None, false, false), &all)
            .lines()
            .count();
        assert!((400..600).contains(&n), "{n}");
    }

    #[test]
    fn aggregation_writes_an_interval_per_period_and_the_last_one() {
        let text = written(
            spec(None, Some(1), false, false),
            &[
                entry(0, 1, 10, false),
                entry(0, 2, 20, false),
                entry(0, 3, 2_500_000, false),
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(
            lines[0],
            "1700000000 2 1824 1663488 912 912 0 0 0 0 0 0 0 0 0"
        );
        assert!(lines[1].starts_with("1700000001 0 0 0 0 0 "), "{text}");
        assert!(lines[2].starts_with("1700000002 1 912 "), "{text}");
        assert!(lines.iter().all(|l| l.split(' ').count() == 15));
    }

    #[test]
    fn failures_detailed_names_the_kind_and_counts_it() {
        let mut detailed = spec(None, None, false, false);
        detailed.plan.failures_detailed = true;
        let deadlock = TxnEntry {
            failed: Some(ErrorClass::Deadlock),
            ..entry(1, 2, 20, true)
        };
        let text = written(detailed.clone(), &[entry(1, 1, 10, true), deadlock]);
        assert_eq!(
            text,
            "1 1 serialization 0 1700000000 500010\n1 2 deadlock 0 1700000000 500020\n"
        );
        detailed.plan.aggregate_interval = Some(1);
        let text = written(detailed, &[entry(1, 1, 10, true), deadlock]);
        assert_eq!(text, "1700000000 0 0 0 0 0 0 0 0 0 0 0 0 1 1\n");
    }
}
