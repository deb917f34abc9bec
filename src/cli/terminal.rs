//! The terminal sink: shows a run's and a load's events on stderr as text. The progress line
//! reads like pgbench's `-P`; the polling block follows the TPC-V reference kit's Fig. 6 with
//! groups wrapped every 8 columns so it stays within 100 columns even with 40 groups; a load
//! shows an indicatif bar (rows, rows/s, ETA) when stderr is a terminal, otherwise a plain line
//! every few seconds so logs of unattended runs stay readable.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{HumanCount, ProgressBar, ProgressState, ProgressStyle};

use crate::event::{
    EmulatedBacklog, Event, Incident, IncidentKind, LoadProgress, LoadSummary, Per, PollBlock,
    ProgressLine, RunDescription, Sink,
};

mod experiment;

const GROUPS_PER_LINE: usize = 8;
/// How often a load writes a plain line when stderr is not a terminal.
const LINE_PERIOD: Duration = Duration::from_secs(5);
const SPINNER_TICK: Duration = Duration::from_millis(100);

/// Writes events to stderr (the streams and texts tidebench has always used).
#[derive(Default)]
pub struct Terminal {
    load: Mutex<Load>,
}

/// How the load in progress is shown.
#[derive(Default)]
enum Load {
    #[default]
    None,
    Bar(ProgressBar),
    /// Plain lines; the next one once the load has run this long.
    Lines {
        next: Duration,
    },
}

impl Sink for Terminal {
    fn send(&self, event: Event) {
        match event {
            Event::RunStarting(d) => eprintln!("{}", describe(&d)),
            Event::Note(n) => eprintln!("{n}"),
            Event::Warning(w) => eprintln!("warning: {w}"),
            Event::FirstError(e) => eprintln!(
                "error ({}; first of its kind, at {:.1} s in {}): {}",
                e.kind, e.at_s, e.place, e.text
            ),
            Event::ScriptDebug(line) => eprintln!("{line}"),
            Event::Trace(line) => eprintln!("debug: {line}"),
            // The abort that follows names the same error.
            Event::PrepareFailed(_) => {}
            Event::TryError(e) => eprintln!("{}", try_error_line(&e)),
            Event::Progress(p) => eprintln!("{}", progress_line(&p)),
            Event::Poll(b) => eprint!("{}", poll_block(&b)),
            // The polling block names the phase; an edge alone adds nothing to read.
            // Only the pgbench drop-in asks for the vacuum and its tables' facts, and its own
            // sink tells them.
            Event::PhaseEdge(_)
            | Event::Vacuum(_)
            | Event::PgbenchTables(_)
            | Event::ServerNotice(_) => {}
            Event::Interrupted => {
                eprintln!("\ninterrupted: stopping clients and writing results (complete: false)")
            }
            Event::LoadFinished(s) => eprintln!("{}", load_summary(&s)),
            Event::ExperimentRun(r) => eprintln!("{}", experiment::starting(&r)),
            Event::ExperimentRunDone(d) => eprintln!("{}", experiment::done(&d)),
            Event::Incidents(all) => {
                for line in incident_lines(&all) {
                    eprintln!("warning: {line}");
                }
            }
            load @ (Event::LoadStarted { .. }
            | Event::LoadProgress(_)
            | Event::LoadStep(_)
            | Event::LoadStopped) => self.load_event(load),
        }
    }
}

impl Terminal {
    fn load_event(&self, event: Event) {
        // A panic while drawing leaves the state usable: keep showing the load.
        let mut load = match self.load.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        match event {
            Event::LoadStarted { what, total } => {
                *load = if std::io::stderr().is_terminal() {
                    Load::Bar(bar(&what, total))
                } else {
                    Load::Lines { next: LINE_PERIOD }
                };
            }
            Event::LoadProgress(p) => match &mut *load {
                Load::Bar(bar) => bar.set_position(p.done),
                Load::Lines { next } if p.elapsed >= *next => {
                    eprintln!("{}", load_line(&p));
                    while *next <= p.elapsed {
                        *next += LINE_PERIOD;
                    }
                }
                _ => {}
            },
            Event::LoadStep(what) => match &*load {
                Load::Bar(bar) => {
                    bar.set_style(ProgressStyle::default_spinner());
                    bar.set_message(what);
                    bar.enable_steady_tick(SPINNER_TICK);
                }
                _ => eprintln!("{what}"),
            },
            Event::LoadStopped => {
                if let Load::Bar(bar) = std::mem::take(&mut *load) {
                    bar.finish_and_clear();
                }
            }
            _ => {}
        }
    }
}

