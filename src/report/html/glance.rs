//! The "Run at a glance" section: the run's facts in one table (totals, headline, latency,
//! host and servers), the per-role table, and the phases.

use super::roles;
use crate::config::{RunPlan, TargetSpec};
use crate::report::load::RunData;
use crate::report::system_view as sys;
use crate::results::{HostFacts, Per, RuntimeInfo, ServerFacts, Summary, TxnTypeFacts};

use super::markup::{ms, note_to, table_to};

/// PostgreSQL settings shown beside each server's version: the ones that most shape a result.
const SETTINGS: [&str; 10] = [
    "shared_buffers",
    "max_connections",
    "work_mem",
    "max_parallel_workers_per_gather",
    "effective_cache_size",
    "max_wal_size",
    "checkpoint_timeout",
    "synchronous_commit",
    "fsync",
    "huge_pages",
];

/// Servers named in one row of the glance table before the rest are counted ("and 9 more").
const NAMED_SERVERS: usize = 4;

/// What ran, in a word, for the page's title: the preset or run file's name when
/// `runtime.toml` says, else the summary's workload ("elastic" for several groups).
pub(super) fn run_title(d: &RunData) -> String {
    d.runtime
        .as_ref()
        .map_or_else(|| d.summary.workload.clone(), |rt| rt.plan.title())
}

/// Writes the section: the facts table, the per-role table if any, then the phases table.
pub(super) fn glance(d: &RunData, p: &mut String) {
    let s = &d.summary;
    let mut rows = summary_rows(s);
    if let Some(rt) = &d.runtime {
        what_ran(&mut rows, &rt.plan);
        if let Some(row) = isolation_row(s, rt) {
            replace_row(&mut rows, row);
        }
        rows.push(host_row(&rt.host));
        rows.extend(server_rows(&rt.servers, &rt.plan));
    }
    if let Some(cost) = sys::sampling_cost(d) {
        rows.push(vec!["sampling cost".into(), cost]);
    }
    table_to(p, &["", ""], &rows);
    driver_hosts_to(p, s);
    if let Some(table) = roles::table(&s.by_role) {
        p.push_str(&table);
    }
    phases_to(p, s);
}

/// A merged run's shards (`tidebench merge`): a row per driver host, so one that ran short of
/// CPU or lagged its schedule shows.
fn driver_hosts_to(p: &mut String, s: &Summary) {
    let Some(shard) = s.shard.as_ref().filter(|f| !f.merged.is_empty()) else {
        return;
    };
    p.push_str("<h3>Driver hosts</h3>\n");
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    let rows: Vec<Vec<String>> = shard
        .merged
        .iter()
        .map(|m| {
            vec![
                format!("{}/{}", m.index, shard.count),
                m.host.clone(),
                m.committed.to_string(),
                format!("{:.1}", m.tps),
                opt(m.host_cpu_pct, 1),
                opt(m.lag_p95_ms, 3),
                format!("{:.1}", m.max_clock_offset_ms),
            ]
        })
        .collect();
    table_to(
        p,
        &[
            "shard",
            "host",
            "committed",
            "tps",
            "host CPU %",
            "driver lag p95 ms",
            "clock offset ms",
        ],
        &rows,
    );
    note_to(
        p,
        &format!(
            "Run {} in {} shards on one start instant, merged: totals and percentiles are over every shard's transactions. Host CPU is the mean of the host's user and system time over its run; lag is behind a --rate schedule; the clock offset is the largest against the target servers.",
            shard.run_id, shard.count
        ),
    );
}

