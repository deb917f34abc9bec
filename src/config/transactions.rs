//! pgbench's `-t N` / `--transactions N` (run-file key `transactions`): each client runs N
//! transactions and ends; the run ends when every client has ended. pgbench takes either a
//! count or a duration, so a count comes with no duration: the run's one phase lasts
//! [`CAP`] at most, and the measured window is the real elapsed time (a run that ends
//! before its phase's end is clipped there, as an interrupted one is).
//!
//! A count is a count per client of one phase: phases, ramps, iterations and several groups
//! give clients different stretches of time, and a count has no say in when one ends, so
//! those runs are refused with the fix (a duration per phase). With `--rate`, a client counts
//! the transactions it was scheduled for, as pgbench does; a failed transaction counts too.

use std::time::Duration;

use super::{ConfigError, RawRun};

/// The longest a run by count may take: far beyond any run by count anyone waits for, and
/// short enough that every instant of the run's clock stays representable.
pub const CAP: Duration = Duration::from_secs(7 * 24 * 3600);

/// pgbench's range of `-t`.
const MOST: u64 = i32::MAX as u64;

/// The checked count, or `None` for a run by duration. `phase_duration` is
/// `--phase-duration`, parsed.
pub fn check(raw: &RawRun, phase_duration: Option<Duration>) -> Result<Option<u64>, ConfigError> {
    let Some(n) = raw.transactions else {
        return Ok(None);
    };
    if n == 0 || n > MOST {
        return Err(ConfigError::Transactions {
            given: n,
            most: MOST,
        });
    }
    if raw.duration.is_some() || phase_duration.is_some() {
        return Err(ConfigError::TransactionsAndDuration);
    }
    let mut refused = Vec::new();
    if !raw.group.is_empty() || !raw.phase.is_empty() {
        refused.push("[[group]] or [[phase]] tables");
    }
    if raw.iterations.is_some_and(|i| i > 1) {
        refused.push("iterations");
    }
    if raw.ramp_up.is_some() || raw.ramp_down.is_some() {
        refused.push("a ramp-up or ramp-down");
    }
    if raw.measure.is_some() {
        refused.push("a measured window (measure)");
    }
    if !refused.is_empty() {
        return Err(ConfigError::TransactionsNeedOnePhase {
            has: refused.join(", "),
        });
    }
    Ok(Some(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(n: u64) -> RawRun {
        RawRun {
            transactions: Some(n),
            ..RawRun::default()
        }
    }

    fn message(r: Result<Option<u64>, ConfigError>) -> String {
        match r {
            Err(e) => e.to_string(),
            Ok(v) => panic!("accepted: {v:?}"),
        }
    }

    #[test]
    fn a_count_alone_is_taken_and_none_is_a_run_by_duration() {
        assert_eq!(check(&raw(50), None).unwrap(), Some(50));
        assert_eq!(check(&RawRun::default(), None).unwrap(), None);
    }

    #[test]
    fn zero_and_past_pgbench_range_are_refused() {
        assert!(message(check(&raw(0), None)).contains("1..2147483647"));
        assert!(message(check(&raw(MOST + 1), None)).contains("out of range"));
        assert_eq!(check(&raw(MOST), None).unwrap(), Some(MOST));
    }

    #[test]
    fn a_count_with_a_duration_is_refused_as_pgbench_refuses_it() {
        let mut r = raw(5);
        r.duration = Some("10s".into());
        let m = message(check(&r, None));
        assert!(
            m.starts_with(
                "specify either a number of transactions (-t) or a duration (-T), not both"
            ),
            "{m}"
        );
        let m = message(check(&raw(5), Some(Duration::from_secs(60))));
        assert!(m.contains("not both"), "{m}");
    }

    #[test]
    fn a_count_with_ramps_or_iterations_is_refused_with_the_fix() {
        let mut r = raw(5);
        r.ramp_up = Some("5s".into());
        r.iterations = Some(2);
        let m = message(check(&r, None));
        assert!(m.contains("iterations, a ramp-up or ramp-down"), "{m}");
        assert!(m.contains("give it a duration instead"), "{m}");
    }

    /// A workload whose clients end after their units (tpch's streams): no duration runs
    /// until they are done, a duration is a cap, and beside other groups it needs
    /// independent mode.
    #[test]
    fn units_per_client_run_until_done_and_need_clients_of_their_own() {
        use crate::config::{groups::Source, parse_run_text, validate_run, WorkloadName};
        use crate::workload::Registry;
        let flags = |duration: Option<&str>| RawRun {
            workload: Some(WorkloadName::new("tpch")),
            duration: duration.map(String::from),
            ..RawRun::default()
        };
        let src = Source {
            file: "flags",
            text: "",
        };
        let plan = validate_run(&src, flags(None), 2, 1, &Registry).unwrap();
        assert_eq!(plan.phases[0].duration, CAP);
        let plan = validate_run(&src, flags(Some("1m")), 2, 1, &Registry).unwrap();
        assert_eq!(plan.phases[0].duration, Duration::from_secs(60));
        let text = |mode: &str| {
            format!(
                "{mode}[[group]]\nname = \"H\"\nworkload = \"tpch\"\ninstance = \"default\"\n\
                 [[group]]\nname = \"B\"\nworkload = \"tpcb\"\ninstance = \"default\"\n\
                 [[phase]]\nduration = \"3s\"\nclients = {{ H = 1, B = 1 }}\n"
            )
        };
        let run = |text: &str| {
            let src = Source {
                file: "run.toml",
                text,
            };
            let raw = parse_run_text(&src, &Registry)?;
            validate_run(&src, raw, 2, 1, &Registry)
        };
        let shared = text("").replace("clients = { H = 1, B = 1 }", "shares = { H = 50, B = 50 }");
        let m = run(&shared).unwrap_err().to_string();
        assert!(
            m.starts_with("group 'H': tpch's clients") && m.contains("mode = \"independent\""),
            "{m}"
        );
        assert!(run(&text("mode = \"independent\"\n")).is_ok());
    }
}
