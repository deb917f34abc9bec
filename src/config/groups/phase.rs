//! `[[phase]]` tables validated against the groups into phase plans: duration, the mode's
//! per-group keys (shares, or clients, rate and think), and the mix split per group.

use std::collections::BTreeMap;
use std::time::Duration;

use toml::Spanned;

use super::{RawPhase, Source};
use crate::config::catalog::Catalog;
use crate::config::duration::parse_duration;
use crate::config::plan::{GroupPlan, PhaseGroup, PhasePlan};
use crate::config::ConfigError;

/// Validates `[[phase]]` tables against the groups. `shared` selects which per-group keys apply.
pub fn phases(
    src: &Source,
    raw: &[Spanned<RawPhase>],
    groups: &[GroupPlan],
    shared: bool,
    phase_duration: Option<Duration>,
    catalog: &dyn Catalog,
) -> Result<Vec<PhasePlan>, ConfigError> {
    let type_names: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            catalog
                .find(g.workload.as_str())
                .map_or_else(Vec::new, |w| w.txn_type_names_for(&g.options.workload))
        })
        .collect();
    if raw.is_empty() {
        return Err(ConfigError::NoPhase {
            file: src.file.to_string(),
            what: if shared { "shares" } else { "clients" },
        });
    }
    let mut out = Vec::with_capacity(raw.len());
    for (pi, p) in raw.iter().enumerate() {
        out.push(phase(
            src,
            p,
            pi,
            groups,
            &type_names,
            shared,
            phase_duration,
        )?);
    }
    if !shared && out.iter().all(|p| p.groups.iter().all(|g| g.clients == 0)) {
        return Err(ConfigError::NoPhaseClients {
            file: src.file.to_string(),
        });
    }
    Ok(out)
}

/// A phase's per-group values, each in group order (`None` where the phase names no value).
struct PhaseValues {
    shares: Vec<Option<f64>>,
    clients: Vec<Option<u32>>,
    rates: Vec<Option<f64>>,
    thinks: Vec<Option<String>>,
    mix: Vec<Vec<(String, f64)>>,
}

/// Validates the `pi`th (from 0) `[[phase]]` table into its plan.
fn phase(
    src: &Source,
    raw: &Spanned<RawPhase>,
    pi: usize,
    groups: &[GroupPlan],
    type_names: &[Vec<String>],
    shared: bool,
    phase_duration: Option<Duration>,
) -> Result<PhasePlan, ConfigError> {
    let span = raw.span();
    let p = raw.get_ref();
    let name = p.name.clone().unwrap_or_else(|| format!("p{}", pi + 1));
    if name.len() > 63 || name.is_empty() || name.chars().any(char::is_control) {
        return Err(src.error(
            span,
            "a phase name must be 1-63 bytes with no control characters".to_string(),
        ));
    }
    let duration = duration_of(src, &span, p, &name, phase_duration)?;
    // Unknown group names are reported before the mode's checks, which read these tables.
    let shares = per_group(src, &p.shares, groups, &name, "shares")?;
    let clients = per_group(src, &p.clients, groups, &name, "clients")?;
    let rates = per_group(src, &p.rate, groups, &name, "rate")?;
    let thinks = per_group(src, &p.think, groups, &name, "think")?;
    if shared {
        check_shared_mode(src, &span, p, &name, groups, &shares)?;
    } else {
        check_independent_mode(src, &span, p, &name, groups)?;
    }
    let mix = match &p.mix {
        Some(m) => mix(src, m, type_names, &name)?,
        None => vec![Vec::new(); groups.len()],
    };
    let values = PhaseValues {
        shares,
        clients,
        rates,
        thinks,
        mix,
    };
    let mut pgs = Vec::with_capacity(groups.len());
    for (gi, g) in groups.iter().enumerate() {
        pgs.push(phase_group(src, &span, &name, gi, g, &values)?);
    }
    Ok(PhasePlan {
        name,
        duration,
        groups: pgs,
    })
}

/// The phase's duration: `--phase-duration` when given, else its own `duration`, in whole
/// seconds of at least 1.
fn duration_of(
    src: &Source,
    span: &std::ops::Range<usize>,
    p: &RawPhase,
    name: &str,
    phase_duration: Option<Duration>,
) -> Result<Duration, ConfigError> {
    let duration = match (phase_duration, &p.duration) {
        (Some(d), _) => d,
        (None, Some(text)) => parse_duration(text)
            .map_err(|m| src.error(span.clone(), format!("phase '{name}' duration: {m}")))?,
        (None, None) => {
            return Err(src.error(
                span.clone(),
                format!("phase '{name}' has no duration; add e.g. duration = \"10m\""),
            ))
        }
    };
    if duration < Duration::from_secs(1) || duration.subsec_nanos() != 0 {
        return Err(src.error(
            span.clone(),
            format!("phase '{name}': duration must be a whole number of seconds, at least 1s"),
        ));
    }
    Ok(duration)
}

/// Shared mode: the phase has shares, non-negative and summing to 100, and no per-group
/// `clients`, `rate` or `think` (those belong to independent mode).
fn check_shared_mode(
    src: &Source,
    span: &std::ops::Range<usize>,
    p: &RawPhase,
    name: &str,
    groups: &[GroupPlan],
    shares: &[Option<f64>],
) -> Result<(), ConfigError> {
    let Some(sh) = &p.shares else {
        return Err(src.error(
            span.clone(),
            format!(
                "phase '{name}' has no shares; shared mode needs e.g. shares = {{ {} = 100 }}",
                groups[0].name
            ),
        ));
    };
    let sum: f64 = shares.iter().flatten().sum();
    if (sum - 100.0).abs() > 0.01 {
        return Err(src.error(
            sh.span(),
            format!("phase '{name}': shares sum to {sum}, not 100"),
        ));
    }
    if shares.iter().flatten().any(|s| *s < 0.0) {
        return Err(src.error(
            sh.span(),
            format!("phase '{name}': shares cannot be negative"),
        ));
    }
    for key in ["clients", "rate", "think"] {
        let present = match key {
            "clients" => p.clients.is_some(),
            "rate" => p.rate.is_some(),
            _ => p.think.is_some(),
        };
        if present {
            return Err(src.error(span.clone(), format!("phase '{name}': `{key}` per group applies to mode = \"independent\"; shared mode uses shares")));
        }
    }
    Ok(())
}

