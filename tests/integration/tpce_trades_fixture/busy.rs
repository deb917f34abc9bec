//! The trade flow under concurrency: clients of both back ends trade the same two accounts and
//! securities at once, one of them entering limit orders and feeding the ticker that triggers
//! them. Every failure must be a serialization failure or deadlock that a retry of the same
//! inputs gets through (the driver's `--max-tries`), and afterwards the rules hold over all
//! rows as after the serial scenario.

use futures_util::future::join_all;
use pgwire::{Connection, Protocol, TxStatus};
use tidebench::instance::{Instance, DEFAULT_DBNAME};
use tidebench::workload::tpce::gen::catalog::{TLB, TMB, TMS};
use tidebench::workload::tpce::txn::market_feed::{self, Ticker};
use tidebench::workload::tpce::txn::trade_order::{self, SecurityKey};
use tidebench::workload::tpce::txn::{trade_result, Outcome};
use tidebench::workload::TxnEnd;

use super::{order, setup_sql, BREN, RULES};
use crate::support::{self, on_driver_loop, psql};

const ROUNDS: i64 = 20;

/// One transaction's inputs, replayed as they are on retry.
enum Txn {
    Order(trade_order::Args),
    Result(trade_result::Args),
    Feed(market_feed::Args),
}

/// Runs `txn` until it gets through; returns its outcome and how many tries failed.
async fn until_done(conn: &mut Connection, procedures: bool, txn: &Txn) -> (Outcome, u32) {
    let protocol = Protocol::Prepared;
    let mut retries = 0;
    loop {
        let r = match txn {
            Txn::Order(a) => trade_order::run(conn, protocol, a, procedures).await,
            Txn::Result(a) => trade_result::run(conn, protocol, a, procedures).await,
            Txn::Feed(a) => market_feed::run(conn, protocol, a, procedures).await,
        };
        match r {
            Ok(o) => return (o, retries),
            Err(e) if matches!(e.sqlstate(), Some(b"40001" | b"40P01")) => {
                if conn.tx_status() != TxStatus::Idle {
                    conn.simple_query("ROLLBACK").await.unwrap();
                }
                retries += 1;
                assert!(retries < 50, "no way through: {e}");
            }
            Err(e) => panic!("not a retryable failure: {e}"),
        }
    }
}

/// A client trading market orders: buys and sells of AAA and BBB on both accounts, LIFO every
/// other time, each completed at once at a price of its own.
async fn trader(inst: &Instance, k: i64, procedures: bool) -> u32 {
    let mut conn = Connection::connect(&inst.connect_params("fx_busy"))
        .await
        .unwrap();
    let mut retries = 0;
    for i in 0..ROUNDS {
        let account = 1 + (i + k) % 2;
        let base = if account == 1 {
            order(if (i + k) % 3 == 0 { TMS } else { TMB }, 100 * (1 + i % 4))
        } else {
            super::by(BREN, order(if i % 2 == 0 { TMB } else { TMS }, 200))
        };
        let symbol = if (i / 2 + k) % 2 == 0 { "AAA" } else { "BBB" };
        let args = trade_order::Args {
            ca_id: account,
            security: SecurityKey::Symbol(symbol.into()),
            is_lifo: i % 2 == 1,
            ..base
        };
        let (o, r) = until_done(&mut conn, procedures, &Txn::Order(args)).await;
        retries += r;
        let t_id = o.orders[0].t_id;
        let price_cents = 2_000 + (i * 37 + k * 101) % 1_000;
        let done = Txn::Result(trade_result::Args { t_id, price_cents });
        let (o, r) = until_done(&mut conn, procedures, &done).await;
        assert_eq!(o.end, TxnEnd::Committed);
        retries += r;
    }
    conn.close().await;
    retries
}

/// A client entering limit buys at $30.00 (in the money at any price) and feeding the ticker,
/// which triggers them; it completes every order the feed hands back.
async fn market(inst: &Instance, procedures: bool) -> u32 {
    let mut conn = Connection::connect(&inst.connect_params("fx_busy"))
        .await
        .unwrap();
    let mut retries = 0;
    for i in 0..ROUNDS {
        let args = trade_order::Args {
            limit_cents: Some(3_000),
            ..order(TLB, 100)
        };
        let (_, r) = until_done(&mut conn, procedures, &Txn::Order(args)).await;
        retries += r;
        let entries = ["AAA", "BBB", "AAA"]
            .iter()
            .map(|s| Ticker {
                symbol: s.to_string(),
                price_cents: 2_000 + i * 45,
                qty: 375,
            })
            .collect();
        let feed = Txn::Feed(market_feed::Args { entries });
        let (o, r) = until_done(&mut conn, procedures, &feed).await;
        retries += r;
        for triggered in o.orders {
            let done = Txn::Result(trade_result::Args {
                t_id: triggered.t_id,
                price_cents: 2_000 + i * 45,
            });
            retries += until_done(&mut conn, procedures, &done).await.1;
        }
    }
    conn.close().await;
    retries
}

#[test]
fn tpce_trade_flow_keeps_its_rules_under_concurrency() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tpcebusy");
    psql(&inst, DEFAULT_DBNAME, "CREATE DATABASE fx_busy");
    psql(&inst, "fx_busy", &setup_sql());
    let retries: u32 = on_driver_loop(async {
        let clients = [
            Box::pin(trader(&inst, 0, false))
                as std::pin::Pin<Box<dyn std::future::Future<Output = u32>>>,
            Box::pin(trader(&inst, 1, true)),
            Box::pin(trader(&inst, 2, false)),
            Box::pin(market(&inst, true)),
        ];
        join_all(clients).await.into_iter().sum()
    });
    let completed = psql(
        &inst,
        "fx_busy",
        "SELECT count(*) FROM trade WHERE t_st_id = 'CMPT'",
    );
    assert_eq!(completed, (4 * ROUNDS).to_string());
    for (rule, sql) in RULES {
        assert_eq!(
            psql(&inst, "fx_busy", sql),
            "0",
            "{rule} ({retries} retries)"
        );
    }
}
