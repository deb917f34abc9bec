//! tpce as a registered workload: its options (`--trade-days`, the data's; `--procedures`;
//! `dss_types`), its roles (a set's `oltp` and `dss` databases), the scale (customers, which a
//! run must match), readiness against `tpce_meta`, the check, a set's market emulator, and a
//! client's terminal (its own deck and the inputs of the transaction drawn last, whose
//! committed orders it hands to the set's market).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::inputs::Inputs;
use super::loader::{self, FACT_SEED, FACT_TRADE_DAYS};
use super::market::{self, Market};
use super::mix::{
    Deck, CE_TYPES, DEFAULT_DSS_TYPES, EMULATED_TYPES, TRADE_LOOKUP, TRADE_ORDER, TRADE_STATUS,
};
use super::scale::{Scale, DEFAULT_SCALE_FACTOR};
use super::txn::{self, Outcome};
use crate::config::{OptionKind, OptionSpec, OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::results::TypeRule;
use crate::target::ResolvedTarget;
use crate::workload::{
    CheckOutcome, ClientSlot, Emulator, Loaded, Plugin, Rng, Terminal, TxnFuture, TxnType,
    Workload, WorkloadError,
};

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "trade_days",
        kind: OptionKind::Count,
        help: "initial trade history in 8-hour trading days, 57,600 trades per 1,000 \
               customers and day (the spec has 300) [prepare default: 10; a run uses the \
               load's and refuses another]",
        load: true,
    },
    OptionSpec {
        key: "procedures",
        kind: OptionKind::Flag,
        help: "run the transactions as PL/pgSQL functions (installed by prepare) instead of \
               client-side prepared SQL",
        load: false,
    },
    OptionSpec {
        key: "dss_types",
        kind: OptionKind::Names(&CE_TYPES),
        help: "the customer types that run on each set's `dss` database, the rest on its `oltp` \
               one (a set with one database serves both) [default: trade_lookup,trade_update]",
        load: false,
    },
];

/// The roles of a set's databases: TPC-V's OLTP and DSS VMs (tpce.md §8).
const ROLES: &[&str] = &["oltp", "dss"];

/// The commonly quoted 90th-percentile limits (tpce.md §3.1, unverified): Trade-Status 1 s,
/// Trade-Order 2 s, the other customer types 3 s.
fn p90_limit(txn: usize) -> Duration {
    match txn {
        TRADE_STATUS => Duration::from_secs(1),
        TRADE_ORDER => Duration::from_secs(2),
        _ => Duration::from_secs(3),
    }
}

/// The registered tpce workload.
pub struct TpceKind;

pub static TPCE: TpceKind = TpceKind;

impl WorkloadInfo for TpceKind {
    fn name(&self) -> &'static str {
        "tpce"
    }
    fn about(&self) -> &'static str {
        "TPC-E-like brokerage (the TPC-V kit's workload): eight customer transaction types over \
         33 tables; its scale is the customer count, a multiple of 1,000"
    }
    fn scale_name(&self) -> Option<&'static str> {
        Some("customers")
    }
    fn default_scale(&self) -> u32 {
        super::scale::CUSTOMERS_PER_LU as u32
    }
    fn options(&self) -> &'static [OptionSpec] {
        OPTIONS
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn resolve_options(&self, given: &OptionValues) -> Result<OptionValues, String> {
        let mut out = given.clone();
        out.entry("procedures".into()).or_insert(false.into());
        out.entry("dss_types".into()).or_insert_with(|| {
            toml::Value::Array(DEFAULT_DSS_TYPES.iter().map(|t| (*t).into()).collect())
        });
        Ok(out)
    }
    fn txn_type_names(&self) -> Vec<String> {
        CE_TYPES.iter().map(|t| t.to_string()).collect()
    }
}

impl Plugin for TpceKind {
    const REFUSES_OTHER_SCALE: bool = true;

    async fn check_ready(
        &self,
        options: &OptionValues,
        client: &tokio_postgres::Client,
    ) -> Result<Loaded, WorkloadError> {
        loader::check_ready(client, options).await
    }

    async fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> Result<(), WorkloadError> {
        loader::prepare(plan, target, events).await
    }

