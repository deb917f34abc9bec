//! `retail` as a registered workload: its options, the readiness check (the load's size and
//! segments against the run's), `prepare`, `check` (every partition's rows against what the
//! generator puts there), and the test cases of `cases`, drawn evenly out of `--cases` (a
//! phase's `mix` weighs them). Runs are a few long operations: `--txn-timeout` cuts one at the
//! server, and Ctrl-C cancels those in flight (the driver sends each a CancelRequest).

use std::future::Future;
use std::sync::Arc;

use super::cases::{self, Amount, LoadSpec, Retail, TYPES};
use super::gen::{self, Size};
use super::{DATA_SEED, META, ROWS_PER_SCALE};
use crate::config::{OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;
use crate::workload::kit::MetaTable;
use crate::workload::{CheckOutcome, Loaded, Plugin, Workload, WorkloadError};

const ROLES: &[&str] = &["dss"];

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: super::SEGMENTS,
        kind: OptionKind::Count,
        help: "spread the fact table over N segment instances behind the target (the \
               coordinator), joined by postgres_fdw [default: none]",
        load: true,
    },
    OptionSpec {
        key: super::SIZE,
        kind: OptionKind::Size,
        help: "the fact table's size as COPY text (10GB), instead of --scale [default: \
               --scale units of 100,000 line items, about 6.3 MB each]",
        load: true,
    },
    OptionSpec {
        key: super::SEGMENT_CPUS,
        kind: OptionKind::Cores,
        help: "each segment's cores, enforced by a control group (as root) [default: the \
               host's split evenly]",
        load: true,
    },
    OptionSpec {
        key: super::SEGMENT_MEMORY,
        kind: OptionKind::Size,
        help: "each segment's memory, enforced by a control group (as root) [default: the \
               host's split evenly]",
        load: true,
    },
    OptionSpec {
        key: super::SEGMENT_HYPERVISOR,
        kind: OptionKind::Choice(&["qemu"]),
        help: "make each segment a real VM under this hypervisor (a QEMU guest, as the \
               study's segment VMs; whole vCPUs: its share of cores rounded down, at least 1) \
               [default: none, a control group]",
        load: true,
    },
    OptionSpec {
        key: super::CASES,
        kind: OptionKind::Names(&TYPES),
        help: "the test cases clients draw, evenly: full_scan, partial_scan, load (COPY more \
               line items in) [default: full_scan,partial_scan]",
        load: false,
    },
    OptionSpec {
        key: super::LOAD_SIZE,
        kind: OptionKind::Size,
        help: "what one load test case copies, as COPY text [default: a tenth of the fact \
               table]",
        load: false,
    },
];

pub struct RetailKind;

pub static RETAIL: RetailKind = RetailKind;

impl WorkloadInfo for RetailKind {
    fn name(&self) -> &'static str {
        "retail"
    }
    fn about(&self) -> &'static str {
        "the Greenplum study's analytic reports (FullScanSQL, PartialScanSQL) on a 5-year partitioned retail fact table"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn txn_type_names(&self) -> Vec<String> {
        TYPES.iter().map(|t| t.to_string()).collect()
    }
}

/// The load's size and segments from `retail_meta`; not prepared, with the fix, when there
/// is none.
async fn loaded_size(client: &tokio_postgres::Client) -> Result<(Size, u64), WorkloadError> {
    let row = MetaTable {
        load: "retail",
        table: META,
        prepare: "tidebench prepare --workload retail --scale N",
    }
    .read(client, &format!("SELECT rows, seed, segments FROM {META}"))
    .await?;
    let (rows, seed, segments): (i64, i64, i32) = (row.get(0), row.get(1), row.get(2));
    Ok((Size::new(rows as u64, seed as u64), segments.max(0) as u64))
}