fn bar(what: &str, total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {human_pos}/{human_len} rows, {rate} rows/s, ETA {eta}",
    )
    .map(|s| {
        s.progress_chars("=> ").with_key(
            "rate",
            |st: &ProgressState, w: &mut dyn std::fmt::Write| {
                // Whole rows with thousands separators; indicatif's {per_sec} shows decimals.
                let _ = write!(w, "{}", HumanCount(st.per_sec() as u64));
            },
        )
    })
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(format!("loading {what}"));
    bar
}

/// The line a run starts with.
pub fn describe(d: &RunDescription) -> String {
    let clients = match d.shared_clients {
        Some(n) => format!("{n} shared clients"),
        None => "clients per group and phase".to_string(),
    };
    format!(
        "running {}: {} group(s), {} target(s), {} phase(s) x {} iteration(s), {clients}, {} threads, {}",
        d.name,
        d.groups,
        d.targets,
        d.phases,
        d.iterations,
        d.threads,
        match d.transactions {
            Some(n) => format!("{n} transactions per client"),
            None => crate::config::duration::format_duration(d.duration),
        }
    )
}

/// One round's incidents, one line per instance: what and how many, and one detail (the
/// killed process's server.log line when there is one).
pub fn incident_lines(all: &[Incident]) -> Vec<String> {
    crate::results::incidents::per_instance(all)
        .iter()
        .map(|i| {
            let mine = all.iter().filter(|x| x.instance == i.instance);
            let detail = mine
                .clone()
                .find(|x| x.kind == IncidentKind::BackendKilled)
                .or_else(|| mine.clone().next())
                .map_or("", |x| x.detail.as_str());
            format!(
                "instance '{}' at {:.1} s: {} ({detail})",
                i.instance,
                i.first_s,
                i.counts_text()
            )
        })
        .collect()
}

/// One progress line.
pub fn progress_line(p: &ProgressLine) -> String {
    let mut out = format!(
        "progress: {:.1} s, {:.1} tps",
        p.elapsed.as_secs_f64(),
        p.tps
    );
    if let Some(h) = &p.headline {
        let _ = write!(out, ", {} {}", h.label, headline_text(h.per, h.value));
    }
    match &p.latency {
        Some(l) => {
            let _ = write!(out, ", lat {:.3} ms p95 {:.3} ms", l.mean_ms, l.p95_ms);
        }
        None => out.push_str(", lat - ms"),
    }
    if let Some(lag) = p.lag_ms {
        let _ = write!(out, ", lag {lag:.3} ms");
    }
    let _ = write!(out, ", {} failed", p.failed);
    if p.retried > 0 {
        let _ = write!(out, ", {} retried", p.retried);
    }
    if let Some(b) = &p.backlog {
        let _ = write!(out, ", market {} due", b.due);
        if b.due > 0 {
            let _ = write!(out, " (lag {:.0} ms)", b.lag_ms);
        }
    }
    if !p.running.is_empty() {
        let each: Vec<String> = p
            .running
            .iter()
            .map(|(txn, s)| format!("{txn} {s:.1} s"))
            .collect();
        let _ = write!(out, ", running: {}", each.join(", "));
        if p.running_more > 0 {
            let _ = write!(out, " (+{} more)", p.running_more);
        }
    }
    out
}

/// The emulators' line of a polling block.
fn backlog_line(b: &EmulatedBacklog) -> String {
    format!(
        "Market: {} due (oldest {:.0} ms late), {} waiting for their time, {} abandoned",
        b.due, b.lag_ms, b.waiting, b.abandoned
    )
}

