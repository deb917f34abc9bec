//! Preset `ch`: CH-benCHmark's common case, a `tpcc` group (the OLTP tenant) and a `ch` group
//! (the analytic streams) on the default instance's database, independent mode: a phase of
//! the OLTP tenant alone, then one beside the streams, so the two phases' NOTPM show what
//! the streams cost it. Its knobs set the groups' clients (`--oltp-clients`, `--ch-streams`),
//! `--warehouses` (`--scale`) both groups' size (1 by default), `--phase-duration` the
//! phases. A file with other groups and phases (the analytic group on another database or
//! instance) is a run file: `tidebench presets --show ch` prints this one to start from.

use super::PresetInput;

/// The OLTP clients, analytic streams and warehouses without their knobs.
pub const OLTP_CLIENTS: u32 = 2;
pub const STREAMS: u32 = 1;
pub const WAREHOUSES: u32 = 1;

/// The knobs of other presets, which this one refuses.
fn foreign(input: &PresetInput) -> Option<&'static str> {
    let k = input.knobs;
    [
        (k.lu_base.is_some(), "--lu-base"),
        (k.sets.is_some(), "--sets"),
        (k.target_tpsv.is_some(), "--target-tpsv"),
        (k.hypervisor.is_some(), "--hypervisor"),
        (k.accel.is_some(), "--accel"),
    ]
    .into_iter()
    .find(|(given, _)| *given)
    .map(|(_, flag)| flag)
}

/// The preset's TOML for `input`.
pub fn toml(input: &PresetInput) -> Result<String, String> {
    if let Some(flag) = foreign(input) {
        return Err(format!(
            "{flag} is not a knob of preset ch (its knobs: --oltp-clients, --ch-streams, \
             --warehouses); leave it \
             out, or put the groups in a run file (`tidebench presets --show ch`)"
        ));
    }
    let oltp = input.knobs.oltp_clients.unwrap_or(OLTP_CLIENTS);
    let streams = input.knobs.streams.unwrap_or(STREAMS);
    let warehouses = input.knobs.warehouses.unwrap_or(WAREHOUSES);
    if oltp + streams == 0 {
        return Err(
            "--oltp-clients 0 and --ch-streams 0 leave the run no client; give 1 or more \
                    to either"
                .into(),
        );
    }
    Ok(format!(
        r#"# CH-benCHmark: TPC-C's order entry (group O, tpcc) and CH's 22 analytic queries (group A,
# ch; each client a query stream) at the same time on one database of {warehouses} warehouse(s).
# `tidebench prepare --preset ch` loads it once, for ch (TPC-C's tables with CH's). Knobs:
# --oltp-clients {oltp}, --ch-streams {streams}, --warehouses {warehouses} (give prepare and run the
# same); --phase-duration sets the phases.
mode = "independent"

[[group]]
name = "O"
workload = "tpcc"
scale = {warehouses}
target = "instance:default"

[[group]]
name = "A"
workload = "ch"
scale = {warehouses}
target = "instance:default"
# Each stream runs the 22 queries again until its phase ends (one pass is longer than a
# phase at most sizes; a stream that ended early would leave the OLTP group alone).
repeat_streams = true

# The OLTP tenant alone, then beside the analytic streams: the phases' tpm of new_order
# (NOTPM) side by side are what the streams cost it.
[[phase]]
name = "alone"
duration = "1m"
clients = {{ O = {oltp}, A = 0 }}

[[phase]]
name = "beside"
duration = "1m"
clients = {{ O = {oltp}, A = {streams} }}
"#
    ))
}

/// Where preset `ch-interference` puts the streams it moves off the OLTP tenant's server.
pub const SPLIT_INSTANCE: &str = "ch-split";

/// The stream counts of `ch-interference` up to `most`: doubling from 1 (1, 2, 4 for 4).
fn steps(most: u32) -> Vec<u32> {
    std::iter::successors(Some(1u32), |n| n.checked_mul(2))
        .take_while(|n| *n <= most)
        .collect()
}

