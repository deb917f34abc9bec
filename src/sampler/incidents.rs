//! Incidents of a managed instance during a run (issue 15, item 5): the kernel's OOM killer
//! striking in its cgroup, server processes killed, crash-recovery restarts, the server gone.
//! Watched once per sampling round beside the instance's other samples, from three sources:
//!
//! - the cgroup's OOM kill counter (v1 `memory.oom_control`, v2 `memory.events` `oom_kill`,
//!   read by `cgroup`): any growth is an `oom_kill` incident;
//! - `server.log`, only what was appended since the run started, read on from where the last
//!   round stopped: `... was terminated by signal N` is `backend_killed`, `all server
//!   processes terminated; reinitializing` is `crash_restart` (PostgreSQL's crash recovery);
//!   managed instances are created with the C locale, so these messages are in English;
//! - the postmaster (`postmaster.pid` and its process): gone is `server_down` (crash recovery
//!   that was itself OOM-killed ends in "shutting down due to startup process failure"; a
//!   postmaster without protection may be OOM-killed), another pid is a `crash_restart` too
//!   (the server was started again).
//!
//! The first check only takes the starting point (counter, log size, pid): what happened before
//! the run is not the run's.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use crate::event::{Incident, IncidentKind};

/// At most this much of server.log is read per round, so a log that grows wildly cannot make
/// a round slow or large; the rest is read in the next rounds.
const MAX_READ: u64 = 1 << 20;
/// A line longer than this without its end is dropped (no server message is that long).
const MAX_PARTIAL: usize = 64 << 10;

/// What lines of server.log say about crashes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LogFindings {
    /// Messages of server processes terminated by a signal, in order.
    pub killed: Vec<String>,
    /// Crash-recovery reinitializations.
    pub restarts: u64,
    /// The server accepted connections again after the last reinitialization of these lines.
    pub ready_after_restart: bool,
    /// The last message saying why the postmaster shut down, if any.
    pub shutdown: Option<String>,
}

/// Scans complete lines of server.log.
pub fn scan_log(lines: &str) -> LogFindings {
    let mut f = LogFindings::default();
    for line in lines.lines() {
        let message = line
            .find("LOG:")
            .map_or(line, |at| &line[at + "LOG:".len()..])
            .trim();
        if message.contains("was terminated by signal") {
            f.killed.push(message.to_string());
        } else if message.contains("all server processes terminated; reinitializing") {
            f.restarts += 1;
            f.ready_after_restart = false;
        } else if f.restarts > 0
            && message.contains("database system is ready to accept connections")
        {
            f.ready_after_restart = true;
        } else if message.contains("shutting down due to")
            || message.contains("database system is shut down")
        {
            // The first reason given is the one to keep ("... startup process failure").
            f.shutdown.get_or_insert_with(|| message.to_string());
        }
    }
    f
}

/// The incidents one round's findings make, at `t_s`.
fn from_log(f: &LogFindings, instance: &str, t_s: f64) -> Vec<Incident> {
    let mut out = Vec::new();
    if let Some(first) = f.killed.first() {
        let more = f.killed.len() - 1;
        out.push(Incident {
            t_s,
            instance: instance.to_string(),
            kind: IncidentKind::BackendKilled,
            count: f.killed.len() as u64,
            detail: if more == 0 {
                first.clone()
            } else {
                format!("{first} (and {more} more)")
            },
        });
    }
    if f.restarts > 0 {
        let state = if f.ready_after_restart {
            "accepting connections again"
        } else {
            "not accepting connections yet"
        };
        out.push(Incident {
            t_s,
            instance: instance.to_string(),
            kind: IncidentKind::CrashRestart,
            count: f.restarts,
            detail: format!(
                "all server processes terminated and reinitialized (crash recovery); {state}"
            ),
        });
    }
    out
}

/// Where the watch started and has read up to.
#[derive(Debug)]
struct Position {
    log_offset: u64,
    /// The end of the log read so far that is not a whole line yet.
    partial: Vec<u8>,
    oom_kills: Option<u64>,
    /// The last postmaster pid seen running.
    pid: Option<u32>,
    /// The postmaster ran at the last check.
    up: bool,
}

