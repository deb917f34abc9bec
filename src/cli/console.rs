//! What the terminal shows after a run (pgbench's summary block, plus types, groups and
//! phases when there are several, and the server's count), and the list of presets.

use std::fmt::Write as _;
use std::path::Path;

use crate::config::presets::PRESETS;
use crate::results::down::DownWindow;
use crate::results::incidents::per_instance;
use crate::results::{GroupStats, Incident, RuleCheck, ServerDelta, Stats, Summary};

mod curve;
mod experiment;
mod headline;
mod types;
mod waits;

pub use experiment::experiment_summary;
use headline::{by_group_and_phase, headline_line, ratio_lines};

/// Terminal width the summary keeps to.
const WIDTH: usize = 100;

/// What one set's market left when the run ended.
fn emulator_line(e: &crate::results::EmulatorEnd) -> String {
    format!(
        "market {}/{}: {} jobs run, {} pending at the end ({} overdue, {:.0} ms late), {} abandoned\n",
        e.group, e.set, e.issued, e.pending_at_end, e.overdue_at_end, e.lag_ms_at_end, e.abandoned
    )
}

/// The end-of-run summary as lines of text.
/// Every kind of error the run met, its count and its first message's first line (the full
/// text was shown when it happened and is in summary.json's `errors`).
fn errors_to(out: &mut String, errors: &[crate::results::errors::ErrorEntry]) {
    if errors.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "errors by kind (the first of each in summary.json's errors):"
    );
    for e in errors {
        let text = e.text();
        let first_line = text.lines().next().unwrap_or("");
        let _ = writeln!(
            out,
            "  {}: {} × (first at {:.1} s, {}): {first_line}",
            e.kind(),
            e.count,
            e.first_at_s,
            e.place()
        );
    }
}

pub fn run_summary(s: &Summary, dir: &Path, scales: &[u32]) -> String {
    let mut out = String::new();
    totals_to(&mut out, s, scales);
    if let Some(line) = headline_line(s) {
        let _ = writeln!(out, "{line}");
    }
    latency_to(&mut out, &s.totals);
    if !s.type_rules.is_empty() {
        out.push_str(&rules_table(&s.type_rules));
    }
    out.push_str(&ratio_lines(&s.ratio_rules));
    if let Some(table) = types::types_table(s, dir) {
        out.push_str(&table);
    }
    if let Some(table) = types::commands_table(s) {
        out.push_str(&table);
    }
    for f in &s.figures {
        let _ = writeln!(out, "{}", f.line());
    }
    for v in &s.volumes {
        let _ = writeln!(out, "loaded, {}", v.describe(s.elapsed_s));
    }
    if s.groups.len() > 1 {
        out.push_str(&groups_table(&s.groups));
    }
    if let Some(table) = by_group_and_phase(s) {
        out.push_str(&table);
    }
    for i in &s.interference {
        let _ = writeln!(out, "{}", i.line());
    }
    if let Some(table) = curve::curve_table(s) {
        out.push_str(&table);
    }
    for line in s.freshness.iter().flat_map(|f| f.lines()) {
        let _ = writeln!(out, "{line}");
    }
    for e in &s.emulators {
        out.push_str(&emulator_line(e));
    }
    errors_to(&mut out, &s.errors);
    match &s.shard {
        // One shard sees every shard's commits on a database: the check is merge's.
        Some(shard) if shard.merged.is_empty() => {
            let _ = writeln!(
                out,
                "shard {}/{} of run {} on {}: the server check runs over every shard in \
                 `tidebench merge`",
                shard.index, shard.count, shard.run_id, shard.host
            );
        }
        _ => {
            for d in &s.server {
                out.push_str(&server_line(d));
            }
            for h in &s.hosts {
                let _ = writeln!(out, "server: {}", h.line());
            }
        }
    }
    if let Some(shard) = s.shard.as_ref().filter(|f| !f.merged.is_empty()) {
        for m in &shard.merged {
            let _ = writeln!(
                out,
                "shard {} on {}: {} committed, {:.1} tps, clock within {:.1} ms of the servers",
                m.index, m.host, m.committed, m.tps, m.max_clock_offset_ms
            );
        }
    }
    for line in s.waits.iter().flat_map(waits::wait_lines) {
        let _ = writeln!(out, "{line}");
    }
    for line in incident_lines(&s.incidents) {
        let _ = writeln!(out, "{line}");
    }
    for g in &s.guests {
        let _ = writeln!(out, "{}", guest_line(g));
    }
    for line in down_lines(&s.down_windows) {
        let _ = writeln!(out, "{line}");
    }
    for (k, e) in s.events.iter().enumerate() {
        let _ = writeln!(out, "{}", e.line(k));
    }
    if s.cut_in_flight > 0 || s.committed_after_end > 0 {
        let _ = writeln!(
            out,
            "at the end: {} transaction(s) in flight committed just after it, {} cut with their fate unknown (neither is in the measured window)",
            s.committed_after_end, s.cut_in_flight
        );
    }
    paths_to(&mut out, dir);
    out
}

