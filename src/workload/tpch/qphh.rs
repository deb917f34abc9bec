//! `--qphh` (issue 51): QphH@Size from one command. A TPC-H performance run is the power test
//! followed by the throughput test (clause 5.3.1), and QphH@Size combines their figures
//! (5.4.3). The runner runs a plan that asks for it as two runs, one after the other on the
//! same database; this module says what each run's workload options are, so the runner never
//! names tpch's option keys:
//!
//! - the power test: the refresh functions on, the throughput test off (one client: RF1,
//!   stream 0's 22 queries, RF2);
//! - the throughput test: the plan's clients as S query streams and the refresh stream, told
//!   the power test's Power@Size so its summary carries the three metrics.

use crate::config::OptionValues;

use super::loader::REFRESH;

/// The run option that asks for both tests.
pub const QPHH: &str = "qphh";

/// The run options of part 2 besides `refresh` (the loader's, whose readiness reads it): the
/// throughput test, and the power test's Power@Size that QphH@Size combines with a throughput
/// run's figure. Here beside `qphh`, which sets both, so the plug-in reads all three from one
/// place.
pub(super) const THROUGHPUT: &str = "throughput";
pub(super) const POWER_AT_SIZE: &str = "power_at_size";

/// The figure the power test leaves for the throughput test.
pub const POWER_FIGURE: &str = "Power@Size";

/// Whether a group's options ask for the power and throughput tests in one command.
pub fn asked(options: &OptionValues) -> bool {
    options.get(QPHH).and_then(|v| v.as_bool()) == Some(true)
}

/// Why options that ask for `--qphh` cannot be split into the two tests, if they cannot.
pub fn refusal(options: &OptionValues) -> Option<String> {
    options.contains_key(POWER_AT_SIZE).then(|| {
        "--qphh measures its own Power@Size in the power test it runs first; drop \
         --power-at-size (it is for a throughput run after a separate power run)"
            .to_string()
    })
}

/// The power test's options: `options` with the refresh functions and without the
/// throughput test.
pub fn power_options(options: &OptionValues) -> OptionValues {
    let mut out = options.clone();
    out.remove(QPHH);
    out.insert(REFRESH.into(), true.into());
    out.insert(THROUGHPUT.into(), false.into());
    out
}

/// The throughput test's options: `options` with the refresh stream, told the power test's
/// Power@Size.
pub fn throughput_options(options: &OptionValues, power: f64) -> OptionValues {
    let mut out = options.clone();
    out.remove(QPHH);
    out.insert(REFRESH.into(), true.into());
    out.insert(THROUGHPUT.into(), true.into());
    out.insert(POWER_AT_SIZE.into(), power.into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpch::TPCH;
    use crate::workload::{ClientSlot, Plugin};

    #[test]
    fn the_two_tests_take_their_parts_from_one_set_of_options() {
        let mut options = OptionValues::new();
        options.insert(QPHH.into(), true.into());
        options.insert("sf".into(), 0.01.into());
        assert!(asked(&options) && refusal(&options).is_none());
        let power = power_options(&options);
        assert!(!asked(&power));
        let w = TPCH.build(1, &power).unwrap();
        // The power test: one stream of RF1, 22 queries and RF2.
        assert_eq!(w.units_for(ClientSlot { index: 0, count: 1 }), Some(24));
        let thr = throughput_options(&options, 1234.5);
        let w = TPCH.build(1, &thr).unwrap();
        // Three clients: streams 1 and 2, then the refresh stream's two pairs.
        assert_eq!(w.units_for(ClientSlot { index: 0, count: 3 }), Some(22));
        assert_eq!(w.units_for(ClientSlot { index: 2, count: 3 }), Some(4));
        assert_eq!(thr.get(POWER_AT_SIZE), Some(&1234.5.into()));
        assert_eq!(thr.get(THROUGHPUT), Some(&true.into()));
        let mut given = options.clone();
        given.insert(POWER_AT_SIZE.into(), 10.0.into());
        assert!(refusal(&given).unwrap().contains("drop --power-at-size"));
    }
}
