//! `tpce`'s trade flow (Trade-Order → Market-Feed → Trade-Result) on a hand-made fixture: the
//! schema, the fixed rows of the catalog and a few customers, accounts and securities. One
//! scenario runs on four databases, client-side SQL (prepared and simple protocol) and the
//! PL/pgSQL functions (extended and simple), and checks, step by step, the lots a buy, a LIFO
//! and a FIFO sell, a short and its cover leave, the tax of profitable sells, limit and stop
//! orders triggered by the ticker, refused executors and rollbacks; then the rules over all
//! rows (summary = Σ lots, broker counters, settlement and cash amounts, history rows), the
//! server's commit count, and that all four databases end identical.

use pgwire::{Connection, Protocol, TxStatus};
use tidebench::instance::{Instance, DEFAULT_DBNAME};
use tidebench::workload::tpce::gen::catalog::{
    charge_cents, commission_rate, COMMISSION_BANDS, EXCHANGES, STATUS_TYPES, TLB, TLS, TMB, TMS,
    TRADE_TYPES, TSL,
};
use tidebench::workload::tpce::txn::market_feed::{self, Ticker};
use tidebench::workload::tpce::txn::trade_order::{self, Estimate, SecurityKey};
use tidebench::workload::tpce::txn::{trade_result, Outcome};
use tidebench::workload::TxnEnd;

use crate::support::{self, on_driver_loop, psql};

mod busy;

const SCHEMA: &str = include_str!("../../src/workload/tpce/schema.sql");
const PROCEDURES: &str = include_str!("../../src/workload/tpce/procedures/trades.sql");

/// The people of the fixture: (c_id, first name, last name, tax id, tier).
const ALMA: (i64, &str, &str, &str, i64) = (1, "Alma", "Kestrel", "AK-0000-0000-0001", 2);
const BREN: (i64, &str, &str, &str, i64) = (2, "Bren", "Holt", "BH-0000-0000-0002", 1);
const CAL: (i64, &str, &str, &str, i64) = (3, "Cal", "Dunn", "CD-0000-0000-0003", 3);

/// The schema, the trade-id sequence, the functions and the fixture's rows.
fn setup_sql() -> String {
    format!(
        "{SCHEMA}\nCREATE SEQUENCE t_id_seq START 1000000;\n{PROCEDURES}\n{}{}",
        fixed_rows(),
        hand_rows()
    )
}

/// TRADE_TYPE, STATUS_TYPE, CHARGE and COMMISSION_RATE from the catalog the loader uses.
fn fixed_rows() -> String {
    let money = |c: i64| format!("{}.{:02}", c / 100, c % 100);
    let mut sql = String::new();
    for (tt, t) in TRADE_TYPES.iter().enumerate() {
        sql += &format!(
            "INSERT INTO trade_type VALUES ('{}', '{}', {}, {});\n",
            t.id, t.name, t.is_sell, t.is_market
        );
        for tier in 1..=3u8 {
            sql += &format!(
                "INSERT INTO charge VALUES ('{}', {tier}, {});\n",
                t.id,
                money(charge_cents(tt, tier))
            );
            for (ex, e) in EXCHANGES.iter().enumerate() {
                for (band, (from, to)) in COMMISSION_BANDS.iter().enumerate() {
                    sql += &format!(
                        "INSERT INTO commission_rate VALUES ({tier}, '{}', '{}', {from}, {to}, \
                         {});\n",
                        t.id,
                        e.id,
                        money(commission_rate(tier, tt, ex, band))
                    );
                }
            }
        }
    }
    for (id, name) in STATUS_TYPES {
        sql += &format!("INSERT INTO status_type VALUES ('{id}', '{name}');\n");
    }
    sql
}