/// Preset `ch-interference`'s TOML: the interference curve in one run (issue 52). Group O
/// (tpcc) on the default instance throughout; group `same` (ch) on O's database and group
/// `split` (ch) on a database of a second instance of this host, each stepped through 1,
/// 2, 4 streams (`--ch-streams` is the last step) after a phase of O alone, so each
/// placement's curve starts from its own alone phase. The curve is read from the run's
/// interference pairs (`results::interference::curve`).
pub fn interference_toml(input: &PresetInput) -> Result<String, String> {
    if let Some(flag) = foreign(input) {
        return Err(format!(
            "{flag} is not a knob of preset ch-interference (its knobs: --oltp-clients, \
             --ch-streams, --warehouses); leave it out, or start from `tidebench presets \
             --show ch-interference` in a run file"
        ));
    }
    let oltp = input.knobs.oltp_clients.unwrap_or(OLTP_CLIENTS);
    let most = input.knobs.streams.unwrap_or(4);
    let warehouses = input.knobs.warehouses.unwrap_or(WAREHOUSES);
    if oltp == 0 || most == 0 {
        return Err(format!(
            "preset ch-interference needs --oltp-clients and --ch-streams of 1 or more (given \
             {oltp} and {most}): the curve is the OLTP group's cost at 1 stream and more"
        ));
    }
    let mut phases = String::new();
    for (placement, other) in [("same", "split"), ("split", "same")] {
        phases.push_str(&format!(
            "\n[[phase]]\nname = \"alone-{placement}\"\nduration = \"1m\"\nclients = {{ O = {oltp}, same = 0, split = 0 }}\n"
        ));
        for n in steps(most) {
            phases.push_str(&format!(
                "\n[[phase]]\nname = \"{placement}-{n}\"\nduration = \"1m\"\nclients = {{ O = {oltp}, {placement} = {n}, {other} = 0 }}\n"
            ));
        }
    }
    Ok(format!(
        r#"# CH-benCHmark's interference curve: what the analytic streams cost the OLTP tenant (group
# O, tpcc, {oltp} client(s), on the default instance) as they grow ({steps:?} streams), with the
# streams on O's own database (group same) and on a database of a second instance of this
# host (group split, instance {SPLIT_INSTANCE}), each placement after a phase of O alone.
# `tidebench prepare --preset ch-interference` loads both databases ({warehouses} warehouse(s)).
# Knobs: --oltp-clients, --ch-streams (the last step), --warehouses; --phase-duration sets the
# phases. The run ends with the curve: a table, and two charts in report.html.
mode = "independent"

[[instance]]
name = "{SPLIT_INSTANCE}"

[[group]]
name = "O"
workload = "tpcc"
scale = {warehouses}
target = "instance:default"

[[group]]
name = "same"
workload = "ch"
scale = {warehouses}
target = "instance:default"
repeat_streams = true

[[group]]
name = "split"
workload = "ch"
scale = {warehouses}
target = "instance:{SPLIT_INSTANCE}"
repeat_streams = true

{phases}"#,
        steps = steps(most)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PresetKnobs;

    fn input(knobs: &PresetKnobs) -> PresetInput<'_> {
        PresetInput {
            knobs,
            cores: 2,
            memory: None,
            phase_duration: None,
        }
    }

    #[test]
    fn the_knobs_set_the_groups_clients_and_others_are_refused() {
        let plain = toml(&input(&PresetKnobs::default())).unwrap();
        assert!(plain.contains("clients = { O = 2, A = 0 }"), "{plain}");
        assert!(plain.contains("clients = { O = 2, A = 1 }"), "{plain}");
        assert!(plain.contains("repeat_streams = true"), "{plain}");
        let knobs = PresetKnobs {
            oltp_clients: Some(4),
            streams: Some(0),
            ..PresetKnobs::default()
        };
        assert!(toml(&input(&knobs))
            .unwrap()
            .contains("clients = { O = 4, A = 0 }"));
        let none = PresetKnobs {
            oltp_clients: Some(0),
            streams: Some(0),
            ..PresetKnobs::default()
        };
        assert!(toml(&input(&none)).unwrap_err().contains("no client"));
        let sized = PresetKnobs {
            warehouses: Some(3),
            ..PresetKnobs::default()
        };
        let sized = toml(&input(&sized)).unwrap();
        assert_eq!(sized.matches("scale = 3").count(), 2, "{sized}");
        assert!(plain.contains("scale = 1") && !plain.contains("scale = 3"));
        let other = PresetKnobs {
            lu_base: Some(2),
            ..PresetKnobs::default()
        };
        assert!(toml(&input(&other)).unwrap_err().contains("--lu-base"));
    }

    #[test]
    fn the_interference_preset_steps_each_placement_after_its_alone_phase() {
        let text = interference_toml(&input(&PresetKnobs::default())).unwrap();
        assert!(toml::from_str::<toml::Table>(&text).is_ok(), "{text}");
        assert_eq!(text.matches("[[phase]]").count(), 8, "{text}");
        assert!(text.contains(
            "name = \"split-4\"\nduration = \"1m\"\nclients = { O = 2, split = 4, same = 0 }"
        ));
        assert_eq!(steps(1), [1]);
        assert_eq!(steps(5), [1, 2, 4]);
        let none = PresetKnobs {
            streams: Some(0),
            ..PresetKnobs::default()
        };
        assert!(interference_toml(&input(&none)).is_err());
    }
}