    fn check(
        &self,
        client: &tokio_postgres::Client,
    ) -> Option<impl Future<Output = Result<Vec<CheckOutcome>, WorkloadError>>> {
        Some(super::check::check(client))
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        let int = |key: &str| options.get(key).and_then(|v| v.as_integer());
        let trade_days = int(FACT_TRADE_DAYS).unwrap_or(i64::from(loader::DEFAULT_TRADE_DAYS));
        let scale_factor = int(loader::FACT_SCALE_FACTOR).unwrap_or(DEFAULT_SCALE_FACTOR.into());
        let seed = int(FACT_SEED).map_or(loader::DATA_SEED, |s| s as u64);
        let scale = Scale::new(
            u64::from(scale),
            u32::try_from(trade_days).unwrap_or(0),
            u32::try_from(scale_factor).unwrap_or(0),
        )
        .map_err(|e| e.to_string())?;
        let procedures = options.get("procedures").and_then(|v| v.as_bool()) == Some(true);
        let dss: Vec<String> = match options.get("dss_types").and_then(|v| v.as_array()) {
            Some(names) => names
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            None => DEFAULT_DSS_TYPES.iter().map(|t| t.to_string()).collect(),
        };
        Ok(Arc::new(
            Tpce::new(seed, scale, procedures).with_dss_types(&dss),
        ))
    }
}

/// tpce over data of a known load.
#[derive(Debug)]
pub struct Tpce {
    types: Vec<TxnType>,
    inputs: Arc<Inputs>,
    procedures: bool,
    market: Arc<market::Setting>,
}

impl Tpce {
    /// The customer types, then the emulated ones (indexes of [`super::mix`]), with the
    /// default routing: [`DEFAULT_DSS_TYPES`] on `dss`, everything else on `oltp`.
    pub fn new(seed: u64, scale: Scale, procedures: bool) -> Tpce {
        let inputs = Arc::new(Inputs::new(seed, scale));
        let dss: Vec<String> = DEFAULT_DSS_TYPES.iter().map(|t| t.to_string()).collect();
        Tpce {
            types: txn_types(&dss),
            market: Arc::new(market::Setting::new(Arc::clone(&inputs), procedures)),
            inputs,
            procedures,
        }
    }

    /// The same with `dss` (customer type names) on the `dss` role instead of the default.
    pub fn with_dss_types(mut self, dss: &[String]) -> Tpce {
        self.types = txn_types(dss);
        self
    }

    pub fn inputs(&self) -> &Inputs {
        &self.inputs
    }

    /// Draws the inputs of a transaction of customer type `txn` (an index of [`CE_TYPES`]).
    pub fn draw(&self, txn: usize, rng: &mut Rng) -> Args {
        let i = &*self.inputs;
        match txn {
            super::mix::BROKER_VOLUME => Args::BrokerVolume(txn::broker_volume::draw(i, rng)),
            super::mix::CUSTOMER_POSITION => {
                Args::CustomerPosition(txn::customer_position::draw(i, rng))
            }
            super::mix::MARKET_WATCH => Args::MarketWatch(txn::market_watch::draw(i, rng)),
            super::mix::SECURITY_DETAIL => Args::SecurityDetail(txn::security_detail::draw(i, rng)),
            TRADE_LOOKUP => Args::TradeLookup(txn::trade_lookup::draw(i, rng)),
            TRADE_ORDER => Args::TradeOrder(txn::trade_order::draw(i, rng)),
            TRADE_STATUS => Args::TradeStatus(txn::trade_status::draw(i, rng)),
            _ => Args::TradeUpdate(txn::trade_update::draw(i, rng)),
        }
    }

    /// Runs drawn inputs once on either back end.
    pub async fn execute(
        &self,
        conn: &mut pgwire::Connection,
        protocol: pgwire::Protocol,
        args: &Args,
    ) -> Result<Outcome, pgwire::Error> {
        let p = self.procedures;
        match args {
            Args::BrokerVolume(a) => txn::broker_volume::run(conn, protocol, a, p).await,
            Args::CustomerPosition(a) => txn::customer_position::run(conn, protocol, a, p).await,
            Args::MarketWatch(a) => txn::market_watch::run(conn, protocol, a, p).await,
            Args::SecurityDetail(a) => txn::security_detail::run(conn, protocol, a, p).await,
            Args::TradeLookup(a) => txn::trade_lookup::run(conn, protocol, a, p).await,
            Args::TradeOrder(a) => txn::trade_order::run(conn, protocol, a, p).await,
            Args::TradeStatus(a) => txn::trade_status::run(conn, protocol, a, p).await,
            Args::TradeUpdate(a) => txn::trade_update::run(conn, protocol, a, p).await,
        }
    }
}

