//! What a consolidation experiment asks for: the `[consolidate]` table of its file (or
//! preset), with the command's flags laid over it, checked whole before anything runs.
//!
//! ```toml
//! workload = "tpcc"            # the run keys every database's load is made of
//! scale = 30
//!
//! [consolidate]
//! schemes = ["1/1/M", "1/M/M", "M/M/M"]
//! databases = 2
//! periods = 4                  # traffic periods; the busy database rotates each period
//! period = "10m"               # measured length of each period
//! ramp_up = "30s"              # before each period (not measured)
//! high = 30                    # clients of the busy database
//! low = 2                      # clients of each quiet one
//! cpus = 3                     # CPU quota of every VM
//! memory = "4GB"               # each VM of M/M/M; a one-VM scheme gets databases × this
//! shared_buffers = "25%"       # of the VM's memory, split among its instances; or a size
//! overcommit = [0, 10, 20, 30, 40, 50, 55]
//! balloon = false              # a locked "dummy VM" takes the difference (else: a limit)
//! host_group = "consolidate"   # the parent control group standing for the host
//! hypervisor = "qemu"          # optional: each VM a real QEMU guest (else a control group)
//! accel = "tcg"                # with hypervisor: kvm or tcg forced (else KVM when it boots)
//! ksm = false                  # with hypervisor: KSM on or off (/sys/kernel/mm/ksm/run)
//! settings = { work_mem = "8MB" } # server settings of every instance (shared_buffers above)
//! working_set = "1376MB"       # optional: each database's VM memory working set (`knee`)
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::duration::parse_duration;
use crate::config::instances::{check_vm, MIN_MEMORY};
use crate::config::size::{format_size, parse_size};
use crate::config::MAX_CLIENTS;
use crate::instance::vm::Accel;

/// A consolidation scheme of the vPostgres study: how databases map to VMs and instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// One VM, one instance, every database in it (scheme 1).
    OneOneM,
    /// One VM, one instance per database (scheme 2).
    OneMM,
    /// One VM per database, each with its own instance (scheme 3).
    MMM,
}

impl Scheme {
    pub const ALL: [Scheme; 3] = [Scheme::OneOneM, Scheme::OneMM, Scheme::MMM];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::OneOneM => "1/1/M",
            Scheme::OneMM => "1/M/M",
            Scheme::MMM => "M/M/M",
        }
    }

    /// A name part usable in instance and control group names.
    pub fn slug(self) -> &'static str {
        match self {
            Scheme::OneOneM => "11m",
            Scheme::OneMM => "1mm",
            Scheme::MMM => "mmm",
        }
    }

    pub fn parse(text: &str) -> Result<Scheme, String> {
        let t = text.trim().to_ascii_uppercase();
        Scheme::ALL
            .into_iter()
            .find(|s| s.name() == t || s.slug().eq_ignore_ascii_case(&t))
            .ok_or_else(|| {
                format!(
                    "'{text}' is not a consolidation scheme; give 1/1/M (one instance holding \
                     every database), 1/M/M (one VM, an instance per database) or M/M/M (a VM \
                     per database). The study's scheme 4 (the vPostgres database balloon) has \
                     no PostgreSQL equivalent"
                )
            })
    }
}

/// shared_buffers of an instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SharedBuffers {
    /// This fraction of the VM's memory, split evenly among the VM's instances.
    OfVm(f64),
    /// This size per instance.
    Size(u64),
}

impl SharedBuffers {
    pub fn parse(text: &str) -> Result<SharedBuffers, String> {
        let t = text.trim();
        if let Some(pct) = t.strip_suffix('%') {
            let v: f64 = pct.trim().parse().map_err(|_| bad_buffers(text))?;
            if !(1.0..=90.0).contains(&v) {
                return Err(format!(
                    "shared_buffers = {text}: give a share of the VM's memory between 1% and 90%, e.g. 25%"
                ));
            }
            return Ok(SharedBuffers::OfVm(v / 100.0));
        }
        parse_size(t)
            .map(SharedBuffers::Size)
            .map_err(|_| bad_buffers(text))
    }

    /// Bytes for each of `instances` instances of a VM of `vm_memory` bytes, in whole MiB.
    pub fn per_instance(self, vm_memory: u64, instances: u32) -> u64 {
        let bytes = match self {
            SharedBuffers::OfVm(f) => (vm_memory as f64 * f / f64::from(instances.max(1))) as u64,
            SharedBuffers::Size(b) => b,
        };
        (bytes >> 20).max(1) << 20
    }
}

fn bad_buffers(text: &str) -> String {
    format!("shared_buffers = '{text}' is neither a share like 25% nor a size like 1GB")
}