/// One managed instance's watch.
#[derive(Debug)]
pub struct IncidentWatch {
    instance: String,
    log: PathBuf,
    /// The cgroup's memory limit, for the OOM kill's detail.
    memory_limit: Option<u64>,
    oom: OomScope,
    at: Option<Position>,
}

/// Whose OOM kill counter this watch reports: a VM shared by several instances has one
/// counter, reported once.
#[derive(Debug, Clone, PartialEq, Eq)]
enum OomScope {
    /// The instance's own cgroup.
    Own,
    /// The shared VM's counter, reported here for all its instances.
    SharedVm { vm: String, instances: Vec<String> },
    /// Another instance of the same VM reports the counter.
    LeftTo,
}

impl IncidentWatch {
    pub fn new(instance: &str, log: PathBuf, memory_limit: Option<u64>) -> IncidentWatch {
        IncidentWatch {
            instance: instance.to_string(),
            log,
            memory_limit,
            oom: OomScope::Own,
            at: None,
        }
    }

    /// This watch reports the OOM kills of VM `vm`, which `instances` share.
    pub fn share_vm(&mut self, vm: &str, instances: &[&str]) {
        self.oom = OomScope::SharedVm {
            vm: vm.to_string(),
            instances: instances.iter().map(|s| s.to_string()).collect(),
        };
    }

    /// Another instance of this one's VM reports the VM's OOM kills.
    pub fn leave_oom_kills_to_vm(&mut self) {
        self.oom = OomScope::LeftTo;
    }

    /// This round's incidents at `t_s`, given the cgroup's OOM kill counter and the pid of
    /// the running postmaster as read now (`None` when unreadable, or when no postmaster
    /// runs). The first call takes the starting point and reports nothing.
    pub fn check(&mut self, t_s: f64, oom_kills: Option<u64>, pid: Option<u32>) -> Vec<Incident> {
        let Some(at) = &mut self.at else {
            self.at = Some(Position {
                log_offset: std::fs::metadata(&self.log).map_or(0, |m| m.len()),
                partial: Vec::new(),
                oom_kills,
                pid,
                up: pid.is_some(),
            });
            return Vec::new();
        };
        let mut out = Vec::new();
        if let (Some(before), Some(now)) = (at.oom_kills, oom_kills) {
            if now > before && self.oom != OomScope::LeftTo {
                let limit = self.memory_limit.map_or(String::new(), |m| {
                    format!(" (memory limit {})", crate::instance::format_size(m))
                });
                let group = match &self.oom {
                    OomScope::SharedVm { vm, instances } => {
                        format!("VM '{vm}' (shared by {})", instances.join(", "))
                    }
                    _ => "the instance's cgroup".to_string(),
                };
                out.push(Incident {
                    t_s,
                    instance: self.instance.clone(),
                    kind: IncidentKind::OomKill,
                    count: now - before,
                    detail: format!(
                        "the OOM killer struck in {group}: oom_kill {before} -> {now}{limit}"
                    ),
                });
            }
        }
        // A counter that went back belongs to a cgroup made anew: count on from its value.
        at.oom_kills = oom_kills.or(at.oom_kills);
        let lines = read_appended(&self.log, at);
        let found = scan_log(&lines);
        out.extend(from_log(&found, &self.instance, t_s));
        if at.up && pid.is_none() {
            let why = found.shutdown.unwrap_or_else(|| match at.pid {
                Some(p) => format!("the postmaster (pid {p}) is gone"),
                None => "the postmaster is gone".to_string(),
            });
            out.push(Incident {
                t_s,
                instance: self.instance.clone(),
                kind: IncidentKind::ServerDown,
                count: 1,
                detail: format!("the server stopped: {why}"),
            });
        }
        at.up = pid.is_some();
        if let (Some(before), Some(now)) = (at.pid, pid) {
            if now != before {
                out.push(Incident {
                    t_s,
                    instance: self.instance.clone(),
                    kind: IncidentKind::CrashRestart,
                    count: 1,
                    detail: format!(
                        "the postmaster's pid changed from {before} to {now}: the server was restarted"
                    ),
                });
            }
        }
        at.pid = pid.or(at.pid);
        out
    }
}