/// Three customers: Alma owns account 1 (withholding tax, status 1) and lets Bren trade it;
/// Bren owns account 2 (not taxable); Cal may trade neither. Two securities.
fn hand_rows() -> String {
    let mut sql = String::from(
        "INSERT INTO broker VALUES (1, 'ACTV', 'Selma Broker', 0, 0), \
                                   (2, 'ACTV', 'Tavi Broker', 0, 0);\n\
         INSERT INTO customer_account VALUES (1, 1, 1, 'Alma main', 1, 10000.00), \
                                             (2, 2, 2, 'Bren only', 0, 5000.00);\n\
         INSERT INTO taxrate VALUES ('C01', 'National', 0.20000), ('D001', 'Division', 0.03500);\n\
         INSERT INTO customer_taxrate VALUES ('C01', 1), ('D001', 1), ('C01', 2);\n\
         INSERT INTO company VALUES \
           (1, 'ACTV', 'Acme Works', 'AA', 'AAA', 'Ada Chief', 1, 'tools', '2000-01-03'), \
           (2, 'ACTV', 'Bolt Labs', 'AB', 'BBB', 'Bo Chief', 2, 'labs', '2000-01-03');\n\
         INSERT INTO security VALUES \
           ('AAA', 'COMMON', 'ACTV', 'Acme Works COMMON', 'NYSE', 1, 1000000, '2000-01-03', \
            '2000-01-03', 10.0, 30.00, '2004-06-01', 20.00, '2004-01-05', 0.50, 2.00), \
           ('BBB', 'COMMON', 'ACTV', 'Bolt Labs COMMON', 'NASDAQ', 2, 1000000, '2000-01-03', \
            '2000-01-03', 12.0, 30.00, '2004-06-01', 20.00, '2004-01-05', 0.10, 0.40);\n\
         INSERT INTO last_trade VALUES ('AAA', '2005-01-03 09:00', 25.00, 25.00, 0), \
                                       ('BBB', '2005-01-03 09:00', 20.00, 20.00, 0);\n",
    );
    for (c_id, first, last, tax_id, tier) in [ALMA, BREN, CAL] {
        sql += &format!(
            "INSERT INTO customer (c_id, c_tax_id, c_st_id, c_l_name, c_f_name, c_tier, c_dob, \
               c_ad_id) VALUES ({c_id}, '{tax_id}', 'ACTV', '{last}', '{first}', {tier}, \
               '1970-01-01', {c_id});\n"
        );
    }
    for (ca_id, (_, first, last, tax_id, _)) in [(1, ALMA), (1, BREN), (2, BREN)] {
        sql += &format!(
            "INSERT INTO account_permission VALUES ({ca_id}, '0000', '{tax_id}', '{last}', \
             '{first}');\n"
        );
    }
    sql
}

/// One back end on one database, and what it has done: its transactions and the reads (each
/// one committed transaction too) the checks made.
struct Flow {
    conn: Connection,
    protocol: Protocol,
    procedures: bool,
    committed: i64,
    rolled_back: i64,
    reads: i64,
}

/// An order of account 1 by its owner for AAA, at market, cash, FIFO.
fn order(tt_id: &'static str, qty: i64) -> trade_order::Args {
    trade_order::Args {
        ca_id: 1,
        exec_f_name: ALMA.1.into(),
        exec_l_name: ALMA.2.into(),
        exec_tax_id: ALMA.3.into(),
        security: SecurityKey::Symbol("AAA".into()),
        tt_id,
        is_lifo: false,
        is_margin: false,
        qty,
        limit_cents: None,
        roll_it_back: false,
    }
}

fn by(who: (i64, &str, &str, &str, i64), a: trade_order::Args) -> trade_order::Args {
    trade_order::Args {
        exec_f_name: who.1.into(),
        exec_l_name: who.2.into(),
        exec_tax_id: who.3.into(),
        ..a
    }
}

fn ticker(entries: &[(&str, i64)]) -> market_feed::Args {
    market_feed::Args {
        entries: entries
            .iter()
            .map(|&(symbol, price_cents)| Ticker {
                symbol: symbol.into(),
                price_cents,
                qty: 375,
            })
            .collect(),
    }
}