/// One VM instance over the measured window: inside the guest, and its QEMU on the host.
fn guest_line(g: &crate::results::guests::GuestMeans) -> String {
    let f = |c: &str, digits: usize| g.get(c).map_or("-".into(), |v| format!("{v:.digits$}"));
    let mib = |c: &str| {
        g.get(c)
            .map_or("-".into(), |v| format!("{:.0}", v / 1048576.0))
    };
    format!(
        "VM {}: guest CPU {}% busy, {}% steal, {} of {} MiB available, balloon {} MiB; \
         its QEMU on the host {} cores, {} MiB resident",
        g.instance,
        f("cpu_busy_pct", 1),
        f("cpu_steal_pct", 1),
        mib("mem_available_bytes"),
        mib("mem_total_bytes"),
        mib("balloon_bytes"),
        f("qemu_cpu_cores", 2),
        mib("qemu_rss_bytes"),
    )
}

/// The run's identity, how long it measured, and its transaction counts and rate.
fn totals_to(out: &mut String, s: &Summary, scales: &[u32]) {
    let t = &s.totals;
    let state = if s.complete {
        "complete"
    } else if s.on_error == Some(crate::config::OnError::ExitRun) && !s.aborted_clients.is_empty() {
        "STOPPED at the first aborted client, --exit-on-abort (complete: false)"
    } else {
        "INTERRUPTED (complete: false)"
    };
    let scales: Vec<String> = scales.iter().map(u32::to_string).collect();
    let _ = writeln!(
        out,
        "workload: {}  scale: {}  targets: {}",
        s.workload,
        scales.join("/"),
        s.target_names.len()
    );
    let _ = writeln!(
        out,
        "measured: {:.1} s of {:.1} s ({state})",
        s.duration_s, s.elapsed_s
    );
    let _ = writeln!(
        out,
        "transactions: {} ({} committed, {} expected rollbacks, {} failed, {} retried)",
        t.total, t.committed, t.expected_rollback, t.failed, t.retried
    );
    if t.failed > 0 {
        let f = &t.failed_by_class;
        let _ = writeln!(
            out,
            "failed by class: serialization {} deadlock {} connection {} timeout {} other {}",
            f.serialization, f.deadlock, f.connection, f.timeout, f.other
        );
    }
    let _ = writeln!(out, "tps: {:.1}", t.tps);
    if let Some(c) = &s.connections {
        // pgbench -C's line; its tps includes the reconnections, as ours does.
        let _ = writeln!(
            out,
            "average connection time = {:.3} ms ({} sessions opened, one per transaction)",
            c.mean_ms, c.opened
        );
    }
}

/// Latency and schedule-lag percentiles, each line only when the run recorded it.
fn latency_to(out: &mut String, t: &Stats) {
    if let Some(l) = &t.latency_ms {
        let _ = writeln!(
            out,
            "latency ms: mean {:.3}  p50 {:.3}  p95 {:.3}  p99 {:.3}  max {:.3}",
            l.mean, l.p50, l.p95, l.p99, l.max
        );
    }
    if let Some(l) = &t.lag_ms {
        let _ = writeln!(
            out,
            "schedule lag ms: mean {:.3}  p95 {:.3}  max {:.3}",
            l.mean, l.p95, l.max
        );
    }
}

/// Per group: achieved against configured share of the load, tps and p95.
fn groups_table(groups: &[GroupStats]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:>10} {:>10} {:>10} {:>10}",
        "group", "share %", "target %", "tps", "p95 ms"
    );
    for g in groups {
        let _ = writeln!(
            out,
            "{:<12} {:>10.2} {:>10} {:>10.1} {:>10}",
            g.group,
            g.achieved_share,
            g.configured_share
                .map_or("-".to_string(), |c| format!("{c:.2}")),
            g.stats.tps,
            g.stats
                .latency_ms
                .as_ref()
                .map_or("-".to_string(), |l| format!("{:.3}", l.p95))
        );
    }
    out
}