/// The whole lines appended to `log` since `at`, moving `at` on. A log that shrank was
/// replaced: it is read from its start. Unreadable: nothing, try again next round.
fn read_appended(log: &std::path::Path, at: &mut Position) -> String {
    let Ok(mut file) = std::fs::File::open(log) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if len < at.log_offset {
        at.log_offset = 0;
        at.partial.clear();
    }
    let want = (len - at.log_offset).min(MAX_READ);
    if want == 0 || file.seek(SeekFrom::Start(at.log_offset)).is_err() {
        return String::new();
    }
    let mut chunk = Vec::with_capacity(want as usize);
    let Ok(got) = file.take(want).read_to_end(&mut chunk) else {
        return String::new();
    };
    at.log_offset += got as u64;
    at.partial.extend_from_slice(&chunk);
    let whole = match at.partial.iter().rposition(|b| *b == b'\n') {
        Some(end) => {
            let rest = at.partial.split_off(end + 1);
            std::mem::replace(&mut at.partial, rest)
        }
        None => Vec::new(),
    };
    if at.partial.len() > MAX_PARTIAL {
        at.partial.clear();
    }
    String::from_utf8_lossy(&whole).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// server.log of an instance whose backend the OOM killer took (PostgreSQL 15).
    const CRASH: &str = "\
2026-11-23 21:11:54.248 UTC [30028] LOG:  server process (PID 30653) was terminated by signal 9: Killed
2026-11-23 21:11:54.248 UTC [30028] DETAIL:  Failed process was running: SELECT abalance FROM pgbench_accounts WHERE aid = $1;
2026-11-23 21:11:54.249 UTC [30028] LOG:  terminating any other active server processes
2026-11-23 21:11:54.258 UTC [30659] FATAL:  the database system is in recovery mode
2026-11-23 21:11:54.267 UTC [30028] LOG:  all server processes terminated; reinitializing
2026-11-23 21:11:54.291 UTC [30666] LOG:  database system was interrupted; last known up at 2026-11-23 21:11:53 UTC
2026-11-23 21:11:54.291 UTC [30666] LOG:  database system was not properly shut down; automatic recovery in progress
2026-11-23 21:11:54.297 UTC [30028] LOG:  database system is ready to accept connections
";

    #[test]
    fn scans_a_crash_restart() {
        let f = scan_log(CRASH);
        assert_eq!(
            f.killed,
            vec!["server process (PID 30653) was terminated by signal 9: Killed".to_string()]
        );
        assert_eq!((f.restarts, f.ready_after_restart), (1, true));
        // The start of a server is not a restart.
        let start = "LOG:  database system is ready to accept connections\n";
        assert_eq!(scan_log(start), LogFindings::default());
        let incidents = from_log(&f, "vm1", 3.5);
        assert_eq!(incidents.len(), 2);
        assert_eq!(incidents[0].kind, IncidentKind::BackendKilled);
        assert_eq!(incidents[1].kind, IncidentKind::CrashRestart);
        assert!(incidents[1].detail.contains("accepting connections again"));
        let cut = CRASH.lines().take(5).collect::<Vec<_>>().join("\n");
        assert!(!scan_log(&cut).ready_after_restart);
    }

    #[test]
    fn reports_oom_kills_log_lines_and_pid_changes_after_the_start() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("server.log");
        std::fs::write(
            &log,
            "LOG:  server process (PID 1) was terminated by signal 9: Killed\n",
        )
        .unwrap();
        let mut w = IncidentWatch::new("vm1", log.clone(), Some(96 << 20));
        // What was there before the run is not the run's.
        assert!(w.check(0.0, Some(4), Some(100)).is_empty());
        assert!(w.check(1.0, Some(4), Some(100)).is_empty());
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        // Half a line: nothing until its end is written.
        write!(f, "{}", &CRASH[..40]).unwrap();
        let got = w.check(2.0, Some(6), Some(100));
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].kind, got[0].count), (IncidentKind::OomKill, 2));
        assert!(got[0].detail.contains("4 -> 6") && got[0].detail.contains("96MiB"));
        write!(f, "{}", &CRASH[40..]).unwrap();
        let got = w.check(3.0, Some(6), Some(100));
        let kinds: Vec<IncidentKind> = got.iter().map(|i| i.kind).collect();
        assert_eq!(
            kinds,
            vec![IncidentKind::BackendKilled, IncidentKind::CrashRestart]
        );
        assert!(got.iter().all(|i| i.t_s == 3.0 && i.instance == "vm1"));
        // The postmaster gone is one incident, not one per round; another pid is a restart.
        let got = w.check(4.0, Some(6), None);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].kind, IncidentKind::ServerDown);
        assert!(got[0].detail.contains("(pid 100) is gone"), "{got:?}");
        assert!(w.check(4.5, Some(6), None).is_empty());
        let got = w.check(5.0, Some(6), Some(200));
        assert_eq!(got.len(), 1);
        assert!(got[0].detail.contains("100 to 200"), "{got:?}");
        // A log replaced by a shorter one is read from its start.
        std::fs::write(
            &log,
            "LOG:  all server processes terminated; reinitializing\n",
        )
        .unwrap();
        let got = w.check(6.0, Some(6), Some(200));
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].kind, IncidentKind::CrashRestart);
    }

    #[test]
    fn a_failed_crash_recovery_stops_the_server() {
        let log = "\
LOG:  all server processes terminated; reinitializing
LOG:  startup process (PID 10980) was terminated by signal 9: Killed
LOG:  terminating any other active server processes
LOG:  shutting down due to startup process failure
LOG:  database system is shut down
";
        let f = scan_log(log);
        assert_eq!(f.killed.len(), 1);
        assert_eq!(
            f.shutdown.as_deref(),
            Some("shutting down due to startup process failure")
        );
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("server.log");
        std::fs::write(&path, "").unwrap();
        let mut w = IncidentWatch::new("vm1", path.clone(), None);
        assert!(w.check(0.0, Some(0), Some(7)).is_empty());
        std::fs::write(&path, log).unwrap();
        let got = w.check(1.0, Some(1), None);
        let down = got
            .iter()
            .find(|i| i.kind == IncidentKind::ServerDown)
            .unwrap();
        assert_eq!(
            down.detail,
            "the server stopped: shutting down due to startup process failure"
        );
    }

    #[test]
    fn a_missing_log_or_counter_is_no_incident() {
        let mut w = IncidentWatch::new("vm1", PathBuf::from("/nonexistent/server.log"), None);
        assert!(w.check(0.0, None, None).is_empty());
        assert!(w.check(1.0, None, None).is_empty());
        assert!(w.check(2.0, Some(3), None).is_empty(), "no starting value");
        assert!(w.check(3.0, Some(3), None).is_empty());
        assert_eq!(w.check(4.0, Some(4), None).len(), 1);
    }

    #[test]
    fn a_shared_vm_s_oom_kill_is_reported_once_naming_its_instances() {
        let tmp = tempfile::tempdir().unwrap();
        let mut watches = ["a", "b"].map(|name| {
            let log = tmp.path().join(format!("{name}.log"));
            std::fs::write(&log, "").unwrap();
            IncidentWatch::new(name, log, None)
        });
        watches[0].share_vm("host/vm1", &["a", "b"]);
        watches[1].leave_oom_kills_to_vm();
        for w in &mut watches {
            assert!(w.check(0.0, Some(0), Some(1)).is_empty());
        }
        let got: Vec<Incident> = watches
            .iter_mut()
            .flat_map(|w| w.check(1.0, Some(1), Some(1)))
            .collect();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].instance.as_str(), got[0].count), ("a", 1));
        assert!(
            got[0].detail.contains("VM 'host/vm1' (shared by a, b)"),
            "{got:?}"
        );
    }
}
