//! A generated results dir of a long, wide run, for the reporter's own benchmark
//! (`tidebench report --synthetic DIR`, hidden; `make bench` calls it): 2 hours in 30 s
//! intervals, 40 groups of one target each on 40 managed instances, 10 transaction types,
//! 4 phases whose shares swing between the two halves of the groups, and a `system.csv`
//! sampled every second (the default `--sample`). It goes through the real writers (`ResultsWriter`, `Summary::build`),
//! so its files are exactly what a run writes. Not a benchmark result: nothing is measured.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{HostFacts, ResultsWriter, RunFacts, RuntimeInfo, ServerFacts, Summary, SYSTEM_FILE};
use crate::config::{self, groups::Source, timeline, RawRun};
use crate::metrics::{ErrorClass, KeySpace, Outcome, Recorder, TargetKey};

/// The shape of a generated run.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub groups: usize,
    pub txn_types: usize,
    pub phases: usize,
    pub phase_secs: u64,
    pub interval_secs: u64,
    /// Latency samples recorded per row (their count scales the row's transactions).
    pub samples_per_row: u32,
    pub sample_secs: u64,
}

impl Shape {
    /// 2 hours, 40 targets, 10 types: 240 intervals × 400 rows.
    pub const LARGE: Shape = Shape {
        groups: 40,
        txn_types: 10,
        phases: 4,
        phase_secs: 1800,
        interval_secs: 30,
        samples_per_row: 20,
        sample_secs: 1,
    };
}

fn plan_toml(shape: &Shape) -> String {
    let mut t = format!(
        "clients = {}\nseed = 1\ninterval = \"{}s\"\nprogress = \"0\"\npoll = \"0\"\n",
        shape.groups * 2,
        shape.interval_secs
    );
    for g in 0..shape.groups {
        let _ = write!(
            t,
            "[[group]]\nname = \"G{g:02}\"\nworkload = \"tpcb\"\nscale = 1\ninstance = \"vm{g:02}\"\n"
        );
    }
    let half = shape.groups / 2;
    for ph in 0..shape.phases {
        let _ = write!(
            t,
            "[[phase]]\nname = \"p{}\"\nduration = \"{}s\"\nshares = {{ ",
            ph + 1,
            shape.phase_secs
        );
        // Whole-number shares summing to 100: the favoured half gets 3 parts, the other 2.
        let shares: Vec<String> = (0..shape.groups)
            .map(|g| {
                let favoured = (g < half) == (ph % 2 == 0);
                let share = 100.0 * if favoured { 3.0 } else { 2.0 } / (5.0 * half as f64);
                format!("G{g:02} = {share}")
            })
            .collect();
        let _ = writeln!(t, "{} }}", shares.join(", "));
    }
    t
}

/// Writes the generated run to `dir` (which must not exist); returns the final dir.
/// `catalog` names the workloads the generated plan may use.
pub fn generate(
    dir: &Path,
    shape: &Shape,
    catalog: &dyn config::Catalog,
) -> Result<PathBuf, String> {
    let text = plan_toml(shape);
    let raw: RawRun = config::parse_toml("synthetic", &text).map_err(|e| e.to_string())?;
    let src = Source {
        file: "synthetic",
        text: &text,
    };
    let plan = config::validate_run(&src, raw, 2, 1, catalog).map_err(|e| e.to_string())?;
    let segments = timeline::segments(&plan);
    let keys = KeySpace {
        segments: segments.clone(),
        targets: (0..shape.groups)
            .map(|g| TargetKey {
                label: format!("instance:vm{g:02}/g{g:02}_1"),
                group: g,
                set: "1".into(),
            })
            .collect(),
        groups: plan.groups.iter().map(|g| g.name.clone()).collect(),
        txn_types: (0..shape.txn_types).map(|t| format!("txn{t}")).collect(),
        txn_roles: vec!["oltp".to_string(); shape.txn_types],
        txn_emulated: Vec::new(),
    };
    let started_at = SystemTime::now();
    let mut writer = ResultsWriter::create(dir, started_at).map_err(|e| e.to_string())?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut total = Recorder::new(keys.len());
    let mut rec = Recorder::new(keys.len());
    let end = plan.total_duration();
    let step = Duration::from_secs(shape.interval_secs);
    let mut at = Duration::ZERO;
    while at < end {
        rec.clear();
        for (s, seg) in segments.iter().enumerate() {
            if seg.end <= at || seg.start >= at + step {
                continue;
            }
            let shares = &plan.phases[seg.phase].groups;
            for (t, target) in keys.targets.iter().enumerate() {
                let share = shares.get(target.group).map_or(1.0, |g| g.share);
                for x in 0..shape.txn_types {
                    let key = keys.key(s, t, x);
                    // Each sample stands for `share` transactions' worth of latency.
                    let n = (f64::from(shape.samples_per_row) * share / 2.5) as u32;
                    let base = 500 + 300 * x as u64 + 40 * t as u64;
                    for _ in 0..n.max(1) {
                        let tail = if rng.gen_bool(0.02) { 20 } else { 1 };
                        let us = base * tail + rng.gen_range(0..base);
                        rec.record(key, Outcome::Committed, us, None, 0);
                    }
                    if rng.gen_bool(0.05) {
                        rec.record(key, Outcome::Failed(ErrorClass::Serialization), 0, None, 1);
                    }
                }
            }
        }
        writer
            .write_interval(at, step.min(end - at), &keys, &rec)
            .map_err(|e| e.to_string())?;
        total.merge(&rec);
        at += step;
    }
    let facts = RunFacts {
        workload: "synthetic".into(),
        started_at,
        elapsed: end,
        complete: true,
        rate_limited: false,
        type_rules: Vec::new(),
        headline: None,
        ratio_rules: Vec::new(),
    };
    let summary = Summary::build(&facts, &plan, &keys, &total, Vec::new());
    let host = HostFacts {
        hostname: Some("synthetic".into()),
        cpus_available: Some(64),
        ..HostFacts::default()
    };
    let servers = keys
        .targets
        .iter()
        .map(|t| ServerFacts {
            label: t.label.clone(),
            server_version: "15.8 (synthetic)".into(),
            settings: [("shared_buffers".to_string(), "4GB".to_string())].into(),
            address: None,
            vm: None,
        })
        .collect();
    let runtime = RuntimeInfo::new(plan, host, servers);
    let staging = writer.staging_path().to_path_buf();
    write_system(&staging.join(SYSTEM_FILE), shape, end, &mut rng)?;
    writer.finish(&runtime, &summary).map_err(|e| e.to_string())
}