impl Flow {
    fn count(&mut self, o: &Outcome) {
        match o.end {
            // TPC-E's frames never leave a block open (only a pgbench script may).
            TxnEnd::Committed | TxnEnd::LeftOpen => self.committed += 1,
            TxnEnd::ExpectedRollback => self.rolled_back += 1,
        }
    }

    /// Ends a failed transaction as the driver does, and counts it.
    async fn after_error(&mut self, e: &pgwire::Error) {
        assert_eq!(e.sqlstate(), Some(b"02000"), "{e}");
        if self.conn.tx_status() != TxStatus::Idle {
            self.conn.simple_query("ROLLBACK").await.unwrap();
        }
        self.rolled_back += 1;
    }

    async fn order(&mut self, a: trade_order::Args) -> (Outcome, Option<Estimate>) {
        let r = trade_order::run_with_estimate(&mut self.conn, self.protocol, &a, self.procedures);
        let (o, e) = r.await.unwrap_or_else(|e| panic!("{a:?}: {e}"));
        self.count(&o);
        (o, e)
    }

    /// A committed order's trade id.
    async fn place(&mut self, a: trade_order::Args) -> i64 {
        let (o, _) = self.order(a).await;
        assert_eq!(o.end, TxnEnd::Committed);
        o.orders[0].t_id
    }

    /// Completes `t_id` at `price_cents`; returns the lots touched.
    async fn result(&mut self, t_id: i64, price_cents: i64) -> u64 {
        let a = trade_result::Args { t_id, price_cents };
        let r = trade_result::run(&mut self.conn, self.protocol, &a, self.procedures).await;
        let o = r.unwrap_or_else(|e| panic!("{a:?}: {e}"));
        self.count(&o);
        o.rows
    }

    async fn result_fails(&mut self, t_id: i64) {
        let a = trade_result::Args {
            t_id,
            price_cents: 2_000,
        };
        let r = trade_result::run(&mut self.conn, self.protocol, &a, self.procedures).await;
        let e = r.expect_err("a trade that is not SBMT");
        self.after_error(&e).await;
    }

    /// A check's query on the flow's session (one committed transaction), as psql prints it:
    /// rows on lines, columns split by `|`.
    async fn sql(&mut self, sql: &str) -> String {
        self.reads += 1;
        let r = self.conn.simple_query(sql).await.unwrap();
        let columns = |row| {
            let values: Vec<&str> = (0..).map_while(|col| r.get_str(row, col)).collect();
            values.join("|")
        };
        (0..r.rows()).map(columns).collect::<Vec<_>>().join("\n")
    }

    /// Account `ca_id`'s lots of `symbol` as (id, qty, price), by id.
    async fn lots(&mut self, ca_id: i64, symbol: &str) -> Vec<(i64, i64, String)> {
        self.sql(&format!(
            "SELECT h_t_id, h_qty, h_price FROM holding \
             WHERE h_ca_id = {ca_id} AND h_s_symb = '{symbol}' ORDER BY h_t_id"
        ))
        .await
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].to_string(),
            )
        })
        .collect()
    }

    async fn trade(&mut self, t_id: i64, col: &str) -> String {
        self.sql(&format!("SELECT {col} FROM trade WHERE t_id = {t_id}"))
            .await
    }

    async fn feed(&mut self, entries: &[(&str, i64)]) -> Outcome {
        let a = ticker(entries);
        let r = market_feed::run(&mut self.conn, self.protocol, &a, self.procedures).await;
        let o = r.unwrap_or_else(|e| panic!("{a:?}: {e}"));
        self.count(&o);
        o
    }
}