/// The `[consolidate]` table as written; every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpec {
    pub schemes: Option<Vec<String>>,
    pub databases: Option<u32>,
    pub periods: Option<u32>,
    pub period: Option<String>,
    pub ramp_up: Option<String>,
    pub high: Option<u32>,
    pub low: Option<u32>,
    pub cpus: Option<f64>,
    pub memory: Option<String>,
    pub shared_buffers: Option<String>,
    pub overcommit: Option<Vec<u32>>,
    pub balloon: Option<bool>,
    pub host_group: Option<String>,
    pub working_set: Option<String>,
    pub hypervisor: Option<String>,
    pub accel: Option<String>,
    pub ksm: Option<bool>,
    /// Server settings of every instance (`--set`); the consolidation's shared_buffers wins.
    pub settings: Option<BTreeMap<String, String>>,
}

impl RawSpec {
    /// `over`'s values win.
    pub fn overlay(self, over: RawSpec) -> RawSpec {
        RawSpec {
            schemes: over.schemes.or(self.schemes),
            databases: over.databases.or(self.databases),
            periods: over.periods.or(self.periods),
            period: over.period.or(self.period),
            ramp_up: over.ramp_up.or(self.ramp_up),
            high: over.high.or(self.high),
            low: over.low.or(self.low),
            cpus: over.cpus.or(self.cpus),
            memory: over.memory.or(self.memory),
            shared_buffers: over.shared_buffers.or(self.shared_buffers),
            overcommit: over.overcommit.or(self.overcommit),
            balloon: over.balloon.or(self.balloon),
            host_group: over.host_group.or(self.host_group),
            working_set: over.working_set.or(self.working_set),
            hypervisor: over.hypervisor.or(self.hypervisor),
            accel: over.accel.or(self.accel),
            ksm: over.ksm.or(self.ksm),
            settings: over.settings.or(self.settings),
        }
    }
}

/// Checked settings of a consolidation experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub schemes: Vec<Scheme>,
    pub databases: u32,
    pub periods: u32,
    pub period: String,
    pub ramp_up: String,
    pub high: u32,
    pub low: u32,
    pub cpus: Option<f64>,
    /// Each VM of M/M/M, as written and in bytes.
    pub memory: String,
    pub memory_bytes: u64,
    pub shared_buffers_text: String,
    pub shared_buffers: SharedBuffers,
    /// Ascending, starting with 0 (the baseline).
    pub overcommit: Vec<u32>,
    pub balloon: bool,
    pub host_group: String,
    /// Each database's VM memory working set, as written and in bytes.
    pub working_set: Option<(String, u64)>,
    /// Real VMs: each VM a QEMU guest below the host group (else a control group).
    pub guests: Option<GuestSpec>,
    /// Server settings of every instance; shared_buffers comes from `shared_buffers`.
    pub settings: BTreeMap<String, String>,
}

/// The VMs as QEMU guests (`--hypervisor qemu`).
#[derive(Debug, Clone, PartialEq)]
pub struct GuestSpec {
    /// Forced with `--accel`; absent: KVM when it boots, else TCG.
    pub accel: Option<Accel>,
    /// KSM on or off for the runs (`--ksm`); absent: the host's as it is, QEMU's default.
    pub ksm: Option<bool>,
}

/// `hypervisor`, `accel` and `ksm`: the VMs as QEMU guests, or `None` for control groups.
fn guests(raw: &RawSpec) -> Result<Option<GuestSpec>, String> {
    let Some(h) = &raw.hypervisor else {
        if raw.accel.is_some() || raw.ksm.is_some() {
            return Err(
                "accel and ksm are for real VMs; give --hypervisor qemu (or leave them out)".into(),
            );
        }
        return Ok(None);
    };
    if h != "qemu" {
        return Err(format!(
            "hypervisor = '{h}' is not known; give qemu (or leave it out: VMs as control groups)"
        ));
    }
    let accel = match raw.accel.as_deref() {
        None => None,
        Some("kvm") => Some(Accel::Kvm),
        Some("tcg") => Some(Accel::Tcg),
        Some(a) => return Err(format!("accel = '{a}' is not known; give kvm or tcg")),
    };
    Ok(Some(GuestSpec {
        accel,
        ksm: raw.ksm,
    }))
}

