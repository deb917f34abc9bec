//! The twelve SUT transactions of `tpce` (tpce.md §3): the customer emulator's eight, which a
//! client's deck draws, and the four the market exchange emulator (issue 12) issues per
//! (group, set), never drawn from a deck: Trade-Result and Market-Feed with the inputs its
//! market hands them, Data-Maintenance once a minute (the emulator keeps the round-robin
//! over [`data_maintenance::Table`]) and Trade-Cleanup once before the customer transactions
//! start.
//!
//! Every transaction module has the same shape:
//!
//! - `Args`: the transaction's inputs, drawn once and replayed on retry;
//! - `draw(inputs, rng) -> Args` for the customer types (tpce.md §3.2's input rules) and
//!   `draw(inputs, rng, table)` for Data-Maintenance, while Trade-Result and Market-Feed take
//!   their inputs from the caller and Trade-Cleanup its bound from the scale;
//! - `run(conn, protocol, args, procedures) -> Result<Outcome, pgwire::Error>`: one server
//!   transaction at the isolation level of §3.1 (read committed for the reads,
//!   Data-Maintenance and Trade-Cleanup, repeatable read for Trade-Order, Trade-Update and
//!   Market-Feed, serializable for Trade-Result), either as client-side prepared SQL or, with
//!   `procedures`, as a call of the PL/pgSQL function that `prepare` installs
//!   (`procedures/*.sql`). Both back ends return the same rows. Trade-Cleanup is client-side
//!   only (no `procedures` argument), as in DBT-5.
//!
//! Serialization failures and deadlocks (40001/40P01) come back as errors; the driver retries
//! them with the same `Args` under `--max-tries`.
//!
//! Money and prices travel as numeric text ([`numeric`]); the trade rules Trade-Result and
//! Trade-Order apply are the loader's too ([`crate::workload::tpce::rules`]).

use pgwire::Statement;

pub mod broker_volume;
pub mod customer_position;
pub mod data_maintenance;
pub mod history;
pub mod market_feed;
pub mod market_watch;
pub mod numeric;
pub mod security_detail;
pub mod trade_cleanup;
pub mod trade_lookup;
pub mod trade_order;
pub mod trade_result;
pub mod trade_status;
pub mod trade_update;

use crate::workload::TxnEnd;

/// How a transaction ended and what it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub end: TxnEnd,
    /// The rows the transaction's frames returned, as each module's doc defines them (e.g.
    /// Trade-Status: the trades listed, at most 50); tests compare it with the data.
    pub rows: u64,
    /// Orders for the market exchange emulator: the order a committed Trade-Order submitted,
    /// or the requests a Market-Feed triggered.
    pub orders: Vec<Order>,
}

impl Outcome {
    pub fn committed(rows: u64) -> Outcome {
        Outcome {
            end: TxnEnd::Committed,
            rows,
            orders: Vec::new(),
        }
    }
}

/// An order handed to the market: what the emulator needs to schedule its Trade-Result or
/// arm its trigger (tpce.md §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub t_id: i64,
    pub symbol: String,
    /// Trade type id (TMB, TMS, TSL, TLS, TLB).
    pub tt_id: String,
    pub qty: i64,
    /// Bid (limit) price in cents; for a market order the price it was estimated at.
    pub bid_cents: i64,
    /// True when the order waits for its price (status PNDG, a TRADE_REQUEST row).
    pub pending: bool,
}

/// Ends a transaction that found no data it needs: rolls it back (not a commit, so the run
/// counts it as failed and the server agrees) and returns the [`missing`] error naming `what`,
/// or the rollback's own error if the session failed.
pub async fn abandon(conn: &mut pgwire::Connection, what: String) -> pgwire::Error {
    match conn.simple_query("ROLLBACK").await {
        Ok(_) => missing(what),
        Err(e) => e,
    }
}

/// The error for data a transaction needs and did not find: counted as failed ("other"),
/// never as a rollback.
pub fn missing(what: String) -> pgwire::Error {
    pgwire::Error {
        kind: pgwire::ErrorKind::Db {
            sqlstate: *b"02000",
            severity: "ERROR".into(),
            message: what,
            more: None,
        },
    }
}

/// The isolation level a type's transactions begin at, read from its `BEGIN` statement so the
/// report cannot show another than the server gets ("repeatable read"); `None` for a name that
/// is not a tpce type.
pub fn isolation(txn_type: &str) -> Option<String> {
    let begin: Statement = match txn_type {
        "broker_volume" => broker_volume::BEGIN,
        "customer_position" => customer_position::BEGIN,
        "market_watch" => market_watch::BEGIN,
        "security_detail" => security_detail::BEGIN,
        "trade_lookup" => trade_lookup::BEGIN,
        "trade_order" => trade_order::BEGIN,
        "trade_status" => trade_status::BEGIN,
        "trade_update" => trade_update::BEGIN,
        "trade_result" => trade_result::BEGIN,
        "market_feed" => market_feed::BEGIN,
        "data_maintenance" => data_maintenance::BEGIN,
        "trade_cleanup" => trade_cleanup::BEGIN,
        _ => return None,
    };
    let level = begin.sql.strip_prefix("BEGIN ISOLATION LEVEL ")?;
    let level = level.strip_suffix(" READ ONLY").unwrap_or(level);
    Some(level.to_lowercase())
}

#[cfg(test)]
mod isolation_tests {
    use super::isolation;
    use crate::workload::tpce::mix::{CE_TYPES, EMULATED_TYPES};

    #[test]
    fn every_type_names_the_level_of_tpce_3_1() {
        for t in CE_TYPES.iter().chain(&EMULATED_TYPES) {
            assert!(isolation(t).is_some(), "{t}");
        }
        assert_eq!(isolation("trade_order").as_deref(), Some("repeatable read"));
        assert_eq!(
            isolation("trade_update").as_deref(),
            Some("repeatable read")
        );
        assert_eq!(isolation("market_feed").as_deref(), Some("repeatable read"));
        assert_eq!(isolation("trade_result").as_deref(), Some("serializable"));
        assert_eq!(isolation("trade_lookup").as_deref(), Some("read committed"));
        assert_eq!(
            isolation("data_maintenance").as_deref(),
            Some("read committed")
        );
        assert_eq!(isolation("tpcb"), None);
    }
}