async fn scenario(f: &mut Flow) {
    // Three buys at market ($25.00) make three long lots at their execution prices.
    let (o, e) = f.order(order(TMB, 100)).await;
    let t1 = o.orders[0].t_id;
    assert_eq!(
        (o.orders[0].bid_cents, o.orders[0].pending, o.rows),
        (2_500, false, 0)
    );
    assert_eq!(e.map(|e| e.lots), Some(0));
    assert_eq!(f.result(t1, 2_400).await, 1);
    let t2 = f.place(order(TMB, 200)).await;
    assert_eq!(f.result(t2, 2_600).await, 1);
    let t3 = f.place(order(TMB, 400)).await;
    assert_eq!(f.result(t3, 2_200).await, 1);
    assert_eq!(
        f.lots(1, "AAA").await,
        [
            (t1, 100, "24.00".into()),
            (t2, 200, "26.00".into()),
            (t3, 400, "22.00".into())
        ]
    );

    // A LIFO limit sell at $27.00 by Bren, permitted on account 1, naming the company: its
    // estimate walks the newest lot only; it waits until the ticker reaches its limit.
    let sell = trade_order::Args {
        security: SecurityKey::Company {
            name: "Acme Works".into(),
            issue: "COMMON",
        },
        is_lifo: true,
        limit_cents: Some(2_700),
        ..by(BREN, order(TLS, 200))
    };
    let (o, e) = f.order(sell).await;
    let t4 = o.orders[0].t_id;
    assert_eq!(
        (o.orders[0].symbol.as_str(), o.orders[0].pending, o.rows),
        ("AAA", true, 1)
    );
    let e = e.unwrap();
    assert_eq!((e.buy_value_cents, e.sell_value_cents), (440_000, 540_000));
    // Gain $1,000 × (20 % + 3.5 %).
    assert_eq!(e.tax_cents, 23_500);
    assert_eq!(f.feed(&[("AAA", 2_650)]).await.rows, 0);
    let o = f
        .feed(&[("BBB", 2_000), ("AAA", 2_710), ("AAA", 2_600)])
        .await;
    assert_eq!(o.orders.len(), 1);
    assert_eq!((o.orders[0].t_id, o.orders[0].tt_id.as_str()), (t4, TLS));
    assert_eq!((o.orders[0].bid_cents, o.orders[0].pending), (2_700, false));
    assert_eq!(
        f.sql("SELECT lt_price, lt_vol FROM last_trade WHERE lt_s_symb = 'AAA'")
            .await,
        "26.00|1125"
    );
    assert_eq!(f.result(t4, 2_700).await, 1);
    assert_eq!(f.lots(1, "AAA").await[2], (t3, 200, "22.00".into()));
    assert_eq!(f.trade(t4, "t_tax").await, "235.00");

    // A FIFO market sell of 300 closes the two oldest lots; it lost $1 a share on one of
    // them more than it gained on the other, so no tax.
    let t5 = f.place(order(TMS, 300)).await;
    assert_eq!(f.result(t5, 2_500).await, 2);
    assert_eq!(f.lots(1, "AAA").await, [(t3, 200, "22.00".into())]);
    assert_eq!(f.trade(t5, "t_tax").await, "0.00");

    // Selling 500 with 200 held: the lot closes and a short of 300 opens under the trade's id.
    let t6 = f.place(order(TMS, 500)).await;
    assert_eq!(f.result(t6, 2_300).await, 2);
    assert_eq!(f.lots(1, "AAA").await, [(t6, -300, "23.00".into())]);
    assert_eq!(f.trade(t6, "t_tax").await, "47.00");

    // A margin buy of 400 covers the short and holds the rest; its estimate counts the
    // account's assets: the balance plus −300 shares at $26.00.
    let balance = f
        .sql("SELECT ca_bal * 100 FROM customer_account WHERE ca_id = 1")
        .await;
    let balance: f64 = balance.parse().unwrap();
    let margin = trade_order::Args {
        is_margin: true,
        ..order(TMB, 400)
    };
    let (o, e) = f.order(margin).await;
    let t7 = o.orders[0].t_id;
    let e = e.unwrap();
    assert_eq!(e.lots, 1);
    assert_eq!(e.assets_cents, Some(balance as i64 - 780_000));
    assert_eq!(f.result(t7, 2_100).await, 2);
    assert_eq!(f.lots(1, "AAA").await, [(t7, 100, "21.00".into())]);

    // Cal may not trade account 1; the 1 % roll-back enters its order and rolls it back.
    let trades = f.sql("SELECT count(*) FROM trade").await;
    let (o, e) = f.order(by(CAL, order(TMB, 100))).await;
    assert_eq!(
        (o.end, o.orders.len(), e),
        (TxnEnd::ExpectedRollback, 0, None)
    );
    let again = trade_order::Args {
        roll_it_back: true,
        ..order(TMB, 100)
    };
    let (o, e) = f.order(again).await;
    assert_eq!((o.end, o.orders.len()), (TxnEnd::ExpectedRollback, 0));
    assert!(e.is_some());
    assert_eq!(f.sql("SELECT count(*) FROM trade").await, trades);

    // A limit buy at $20.50 is pending: Trade-Result refuses it until the ticker reaches it.
    let buy = trade_order::Args {
        limit_cents: Some(2_050),
        ..order(TLB, 100)
    };
    let t10 = f.place(buy).await;
    f.result_fails(t10).await;
    assert_eq!(f.feed(&[("AAA", 2_060)]).await.rows, 0);
    assert_eq!(f.feed(&[("AAA", 2_050)]).await.orders[0].t_id, t10);
    assert_eq!(f.result(t10, 2_050).await, 1);

    // A stop-loss at $21.00 fires at or below it and closes the oldest lot (FIFO).
    let stop = trade_order::Args {
        limit_cents: Some(2_100),
        ..order(TSL, 100)
    };
    let t11 = f.place(stop).await;
    assert_eq!(f.feed(&[("AAA", 2_150)]).await.rows, 0);
    assert_eq!(f.feed(&[("AAA", 2_100)]).await.orders[0].tt_id, TSL);
    assert_eq!(f.result(t11, 2_100).await, 1);
    assert_eq!(f.lots(1, "AAA").await, [(t10, 100, "20.50".into())]);
    // Completed trades cannot complete twice.
    f.result_fails(t1).await;

    // Bren sells BBB he does not hold (a short), then buys it back: no lot and no summary row.
    let bren = |tt, qty| trade_order::Args {
        ca_id: 2,
        security: SecurityKey::Symbol("BBB".into()),
        ..by(BREN, order(tt, qty))
    };
    let t12 = f.place(bren(TMS, 100)).await;
    assert_eq!(f.result(t12, 2_000).await, 1);
    assert_eq!(f.lots(2, "BBB").await, [(t12, -100, "20.00".into())]);
    let t13 = f.place(bren(TMB, 100)).await;
    assert_eq!(f.result(t13, 1_900).await, 1);
    assert!(f.lots(2, "BBB").await.is_empty());
    assert_eq!(
        f.sql("SELECT count(*) FROM holding_summary WHERE hs_ca_id = 2")
            .await,
        "0"
    );

    // A ticker naming a symbol nobody lists is an error, not a silent skip.
    let a = ticker(&[("AAA", 2_500), ("ZZZ", 2_500)]);
    let e = market_feed::run(&mut f.conn, f.protocol, &a, f.procedures)
        .await
        .expect_err("an unknown symbol");
    f.after_error(&e).await;
}