/// The schemes asked for (each once), or all three; on real VMs 1/M/M's instances share
/// one guest.
fn schemes(asked: Option<&[String]>) -> Result<Vec<Scheme>, String> {
    let schemes = match asked {
        Some([]) => return Err("schemes is empty; give e.g. --schemes 1/1/M,M/M/M".into()),
        Some(list) => list
            .iter()
            .map(|s| Scheme::parse(s))
            .collect::<Result<Vec<_>, _>>()?,
        None => Scheme::ALL.to_vec(),
    };
    if let Some(dup) = schemes
        .iter()
        .enumerate()
        .find(|(i, s)| schemes[..*i].contains(s))
    {
        return Err(format!("scheme {} is given twice", dup.1.name()));
    }
    Ok(schemes)
}

/// Rates above this leave the VMs too little to start in; the study went to 55 %.
pub const MAX_OVERCOMMIT: u32 = 90;

impl Spec {
    pub fn check(raw: RawSpec) -> Result<Spec, String> {
        let guests = guests(&raw)?;
        let schemes = schemes(raw.schemes.as_deref())?;
        let databases = raw.databases.unwrap_or(2);
        if !(2..=64).contains(&databases) {
            return Err(format!(
                "databases = {databases}: consolidation needs 2 to 64 databases"
            ));
        }
        let periods = raw.periods.unwrap_or(4);
        if !(1..=1000).contains(&periods) {
            return Err(format!("periods = {periods}: give 1 to 1000 periods"));
        }
        let period = raw.period.unwrap_or_else(|| "10m".into());
        let length = parse_duration(&period).map_err(|e| format!("period: {e}"))?;
        if length.is_zero() {
            return Err("period must be longer than 0s, e.g. 10m".into());
        }
        let ramp_up = raw.ramp_up.unwrap_or_else(|| "30s".into());
        parse_duration(&ramp_up).map_err(|e| format!("ramp_up: {e}"))?;
        let (high, low) = (raw.high.unwrap_or(30), raw.low.unwrap_or(2));
        if high == 0 || high > MAX_CLIENTS || low > MAX_CLIENTS {
            return Err(format!(
                "high = {high}, low = {low}: the busy database needs 1 to {MAX_CLIENTS} clients, a quiet one 0 to {MAX_CLIENTS}"
            ));
        }
        let memory = raw.memory.ok_or_else(|| {
            "give each VM's memory: --memory SIZE (e.g. 4GB, as the study's M/M/M VMs; a \
             one-VM scheme gets databases × SIZE), or use --preset vpostgres-consolidation"
                .to_string()
        })?;
        let memory_bytes = parse_size(&memory).map_err(|e| format!("memory: {e}"))?;
        if memory_bytes < MIN_MEMORY {
            return Err(format!(
                "memory = {memory} is too small for a VM; give at least {}",
                format_size(MIN_MEMORY)
            ));
        }
        let shared_buffers_text = raw.shared_buffers.unwrap_or_else(|| "25%".into());
        let shared_buffers = SharedBuffers::parse(&shared_buffers_text)?;
        if let SharedBuffers::Size(b) = shared_buffers {
            if b >= memory_bytes {
                return Err(format!(
                    "shared_buffers = {shared_buffers_text} does not fit a VM of {memory}; give less, or a share like 25%"
                ));
            }
        }
        let mut overcommit = raw.overcommit.unwrap_or_else(|| vec![0]);
        if let Some(r) = overcommit.iter().find(|r| **r > MAX_OVERCOMMIT) {
            return Err(format!(
                "overcommit {r}% is too much: give rates from 0 to {MAX_OVERCOMMIT} (percent)"
            ));
        }
        // Every scheme is judged against its own undercommitted run: 0 % always runs first.
        overcommit.push(0);
        overcommit.sort_unstable();
        overcommit.dedup();
        let host_group = raw.host_group.unwrap_or_else(|| "consolidate".into());
        if host_group.contains('/') {
            return Err(format!(
                "host_group = '{host_group}': give one name, e.g. consolidate"
            ));
        }
        check_vm(&host_group)?;
        if let Some(c) = raw.cpus {
            if !crate::config::instances::CPUS.contains(&c) {
                return Err(format!("cpus = {c}: give a number of cores, e.g. 3 or 0.5"));
            }
            if guests.is_some() && (c < 1.0 || c.fract() != 0.0) {
                return Err(format!(
                    "cpus = {c}: a QEMU VM has whole vCPUs; give a whole number, e.g. 1 or 2"
                ));
            }
        }
        let working_set = match raw.working_set {
            Some(ws) => {
                let bytes = parse_size(&ws).map_err(|e| {
                    format!("working_set = {ws}: {e}; give a size, e.g. the knee's 1376MB")
                })?;
                Some((ws, bytes))
            }
            None => None,
        };
        Ok(Spec {
            working_set,
            schemes,
            databases,
            periods,
            period,
            ramp_up,
            high,
            low,
            cpus: raw.cpus,
            memory,
            memory_bytes,
            shared_buffers_text,
            shared_buffers,
            overcommit,
            balloon: raw.balloon.unwrap_or(false),
            host_group,
            guests,
            settings: raw.settings.unwrap_or_default(),
        })
    }