/// One line per managed instance that had incidents during the run: how many of each kind,
/// and when the first and the last were seen.
fn incident_lines(incidents: &[Incident]) -> Vec<String> {
    per_instance(incidents)
        .iter()
        .map(|i| {
            let when = if i.first_s == i.last_s {
                format!("at {:.1} s", i.first_s)
            } else {
                format!("from {:.1} s to {:.1} s", i.first_s, i.last_s)
            };
            format!(
                "incidents: instance '{}': {} {when} (see summary.json)",
                i.instance,
                i.counts_text()
            )
        })
        .collect()
}

/// One line per target that was down: its one window, or how many and the longest (a target
/// whose tries time out one by one has many short ones; summary.json lists them all).
fn down_lines(all: &[DownWindow]) -> Vec<String> {
    let mut targets: Vec<&str> = all.iter().map(|w| w.target.as_str()).collect();
    targets.dedup();
    targets
        .into_iter()
        .map(|t| {
            let mine: Vec<&DownWindow> = all.iter().filter(|w| w.target == t).collect();
            let lost: u64 = mine.iter().map(|w| w.sessions_lost).sum();
            let span = match mine.as_slice() {
                [one] => one.span_text(),
                many => {
                    let len = |w: &&DownWindow| w.to_s.map_or(f64::INFINITY, |e| e - w.from_s);
                    let longest = many
                        .iter()
                        .max_by(|a, b| len(a).total_cmp(&len(b)))
                        .map_or_else(String::new, |w| w.span_text());
                    format!("{} times, the longest {longest}", many.len())
                }
            };
            format!(
                "down: {t} {span} ({lost} session(s) lost or timed out; its cards failed meanwhile, and the server counts only what reached it)"
            )
        })
        .collect()
}

/// One database's server-side commit count, checked against what tidebench committed there.
fn server_line(d: &ServerDelta) -> String {
    if d.restarted {
        // Crash recovery resets the server's statistics: the delta covers only the time since
        // the last restart, so a difference says nothing about tidebench's count.
        return format!(
            "server: {} xact_commit +{} since its counters were reset, not compared with \
             tidebench's {}\n  (the server restarted during the run: crash recovery resets them)\n",
            d.dbname, d.xact_commit_delta, d.client_committed
        );
    }
    let diff = d.xact_commit_delta - d.client_committed;
    let verdict = match diff {
        0 => "agrees with".to_string(),
        // A try cut in flight at the end may have committed at the server all the same.
        n if n > 0 && n <= d.cut_in_flight => format!(
            "agrees: {n} of the {} transactions cut in flight at the end committed at the \
             server; tidebench committed",
            d.cut_in_flight
        ),
        // Other sessions and autovacuum's workers commit in the same database.
        n => format!(
            "{n:+} beside other sessions, autovacuum or parallel workers; tidebench committed"
        ),
    };
    format!(
        "server: {} xact_commit +{} ({verdict} {} over the run)\n",
        d.dbname, d.xact_commit_delta, d.client_committed
    )
}

/// Where the results went, and the HTML report when one was written there.
fn paths_to(out: &mut String, dir: &Path) {
    let _ = writeln!(out, "results: {}", dir.display());
    let report = dir.join(crate::report::html::REPORT_FILE);
    if report.is_file() {
        let _ = writeln!(out, "report:  {}", report.display());
    }
}

/// Per type: p90 against its limit and share of the mix against its minimum, each flagged when
/// missed (e.g. "EXCEEDS 5 s", "below 43 %"); a type the workload's emulator issues has no
/// share ("emulated").
fn rules_table(rules: &[RuleCheck]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<14} {:>12} {:>14} {:>8} {:>12}",
        "type", "p90 ms", "p90 limit", "mix %", "mix minimum"
    );
    for r in rules {
        let limit = r.p90_limit_ms.map_or("-".to_string(), |l| {
            let mut l = crate::report::html::rules::limit_text(l);
            if r.limit_unverified {
                l.push('?');
            }
            if r.exceeded {
                format!("EXCEEDS {l}")
            } else {
                format!("<= {l}")
            }
        });
        let minimum = r.min_share_pct.map_or("-".to_string(), |m| {
            if r.below_minimum {
                format!("below {m} %")
            } else {
                format!(">= {m} %")
            }
        });
        let name: String = r.txn_type.chars().take(14).collect();
        let share = r
            .share_pct
            .map_or_else(|| "emulated".to_string(), |p| format!("{p:.2}"));
        let _ = writeln!(
            out,
            "{name:<14} {:>12} {limit:>14} {share:>8} {minimum:>12}",
            r.p90_ms.map_or("-".to_string(), |p| format!("{p:.3}")),
        );
    }
    if rules.iter().any(|r| r.limit_unverified) {
        out.push_str(crate::results::rules::UNVERIFIED_NOTE);
        out.push('\n');
    }
    out
}

