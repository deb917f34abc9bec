//! `[[event]]` tables of a run file or preset: what the run does to one of its own managed
//! instances at a time on the run's clock (issue 53). They are called disruptions in the code,
//! since the sink's messages are already `Event`s. Validation only (no I/O): an unknown target,
//! a time past the run's end or an action's missing option is refused here; what needs the
//! instance's record (is it a VM, has it a cgroup) is checked by the runner before anything
//! starts.
//!
//! ```toml
//! [[event]]
//! at = "20s"              # seconds into the run (the default is 0)...
//! phase = "peak"          # ...or, with phase, into the first start of that phase
//! action = "fail"         # fail | freeze | resize | sql
//! target = "vm-a"         # a managed instance one of the run's groups uses
//! restart_after = "5s"    # fail: start it again this long after the event (default: never)
//!
//! [[event]]
//! at = "40s"
//! action = "freeze"
//! target = "vm-b"
//! for = "3s"              # freeze: thawed this long after the event
//!
//! [[event]]
//! at = "50s"
//! action = "sql"
//! target = "vm-a"
//! sql = "CHECKPOINT"      # run as the superuser in `dbname` (default: postgres)
//!
//! [[event]]
//! at = "60s"
//! action = "resize"
//! target = "vm-b"
//! memory = "512MiB"       # and/or cpus = 0.5; a VM: memory only, through its balloon
//! for = "30s"             # optional: else until the run's end, which restores the limits
//!
//! [[event]]
//! at = "70s"
//! action = "fail"         # the primary dies...
//! target = "a"
//!
//! [[event]]
//! at = "71s"
//! action = "promote"      # ...and its standby takes over a second later (issue 54)
//! target = "b"            # made with `instance start b --standby-of a`; the run uses a and b
//!
//! [[event]]
//! at = "80s"
//! action = "failover"     # both in one event: kill the primary `target`, promote its standby
//! target = "a"            # the primary, a managed instance the run uses
//! standby = "b"           # made with `instance start b --standby-of a`; the run uses it too
//! promote_after = "1s"    # promote this long after the kill (default: at once)
//!
//! [[event]]
//! at = "100s"
//! action = "noise"        # a noisy neighbour in its own cgroup beside the instances (stress-ng)
//! noise = "cpu"           # cpu (cpus = cores) | memory (memory = size) | io (workers = N)
//! cpus = 1.0
//! for = "20s"
//! ```
//!
//! A new action is a new [`Action`] variant, its options here and its steps in the runner's
//! `disrupt`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::duration::{format_duration, parse_duration, serde_duration};
use super::groups::Source;
use super::instances::{CPUS, MIN_MEMORY};
use super::plan::RunPlan;
use super::size::{format_size, parse_size};
use super::timeline::{segments, SegmentKind};
use super::ConfigError;

/// One `[[event]]` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    pub at: Option<String>,
    pub phase: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
    pub restart_after: Option<String>,
    #[serde(rename = "for")]
    pub lasts: Option<String>,
    pub sql: Option<String>,
    pub dbname: Option<String>,
    pub cpus: Option<f64>,
    pub memory: Option<String>,
    /// noise: `cpu`, `memory` or `io`.
    pub noise: Option<String>,
    /// noise = "io": stress-ng's hdd workers.
    pub workers: Option<u32>,
    /// failover: the standby promoted.
    pub standby: Option<String>,
    /// failover: how long after the kill the standby is promoted.
    pub promote_after: Option<String>,
}

/// What a noisy neighbour does, and how much of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "noise", rename_all = "lowercase")]
pub enum Noise {
    /// Busy CPUs held to `cpus` cores by the noise group's quota.
    Cpu { cpus: f64 },
    /// Memory touched and kept.
    Memory { bytes: u64 },
    /// Workers writing and reading files in the home.
    Io { workers: u32 },
}

impl Noise {
    /// "CPU noise of 1.5 cores".
    pub fn describe(&self) -> String {
        match self {
            Noise::Cpu { cpus } => format!("CPU noise of {cpus} cores"),
            Noise::Memory { bytes } => format!("memory noise of {}", format_size(*bytes)),
            Noise::Io { workers } => format!("IO noise of {workers} workers"),
        }
    }
}