/// Rules over all rows, each query counting the rows that break it.
const RULES: [(&str, &str); 9] = [
    (
        "summary = Σ lots, only for held pairs",
        "SELECT count(*) FROM (SELECT h_ca_id, h_s_symb, sum(h_qty) AS q FROM holding \
         GROUP BY 1, 2) h FULL JOIN holding_summary s \
         ON s.hs_ca_id = h.h_ca_id AND s.hs_s_symb = h.h_s_symb \
         WHERE s.hs_qty IS DISTINCT FROM h.q OR s.hs_qty = 0",
    ),
    (
        "broker counters = its completed trades",
        "SELECT count(*) FROM broker b LEFT JOIN (SELECT ca_b_id, count(*) AS n, \
         sum(t_comm) AS c FROM trade JOIN customer_account ON ca_id = t_ca_id \
         WHERE t_st_id = 'CMPT' GROUP BY 1) t ON t.ca_b_id = b.b_id \
         WHERE b.b_num_trades <> coalesce(t.n, 0) OR b.b_comm_total <> coalesce(t.c, 0)",
    ),
    (
        "charge and commission from the tables at the trade price",
        "SELECT count(*) FROM trade t JOIN customer_account ca ON ca.ca_id = t.t_ca_id \
         JOIN customer c ON c.c_id = ca.ca_c_id JOIN security s ON s.s_symb = t.t_s_symb \
         JOIN charge ch ON ch.ch_tt_id = t.t_tt_id AND ch.ch_c_tier = c.c_tier \
         JOIN commission_rate cr ON cr.cr_c_tier = c.c_tier AND cr.cr_tt_id = t.t_tt_id \
           AND cr.cr_ex_id = s.s_ex_id AND t.t_qty BETWEEN cr.cr_from_qty AND cr.cr_to_qty \
         WHERE t.t_st_id = 'CMPT' AND (t.t_chrg <> ch.ch_chrg \
           OR t.t_comm <> round(cr.cr_rate / 100 * t.t_qty * t.t_trade_price, 2))",
    ),
    (
        "one settlement per completed trade, with its amount, type and due date",
        "SELECT count(*) FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
         JOIN customer_account ca ON ca.ca_id = t.t_ca_id \
         LEFT JOIN settlement se ON se.se_t_id = t.t_id \
         WHERE (t.t_st_id = 'CMPT') <> (se.se_t_id IS NOT NULL) OR se.se_amt <> \
           CASE WHEN tt.tt_is_sell THEN 1 ELSE -1 END * t.t_qty * t.t_trade_price \
           - t.t_chrg - t.t_comm - CASE WHEN ca.ca_tax_st = 1 THEN t.t_tax ELSE 0 END \
           OR se.se_cash_type <> CASE WHEN t.t_is_cash THEN 'Cash Account' ELSE 'Margin' END \
           OR se.se_cash_due_date <> t.t_dts::date + 2",
    ),
    (
        "cash transactions for completed cash trades only, as settled and named",
        "SELECT count(*) FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
         JOIN security s ON s.s_symb = t.t_s_symb \
         JOIN settlement se ON se.se_t_id = t.t_id \
         FULL JOIN cash_transaction ct ON ct.ct_t_id = t.t_id \
         WHERE t.t_is_cash IS DISTINCT FROM (ct.ct_t_id IS NOT NULL) \
           OR ct.ct_amt <> se.se_amt OR ct.ct_dts <> t.t_dts \
           OR ct.ct_name <> tt.tt_name || ' ' || t.t_qty || ' shares of ' || s.s_name",
    ),
    (
        "balances moved by the cash transactions",
        "SELECT count(*) FROM customer_account ca \
         JOIN (VALUES (1, 10000.00), (2, 5000.00)) AS v(id, start) ON v.id = ca.ca_id \
         WHERE ca.ca_bal <> v.start + coalesce((SELECT sum(ct_amt) FROM cash_transaction \
           JOIN trade ON t_id = ct_t_id WHERE t_ca_id = ca.ca_id), 0)",
    ),
    (
        "history: market SBMT, CMPT; limit PNDG, SBMT, CMPT",
        "SELECT count(*) FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
         WHERE t.t_st_id = 'CMPT' AND (SELECT string_agg(th_st_id, ',' ORDER BY th_dts, \
           array_position(ARRAY['PNDG', 'SBMT', 'CMPT'], th_st_id::text)) \
           FROM trade_history WHERE th_t_id = t.t_id) <> \
           CASE WHEN tt.tt_is_mrkt THEN 'SBMT,CMPT' ELSE 'PNDG,SBMT,CMPT' END",
    ),
    (
        "lot history moves each trade's quantity",
        "SELECT count(*) FROM trade t JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
         WHERE t.t_st_id = 'CMPT' AND t.t_qty <> (SELECT abs(sum(hh_after_qty - hh_before_qty)) \
           FROM holding_history WHERE hh_t_id = t.t_id)",
    ),
    (
        "no request left once triggered",
        "SELECT count(*) FROM trade_request",
    ),
];

