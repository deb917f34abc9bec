//! Preset `hci`: TPCx-HCI's data-accessibility test on the tpcv preset (issue 54). That test
//! powers a node off during the measured run and asks for the throughput graph and the
//! recovery. Here every `oltp`
//! instance gets a synchronous streaming standby on a local instance of its own, the `oltp`
//! targets name both (`instance:P,S/db`: the clients follow whichever is primary), and group
//! A's first primary is killed at the start of the sixth of the ten phases, its standby
//! promoted a second later. The `dss` databases have no standby: the run's only failure is the
//! one the test makes.

use std::fmt::Write as _;

/// The phase whose start is the middle of the measured window (tpcv's ten unnamed phases are
/// `p1` to `p10`; the ramp-up is not measured).
pub const FAIL_PHASE: &str = "p6";
/// How long after the kill the standby is promoted: the time a watchdog takes to decide is
/// not modelled, only the fail-over itself.
pub const PROMOTE_AFTER: &str = "1s";

/// A primary's standby: `tpcv-a1-oltp-standby`.
pub fn standby_name(primary: &str) -> String {
    format!("{primary}-standby")
}

/// The standby's `[[instance]]` table up to its size, which is its primary's (the same VM
/// shape on another node).
pub fn standby(out: &mut String, primary: &str) {
    let _ = write!(
        out,
        "\n# its synchronous standby, of the same size\n[[instance]]\nname = \"{}\"\n\
         standby_of = \"{primary}\"\nsync = true\n",
        standby_name(primary)
    );
}

/// The fail and promote events, on the clock of phase [`FAIL_PHASE`].
pub fn events(out: &mut String, primary: &str) {
    let _ = write!(
        out,
        "\n# TPCx-HCI's data accessibility: group A's first primary dies in the middle of the\n\
         # measured window, and its standby takes over\n\
         [[event]]\nphase = \"{FAIL_PHASE}\"\nat = \"0s\"\naction = \"fail\"\ntarget = \"{primary}\"\n\n\
         [[event]]\nphase = \"{FAIL_PHASE}\"\nat = \"{PROMOTE_AFTER}\"\naction = \"promote\"\n\
         target = \"{}\"\n",
        standby_name(primary)
    );
}

/// The lines `hci` adds to tpcv's header.
pub fn header(out: &mut String) {
    out.push_str(
        "\
# Preset hci, TPCx-HCI's data-accessibility test on this: every oltp instance has a
# synchronous streaming standby of the same size (pg_basebackup of the loaded primary, made by
# prepare or run), each oltp target names both (instance:PRIMARY,STANDBY: clients follow the
# primary), and group A's first primary is killed at the start of phase p6 (the middle of the
# measured window), its standby promoted 1s later. The results: summary.json's events (per
# group: first commit, back to 90%, full_rate_share), the report's marked charts and the
# commits per host.
#   tidebench prepare --preset hci [--lu-base N]
#   tidebench run --preset hci [--phase-duration 1m]
",
    );
}