/// The target a noise event names: it runs beside the instances, on no one of them.
pub const HOST: &str = "host";

/// What a disruption does to its target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Action {
    /// Kill the server at once (SIGKILL of a local postmaster and its processes, QMP `quit`
    /// of a VM), as a host that loses power; started again after `restart_after` if given.
    Fail {
        #[serde(
            default,
            with = "serde_duration::option",
            skip_serializing_if = "Option::is_none"
        )]
        restart_after: Option<Duration>,
    },
    /// Stop the server without killing it (SIGSTOP of the postmaster, then its children; QMP
    /// `stop` of a VM) and let it go on after `lasts`.
    Freeze {
        #[serde(with = "serde_duration")]
        lasts: Duration,
    },
    /// Run one statement as the superuser; its duration is recorded.
    Sql { statement: String, dbname: String },
    /// Change a local instance's cgroup CPU quota or memory limit, or a VM's memory through
    /// its balloon, for `lasts` (else the rest of the run); the instance's recorded limits
    /// are not rewritten, and the run's end restores them.
    Resize {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpus: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory: Option<u64>,
        #[serde(
            default,
            with = "serde_duration::option",
            skip_serializing_if = "Option::is_none"
        )]
        lasts: Option<Duration>,
    },
    /// Kill the primary (as `Fail`) and promote its streaming standby `standby` after
    /// `promote_after`; clients of an `instance:a,b` target follow it to the new primary.
    Failover {
        standby: String,
        #[serde(with = "serde_duration")]
        promote_after: Duration,
    },
    /// Promote the streaming standby `target` (`pg_ctl promote`): it ends recovery and takes
    /// writes. Its primary is usually failed by an earlier `fail` event; the commits the
    /// standby never received are counted from the old primary's WAL.
    Promote,
    /// A noisy neighbour in its own control group beside the instances for `lasts`.
    Noise {
        #[serde(flatten)]
        noise: Noise,
        #[serde(with = "serde_duration")]
        lasts: Duration,
    },
}

impl Action {
    /// The action's name as a run file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Fail { .. } => "fail",
            Action::Freeze { .. } => "freeze",
            Action::Sql { .. } => "sql",
            Action::Resize { .. } => "resize",
            Action::Noise { .. } => "noise",
            Action::Failover { .. } => "failover",
            Action::Promote => "promote",
        }
    }

    /// "fail vm-a, restarted after 5s".
    pub fn describe_on(&self, target: &str) -> String {
        match self {
            Action::Fail {
                restart_after: Some(d),
            } => format!("fail {target}, restarted after {}", format_duration(*d)),
            Action::Fail {
                restart_after: None,
            } => format!("fail {target}, not restarted"),
            Action::Freeze { lasts } => format!("freeze {target} for {}", format_duration(*lasts)),
            Action::Sql { statement, dbname } => format!("sql on {target}/{dbname}: {statement}"),
            Action::Resize {
                cpus,
                memory,
                lasts,
            } => {
                let mut to = Vec::new();
                if let Some(c) = cpus {
                    to.push(format!("{c} CPUs"));
                }
                if let Some(m) = memory {
                    to.push(format_size(*m));
                }
                let how_long = match lasts {
                    Some(d) => format!("for {}", format_duration(*d)),
                    None => "for the rest of the run".into(),
                };
                format!("resize {target} to {} {how_long}", to.join(" and "))
            }
            Action::Noise { noise, lasts } => {
                format!("{} for {}", noise.describe(), format_duration(*lasts))
            }
            Action::Failover {
                standby,
                promote_after,
            } => format!(
                "failover of {target} to {standby}, promoted after {}",
                format_duration(*promote_after)
            ),
            Action::Promote => format!("promote standby {target}"),
        }
    }
}