/// Every table the transactions write, times left out (they differ between databases).
fn dump(inst: &Instance, db: &str) -> String {
    psql(
        inst,
        db,
        "SELECT t_id, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id, \
           t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo FROM trade ORDER BY 1; \
         SELECT th_t_id, th_st_id FROM trade_history ORDER BY 1, 2; \
         SELECT h_t_id, h_ca_id, h_s_symb, h_price, h_qty FROM holding ORDER BY 1; \
         SELECT * FROM holding_history ORDER BY 1, 2; \
         SELECT * FROM holding_summary ORDER BY 1, 2; \
         SELECT * FROM settlement ORDER BY 1; \
         SELECT ct_t_id, ct_amt, ct_name FROM cash_transaction ORDER BY 1; \
         SELECT * FROM broker ORDER BY 1; \
         SELECT * FROM customer_account ORDER BY 1; \
         SELECT lt_s_symb, lt_price, lt_vol FROM last_trade ORDER BY 1; \
         SELECT last_value FROM t_id_seq",
    )
}

/// The database's committed transactions, read from another database so reading adds none.
fn commits(inst: &Instance, db: &str) -> i64 {
    let sql = format!("SELECT xact_commit FROM pg_stat_database WHERE datname = '{db}'");
    psql(inst, DEFAULT_DBNAME, &sql).parse().unwrap()
}