    /// MEM_config: every scheme configures databases × the M/M/M VM's memory in total.
    pub fn mem_config(&self) -> u64 {
        self.memory_bytes * u64::from(self.databases)
    }

    /// MEM_avail at `rate` percent (Equation 1: rate = 100 % − MEM_avail / MEM_config),
    /// rounded down to whole MiB.
    pub fn mem_avail(&self, rate: u32) -> u64 {
        crate::results::experiment::consolidate::mem_avail(self.mem_config(), rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(memory: &str) -> RawSpec {
        RawSpec {
            memory: Some(memory.into()),
            ..RawSpec::default()
        }
    }

    #[test]
    fn defaults_follow_the_study() {
        let s = Spec::check(raw("4GB")).unwrap();
        assert_eq!(s.schemes, Scheme::ALL.to_vec());
        assert_eq!((s.databases, s.periods, s.high, s.low), (2, 4, 30, 2));
        assert_eq!(s.overcommit, vec![0]);
        assert_eq!(s.mem_config(), 8 << 30);
        assert_eq!(s.shared_buffers, SharedBuffers::OfVm(0.25));
    }

    #[test]
    fn equation_1() {
        let s = Spec::check(raw("4GB")).unwrap();
        assert_eq!(s.mem_avail(0), 8 << 30);
        assert_eq!(s.mem_avail(50), 4 << 30);
        // 8 GiB × 0.45 = 3686.4 MiB, rounded down to whole MiB.
        assert_eq!(s.mem_avail(55), 3686 << 20);
    }

    #[test]
    fn real_vms_leave_out_1mm_and_take_whole_vcpus() {
        let qemu = |r: RawSpec| {
            Spec::check(RawSpec {
                hypervisor: Some("qemu".into()),
                ..r
            })
        };
        let s = qemu(RawSpec {
            ksm: Some(false),
            accel: Some("tcg".into()),
            ..raw("1GB")
        })
        .unwrap();
        assert_eq!(s.schemes, Scheme::ALL.to_vec(), "1/M/M shares one guest");
        let g = s.guests.unwrap();
        assert_eq!((g.accel, g.ksm), (Some(Accel::Tcg), Some(false)));
        let e = qemu(RawSpec {
            cpus: Some(0.5),
            ..raw("1GB")
        })
        .unwrap_err();
        assert!(e.contains("whole"), "{e}");
        let e = Spec::check(RawSpec {
            ksm: Some(true),
            ..raw("1GB")
        })
        .unwrap_err();
        assert!(e.contains("--hypervisor qemu"), "{e}");
    }

    #[test]
    fn baseline_is_added_and_rates_sorted() {
        let s = Spec::check(RawSpec {
            overcommit: Some(vec![40, 10]),
            ..raw("1GB")
        })
        .unwrap();
        assert_eq!(s.overcommit, vec![0, 10, 40]);
    }

    #[test]
    fn shared_buffers_split_among_a_vms_instances() {
        // The study's Table 3: 25 % of 8 GB is 2 GB for one instance, 1 GB each for two.
        let b = SharedBuffers::parse("25%").unwrap();
        assert_eq!(b.per_instance(8 << 30, 1), 2 << 30);
        assert_eq!(b.per_instance(8 << 30, 2), 1 << 30);
        assert_eq!(
            SharedBuffers::parse("128MB")
                .unwrap()
                .per_instance(1 << 30, 2),
            128 << 20
        );
        assert!(SharedBuffers::parse("95%").is_err());
        assert!(SharedBuffers::parse("lots").is_err());
    }

    #[test]
    fn bad_input_names_the_fix() {
        let err = Spec::check(RawSpec::default()).unwrap_err();
        assert!(err.contains("--memory"), "{err}");
        let err = Scheme::parse("4").unwrap_err();
        assert!(err.contains("no PostgreSQL equivalent"), "{err}");
        assert_eq!(Scheme::parse("m/m/m").unwrap(), Scheme::MMM);
        let err = Spec::check(RawSpec {
            overcommit: Some(vec![95]),
            ..raw("1GB")
        })
        .unwrap_err();
        assert!(err.contains("0 to 90"), "{err}");
        let err = Spec::check(RawSpec {
            shared_buffers: Some("2GB".into()),
            ..raw("1GB")
        })
        .unwrap_err();
        assert!(err.contains("does not fit"), "{err}");
    }
}