/// `system.csv` as the samplers write it: host, per instance, per device, per server.
fn write_system(
    path: &Path,
    shape: &Shape,
    end: Duration,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<(), String> {
    let mut out = String::from("t_s,source,metric,value\n");
    let mut cpu_seconds = vec![0.0f64; shape.groups];
    let mut counters = vec![0.0f64; shape.groups];
    // The tidebench process at 40 % of a core; drawn from no random number, so the other
    // series are the same as before it was written.
    let mut driver_seconds = 0.0f64;
    let mut t = 0;
    while t <= end.as_secs() {
        for (m, v) in [
            ("cpu_user_pct", 60.0),
            ("cpu_system_pct", 15.0),
            ("cpu_iowait_pct", 3.0),
            ("cpu_steal_pct", 1.0),
            ("mem_used_bytes", 48e9),
            ("mem_cached_bytes", 12e9),
        ] {
            let _ = writeln!(out, "{t},host,{m},{:.1}", v * rng.gen_range(0.9..1.1));
        }
        for (i, secs) in cpu_seconds.iter_mut().enumerate() {
            let pct = 100.0 + i as f64 + rng.gen_range(0.0..20.0);
            *secs += pct / 100.0 * shape.sample_secs as f64;
            let _ = writeln!(out, "{t},instance:vm{i:02},cpu_seconds,{secs:.2}");
            let _ = writeln!(out, "{t},instance:vm{i:02},cpu_pct,{pct:.1}");
            let _ = writeln!(out, "{t},instance:vm{i:02},rss_bytes,{}", 900_000_000 + i);
            let _ = writeln!(out, "{t},instance:vm{i:02},mem_usage_bytes,{}", 1 << 30);
            let _ = writeln!(out, "{t},instance:vm{i:02},mem_cache_bytes,{}", 1 << 29);
        }
        for dev in ["sda", "nvme0n1"] {
            for m in ["read_bytes_per_s", "write_bytes_per_s"] {
                let v: f64 = rng.gen_range(1e6..5e7);
                let _ = writeln!(out, "{t},device:{dev},{m},{v:.0}");
            }
        }
        for (i, c) in counters.iter_mut().enumerate() {
            *c += 10.0;
            let label = format!("server:instance:vm{i:02}");
            for m in super::system::SERVER_COUNTERS {
                let _ = writeln!(out, "{t},{label},{m},{:.0}", *c * (1 + m.len()) as f64);
            }
        }
        let _ = writeln!(out, "{t},sampler,round_ms,{:.2}", rng.gen_range(2.0..6.0));
        let _ = writeln!(out, "{t},sampler,cpu_ms,{:.2}", rng.gen_range(1.0..3.0));
        let _ = writeln!(out, "{t},driver,cpu_seconds,{driver_seconds:.2}");
        driver_seconds += 0.4 * shape.sample_secs as f64;
        t += shape.sample_secs;
    }
    super::atomic::write(path, out.as_bytes()).map_err(|e| e.to_string())
}
