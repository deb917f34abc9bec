//! What `--profile` asks for (issue 29): which processes to sample, how often, and how to walk
//! their stacks. Validated here with no I/O; whether perf is there and may sample is the
//! profiler's own check at the run's start (`profile::preflight`).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// perf's default rate, off the timer tick's multiples so samples do not lock onto periodic work.
pub const DEFAULT_HZ: u32 = 99;
/// Far above any rate worth a benchmark's overhead, below perf's own ceiling
/// (`kernel.perf_event_max_sample_rate`, 100 000 by default and lowered by the kernel when
/// sampling gets expensive).
pub const MAX_HZ: u32 = 10_000;

/// Whose samples make the profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileScope {
    /// The processes of each managed instance and local server behind the targets (and the
    /// driver's own), each a profile of its own.
    Instances,
    /// The whole host as one profile besides those: what a guest sees (hypercalls, steal,
    /// other tenants, idle).
    Host,
}

/// How perf walks a sample's stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallGraph {
    /// Frame pointers: cheap, complete for binaries built with them (Debian's PostgreSQL
    /// 15 is; the kernel is).
    Fp,
    /// DWARF unwinding of a copy of the stack: for binaries without frame pointers, at about
    /// 8 KB per sample and a slower `perf script`.
    Dwarf,
}

impl CallGraph {
    /// perf record's `--call-graph` value.
    pub fn perf_arg(self) -> &'static str {
        match self {
            CallGraph::Fp => "fp",
            CallGraph::Dwarf => "dwarf",
        }
    }
}

/// A validated `--profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfilePlan {
    pub scope: ProfileScope,
    pub hz: u32,
    pub call_graph: CallGraph,
}

/// `profile` (`instances`, `host`, or `off`), `profile-hz` and `profile-call-graph` into a
/// plan; `None` when profiling is off. A rate or call graph without `profile` is a mistake
/// worth naming rather than a silent no-op.
pub fn validate(
    scope: Option<&str>,
    hz: Option<u32>,
    call_graph: Option<&str>,
) -> Result<Option<ProfilePlan>, ConfigError> {
    let scope = match scope {
        None | Some("off") => {
            if hz.is_some() || call_graph.is_some() {
                return Err(ConfigError::ProfileTuningWithoutProfile);
            }
            return Ok(None);
        }
        Some("instances") => ProfileScope::Instances,
        Some("host") => ProfileScope::Host,
        Some(other) => {
            return Err(ConfigError::ProfileScope {
                given: other.to_string(),
            })
        }
    };
    let hz = hz.unwrap_or(DEFAULT_HZ);
    if hz == 0 || hz > MAX_HZ {
        return Err(ConfigError::ProfileHz {
            given: hz,
            most: MAX_HZ,
        });
    }
    let call_graph = match call_graph {
        None | Some("fp") => CallGraph::Fp,
        Some("dwarf") => CallGraph::Dwarf,
        Some(other) => {
            return Err(ConfigError::ProfileCallGraph {
                given: other.to_string(),
            })
        }
    };
    Ok(Some(ProfilePlan {
        scope,
        hz,
        call_graph,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_alone_takes_the_defaults() {
        let p = validate(Some("instances"), None, None).unwrap().unwrap();
        assert_eq!(p.scope, ProfileScope::Instances);
        assert_eq!(p.hz, DEFAULT_HZ);
        assert_eq!(p.call_graph, CallGraph::Fp);
        let p = validate(Some("host"), Some(499), Some("dwarf"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.scope, p.hz, p.call_graph),
            (ProfileScope::Host, 499, CallGraph::Dwarf)
        );
        assert!(validate(None, None, None).unwrap().is_none());
        assert!(validate(Some("off"), None, None).unwrap().is_none());
    }

    #[test]
    fn bad_values_name_the_fix() {
        let zero = validate(Some("instances"), Some(0), None).unwrap_err();
        assert!(zero.to_string().contains("1..10000"), "{zero}");
        let scope = validate(Some("vm"), None, None).unwrap_err();
        assert!(scope.to_string().contains("instances"), "{scope}");
        let cg = validate(Some("host"), None, Some("lbr")).unwrap_err();
        assert!(cg.to_string().contains("dwarf"), "{cg}");
        let orphan = validate(None, Some(99), None).unwrap_err();
        assert!(orphan.to_string().contains("--profile"), "{orphan}");
    }
}