/// One polling block, every line ending in a newline.
pub fn poll_block(b: &PollBlock) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "-----");
    let _ = writeln!(
        out,
        "{:<18} {:>10} {:>10} {:>8} {:>11} {:>11}",
        "", "Txn Rate", "Resp Time", "Txn Pct", "Pass Count", "Fail Count"
    );
    for t in &b.types {
        let name: String = t.name.chars().take(16).collect();
        // An emulated type (TPC-E's Trade-Result) is outside the mix: no share.
        let pct = t
            .pct
            .map_or_else(|| "emulated".to_string(), |p| format!("{p:.2}"));
        let _ = writeln!(
            out,
            "{:<16} : {:>10.2} {:>10.4} {:>8} {:>11} {:>11}",
            name, t.rate, t.resp_s, pct, t.passed, t.failed
        );
    }
    let with_targets = b.groups.iter().any(|g| g.target_pct.is_some());
    for chunk in b.groups.chunks(GROUPS_PER_LINE) {
        let _ = writeln!(out, "-----");
        let mut line = format!("{:<11}", "Txn Total:");
        for g in chunk {
            let name: String = g.name.chars().take(9).collect();
            let _ = write!(line, " {name:>9}");
        }
        let _ = writeln!(out, "{line}");
        let mut row = |label: &str, cell: &dyn Fn(&crate::event::GroupRow) -> String| {
            let mut line = format!("{label:<11}");
            for g in chunk {
                let _ = write!(line, " {:>9}", cell(g));
            }
            let _ = writeln!(out, "{line}");
        };
        row("Txn Pct  :", &|g| format!("{:.2}", g.pct));
        if with_targets {
            row("Target % :", &|g| {
                format!("{:.2}", g.target_pct.unwrap_or(0.0))
            });
        }
        row("Resp Time:", &|g| format!("{:.4}", g.resp_s));
        row("Fail Cnt :", &|g| g.failed.to_string());
        if let Some(h) = &b.headline {
            let label: String = h.label.chars().take(9).collect();
            row(&format!("{label:<9}:"), &|g| {
                g.headline
                    .map_or("-".to_string(), |v| headline_text(h.per, v))
            });
        }
    }
    let _ = writeln!(out, "-----");
    if let Some(h) = &b.headline {
        let _ = writeln!(
            out,
            "{}: {}  {}: {}",
            h.label,
            rate_text(h.per, h.value),
            h.per.total_label(),
            rate_text(h.per, h.total)
        );
    }
    if let Some(backlog) = &b.backlog {
        let _ = writeln!(out, "{}", backlog_line(backlog));
    }
    let _ = writeln!(
        out,
        "Iteration {} Phase {} Aggregate Txn Rate: {:.2}",
        b.iteration, b.phase, b.aggregate_rate
    );
    out
}

/// A headline on the progress line and in the group rows: whole transactions per minute
/// (NOTPM 1234), two decimals per second (tpsE 12.34).
fn headline_text(per: Per, v: f64) -> String {
    match per {
        Per::Minute => format!("{v:.0}"),
        Per::Second => format!("{v:.2}"),
    }
}

/// A headline on the polling block's own line: one decimal per minute, two per second.
fn rate_text(per: Per, v: f64) -> String {
    match per {
        Per::Minute => format!("{v:.1}"),
        Per::Second => format!("{v:.2}"),
    }
}

/// A load's plain progress line (when stderr is not a terminal).
pub fn load_line(p: &LoadProgress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-3);
    let rate = p.done as f64 / secs;
    let pct = (p.done * 100).checked_div(p.total).unwrap_or(100);
    let eta = if rate > 0.0 {
        format!("{:.0} s", p.total.saturating_sub(p.done) as f64 / rate)
    } else {
        "unknown".to_string()
    };
    format!(
        "loading {}: {}/{} rows ({pct}%), {rate:.0} rows/s, ETA {eta}",
        p.what, p.done, p.total
    )
}

/// The line a completed load ends with.
pub fn load_summary(s: &LoadSummary) -> String {
    let steps: Vec<String> = s
        .steps
        .iter()
        .map(|(what, d)| format!("{what} {:.2} s", d.as_secs_f64()))
        .collect();
    // A load of steps without timed ones (`--init-steps dt`) has no parentheses.
    let steps = if steps.is_empty() {
        String::new()
    } else {
        format!(" ({})", steps.join(", "))
    };
    format!(
        "prepared {} in target '{}': {} rows in {:.2} s{steps}",
        s.what,
        s.target,
        s.rows,
        s.elapsed.as_secs_f64(),
    )
}

/// `--verbose-errors` in tidebench's words: the transaction type by name (a run may mix
/// workloads), the tries counted as pgbench counts them.
fn try_error_line(e: &crate::event::TryError) -> String {
    use crate::event::TryError;
    match e {
        TryError::Got {
            client,
            txn_type,
            command: Some(c),
            text,
        } => format!("client {client} got an error in \"{txn_type}\" command {c}: {text}"),
        TryError::Got {
            client,
            txn_type,
            command: None,
            text,
        } => format!("client {client} got an error in \"{txn_type}\": {text}"),
        TryError::Next {
            client,
            try_no,
            max_tries,
            again,
            ..
        } => {
            let what = if *again { "retries" } else { "fails" };
            format!("client {client} {what} the transaction (try {try_no}/{max_tries})")
        }
    }
}

#[cfg(test)]
mod tests;
