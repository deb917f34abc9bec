//! A run's events (issue 53): what the run did to its instances (`[[event]]`), as it did it,
//! and the recovery around each, in `events.csv` and `summary.json`'s `events`.
//!
//! `events.csv`, one row per step an event took (a fail and its restart are two steps):
//!
//! | column | meaning |
//! |---|---|
//! | `event` | the event's number, from 1 in time order |
//! | `at_s` | when the run file put it, seconds since the run started |
//! | `action`, `target` | as the run file names them |
//! | `step` | `fail`, `restart`, `promote` (of a promote or a failover), `freeze`, `thaw`, `sql`, `resize`, `balloon` (a VM's guest reaching its new size), `restore`, `noise`, `quiet` |
//! | `started_s`, `ended_s` | when the step began and was done, on the run's clock; `ended_s` empty: cut by the run's end |
//! | `outcome` | `ok`, `error` or `cut` |
//! | `detail` | what was done (`SIGKILL of postmaster 123 and 6 server processes`) or the error |
//!
//! Recovery ([`Recovery`], one for all the run's transactions and one per group) is measured
//! from the per-transaction mix log, in 0.1 s buckets, around the event's first step (which
//! began at `t` and ended at `e`):
//!
//! | field | meaning |
//! |---|---|
//! | `rate_before` | commits per second over the 10 s before `t` (less when the run was younger) |
//! | `first_commit_s` | seconds from `t` to the end of the first committed transaction begun after `e` (begun: its scheduled start); absent: none by the run's end |
//! | `recovered_s` | seconds from `t` to the start of the first 1 s window (from the first commit on) whose rate is at least 90 % of `rate_before` again; absent: not recovered by the end |
//! | `failed` | transactions failed between `t` and the recovery (or the end) |
//! | `reconnects` | sessions lost in the down windows (see `down`) of the scope's targets that opened between `t` and the recovery (or the end) |
//! | `down_s` | seconds at least one of the scope's targets was down in those windows (a window still open at the end counts to the end) |
//! | `full_rate_share` | of the whole seconds from `t` to the run's end (1 s windows laid from `t`), the share at full rate: at least 90 % of `rate_before` (TPCx-HCI's data-accessibility test asks how much of the window ran at full rate) |

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::down::DownWindow;
use crate::metrics::mixlog::MixRecord;

pub const EVENTS_FILE: &str = "events.csv";
pub const EVENTS_HEADER: &str = "event,at_s,action,target,step,started_s,ended_s,outcome,detail";

/// The width of the recovery buckets, in µs: recovery is reported to 0.1 s.
const BUCKET_US: u64 = 100_000;
/// How far back the rate before an event is taken.
const BEFORE_S: f64 = 10.0;
/// The window whose rate must be back to [`RECOVERED_SHARE`] of the rate before.
const WINDOW_BUCKETS: usize = 10;
pub const RECOVERED_SHARE: f64 = 0.9;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepOutcome {
    Ok,
    Error,
    /// Still running, or not yet begun, when the run ended.
    Cut,
}

impl StepOutcome {
    pub fn name(self) -> &'static str {
        match self {
            StepOutcome::Ok => "ok",
            StepOutcome::Error => "error",
            StepOutcome::Cut => "cut",
        }
    }
}

/// One step an event took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventStep {
    pub step: String,
    pub started_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_s: Option<f64>,
    pub outcome: StepOutcome,
    pub detail: String,
}

/// The recovery of one scope (all transactions, or one group's) around an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// `all`, or the group's name.
    pub scope: String,
    pub rate_before: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_commit_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_s: Option<f64>,
    pub failed: u64,
    pub reconnects: u64,
    /// Absent in results written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_s: Option<f64>,
    /// The share of the whole seconds from the event to the run's end at full rate (at least
    /// 90 % of `rate_before`); absent with no rate before, no whole second after, or in
    /// results written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_rate_share: Option<f64>,
}

impl Recovery {
    /// "recovered in 4.3 s (first commit after 3.9 s), 12 failed, 4 reconnects".
    pub fn text(&self) -> String {
        let first = match self.first_commit_s {
            Some(f) => format!("first commit after {f:.1} s"),
            None => "no commit after it".into(),
        };
        let back = match self.recovered_s {
            Some(r) => format!("back to 90% of {:.1}/s in {r:.1} s", self.rate_before),
            None => format!("not back to 90% of {:.1}/s by the end", self.rate_before),
        };
        let down = match self.down_s {
            Some(d) if d > 0.0 => format!(", down {d:.1} s"),
            _ => String::new(),
        };
        let full = match self.full_rate_share {
            Some(f) => format!(", {:.0}% of the rest at full rate", f * 100.0),
            None => String::new(),
        };
        format!(
            "{back} ({first}), {} failed, {} reconnects{down}{full}",
            self.failed, self.reconnects
        )
    }
}