impl Plugin for RetailKind {
    /// A run that names `segments` needs the data spread over that many: a sweep over
    /// `segments` re-prepares each point (the Greenplum study's Figure 3).
    async fn check_ready(
        &self,
        options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        let (size, segments) = loaded_size(client).await?;
        if let Some(bytes) = super::bytes_of(options, super::SIZE) {
            let rows = gen::rows_for_bytes(bytes, DATA_SEED);
            if rows != size.rows {
                let asked = crate::config::size::format_size(bytes);
                return Err(WorkloadError::not_prepared(
                    format!(
                        "the retail data here has {} line items, the run's --size {asked} \
                         makes {rows}",
                        size.rows
                    ),
                    format!(
                        "run `tidebench prepare -w retail --size {asked} --force` (a sweep \
                         over size prepares each point itself)"
                    ),
                ));
            }
        }
        let asked = super::segments_of(options);
        if options.contains_key(super::SEGMENTS) && asked != segments {
            return Err(WorkloadError::not_prepared(
                format!(
                    "the retail data here is spread over {segments} segment(s), the run \
                     asks for {asked}"
                ),
                format!(
                    "run `tidebench prepare -w retail --segments {asked} --force` (a sweep \
                     over segments prepares each point itself)"
                ),
            ));
        }
        let scale = (size.rows / ROWS_PER_SCALE).max(1);
        Ok(Loaded::scale(u32::try_from(scale).unwrap_or(u32::MAX)))
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        super::loader::prepare(plan, target, events).await
    }

    fn check(
        &self,
        client: &tokio_postgres::Client,
    ) -> Option<impl Future<Output = Result<Vec<CheckOutcome>, WorkloadError>>> {
        Some(check(client))
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        let cases: Vec<String> = match options.get(super::CASES).and_then(|v| v.as_array()) {
            Some(given) => given
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            None => cases::DEFAULT_CASES.map(String::from).to_vec(),
        };
        if cases.is_empty() {
            return Err(format!(
                "cases is empty: name at least one of {}",
                TYPES.join(", ")
            ));
        }
        let size = Size::new(super::rows_of(scale, options), DATA_SEED);
        let amount = match super::bytes_of(options, super::LOAD_SIZE) {
            Some(bytes) => Amount::Bytes(bytes),
            None => Amount::Rows((size.rows / 10).max(1)),
        };
        let spacing = match amount {
            Amount::Rows(n) => n,
            // Rows run to about 60 bytes: a client's range ends well before the next one's.
            Amount::Bytes(b) => b / 40 + 1,
        };
        let load = LoadSpec {
            size,
            amount,
            spacing,
        };
        Ok(Arc::new(Retail::new(&cases, load)))
    }
}

/// Every partition holds exactly the line items the generator puts in its time range (over
/// segments: every segment those of its customers).
async fn check(client: &tokio_postgres::Client) -> Result<Vec<CheckOutcome>, WorkloadError> {
    let (size, segments) = loaded_size(client).await?;
    let counted = client
        .query(
            "SELECT tableoid::regclass::text, count(*) FROM order_lineitems GROUP BY 1",
            &[],
        )
        .await
        .map_err(WorkloadError::query(
            "counting order_lineitems per partition",
        ))?;
    let expected: Vec<(String, u64)> = if segments == 0 {
        gen::partitions()
            .into_iter()
            .map(|p| (p.name, size.first_id_at(p.to) - size.first_id_at(p.from)))
            .collect()
    } else {
        gen::rows_per_segment(&size, segments)
            .into_iter()
            .enumerate()
            .map(|(k, n)| (format!("order_lineitems_seg{}", k + 1), n))
            .collect()
    };
    let mut examples = Vec::new();
    let mut offending = 0;
    for (name, want) in expected {
        let got = counted
            .iter()
            .find(|r| r.get::<_, String>(0) == name)
            .map_or(0, |r| r.get::<_, i64>(1) as u64);
        if got != want {
            offending += 1;
            if examples.len() < 5 {
                examples.push(format!("{name}: {got} rows, the generator puts {want}"));
            }
        }
    }
    Ok(vec![CheckOutcome {
        name: if segments == 0 {
            "every partition holds the generator's rows".into()
        } else {
            format!("each of {segments} segments holds its customers' rows")
        },
        offending,
        examples,
    }])
}