/// `label` then the comma-separated `text`, broken at commas to stay within [`WIDTH`].
fn wrap(label: &str, text: &str) -> String {
    let mut out = String::from(label);
    let mut line_len = label.len();
    for (i, part) in text.split(", ").enumerate() {
        let piece = if i == 0 {
            part.to_string()
        } else {
            format!(", {part}")
        };
        if i > 0 && line_len + piece.len() > WIDTH {
            out.push_str(",\n  ");
            out.push_str(part);
            line_len = 2 + part.len();
        } else {
            out.push_str(&piece);
            line_len += piece.len();
        }
    }
    out
}

/// `tidebench presets`: one line each.
pub fn presets() -> String {
    let mut out = String::new();
    for p in PRESETS {
        let _ = writeln!(out, "{:<18} {}", p.name, p.description);
    }
    out.push_str("\nrun one with `tidebench prepare --preset NAME` then `tidebench run --preset NAME [--phase-duration 10s]`;\n`tidebench presets --show NAME` prints its TOML\n");
    out.push_str(
        "\nexperiments (`tidebench COMMAND --preset NAME`, `--point-duration 1m` to shorten):\n",
    );
    let experiments = &crate::experiment::presets::PRESETS;
    let width = experiments.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in experiments {
        let command = format!("({})", p.shape.command());
        let _ = writeln!(out, "{:<width$} {command:<13} {}", p.name, p.description);
    }
    out
}