/// Every type with its role: the `dss` customer types on `dss`, the rest and the emulated
/// types (the market's and the maintenance work, which write) on `oltp`; each with the
/// isolation level its `BEGIN` names.
fn txn_types(dss: &[String]) -> Vec<TxnType> {
    let role = |t: &str| ROLES[usize::from(dss.iter().any(|d| d == t))];
    CE_TYPES
        .iter()
        .map(|t| TxnType::new(*t, role(t)))
        .chain(
            EMULATED_TYPES
                .iter()
                .map(|t| TxnType::emulated(*t, ROLES[0])),
        )
        .map(|t| {
            let level = txn::isolation(&t.name);
            t.at_isolation(level)
        })
        .collect()
}

/// The inputs of one customer transaction.
#[derive(Debug, Clone)]
pub enum Args {
    BrokerVolume(txn::broker_volume::Args),
    CustomerPosition(txn::customer_position::Args),
    MarketWatch(txn::market_watch::Args),
    SecurityDetail(txn::security_detail::Args),
    TradeLookup(txn::trade_lookup::Args),
    TradeOrder(txn::trade_order::Args),
    TradeStatus(txn::trade_status::Args),
    TradeUpdate(txn::trade_update::Args),
}

/// Every statement of each type (the SQL and the procedure calls), for the wait sampler.
fn type_statements() -> Vec<(usize, &'static str)> {
    use super::mix;
    use txn::{
        broker_volume, customer_position, data_maintenance, market_feed, market_watch,
        security_detail, trade_cleanup, trade_lookup, trade_order, trade_result, trade_status,
        trade_update,
    };
    let by_type: [(usize, &[pgwire::Statement]); 12] = [
        (mix::BROKER_VOLUME, broker_volume::STATEMENTS),
        (mix::CUSTOMER_POSITION, customer_position::STATEMENTS),
        (mix::MARKET_WATCH, market_watch::STATEMENTS),
        (mix::SECURITY_DETAIL, security_detail::STATEMENTS),
        (mix::TRADE_LOOKUP, trade_lookup::STATEMENTS),
        (mix::TRADE_ORDER, trade_order::STATEMENTS),
        (mix::TRADE_STATUS, trade_status::STATEMENTS),
        (mix::TRADE_UPDATE, trade_update::STATEMENTS),
        (mix::TRADE_RESULT, trade_result::STATEMENTS),
        (mix::MARKET_FEED, market_feed::STATEMENTS),
        (mix::DATA_MAINTENANCE, data_maintenance::STATEMENTS),
        (mix::TRADE_CLEANUP, trade_cleanup::STATEMENTS),
    ];
    by_type
        .iter()
        .flat_map(|(t, all)| all.iter().map(|s| (*t, s.sql)))
        .collect()
}

impl Workload for Tpce {
    fn txn_types(&self) -> &[TxnType] {
        &self.types
    }

    fn statements(&self) -> Vec<(usize, &str)> {
        type_statements()
    }

    fn terminal(self: Arc<Self>, _slot: ClientSlot) -> Box<dyn Terminal> {
        Box::new(TpceTerminal {
            workload: self,
            deck: Deck::new(),
            args: None,
        })
    }

    fn type_rules(&self) -> Vec<TypeRule> {
        (0..CE_TYPES.len())
            .map(|t| TypeRule {
                txn_type: CE_TYPES[t].to_string(),
                p90_limit: Some(p90_limit(t)),
                min_share_pct: None,
                limit_unverified: true,
            })
            .collect()
    }

    fn emulator(&self, seed: u64, once_per_database: bool) -> Option<Arc<dyn Emulator>> {
        Some(Arc::new(Market::new(
            Arc::clone(&self.market),
            seed,
            once_per_database,
        )))
    }