/// One validated `[[event]]`: an action on a managed instance at a time on the run's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disruption {
    /// Offset from the run's start (phases included, ramp-up first).
    #[serde(with = "serde_duration")]
    pub at: Duration,
    /// The managed instance acted on.
    pub target: String,
    #[serde(flatten)]
    pub action: Action,
}

impl Disruption {
    /// "at 20s: fail vm-a, restarted after 5s".
    pub fn describe(&self) -> String {
        format!(
            "at {}: {}",
            format_duration(self.at),
            self.action.describe_on(&self.target)
        )
    }
}

/// The managed instances the run's groups reach (a disruption may act on these only).
pub fn instances_used(plan: &RunPlan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in plan
        .groups
        .iter()
        .flat_map(|g| &g.sets)
        .flat_map(|s| s.targets.values())
    {
        for name in t.instances() {
            if !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// Validates the `[[event]]` tables against the plan they belong to, in time order.
pub fn disruptions(
    src: &Source,
    raw: &[Spanned<RawEvent>],
    plan: &RunPlan,
) -> Result<Vec<Disruption>, ConfigError> {
    let used = instances_used(plan);
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let fail = |m: String| src.error(r.span(), format!("event {}: {m}", i + 1));
        out.push(one(r.get_ref(), plan, &used).map_err(fail)?);
    }
    out.sort_by_key(|d| d.at);
    Ok(out)
}

fn one(r: &RawEvent, plan: &RunPlan, used: &[String]) -> Result<Disruption, String> {
    let at = when(r, plan)?;
    let action = action(r)?;
    if matches!(action, Action::Noise { .. }) {
        if let Some(t) = r.target.as_ref().filter(|t| *t != HOST) {
            return Err(format!(
                "noise runs beside the instances, not on '{t}'; leave `target` out"
            ));
        }
        return Ok(Disruption {
            at,
            target: HOST.into(),
            action,
        });
    }
    let target = r
        .target
        .clone()
        .ok_or("it has no target; add target = \"NAME\", a managed instance the run uses")?;
    if !used.contains(&target) {
        let known = if used.is_empty() {
            "the run uses no managed instance (events act on instance:NAME targets)".to_string()
        } else {
            format!("the run's managed instances are {}", used.join(", "))
        };
        return Err(format!("unknown target '{target}': {known}"));
    }
    if let Action::Failover { standby, .. } = &action {
        if *standby == target {
            return Err(format!(
                "standby '{standby}' is the target; name the primary in `target` and its \
                 standby in `standby`"
            ));
        }
        if !used.contains(standby) {
            return Err(format!(
                "standby '{standby}' is not used by the run; give the groups a target over \
                 both, e.g. target = \"instance:{target},{standby}\", so clients follow the \
                 promotion"
            ));
        }
    }
    Ok(Disruption { at, target, action })
}

/// The event's offset from the run's start; refused past the run's end.
fn when(r: &RawEvent, plan: &RunPlan) -> Result<Duration, String> {
    let offset = match &r.at {
        Some(t) => parse_duration(t).map_err(|m| format!("at: {m}"))?,
        None => Duration::ZERO,
    };
    let base = match &r.phase {
        None => Duration::ZERO,
        Some(name) => segments(plan)
            .into_iter()
            .find(|s| s.kind == SegmentKind::Phase && &s.label == name)
            .map(|s| s.start)
            .ok_or_else(|| {
                let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
                format!(
                    "phase '{name}' is not one of the run's phases ({})",
                    names.join(", ")
                )
            })?,
    };
    let at = base + offset;
    let end = plan.total_duration();
    if at >= end {
        return Err(format!(
            "it is at {}, past the run's end at {}; give an earlier `at` or a longer run",
            format_duration(at),
            format_duration(end)
        ));
    }
    Ok(at)
}

fn action(r: &RawEvent) -> Result<Action, String> {
    let name = r.action.as_deref().ok_or(
        "it has no action; add action = \"fail\", \"promote\", \"failover\", \"freeze\", \
         \"resize\", \"noise\" or \"sql\"",
    )?;
    let only = |key: &str, given: bool| -> Result<(), String> {
        if given {
            Err(format!(
                "`{key}` does not apply to action \"{name}\"; remove it"
            ))
        } else {
            Ok(())
        }
    };
    let action = match name {
        "fail" => {
            only("for", r.lasts.is_some())?;
            Action::Fail {
                restart_after: match &r.restart_after {
                    Some(t) => Some(parse_duration(t).map_err(|m| format!("restart_after: {m}"))?),
                    None => None,
                },
            }
        }
        "freeze" => {
            only("restart_after", r.restart_after.is_some())?;
            let lasts = r.lasts.as_deref().ok_or(
                "a freeze needs `for`, how long the server stays stopped (e.g. for = \"5s\")",
            )?;
            let lasts = parse_duration(lasts).map_err(|m| format!("for: {m}"))?;
            if lasts.is_zero() {
                return Err("for: a freeze of 0s does nothing; give a positive duration".into());
            }
            Action::Freeze { lasts }
        }
        "sql" => {
            only("restart_after", r.restart_after.is_some())?;
            only("for", r.lasts.is_some())?;
            let statement = r.sql.clone().filter(|s| !s.trim().is_empty()).ok_or(
                "action \"sql\" needs `sql`, the statement to run (e.g. sql = \"CHECKPOINT\")",
            )?;
            Action::Sql {
                statement,
                dbname: r.dbname.clone().unwrap_or_else(|| "postgres".into()),
            }
        }
        "resize" => resize(r, &only)?,
        "noise" => noise(r, &only)?,
        "failover" => {
            only("restart_after", r.restart_after.is_some())?;
            only("for", r.lasts.is_some())?;
            let standby = r
                .standby
                .clone()
                .ok_or("a failover needs `standby`, the standby promoted (e.g. standby = \"b\")")?;
            let promote_after = match &r.promote_after {
                Some(t) => parse_duration(t).map_err(|m| format!("promote_after: {m}"))?,
                None => Duration::ZERO,
            };
            Action::Failover {
                standby,
                promote_after,
            }
        }
        "promote" => {
            only("restart_after", r.restart_after.is_some())?;
            only("for", r.lasts.is_some())?;
            Action::Promote
        }
        other => {
            return Err(format!(
                "unknown action '{other}'; use \"fail\", \"promote\", \"failover\", \
                 \"freeze\", \"resize\", \"noise\" or \"sql\""
            ))
        }
    };
    if !matches!(action, Action::Failover { .. }) {
        only("standby", r.standby.is_some())?;
        only("promote_after", r.promote_after.is_some())?;
    }
    if !matches!(action, Action::Resize { .. } | Action::Noise { .. }) {
        only("cpus", r.cpus.is_some())?;
        only("memory", r.memory.is_some())?;
    }
    if !matches!(action, Action::Noise { .. }) {
        only("noise", r.noise.is_some())?;
        only("workers", r.workers.is_some())?;
    }
    if !matches!(action, Action::Sql { .. }) {
        only("sql", r.sql.is_some())?;
        only("dbname", r.dbname.is_some())?;
    }
    Ok(action)
}

fn resize(r: &RawEvent, only: &dyn Fn(&str, bool) -> Result<(), String>) -> Result<Action, String> {
    only("restart_after", r.restart_after.is_some())?;
    let cpus = r.cpus;
    if let Some(c) = cpus.filter(|c| !CPUS.contains(c)) {
        return Err(format!(
            "cpus = {c}: give a CPU quota in cores from {} to {}",
            CPUS.start(),
            CPUS.end()
        ));
    }
    let memory = match &r.memory {
        Some(m) => {
            let bytes = parse_size(m).map_err(|e| format!("memory: {e}"))?;
            if bytes < MIN_MEMORY {
                return Err(format!(
                    "memory = {m:?} is below {}, too small for a server",
                    format_size(MIN_MEMORY)
                ));
            }
            Some(bytes)
        }
        None => None,
    };
    if cpus.is_none() && memory.is_none() {
        return Err("a resize needs `cpus`, `memory` or both (e.g. memory = \"512MiB\")".into());
    }
    let lasts = match &r.lasts {
        Some(t) => Some(parse_duration(t).map_err(|m| format!("for: {m}"))?),
        None => None,
    };
    Ok(Action::Resize {
        cpus,
        memory,
        lasts,
    })
}

fn noise(r: &RawEvent, only: &dyn Fn(&str, bool) -> Result<(), String>) -> Result<Action, String> {
    only("restart_after", r.restart_after.is_some())?;
    let lasts = r
        .lasts
        .as_deref()
        .ok_or("noise needs `for`, how long it lasts (e.g. for = \"10s\")")?;
    let lasts = parse_duration(lasts).map_err(|m| format!("for: {m}"))?;
    if lasts < Duration::from_secs(1) {
        return Err("for: noise lasts at least 1s".into());
    }
    let kind = r
        .noise
        .as_deref()
        .ok_or("noise needs `noise`, its kind: \"cpu\", \"memory\" or \"io\"")?;
    let noise = match kind {
        "cpu" => {
            only("memory", r.memory.is_some())?;
            only("workers", r.workers.is_some())?;
            let cpus = r
                .cpus
                .ok_or("CPU noise needs `cpus`, its size in cores (e.g. cpus = 1.5)")?;
            if !CPUS.contains(&cpus) {
                return Err(format!(
                    "cpus = {cpus}: give cores from {} to {}",
                    CPUS.start(),
                    CPUS.end()
                ));
            }
            Noise::Cpu { cpus }
        }
        "memory" => {
            only("cpus", r.cpus.is_some())?;
            only("workers", r.workers.is_some())?;
            let m = r
                .memory
                .as_deref()
                .ok_or("memory noise needs `memory`, its size (e.g. memory = \"1GiB\")")?;
            Noise::Memory {
                bytes: parse_size(m).map_err(|e| format!("memory: {e}"))?,
            }
        }
        "io" => {
            only("cpus", r.cpus.is_some())?;
            only("memory", r.memory.is_some())?;
            let workers = r.workers.unwrap_or(1);
            if workers == 0 {
                return Err("workers = 0: IO noise needs at least 1 worker".into());
            }
            Noise::Io { workers }
        }
        other => {
            return Err(format!(
                "noise = \"{other}\" is not a kind of noise; use \"cpu\", \"memory\" or \"io\""
            ))
        }
    };
    Ok(Action::Noise { noise, lasts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{parse_run_text, validate_run};
    use crate::workload::Registry;

    const RUN: &str = "ramp_up = \"5s\"\n\
        [[group]]\nname = \"A\"\nworkload = \"select-only\"\ninstance = \"a\"\n\
        [[phase]]\nname = \"calm\"\nduration = \"20s\"\nshares = { A = 100 }\n\
        [[phase]]\nname = \"peak\"\nduration = \"20s\"\nshares = { A = 100 }\n";

    fn plan(events: &str) -> Result<RunPlan, ConfigError> {
        plan_of(&format!("{RUN}{events}"))
    }

    fn plan_of(text: &str) -> Result<RunPlan, ConfigError> {
        let src = Source {
            file: "run.toml",
            text,
        };
        let raw = parse_run_text(&src, &Registry)?;
        validate_run(&src, raw, 2, 1, &Registry)
    }

    #[test]
    fn events_come_in_time_order_with_a_phase_counted_from_its_start() {
        let p = plan(
            "[[event]]\nphase = \"peak\"\nat = \"3s\"\naction = \"freeze\"\ntarget = \"a\"\nfor = \"2s\"\n\
             [[event]]\nat = \"10s\"\naction = \"fail\"\ntarget = \"a\"\nrestart_after = \"4s\"\n",
        )
        .unwrap();
        let at: Vec<u64> = p.events.iter().map(|e| e.at.as_secs()).collect();
        // Ramp-up 5 s, then calm's 20 s: peak starts at 25 s.
        assert_eq!(at, vec![10, 28]);
        assert_eq!(p.events[0].describe(), "at 10s: fail a, restarted after 4s");
        assert_eq!(p.events[1].describe(), "at 28s: freeze a for 2s");
    }

    #[test]
    fn the_plan_keeps_its_events_through_runtime_toml() {
        let p = plan(
            "[[event]]\nat = \"1s\"\naction = \"resize\"\ntarget = \"a\"\nmemory = \"256MiB\"\n\
             [[event]]\nat = \"2s\"\naction = \"sql\"\ntarget = \"a\"\nsql = \"CHECKPOINT\"\n",
        )
        .unwrap();
        let text = toml::to_string(&p).unwrap();
        let back: RunPlan = toml::from_str(&text).unwrap();
        assert_eq!(back.events, p.events, "{text}");
    }

    #[test]
    fn a_bad_event_names_its_line_and_the_fix() {
        let e = plan("[[event]]\nat = \"1s\"\naction = \"resize\"\ntarget = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("run.toml:"), "{e}");
        assert!(
            e.contains("event 1: a resize needs `cpus`, `memory`"),
            "{e}"
        );
        let e = plan("[[event]]\nat = \"1s\"\naction = \"fail\"\ntarget = \"a\"\nfor = \"1s\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`for` does not apply to action \"fail\""), "{e}");
        let e = plan("[[event]]\nat = \"45s\"\naction = \"fail\"\ntarget = \"a\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("past the run's end at 45s"), "{e}");
    }

    #[test]
    fn a_failover_names_a_standby_the_run_uses() {
        let failover = "[[event]]\nat = \"1s\"\naction = \"failover\"\ntarget = \"a\"\n";
        let e = plan(&format!("{failover}standby = \"b\"\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("standby 'b' is not used by the run"), "{e}");
        assert!(e.contains("\"instance:a,b\""), "{e}");
        let e = plan(failover).unwrap_err().to_string();
        assert!(e.contains("a failover needs `standby`"), "{e}");
        let e = plan(&format!("{failover}standby = \"b\"\nfor = \"1s\"\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`for` does not apply"), "{e}");
        let e =
            plan("[[event]]\nat = \"1s\"\naction = \"fail\"\ntarget = \"a\"\nstandby = \"b\"\n")
                .unwrap_err()
                .to_string();
        assert!(
            e.contains("`standby` does not apply to action \"fail\""),
            "{e}"
        );
        let both = RUN.replace("instance = \"a\"", "target = \"instance:a,b\"");
        let p = plan_of(&format!(
            "{both}{failover}standby = \"b\"\npromote_after = \"2s\"\n"
        ))
        .unwrap();
        assert_eq!(
            p.events[0].describe(),
            "at 1s: failover of a to b, promoted after 2s"
        );
        let e = plan_of(&format!("{both}{failover}standby = \"a\"\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("standby 'a' is the target"), "{e}");
    }

    #[test]
    fn a_promote_follows_a_fail_and_takes_no_options() {
        let both = RUN.replace("instance = \"a\"", "target = \"instance:a,b\"");
        let events = "[[event]]\nat = \"2s\"\naction = \"promote\"\ntarget = \"b\"\n\
                      [[event]]\nat = \"1s\"\naction = \"fail\"\ntarget = \"a\"\n";
        let p = plan_of(&format!("{both}{events}")).unwrap();
        let said: Vec<String> = p.events.iter().map(Disruption::describe).collect();
        assert_eq!(
            said,
            ["at 1s: fail a, not restarted", "at 2s: promote standby b"]
        );
        let text = toml::to_string(&p).unwrap();
        let back: RunPlan = toml::from_str(&text).unwrap();
        assert_eq!(back.events, p.events, "{text}");
        let promote = "[[event]]\nat = \"2s\"\naction = \"promote\"\ntarget = \"b\"\n";
        let e = plan_of(&format!("{both}{promote}for = \"1s\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`for` does not apply to action \"promote\""),
            "{e}"
        );
        let e = plan_of(&format!("{both}{promote}standby = \"a\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`standby` does not apply to action \"promote\""),
            "{e}"
        );
    }
}