/// `tidebench run --dry-run`: what the validated plan would run.
pub fn planned_run(plan: &crate::config::RunPlan) -> String {
    let targets: usize = plan
        .groups
        .iter()
        .flat_map(|g| &g.sets)
        .map(|s| s.distinct_targets().len())
        .sum();
    let mut workloads: Vec<&str> = plan.groups.iter().map(|g| g.workload.as_str()).collect();
    workloads.dedup();
    let mut events = String::new();
    for (k, d) in plan.events.iter().enumerate() {
        events.push_str(&format!("  event {}: {}\n", k + 1, d.describe()));
    }
    let line = format!(
        "dry run: {}: {} group(s) ({}), {targets} target(s), {} phase(s) x {} iteration(s), \
         {} clients, {} in all with ramps; nothing was run\n",
        plan.title(),
        plan.groups.len(),
        workloads.join(", "),
        plan.phases.len(),
        plan.iterations,
        plan.clients,
        crate::config::duration::format_duration(plan.total_duration())
    );
    line + &events
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn a_vm_line_puts_the_guest_beside_its_qemu() {
        let mut g = crate::results::guests::GuestMeans {
            instance: "vm1".into(),
            rounds: 3,
            ..Default::default()
        };
        for (c, v) in [
            ("cpu_busy_pct", 42.25),
            ("cpu_steal_pct", 0.0),
            ("mem_total_bytes", 480.0 * 1048576.0),
            ("mem_available_bytes", 300.0 * 1048576.0),
            ("qemu_cpu_cores", 1.234),
        ] {
            g.means.insert(c.into(), v);
        }
        assert_eq!(
            guest_line(&g),
            "VM vm1: guest CPU 42.2% busy, 0.0% steal, 300 of 480 MiB available, balloon - MiB; \
             its QEMU on the host 1.23 cores, - MiB resident"
        );
    }

    #[test]
    fn down_windows_make_one_line_per_target() {
        let w = |target: &str, from_s: f64, to_s: Option<f64>| DownWindow {
            target: target.into(),
            from_s,
            to_s,
            sessions_lost: 2,
        };
        let lines = down_lines(&[
            w("a", 4.0, Some(7.5)),
            w("b", 30.1, Some(30.2)),
            w("b", 32.0, Some(34.0)),
            w("b", 36.0, Some(36.1)),
        ]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("down: a from 4.0 s to 7.5 s (2 session"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("down: b 3 times, the longest from 32.0 s to 34.0 s (6 session"),
            "{lines:?}"
        );
    }
    use crate::metrics::Recorder;
    use crate::results::{GroupIsolation, IsolationLevels, RunFacts};

    pub(super) fn tpcc_summary() -> Summary {
        // One group, two phases, as the key space.
        let plan = crate::results::summary::tests::plan();
        let keys = crate::results::intervals::tests::two_phase_keys();
        let run = RunFacts {
            workload: "tpcc".into(),
            ..crate::results::summary::tests::two_phase_facts()
        };
        let mut s = Summary::build(&run, &plan, &keys, &Recorder::new(keys.len()), Vec::new());
        s.tpm = [
            ("new_order".to_string(), 1234.5),
            ("payment".into(), 1200.0),
        ]
        .into();
        s.headline = Some(crate::results::HeadlineRate {
            label: "NOTPM".into(),
            txn_type: "new_order".into(),
            per: crate::results::Per::Minute,
            per_minute: 1234.5,
            per_second: None,
        });
        let rule = |name: &str, p90: f64, limit: f64, share: f64, min: Option<f64>| RuleCheck {
            txn_type: name.into(),
            p90_ms: Some(p90),
            p90_limit_ms: Some(limit),
            exceeded: p90 > limit,
            share_pct: Some(share),
            min_share_pct: min,
            below_minimum: min.is_some_and(|m| share < m),
            limit_unverified: false,
        };
        s.type_rules = vec![
            rule("new_order", 12.5, 5000.0, 50.0, None),
            rule("payment", 8.25, 5000.0, 41.5, Some(43.0)),
            rule("delivery", 6100.0, 5000.0, 4.5, Some(4.0)),
            rule("stock_level", 30.0, 20000.0, 4.0, Some(4.0)),
        ];
        s
    }

    #[test]
    fn tpcc_prints_notpm_with_isolation_and_flags_missed_rules() {
        let s = tpcc_summary();
        assert_eq!(
            s.isolation,
            Some(IsolationLevels::All("read committed".into())),
            "the summary takes each group's isolation from the plan"
        );
        let out = run_summary(&s, Path::new("/tmp/r"), &[1]);
        assert!(
            out.contains("NOTPM: 1234.5  total TPM: 2434.5  isolation: read committed\n"),
            "{out}"
        );
        let line = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("{name}: {out}"))
                .to_string()
        };
        assert!(line("type ").contains("p90 limit"), "{out}");
        let no = line("new_order");
        assert!(no.contains("12.500") && no.contains("<= 5 s"), "{out}");
        assert!(!no.contains("EXCEEDS") && !no.contains("below"), "{out}");
        assert!(line("payment").contains("below 43 %"), "{out}");
        let d = line("delivery");
        assert!(d.contains("EXCEEDS 5 s") && d.contains(">= 4 %"), "{out}");
        assert!(line("stock_level").contains("<= 20 s"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
    }

    #[test]
    fn differing_isolation_is_listed_per_group_within_the_width() {
        let mut s = tpcc_summary();
        let groups: Vec<GroupIsolation> = (0..12)
            .map(|i| GroupIsolation {
                group: format!("group{i}"),
                isolation: if i % 2 == 0 {
                    "read committed"
                } else {
                    "serializable"
                }
                .into(),
            })
            .collect();
        s.isolation = IsolationLevels::of(&groups);
        let out = run_summary(&s, Path::new("/tmp/r"), &[1]);
        assert!(out.contains("NOTPM: 1234.5  total TPM: 2434.5\nisolation: group0 read committed, group1 serializable"), "{out}");
        assert!(out.contains("group11 serializable"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
    }

    #[test]
    fn incidents_and_a_restarted_server_are_said() {
        let mut s = tpcc_summary();
        let incident = |t_s: f64, kind: crate::results::IncidentKind| Incident {
            t_s,
            instance: "vm1".into(),
            kind,
            count: 2,
            detail: String::new(),
        };
        s.incidents = vec![
            incident(2.04, crate::results::IncidentKind::OomKill),
            incident(2.04, crate::results::IncidentKind::CrashRestart),
            incident(7.5, crate::results::IncidentKind::OomKill),
        ];
        s.server = vec![ServerDelta {
            target: "instance:vm1/db".into(),
            dbname: "db".into(),
            xact_commit_delta: 5,
            xact_rollback_delta: 0,
            client_committed: 900,
            restarted: true,
            cut_in_flight: 0,
            readings: None,
        }];
        let out = run_summary(&s, Path::new("/tmp/r"), &[1]);
        assert!(
            out.contains(
                "incidents: instance 'vm1': 4 OOM kills, 2 crash restarts from 2.0 s to 7.5 s"
            ),
            "{out}"
        );
        assert!(out.contains("not compared with tidebench's 900"), "{out}");
        assert!(!out.contains("agrees"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
    }

    #[test]
    fn other_workloads_print_no_rules() {
        let mut s = tpcc_summary();
        s.tpm.clear();
        s.headline = None;
        s.type_rules.clear();
        let out = run_summary(&s, Path::new("/tmp/r"), &[1]);
        assert!(!out.contains("NOTPM") && !out.contains("isolation") && !out.contains("p90"));
    }
}