/// The facts table's rows from the summary: what ran, for how long, counts, rates, latency.
fn summary_rows(s: &Summary) -> Vec<Vec<String>> {
    let lat = s.totals.latency_ms.as_ref();
    let mut rows = vec![
        vec!["workload".into(), s.workload.clone()],
        vec![
            "complete".into(),
            match (s.complete, &s.failure) {
                (true, _) => "yes".into(),
                (false, Some(why)) => format!("no: {why}"),
                (false, None) => "no: interrupted or a target failed".into(),
            },
        ],
        vec!["started (UTC)".into(), s.started_at.clone()],
        vec![
            "measured / elapsed".into(),
            format!("{:.1} s / {:.1} s", s.duration_s, s.elapsed_s),
        ],
        vec![
            "groups / targets".into(),
            format!("{} / {}", s.groups.len(), s.target_names.len()),
        ],
        vec![
            "transactions".into(),
            format!(
                "{} committed, {} expected rollbacks, {} failed, {} retries",
                s.totals.committed, s.totals.expected_rollback, s.totals.failed, s.totals.retried
            ),
        ],
        vec!["throughput".into(), format!("{:.1} tps", s.totals.tps)],
    ];
    if let Some(h) = &s.headline {
        // The workload's headline (TPC-C's NOTPM, tpce's tpsV), and the isolation level it
        // was measured at.
        let total: f64 = s.tpm.values().sum();
        rows.push(match h.per {
            Per::Minute => vec![
                format!("{} / total TPM", h.label),
                format!("{:.1} / {total:.1}", h.per_minute),
            ],
            Per::Second => vec![
                format!("{} / total TPS", h.label),
                format!("{:.2} / {:.2}", h.value(), total / 60.0),
            ],
        });
        rows.push(vec![
            "isolation".into(),
            s.isolation
                .as_ref()
                .map_or("not recorded".into(), |i| i.describe()),
        ]);
    }
    rows.push(vec![
        "latency p50 / p95 / p99".into(),
        format!(
            "{} / {} / {} ms",
            ms(lat.map(|l| l.p50)),
            ms(lat.map(|l| l.p95)),
            ms(lat.map(|l| l.p99))
        ),
    ]);
    rows
}

/// The "workload" row names the groups' workloads (not "elastic"), and a "run" row says what
/// ran: the preset or the run file.
fn what_ran(rows: &mut Vec<Vec<String>>, plan: &RunPlan) {
    let mut workloads: Vec<&str> = Vec::new();
    for g in &plan.groups {
        if !workloads.contains(&g.workload.as_str()) {
            workloads.push(g.workload.as_str());
        }
    }
    if !workloads.is_empty() {
        replace_row(rows, vec!["workload".into(), workloads.join(", ")]);
    }
    let ran = match (&plan.preset, &plan.run_file) {
        (Some(preset), _) => format!("preset {preset}"),
        (None, Some(file)) => format!("run file {}", file.display()),
        (None, None) => return,
    };
    if let Some(row) = rows.iter_mut().find(|r| r[0] == "workload") {
        row[1] = format!("{} ({ran})", row[1]);
    }
}

/// Puts `row` in place of the row with the same heading, or at the end.
fn replace_row(rows: &mut Vec<Vec<String>>, row: Vec<String>) {
    match rows.iter_mut().find(|r| r[0] == row[0]) {
        Some(r) => *r = row,
        None => rows.push(row),
    }
}

/// The isolation row per transaction type where the workload fixes levels per type (tpce's
/// §3.1: repeatable read for Trade-Order, serializable for Trade-Result, ...): the types at
/// each level, the rest at the groups' level. `None` where no type has its own level.
fn isolation_row(s: &Summary, rt: &RuntimeInfo) -> Option<Vec<String>> {
    let fixed: Vec<&TxnTypeFacts> = rt
        .txn_types
        .iter()
        .filter(|t| t.isolation.is_some())
        .collect();
    if fixed.is_empty() {
        return None;
    }
    let mut levels: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &fixed {
        let level = t.isolation.as_deref().unwrap_or_default();
        match levels.iter_mut().find(|(l, _)| *l == level) {
            Some((_, types)) => types.push(&t.name),
            None => levels.push((level, vec![&t.name])),
        }
    }
    let mut parts: Vec<String> = levels
        .iter()
        .map(|(level, types)| format!("{level}: {}", types.join(", ")))
        .collect();
    if fixed.len() < rt.txn_types.len() {
        let rest = s
            .isolation
            .as_ref()
            .map_or("not recorded".into(), |i| i.describe());
        parts.push(format!("{rest}: the other types"));
    }
    Some(vec!["isolation".into(), parts.join("; ")])
}