/// One event as the run played it: `summary.json`'s `events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventAccount {
    /// When the run file put it, seconds since the run started.
    pub at_s: f64,
    pub action: String,
    pub target: String,
    /// "fail vm-a, restarted after 5s".
    pub description: String,
    pub steps: Vec<EventStep>,
    /// `all` first, then each group; empty when the first step never began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovery: Vec<Recovery>,
    /// A promotion's commits lost: those in the old primary's WAL past the point where the
    /// promoted standby's timeline begins (at most one per client may never have been
    /// answered). Absent: no promotion, or not counted (its step says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_commits: Option<u64>,
}

impl EventAccount {
    /// "event 1 at 5.0 s: fail a, restarted after 2s (fail ok, restart ok); all: back to ...;
    /// A: ..." for the terminal.
    pub fn line(&self, k: usize) -> String {
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("{} {}", s.step, s.outcome.name()))
            .collect();
        let mut out = format!(
            "event {} at {:.1} s: {} ({})",
            k + 1,
            self.started_s(),
            self.description,
            if steps.is_empty() {
                "not reached".to_string()
            } else {
                steps.join(", ")
            }
        );
        if let Some(n) = self.lost_commits {
            let _ = write!(out, "; {n} commits lost at the promotion");
        }
        for r in &self.recovery {
            let _ = write!(out, "; {}: {}", r.scope, r.text());
        }
        out
    }

    /// When the event's first step began (its mark on the charts), else when it was due.
    pub fn started_s(&self) -> f64 {
        self.steps.first().map_or(self.at_s, |s| s.started_s)
    }
}

/// `events.csv`'s text.
pub fn events_csv(events: &[EventAccount]) -> String {
    let mut out = String::from(EVENTS_HEADER);
    out.push('\n');
    for (i, e) in events.iter().enumerate() {
        for s in &e.steps {
            let ended = s.ended_s.map_or(String::new(), |t| format!("{t:.3}"));
            let _ = writeln!(
                out,
                "{},{:.3},{},{},{},{:.3},{ended},{},{}",
                i + 1,
                e.at_s,
                super::csv::csv_field(&e.action),
                super::csv::csv_field(&e.target),
                super::csv::csv_field(&s.step),
                s.started_s,
                s.outcome.name(),
                super::csv::csv_field(&s.detail.replace(['\n', '\r'], " "))
            );
        }
    }
    out
}

/// Commits and failures per 0.1 s bucket, for all transactions and for each group.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// `all`, then the groups' names.
    pub scopes: Vec<String>,
    commits: Vec<Vec<u32>>,
    failed: Vec<Vec<u32>>,
    /// Per event, per scope: the end (µs) of the first commit begun after the event's `e`.
    first_after: Vec<Vec<Option<u64>>>,
    /// Per scope: the targets it covers (indexes of the run's targets).
    targets: Vec<Vec<usize>>,
}

impl Timeline {
    /// Buckets `records` (every driver thread's mix log) over `len_s`; `target_group[t]` is
    /// target t's group; `after_us[k]` is event k's `e`.
    pub fn build(
        records: impl Iterator<Item = MixRecord>,
        groups: &[String],
        target_group: &[usize],
        after_us: &[u64],
        len_s: f64,
    ) -> Timeline {
        let scopes: Vec<String> = std::iter::once("all".to_string())
            .chain(groups.iter().cloned())
            .collect();
        let buckets = (len_s * 1e6 / BUCKET_US as f64).ceil() as usize + 1;
        let mut commits = vec![vec![0u32; buckets]; scopes.len()];
        let mut failed = vec![vec![0u32; buckets]; scopes.len()];
        let mut first_after = vec![vec![None::<u64>; scopes.len()]; after_us.len()];
        for r in records {
            let b = ((r.end_us / BUCKET_US) as usize).min(buckets - 1);
            let Some(g) = target_group.get(usize::from(r.target)) else {
                continue;
            };
            let scoped = [0, g + 1];
            match r.outcome {
                0 => {
                    for s in scoped {
                        commits[s][b] += 1;
                    }
                    // Begun after the step was done: a reply the stopped server sent before
                    // it, read late by a busy client, is not taken for a recovery.
                    let began = r.end_us.saturating_sub(u64::from(r.latency_us));
                    for (k, e) in after_us.iter().enumerate() {
                        if began > *e {
                            for s in scoped {
                                let f = &mut first_after[k][s];
                                *f = Some(f.map_or(r.end_us, |f| f.min(r.end_us)));
                            }
                        }
                    }
                }
                1 => {}
                _ => {
                    for s in scoped {
                        failed[s][b] += 1;
                    }
                }
            }
        }
        let mut targets = vec![(0..target_group.len()).collect::<Vec<usize>>()];
        targets.extend((0..groups.len()).map(|g| {
            (0..target_group.len())
                .filter(|t| target_group[*t] == g)
                .collect()
        }));
        Timeline {
            scopes,
            commits,
            failed,
            first_after,
            targets,
        }
    }