    /// tpce.md §4: completed (committed) Trade-Results per second of the measured window:
    /// tpsE on one database; tpsV, summed over every group, set and role, on more.
    fn headline(&self) -> Option<crate::workload::Headline> {
        Some(crate::workload::Headline::per_second("tpsE", "trade_result").over_many("tpsV"))
    }

    /// tpce.md §4–5: the emulator answers every committed Trade-Order with one Trade-Result
    /// (≈ 0.99 of all completed Trade-Orders, 1 % being rolled back on purpose), and every
    /// Trade-Result adds two ticker entries, 20 of which make one Market-Feed (≈ 0.1). The
    /// ±5 % band is ours (the spec's tolerance was not read). A limit order may wait up to one
    /// 900 s period of its security's price curve for its trigger, so a shortfall of results
    /// counts only over a window of two periods or more.
    fn ratio_rules(&self) -> Vec<crate::results::RatioRule> {
        let rule =
            |numerator: &str, denominator: &str, expected, settle_s| crate::results::RatioRule {
                numerator: numerator.to_string(),
                denominator: denominator.to_string(),
                expected,
                tolerance_pct: 5.0,
                settle: Duration::from_secs(settle_s),
            };
        vec![
            rule("trade_result", CE_TYPES[TRADE_ORDER], 0.99, 1800),
            rule("market_feed", "trade_result", 0.1, 0),
        ]
    }
}

/// A client: its deck and the inputs of the transaction drawn last.
struct TpceTerminal {
    workload: Arc<Tpce>,
    deck: Deck,
    args: Option<Args>,
}

impl Terminal for TpceTerminal {
    fn next_type(&mut self, rng: &mut Rng) -> usize {
        self.deck.draw(rng)
    }

    fn draw(&mut self, txn: usize, rng: &mut Rng) {
        self.args = Some(self.workload.draw(txn, rng));
    }

    fn execute<'a>(
        &'a self,
        conn: &'a mut pgwire::Connection,
        protocol: pgwire::Protocol,
        emulator: Option<&'a dyn Emulator>,
    ) -> TxnFuture<'a> {
        Box::pin(async move {
            match &self.args {
                Some(args) => {
                    let out = self.workload.execute(conn, protocol, args).await?;
                    // A committed Trade-Order's order goes to its own set's market.
                    let market = emulator.and_then(|e| e.as_any().downcast_ref::<Market>());
                    if let Some(market) = market {
                        market.submit(&out.orders);
                    }
                    Ok(out.end)
                }
                None => Err(pgwire::Error {
                    kind: pgwire::ErrorKind::Protocol("no transaction drawn".into()),
                }),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpce::mix::TRADE_UPDATE;

    #[test]
    fn every_type_has_a_statement_that_tells_it() {
        use crate::sampler::waits::types::TypeMap;
        let w = Tpce::new(1, Scale::new(1_000, 1, 500).unwrap(), false);
        let names = w.txn_types();
        let statements = w.statements();
        let map = TypeMap::new(
            statements
                .iter()
                .map(|(t, sql)| (names[*t].name.as_str(), *sql)),
        );
        // `COMMIT` and most `BEGIN`s are shared (`unknown`); each type has texts of its own.
        for (t, name) in names.iter().enumerate() {
            let own = statements
                .iter()
                .filter(|(x, _)| *x == t)
                .filter(|(_, sql)| map.type_of(sql) == Some(name.name.as_str()))
                .count();
            assert!(own > 0, "{}", name.name);
        }
        assert_eq!(map.type_of("COMMIT"), None);
    }

    #[test]
    fn limits_are_marked_unverified_and_trade_days_is_a_load_option() {
        let w = Tpce::new(1, Scale::new(1_000, 1, 500).unwrap(), false);
        let rules = w.type_rules();
        assert_eq!(rules.len(), 8);
        assert!(rules.iter().all(|r| r.limit_unverified));
        assert_eq!(rules[TRADE_STATUS].p90_limit, Some(Duration::from_secs(1)));
        assert!(OPTIONS.iter().any(|o| o.key == "trade_days" && o.load));
        assert_eq!(w.txn_types()[TRADE_UPDATE].name, "trade_update");
        let resolved = TPCE.resolve_options(&OptionValues::new()).unwrap();
        assert_eq!(resolved.get("procedures"), Some(&false.into()));
    }
}