/// The "host" row: the host facts that were recorded, comma-separated.
fn host_row(h: &HostFacts) -> Vec<String> {
    let facts = [
        h.hostname.clone(),
        h.cpu_model.clone(),
        h.cpus_available.map(|c| format!("{c} CPUs available")),
        h.memory_total_bytes
            .map(|b| format!("{} RAM", crate::config::size::gib(b))),
        h.os.clone(),
        h.kernel.clone().map(|k| format!("kernel {k}")),
        h.hypervisor
            .filter(|v| *v)
            .map(|_| "under a hypervisor".into()),
        h.container.clone().map(|c| format!("in {c}")),
    ];
    let facts: Vec<String> = facts.into_iter().flatten().collect();
    vec!["host".into(), facts.join(", ")]
}

/// One row per distinct server version and settings, in first-seen order, headed by the
/// servers that reported it and the groups and roles they serve ("instance tpcv-a1-oltp (A
/// oltp)"), so eight alike "PostgreSQL 15" rows tell their servers apart.
fn server_rows(servers: &[ServerFacts], plan: &RunPlan) -> Vec<Vec<String>> {
    // Targets on one instance (or on alike instances) report the same line: show it once.
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for server in servers {
        let settings: Vec<String> = SETTINGS
            .iter()
            .filter_map(|k| server.settings.get(*k).map(|v| format!("{k}={v}")))
            .collect();
        let line = format!(
            "PostgreSQL {}: {}",
            server.server_version,
            settings.join(", ")
        );
        let name = server_name(&server.label, plan);
        match seen.iter_mut().find(|(l, _)| *l == line) {
            Some((_, names)) => names.push(name),
            None => seen.push((line, vec![name])),
        }
    }
    seen.into_iter()
        .map(|(line, names)| vec![named(&names), line])
        .collect()
}

/// A server by its first target's label (managed instances by name: "instance vm1"), with
/// the groups and roles of every target of the plan on it: "instance vm1 (A oltp, B oltp)".
fn server_name(label: &str, plan: &RunPlan) -> String {
    let instance = label
        .strip_prefix("instance:")
        .map(|rest| rest.split('/').next().unwrap_or(rest));
    let mut uses: Vec<String> = Vec::new();
    for g in &plan.groups {
        for set in &g.sets {
            for (spec, roles) in set.distinct_targets() {
                let on_it = match (instance, spec) {
                    (Some(i), TargetSpec::Instance { name, .. }) => name == i,
                    _ => spec.redacted() == label,
                };
                let used = format!("{} {}", g.name, roles.join("+"));
                if on_it && !uses.contains(&used) {
                    uses.push(used);
                }
            }
        }
    }
    let server = instance.map_or_else(|| label.to_string(), |i| format!("instance {i}"));
    if uses.is_empty() {
        server
    } else {
        format!("{server} ({})", uses.join(", "))
    }
}

/// The first few names, then how many more.
fn named(names: &[String]) -> String {
    match names.len() {
        n if n <= NAMED_SERVERS => names.join("; "),
        n => format!(
            "{}; and {} more",
            names[..NAMED_SERVERS].join("; "),
            n - NAMED_SERVERS
        ),
    }
}

/// The phases table: each iteration's phase, when it started, how long, measured or not, tps.
fn phases_to(p: &mut String, s: &Summary) {
    let phases: Vec<Vec<String>> = s
        .phases
        .iter()
        .map(|ph| {
            vec![
                format!("i{} {}", ph.iteration, ph.phase),
                format!("{:.1}", ph.start_s),
                format!("{:.1}", ph.duration_s),
                if ph.measured { "yes" } else { "no" }.into(),
                format!("{:.1}", ph.stats.tps),
            ]
        })
        .collect();
    table_to(
        p,
        &["phase", "start (s)", "duration (s)", "measured", "tps"],
        &phases,
    );
}

#[cfg(test)]
mod tests;