    /// The recovery of every scope around event `k`, which began at `t_s` (on the run's
    /// clock); `down` are the run's down windows with each target's label in `labels`.
    pub fn recovery(
        &self,
        k: usize,
        t_s: f64,
        down: &[DownWindow],
        labels: &[String],
    ) -> Vec<Recovery> {
        (0..self.scopes.len())
            .map(|s| self.one(k, s, t_s, down, labels))
            .collect()
    }

    fn one(
        &self,
        k: usize,
        s: usize,
        t_s: f64,
        down: &[DownWindow],
        labels: &[String],
    ) -> Recovery {
        let commits = &self.commits[s];
        let t_b = (t_s * 1e6 / BUCKET_US as f64).floor() as usize;
        let from_b = t_b.saturating_sub((BEFORE_S * 10.0) as usize);
        let before: u32 = commits[from_b.min(commits.len())..t_b.min(commits.len())]
            .iter()
            .sum();
        let span_s = (t_b - from_b) as f64 * BUCKET_US as f64 / 1e6;
        let rate_before = if span_s > 0.0 {
            f64::from(before) / span_s
        } else {
            0.0
        };
        let first_us = self.first_after.get(k).and_then(|f| f[s]);
        let first = first_us.map(|us| at_least_zero(round1(us as f64 / 1e6 - t_s)));
        let need = rate_before * RECOVERED_SHARE * (WINDOW_BUCKETS as f64) / 10.0;
        // Windows from the first commit on: a burst of catching up right after it must not
        // make a window that is mostly the outage count as recovered.
        let from = first_us.map_or(t_b, |us| t_b.max((us / BUCKET_US) as usize));
        let back_b = (rate_before > 0.0 && first.is_some())
            .then(|| {
                (from..commits.len().saturating_sub(WINDOW_BUCKETS - 1)).find(|b| {
                    let got: u32 = commits[*b..*b + WINDOW_BUCKETS].iter().sum();
                    f64::from(got) >= need
                })
            })
            .flatten();
        // Never before the first commit, which the bucket holding it may start before.
        let recovered = back_b
            .map(|b| round1(b as f64 * BUCKET_US as f64 / 1e6 - t_s).max(first.unwrap_or(0.0)));
        let until_b = back_b.unwrap_or(commits.len());
        let failed: u64 = self.failed[s][t_b.min(until_b)..until_b]
            .iter()
            .map(|n| u64::from(*n))
            .sum();
        let until_s = until_b as f64 / 10.0;
        let windows: Vec<&DownWindow> = down
            .iter()
            .filter(|w| w.from_s >= t_s - 0.05 && w.from_s <= until_s)
            .filter(|w| {
                self.targets[s]
                    .iter()
                    .any(|t| labels.get(*t) == Some(&w.target))
            })
            .collect();
        let end_s = commits.len().saturating_sub(1) as f64 * BUCKET_US as f64 / 1e6;
        let full_rate_share = full_rate_share(commits, t_b, need);
        Recovery {
            scope: self.scopes[s].clone(),
            rate_before,
            first_commit_s: first,
            recovered_s: recovered,
            failed,
            reconnects: windows.iter().map(|w| w.sessions_lost).sum(),
            down_s: Some(round1(down_length(&windows, end_s))),
            full_rate_share,
        }
    }
}

/// Of the whole 1 s windows laid from bucket `from` to the end of `commits`, the share whose
/// commits reach `need` (the full rate); `None` with no such window or no rate to reach.
fn full_rate_share(commits: &[u32], from: usize, need: f64) -> Option<f64> {
    if need <= 0.0 {
        return None;
    }
    let windows: Vec<u32> = commits
        .get(from..)?
        .chunks_exact(WINDOW_BUCKETS)
        .map(|w| w.iter().sum())
        .collect();
    if windows.is_empty() {
        return None;
    }
    let full = windows.iter().filter(|n| f64::from(**n) >= need).count();
    Some((full as f64 / windows.len() as f64 * 1000.0).round() / 1000.0)
}

