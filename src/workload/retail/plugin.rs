//! `retail` as a registered workload: two transaction types on the `dss` role, FullScanSQL and
//! PartialScanSQL, drawn evenly (a phase's `mix` weighs them), each a single statement whose
//! response time is recorded. Runs are a few long operations: `--txn-timeout` cuts one at the
//! server, and Ctrl-C cancels those in flight (the driver sends each a CancelRequest).
//! `check` counts every partition's rows against what the generator puts there.

use std::sync::Arc;

use rand::Rng as _;

use super::gen::{self, Size};
use super::{FULL_SCAN, META, PARTIAL_SCAN, ROWS_PER_SCALE};
use crate::config::{OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::{
    CheckOutcome, ClientSlot, Kind, Loaded, Pending, Rng, Terminal, TxnEnd, TxnFuture, TxnType,
    Workload, WorkloadError,
};

const ROLES: &[&str] = &["dss"];

const OPTIONS: &[OptionSpec] = &[OptionSpec {
    key: super::SEGMENTS,
    kind: OptionKind::Count,
    help: "spread the fact table over N segment instances behind the target (the \
           coordinator), joined by postgres_fdw [default: none]",
    load: true,
}];
const TYPES: [&str; 2] = ["full_scan", "partial_scan"];

pub struct RetailKind;

pub static RETAIL: RetailKind = RetailKind;

impl WorkloadInfo for RetailKind {
    fn name(&self) -> &'static str {
        "retail"
    }
    fn about(&self) -> &'static str {
        "seed 002's analytic reports (FullScanSQL, PartialScanSQL) on a 5-year partitioned retail fact table"
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

fn db(what: &str) -> impl Fn(tokio_postgres::Error) -> WorkloadError + '_ {
    move |e| WorkloadError::Database(format!("{what}: {}", describe_pg_error(&e)))
}

/// The load's size and segments from `retail_meta`; `NotPrepared` with the fix when there is
/// none.
async fn loaded_size(client: &tokio_postgres::Client) -> Result<(Size, u64), WorkloadError> {
    let present: bool = client
        .query_one(&format!("SELECT to_regclass('{META}') IS NOT NULL"), &[])
        .await
        .map_err(db("looking for retail_meta"))?
        .get(0);
    if !present {
        return Err(WorkloadError::NotPrepared(
            "no complete retail load here: run `tidebench prepare --workload retail --scale N` \
             (add --force over an interrupted one)"
                .into(),
        ));
    }
    let row = client
        .query_one(&format!("SELECT rows, seed, segments FROM {META}"), &[])
        .await
        .map_err(db("reading retail_meta"))?;
    let (rows, seed, segments): (i64, i64, i32) = (row.get(0), row.get(1), row.get(2));
    Ok((Size::new(rows as u64, seed as u64), segments.max(0) as u64))
}

impl Kind for RetailKind {
    /// A run that names `segments` needs the data spread over that many: a sweep over
    /// `segments` re-prepares each point (seed 002's Figure 3).
    fn check_ready<'a>(
        &'a self,
        options: &'a OptionValues,
        client: &'a tokio_postgres::Client,
    ) -> Pending<'a, Result<Loaded, WorkloadError>> {
        Box::pin(async move {
            let (size, segments) = loaded_size(client).await?;
            let asked = super::segments_of(options);
            if options.contains_key(super::SEGMENTS) && asked != segments {
                return Err(WorkloadError::NotPrepared(format!(
                    "the retail data here is spread over {segments} segment(s), the run asks for \
                     {asked}: run `tidebench prepare -w retail --segments {asked} --force` (a \
                     sweep over segments prepares each point itself)"
                )));
            }
            let scale = (size.rows / ROWS_PER_SCALE).max(1);
            Ok(Loaded::scale(u32::try_from(scale).unwrap_or(u32::MAX)))
        })
    }

    fn prepare<'a>(
        &'a self,
        plan: &'a PreparePlan,
        target: &'a ResolvedTarget,
        events: &'a Arc<dyn Sink>,
    ) -> Pending<'a, Result<(), WorkloadError>> {
        Box::pin(super::loader::prepare(plan, target, events))
    }

    fn check<'a>(
        &'a self,
        client: &'a tokio_postgres::Client,
    ) -> Option<Pending<'a, Result<Vec<CheckOutcome>, WorkloadError>>> {
        Some(Box::pin(check(client)))
    }

    fn build(&self, _scale: u32, _options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Ok(Arc::new(Retail {
            types: TYPES.iter().map(|t| TxnType::new(*t, ROLES[0])).collect(),
        }))
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
        .map_err(db("counting order_lineitems per partition"))?;
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

#[derive(Debug)]
struct Retail {
    types: Vec<TxnType>,
}

impl Workload for Retail {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn terminal(self: Arc<Self>, _slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(RetailTerminal { txn: 0 })
    }
}

/// A stream of reports: which one runs next.
struct RetailTerminal {
    txn: usize,
}

impl Terminal for RetailTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        rng.gen_range(0..TYPES.len())
    }

    fn draw(&mut self, txn: usize, _rng: &mut Rng) {
        self.txn = txn;
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        _protocol: pgwire::Protocol,
        _emulator: Option<&'a dyn crate::workload::Emulator>,
    ) -> TxnFuture<'a> {
        let sql = if self.txn == 0 {
            FULL_SCAN
        } else {
            PARTIAL_SCAN
        };
        Box::pin(async move {
            conn.simple_query(sql).await?;
            Ok(TxnEnd::Committed)
        })
    }
}
