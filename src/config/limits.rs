//! The caps a run's sizes stay under, and the checks that hold a run to them: past these a
//! typo would only exhaust memory or the servers, so validation refuses it with the cap.

use super::defaults;
use super::plan::PhasePlan;
use super::ConfigError;

/// Most sessions a run opens (each client holds one per database it reaches): a server takes
/// a few thousand at most, and each costs the driver memory before any is refused.
pub const MAX_CLIENTS: u32 = 10_000;
/// Most cards in one deck (4 bytes each, one deck per set).
pub const MAX_DECK_SIZE: u32 = 1_000_000;
/// Most groups in a run, and most sets in one group: each set is a database to prepare and a
/// deck per client; past these, a typo (`sets = 4000000000`) would only exhaust memory.
pub const MAX_GROUPS: usize = 1_000;
pub const MAX_SETS: usize = 1_000;

/// Values that size the driver's memory, against their caps.
pub(super) fn check_sizes(
    clients: u32,
    deck_size: Option<u32>,
    phases: &[PhasePlan],
) -> Result<(), ConfigError> {
    if clients > MAX_CLIENTS {
        return Err(ConfigError::OverCap {
            setting: "clients",
            value: u64::from(clients),
            cap: u64::from(MAX_CLIENTS),
            how: " (--clients / -c)",
        });
    }
    for p in phases {
        let sum: u64 = p.groups.iter().map(|g| u64::from(g.clients)).sum();
        if sum > u64::from(MAX_CLIENTS) {
            return Err(ConfigError::PhaseOverCap {
                phase: p.name.clone(),
                clients: sum,
                cap: MAX_CLIENTS,
            });
        }
    }
    match deck_size {
        Some(0) => Err(ConfigError::TooSmall {
            setting: "deck-size",
            least: 1,
            how: "",
        }),
        Some(d) if d > MAX_DECK_SIZE => Err(ConfigError::OverCap {
            setting: "deck-size",
            value: u64::from(d),
            cap: u64::from(MAX_DECK_SIZE),
            how: " cards; leave it out for the smallest exact deck",
        }),
        _ => Ok(()),
    }
}

/// Longest fixed run of one target card.
pub const MAX_CARD_RUN: u32 = 1_000_000;

pub(super) fn check_card_run(card_run: Option<u32>) -> Result<(), ConfigError> {
    match card_run {
        Some(0) => Err(ConfigError::TooSmall {
            setting: "card-run",
            least: 1,
            how: " (1 = one card per transaction, as the TPC-V kit); leave it out to size runs \
                  automatically",
        }),
        Some(n) if n > MAX_CARD_RUN => Err(ConfigError::OverCap {
            setting: "card-run",
            value: u64::from(n),
            cap: u64::from(MAX_CARD_RUN),
            how: "; leave it out to size runs automatically",
        }),
        _ => Ok(()),
    }
}

/// Most wait-sampling rounds a second (`--sample-waits`; each round is one statement per
/// server). Config holds the bound so validation needs no import of the sampler, which reads
/// it from here.
pub const MAX_SAMPLE_WAITS: u32 = 100;

/// `--sample-waits`: 0 (off) up to [`MAX_SAMPLE_WAITS`].
pub(super) fn sample_waits(asked: Option<u32>) -> Result<u32, String> {
    let most = MAX_SAMPLE_WAITS;
    match asked {
        None => Ok(defaults::SAMPLE_WAITS),
        Some(n) if n <= most => Ok(n),
        Some(n) => Err(format!(
            "sample_waits {n} is too many samples a second; give 0 (off) to {most} (--sample-waits)"
        )),
    }
}

/// pgbench's `-L`, in ms: a positive number.
pub(super) fn latency_limit(ms: Option<f64>) -> Result<Option<f64>, String> {
    match ms {
        Some(ms) if !(ms.is_finite() && ms > 0.0) => Err(format!(
            "invalid latency limit: \"{ms}\" (give --latency-limit a positive number of ms)"
        )),
        other => Ok(other),
    }
}