/// Independent mode: the phase has clients per group and no shares (those belong to shared
/// mode).
fn check_independent_mode(
    src: &Source,
    span: &std::ops::Range<usize>,
    p: &RawPhase,
    name: &str,
    groups: &[GroupPlan],
) -> Result<(), ConfigError> {
    if p.clients.is_none() {
        return Err(src.error(
            span.clone(),
            format!(
                "phase '{name}' has no clients; independent mode needs e.g. clients = {{ {} = 8 }}",
                groups[0].name
            ),
        ));
    }
    if p.shares.is_some() {
        return Err(src.error(span.clone(), format!("phase '{name}': shares apply to mode = \"shared\"; independent mode uses clients per group")));
    }
    Ok(())
}

/// Group `g` (the `gi`th) in phase `phase`: its values, with think parsed and rate checked;
/// a group the phase does not name gets no share, no clients, no think and no rate limit.
fn phase_group(
    src: &Source,
    span: &std::ops::Range<usize>,
    phase: &str,
    gi: usize,
    g: &GroupPlan,
    values: &PhaseValues,
) -> Result<PhaseGroup, ConfigError> {
    let think = match &values.thinks[gi] {
        Some(t) => parse_duration(t).map_err(|m| {
            src.error(
                span.clone(),
                format!("phase '{phase}' think of '{}': {m}", g.name),
            )
        })?,
        None => Duration::ZERO,
    };
    if let Some(r) = values.rates[gi] {
        if !(r.is_finite() && r > 0.0) {
            return Err(src.error(span.clone(), format!("phase '{phase}': rate of '{}' must be a positive number of transactions per second", g.name)));
        }
    }
    Ok(PhaseGroup {
        share: values.shares[gi].unwrap_or(0.0),
        clients: values.clients[gi].unwrap_or(0),
        think,
        rate: values.rates[gi],
        mix: values.mix[gi].clone(),
    })
}

/// Values of a `{ GROUP = value }` table in group order; unknown group names are errors.
fn per_group<T: Clone>(
    src: &Source,
    table: &Option<Spanned<BTreeMap<String, T>>>,
    groups: &[GroupPlan],
    phase: &str,
    key: &str,
) -> Result<Vec<Option<T>>, ConfigError> {
    let mut out = vec![None; groups.len()];
    if let Some(t) = table {
        for (name, v) in t.get_ref() {
            let Some(i) = groups.iter().position(|g| &g.name == name) else {
                let known: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                return Err(src.error(
                    t.span(),
                    format!(
                        "phase '{phase}' {key} names unknown group '{name}'; groups are: {}",
                        known.join(", ")
                    ),
                ));
            };
            out[i] = Some(v.clone());
        }
    }
    Ok(out)
}

/// A phase's mix, split per group: each group keeps the entries its workload can run.
/// `type_names` holds each group's transaction type names.
fn mix(
    src: &Source,
    m: &Spanned<BTreeMap<String, f64>>,
    type_names: &[Vec<String>],
    phase: &str,
) -> Result<Vec<Vec<(String, f64)>>, ConfigError> {
    for (txn, w) in m.get_ref() {
        if !type_names.iter().any(|names| names.contains(txn)) {
            let mut known: Vec<&str> = type_names.iter().flatten().map(String::as_str).collect();
            known.sort_unstable();
            known.dedup();
            return Err(src.error(m.span(), format!(
                "phase '{phase}' mix names unknown transaction '{txn}'; the groups' workloads have: {}",
                known.join(", ")
            )));
        }
        if !(w.is_finite() && *w >= 0.0) {
            return Err(src.error(
                m.span(),
                format!("phase '{phase}' mix: weight of '{txn}' must be zero or positive"),
            ));
        }
    }
    let cards = mix_deck_len(m.get_ref().values().copied());
    if cards > u64::from(crate::config::MAX_DECK_SIZE) {
        return Err(src.error(
            m.span(),
            format!(
                "phase '{phase}' mix: these weights need a deck of {cards} cards to hold them exactly, \
                 more than tidebench's cap of {}; write them as percentages with at most two decimals",
                crate::config::MAX_DECK_SIZE
            ),
        ));
    }
    Ok(type_names
        .iter()
        .map(|names| {
            m.get_ref()
                .iter()
                .filter(|(t, _)| names.contains(t))
                .map(|(t, w)| (t.clone(), *w))
                .collect()
        })
        .collect())
}

/// The length of the smallest deck that holds `weights` exactly, as the driver will build it
/// (hundredths of a unit, divided by their common divisor); saturating, never overflowing.
pub(crate) fn mix_deck_len(weights: impl Iterator<Item = f64>) -> u64 {
    let units: Vec<u64> = weights
        .map(|w| (w * 100.0).round().clamp(0.0, 1e15) as u64)
        .collect();
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let g = units.iter().copied().filter(|u| *u > 0).fold(0, gcd).max(1);
    units.iter().map(|u| u / g).fold(0u64, u64::saturating_add)
}
