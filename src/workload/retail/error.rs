//! What only retail's load can get wrong (its segments: how many, their share of the host,
//! starting them), wrapped whole by [`crate::workload::WorkloadError::Retail`]; the failures
//! every loader shares are [`crate::workload::WorkloadError`]'s own.

/// Why retail's segments cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum RetailError {
    /// More segments than this host can give a fair share of its cores.
    #[error(
        "--segments {segments}: this host has {cores} cores, and more than {most} segments \
         would leave each a sliver; use at most that many"
    )]
    TooManySegments {
        segments: u64,
        cores: u64,
        most: u64,
    },
    /// A segment's instance could not be started or reached (the cause names its fix).
    #[error("segment {name}: {source}")]
    Segment {
        name: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A fractional `--segment-cpus` for segments that are VMs.
    #[error(
        "--segment-cpus {cpus} is not a number of vCPUs: with --segment-hypervisor each segment \
         is a VM with whole vCPUs; give 1 or more (or leave it out)"
    )]
    SegmentVcpus { cpus: f64 },
    /// Per-segment limits asked for where control groups cannot be written.
    #[error(
        "--segment-cpus and --segment-memory are enforced by a control group per segment, \
         which needs root and a writable cgroup tree: run prepare as root, or leave them out \
         to run the segments unlimited"
    )]
    SegmentLimitsNeedCgroups,
    /// Per-segment limits that add up to more than the host has.
    #[error(transparent)]
    SegmentsOverHost(Box<SegmentsOver>),
}

/// `--segment-cpus`/`--segment-memory` over the host (boxed in [`RetailError`] to keep it small).
#[derive(Debug, thiserror::Error)]
#[error(
    "{flag} {each} for {segments} segments asks for {total} of this host's {host}: give each at \
     most {most}, or fewer segments"
)]
pub struct SegmentsOver {
    pub flag: &'static str,
    pub segments: u64,
    /// The amounts as written for the user (`1.5`, `4.0 GiB`, `2 cores`).
    pub each: String,
    pub total: String,
    pub host: String,
    pub most: String,
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;
    use crate::workload::WorkloadError;

    #[test]
    fn wrapped_in_workload_error_the_message_and_the_cause_stay() {
        let cause = std::io::Error::other("initdb failed");
        let e = WorkloadError::from(RetailError::Segment {
            name: "r-seg1".into(),
            source: cause.into(),
        });
        assert_eq!(e.to_string(), "segment r-seg1: initdb failed");
        assert_eq!(
            e.source().map(|s| s.to_string()).as_deref(),
            Some("initdb failed")
        );
        assert!(!e.is_not_prepared());
    }
}