/// `commits` once two reads a moment apart agree, or `want` is reached.
fn settled_commits(inst: &Instance, db: &str, want: Option<i64>) -> i64 {
    let mut last = commits(inst, db);
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        let now = commits(inst, db);
        if Some(now) == want || (want.is_none() && now == last) {
            return now;
        }
        last = now;
    }
    last
}

#[test]
fn tpce_trade_flow_on_a_fixture_matches_on_both_back_ends() {
    let home = support::temp_home();
    let inst = support::start_instance(&home, "tpcetr");
    let setup = setup_sql();
    let backends = [
        ("fx_prepared", false, Protocol::Prepared),
        ("fx_simple", false, Protocol::Simple),
        ("fx_proc_extended", true, Protocol::Extended),
        ("fx_proc_simple", true, Protocol::Simple),
    ];
    let mut dumps = Vec::new();
    for (db, procedures, protocol) in backends {
        psql(&inst, DEFAULT_DBNAME, &format!("CREATE DATABASE {db}"));
        psql(&inst, db, &setup);
        for f in [
            trade_order::FUNCTION,
            trade_result::FUNCTION,
            market_feed::FUNCTION,
        ] {
            let sql = format!("SELECT to_regprocedure('{f}') IS NOT NULL");
            assert_eq!(psql(&inst, db, &sql), "t", "{f}");
        }
        let before = settled_commits(&inst, db, None);
        let (committed, rolled_back, reads) = on_driver_loop(async {
            let conn = Connection::connect(&inst.connect_params(db)).await.unwrap();
            let mut flow = Flow {
                conn,
                protocol,
                procedures,
                committed: 0,
                rolled_back: 0,
                reads: 0,
            };
            scenario(&mut flow).await;
            flow.conn.close().await;
            (flow.committed, flow.rolled_back, flow.reads)
        });
        assert_eq!((committed, rolled_back), (28, 5), "{db}");
        // One transaction of ours is one server transaction; the session's startup adds one.
        let want = committed + reads + 1;
        let after = settled_commits(&inst, db, Some(before + want));
        assert_eq!(after - before, want, "{db}");
        for (rule, sql) in RULES {
            assert_eq!(psql(&inst, db, sql), "0", "{db}: {rule}");
        }
        dumps.push(dump(&inst, db));
    }
    for (k, d) in dumps.iter().enumerate().skip(1) {
        assert_eq!(
            &dumps[0], d,
            "{} differs from {}",
            backends[k].0, backends[0].0
        );
    }
}
