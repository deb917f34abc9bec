//! Preset `hci`: TPCx-HCI's data-accessibility test on the tpcv preset (issue 54). That test
//! powers a node off during the measured run and asks for the throughput graph and the
//! recovery. Here every `oltp`
//! instance gets a synchronous streaming standby on a local instance of its own, the `oltp`
//! targets name both (`instance:P,S/db`: the clients follow whichever is primary), and group
//! A's first primary is killed halfway through the sixth of the ten phases (the middle of the
//! measured window, and away from the phase changes, where every group's share moves and
//! would be read as a recovery), its standby promoted a second later. The `dss` databases have no standby: the run's only failure is the
//! one the test makes.

use std::fmt::Write as _;
use std::time::Duration;

use crate::config::duration::format_duration;

/// The phase in whose middle the primary dies (tpcv's ten unnamed phases are `p1` to `p10`;
/// the ramp-up is not measured).
pub const FAIL_PHASE: &str = "p6";
/// How long after the kill the standby is promoted: the time a watchdog takes to decide is
/// not modelled, only the fail-over itself.
pub const PROMOTE_AFTER: Duration = Duration::from_secs(1);

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

/// The fail and promote events, halfway through phase [`FAIL_PHASE`] (of length `phase`): the
/// recovery's rate before (the 10 s before the kill) and the recovery after stay inside one
/// phase's shares when the phases are long enough, as the preset's are.
pub fn events(out: &mut String, primary: &str, phase: Duration) {
    let fail = phase / 2;
    let (fail_at, promote_at) = (format_duration(fail), format_duration(fail + PROMOTE_AFTER));
    let _ = write!(
        out,
        "\n# TPCx-HCI's data accessibility: group A's first primary dies in the middle of the\n\
         # measured window, and its standby takes over\n\
         [[event]]\nphase = \"{FAIL_PHASE}\"\nat = \"{fail_at}\"\naction = \"fail\"\ntarget = \"{primary}\"\n\n\
         [[event]]\nphase = \"{FAIL_PHASE}\"\nat = \"{promote_at}\"\naction = \"promote\"\n\
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
# primary), and group A's first primary is killed halfway through phase p6 (the middle of the
# measured window, away from its share changes), its standby promoted 1s later. The results: summary.json's events (per
# group: first commit, back to 90%, full_rate_share), the report's marked charts and the
# commits per host.
#   tidebench prepare --preset hci [--lu-base N]
#   tidebench run --preset hci [--phase-duration 1m]
",
    );
}