/// The time at least one of `windows` was open (overlapping windows of several targets count
/// once); a window still open counts to `end_s`.
fn down_length(windows: &[&DownWindow], end_s: f64) -> f64 {
    let mut spans: Vec<(f64, f64)> = windows
        .iter()
        .map(|w| (w.from_s, w.to_s.unwrap_or(end_s).max(w.from_s)))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut open: Option<(f64, f64)> = None;
    for (from, to) in spans {
        open = match open {
            Some((a, b)) if from <= b => Some((a, b.max(to))),
            Some((a, b)) => {
                total += b - a;
                Some((from, to))
            }
            None => Some((from, to)),
        };
    }
    total + open.map_or(0.0, |(a, b)| b - a)
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// `v`, or 0 (never -0, which would print as "-0.0").
fn at_least_zero(v: f64) -> f64 {
    if v > 0.0 {
        v
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(end_ms: u64, target: u16, outcome: u8) -> MixRecord {
        MixRecord {
            end_us: end_ms * 1000,
            latency_us: 1000,
            client: 0,
            segment: 0,
            target,
            txn: 0,
            outcome,
            retries: 0,
        }
    }

    /// Target 0 (group A) commits every 10 ms but for [5 s, 8 s), failing at 5.0 s; target
    /// 1 (group B) commits every 10 ms throughout.
    fn timeline(after_ms: u64) -> Timeline {
        let mut r = Vec::new();
        for ms in (5..12_000).step_by(10) {
            if !(5_000..8_000).contains(&ms) {
                r.push(rec(ms, 0, 0));
            }
            r.push(rec(ms, 1, 0));
        }
        r.push(rec(5_001, 0, 4));
        Timeline::build(
            r.into_iter(),
            &["A".into(), "B".into()],
            &[0, 1],
            &[after_ms * 1000],
            12.0,
        )
    }

    #[test]
    fn a_gap_in_one_group_is_its_recovery_and_the_other_group_never_left() {
        let down = vec![DownWindow {
            target: "a".into(),
            from_s: 5.0,
            to_s: Some(8.0),
            sessions_lost: 3,
        }];
        let labels = vec!["a".to_string(), "b".to_string()];
        let r = timeline(5_000).recovery(0, 5.0, &down, &labels);
        let a = &r[1];
        assert_eq!(a.scope, "A");
        assert!((a.rate_before - 100.0).abs() < 1.0, "{a:?}");
        assert_eq!(a.first_commit_s, Some(3.0));
        // Windows start at the first commit: from 8.0 s, A's full rate.
        assert_eq!(a.recovered_s, Some(3.0));
        assert_eq!((a.failed, a.reconnects, a.down_s), (1, 3, Some(3.0)));
        let b = &r[2];
        assert_eq!(
            (b.recovered_s, b.failed, b.reconnects, b.down_s),
            (Some(0.0), 0, 0, Some(0.0))
        );
        // All of the run: half its rate was gone, and 90 % of it is back a bucket before A's.
        assert_eq!(r[0].recovered_s, Some(2.8));
        // From 5 s to 12 s: A ran at full rate in 4 of its 7 whole seconds, B in all.
        assert_eq!(a.full_rate_share, Some(0.571));
        assert_eq!(b.full_rate_share, Some(1.0));
    }

    #[test]
    fn overlapping_down_windows_count_once_and_an_open_one_to_the_end() {
        let w = |target: &str, from_s, to_s| DownWindow {
            target: target.into(),
            from_s,
            to_s,
            sessions_lost: 1,
        };
        let (a, b, c) = (
            w("a", 1.0, Some(3.0)),
            w("b", 2.0, Some(4.0)),
            w("a", 6.0, None),
        );
        assert!((down_length(&[&a, &b], 10.0) - 3.0).abs() < 1e-9);
        assert!((down_length(&[&c, &a], 10.0) - 6.0).abs() < 1e-9);
        assert_eq!(down_length(&[], 10.0), 0.0);
    }

    #[test]
    fn no_commit_after_the_event_is_not_recovered() {
        let r = timeline(11_999).recovery(0, 5.0, &[], &["a".into(), "b".into()]);
        assert_eq!(r[1].first_commit_s, None);
        assert_eq!(r[1].recovered_s, None);
    }

    #[test]
    fn the_csv_has_a_row_per_step() {
        let e = EventAccount {
            at_s: 2.0,
            action: "fail".into(),
            target: "a".into(),
            description: "fail a, restarted after 1s".into(),
            steps: vec![
                EventStep {
                    step: "fail".into(),
                    started_s: 2.001,
                    ended_s: Some(2.002),
                    outcome: StepOutcome::Ok,
                    detail: "SIGKILL of postmaster 1, 2 processes".into(),
                },
                EventStep {
                    step: "restart".into(),
                    started_s: 3.0,
                    ended_s: None,
                    outcome: StepOutcome::Cut,
                    detail: String::new(),
                },
            ],
            recovery: Vec::new(),
            lost_commits: None,
        };
        let csv = events_csv(&[e]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], EVENTS_HEADER);
        assert_eq!(
            lines[1],
            "1,2.000,fail,a,fail,2.001,2.002,ok,\"SIGKILL of postmaster 1, 2 processes\""
        );
        assert_eq!(lines[2], "1,2.000,fail,a,restart,3.000,,cut,");
    }
}
