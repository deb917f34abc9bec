//! Data-Maintenance (TPC-E clause 3.3.11; tpce.md §3.1 row 11, §3.2): a timed transaction,
//! once a minute per OLTP database, that changes a few rows of one table; the caller (the
//! market exchange emulator) walks the twelve tables of [`Table::ALL`] round-robin with
//! [`Table::next`]. Read committed, one server transaction.
//!
//! What each table's change is (our own choices, in the spirit of TPC-E's: flip a flag, edit
//! a line of text, move a date, add to a volume). Every change is a toggle where one fits, so
//! any number of runs leaves the data within two states, and none touches what another
//! transaction's rules or the driver's generator depend on: prices, quantities, tax, charge
//! and commission rates, names and tax ids of customers and permitted executors, symbols,
//! company and broker names, ids and keys. `tidebench check` stays true after any of them.
//!
//! - ACCOUNT_PERMISSION, an account's 1–3 rows: the first flag of each AP_ACL flips ('0011'
//!   ↔ '1011'); Trade-Order checks the executor's names and tax id, never the ACL;
//! - ADDRESS, a customer's or a company's: AD_LINE2 becomes 'Rear entrance', or NULL when it
//!   was that;
//! - COMPANY: CO_SP_RATE becomes 'AAA', or 'AA' when it was 'AAA';
//! - CUSTOMER: C_EMAIL_2 moves to '@wharfmail.com', or to '@reedpost.net' when it was there;
//! - CUSTOMER_TAXRATE, a customer's 2 rows: rewritten unchanged. Both columns form the key
//!   and decide the tax Trade-Order and Trade-Result charge, so nothing in it can change
//!   safely; the update still costs the row versions and WAL of one;
//! - DAILY_MARKET, one security's rows on one day of the month (≤ 60): DM_VOL grows by the
//!   drawn increment;
//! - EXCHANGE, all 4 rows: EX_DESC ends with " (updated <now>)", replacing an earlier stamp;
//! - FINANCIAL, a company's 20 quarters: FI_QTR_START_DATE moves between the 1st and the 2nd
//!   of its month;
//! - NEWS_ITEM, a company's 2 items, and SECURITY: NI_DTS and S_EXCH_DATE move a day later
//!   or back, by the parity of the day;
//! - TAXRATE: TX_NAME's "income tax" becomes "Income Tax" and back; TX_RATE stays;
//! - WATCH_ITEM: a customer's list swaps its first symbol from the drawn one on (wrapping)
//!   for the first security from there that it lacks, keeping its length.
//!
//! All twelve are branches of one statement whose unused ones are gated off by the table
//! name ($1), as Market-Watch's lists are, so the client-side SQL and `tpce_data_maintenance`
//! of `procedures/maintenance.sql` run the same text (a unit test checks it). Client side,
//! three round trips: BEGIN, the statement, COMMIT.
//!
//! [`Outcome::rows`]: the rows changed. None changed (the drawn entity is not loaded) is a
//! [`super::missing`] error.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::{abandon, Outcome};
use crate::workload::tpce::gen::catalog::{taxrate, TAXRATES};
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::symbol;
use crate::workload::Rng;

/// DAILY_MARKET's volume increment, shares, drawn uniformly.
pub const VOLUME_INCREMENT: (i32, i32) = (1, 1_000);
/// Percent of ADDRESS changes that pick a customer's address (the rest a company's).
pub const CUSTOMER_ADDRESS_SHARE: u32 = 50;

pub const BEGIN: Statement = Statement {
    name: "tpce_dm_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED",
};
/// $1 the table ([`Table::name`]), $2 CA_ID, $3 C_ID, $4 CO_ID, $5 symbol, $6 day of the
/// month, $7 volume increment, $8 TX_ID (the unused ones 0 or empty). Returns the rows
/// changed.
pub const MAINTAIN: Statement = Statement {
    name: "tpce_dm_maintain",
    sql: "WITH ap AS (UPDATE account_permission \
                      SET ap_acl = CASE WHEN left(ap_acl, 1) = '1' THEN '0' ELSE '1' END \
                                   || substr(ap_acl, 2) \
                      WHERE $1::text = 'ACCOUNT_PERMISSION' AND ap_ca_id = $2::bigint \
                      RETURNING 1), \
          ad AS (UPDATE address \
                 SET ad_line2 = CASE WHEN ad_line2 IS DISTINCT FROM 'Rear entrance' \
                                     THEN 'Rear entrance' END \
                 WHERE $1::text = 'ADDRESS' AND ad_id = ( \
                       SELECT c_ad_id FROM customer WHERE c_id = $3::bigint \
                       UNION ALL SELECT co_ad_id FROM company WHERE co_id = $4::bigint \
                       LIMIT 1) \
                 RETURNING 1), \
          co AS (UPDATE company \
                 SET co_sp_rate = CASE WHEN co_sp_rate = 'AAA' THEN 'AA' ELSE 'AAA' END \
                 WHERE $1::text = 'COMPANY' AND co_id = $4::bigint RETURNING 1), \
          cu AS (UPDATE customer \
                 SET c_email_2 = split_part(c_email_2, '@', 1) \
                                 || CASE WHEN c_email_2 LIKE '%@wharfmail.com' \
                                         THEN '@reedpost.net' ELSE '@wharfmail.com' END \
                 WHERE $1::text = 'CUSTOMER' AND c_id = $3::bigint RETURNING 1), \
          cx AS (UPDATE customer_taxrate SET cx_tx_id = cx_tx_id \
                 WHERE $1::text = 'CUSTOMER_TAXRATE' AND cx_c_id = $3::bigint RETURNING 1), \
          dm AS (UPDATE daily_market SET dm_vol = dm_vol + $7::int \
                 WHERE $1::text = 'DAILY_MARKET' AND dm_s_symb = $5::text \
                   AND extract(day FROM dm_date) = $6::int \
                 RETURNING 1), \
          ex AS (UPDATE exchange \
                 SET ex_desc = split_part(ex_desc, ' (updated ', 1) || ' (updated ' \
                               || to_char(now(), 'YYYY-MM-DD HH24:MI:SS') || ')' \
                 WHERE $1::text = 'EXCHANGE' RETURNING 1), \
          fi AS (UPDATE financial \
                 SET fi_qtr_start_date = fi_qtr_start_date \
                     + CASE WHEN extract(day FROM fi_qtr_start_date) = 1 THEN 1 ELSE -1 END \
                 WHERE $1::text = 'FINANCIAL' AND fi_co_id = $4::bigint RETURNING 1), \
          ni AS (UPDATE news_item \
                 SET ni_dts = ni_dts + CASE WHEN (ni_dts::date - date '2000-01-01') % 2 = 0 \
                                            THEN interval '1 day' ELSE interval '-1 day' END \
                 WHERE $1::text = 'NEWS_ITEM' \
                   AND ni_id IN (SELECT nx_ni_id FROM news_xref WHERE nx_co_id = $4::bigint) \
                 RETURNING 1), \
          se AS (UPDATE security \
                 SET s_exch_date = s_exch_date \
                     + CASE WHEN (s_exch_date - date '2000-01-01') % 2 = 0 THEN 1 ELSE -1 END \
                 WHERE $1::text = 'SECURITY' AND s_symb = $5::text RETURNING 1), \
          tx AS (UPDATE taxrate \
                 SET tx_name = CASE WHEN tx_name LIKE '%income tax%' \
                                    THEN replace(tx_name, 'income tax', 'Income Tax') \
                                    ELSE replace(tx_name, 'Income Tax', 'income tax') END \
                 WHERE $1::text = 'TAXRATE' AND tx_id = $8::text RETURNING 1), \
          dropped AS (SELECT wi.wi_wl_id, wi.wi_s_symb FROM watch_list wl \
                      JOIN watch_item wi ON wi.wi_wl_id = wl.wl_id \
                      WHERE $1::text = 'WATCH_ITEM' AND wl.wl_c_id = $3::bigint \
                      ORDER BY wi.wi_s_symb < $5::text, wi.wi_s_symb, wi.wi_wl_id LIMIT 1), \
          added AS (SELECT x.s_symb FROM ( \
                      (SELECT s.s_symb FROM security s \
                       WHERE $1::text = 'WATCH_ITEM' AND s.s_symb >= $5::text \
                         AND NOT EXISTS (SELECT FROM watch_item l JOIN dropped d \
                                           ON l.wi_wl_id = d.wi_wl_id \
                                         WHERE l.wi_s_symb = s.s_symb) \
                       ORDER BY s.s_symb LIMIT 1) \
                      UNION ALL \
                      (SELECT s.s_symb FROM security s \
                       WHERE $1::text = 'WATCH_ITEM' AND s.s_symb < $5::text \
                         AND NOT EXISTS (SELECT FROM watch_item l JOIN dropped d \
                                           ON l.wi_wl_id = d.wi_wl_id \
                                         WHERE l.wi_s_symb = s.s_symb) \
                       ORDER BY s.s_symb LIMIT 1)) x LIMIT 1), \
          wi AS (UPDATE watch_item w SET wi_s_symb = added.s_symb FROM dropped, added \
                 WHERE w.wi_wl_id = dropped.wi_wl_id AND w.wi_s_symb = dropped.wi_s_symb \
                 RETURNING 1) \
          SELECT (SELECT count(*) FROM ap) + (SELECT count(*) FROM ad) \
                 + (SELECT count(*) FROM co) + (SELECT count(*) FROM cu) \
                 + (SELECT count(*) FROM cx) + (SELECT count(*) FROM dm) \
                 + (SELECT count(*) FROM ex) + (SELECT count(*) FROM fi) \
                 + (SELECT count(*) FROM ni) + (SELECT count(*) FROM se) \
                 + (SELECT count(*) FROM tx) + (SELECT count(*) FROM wi) AS changed",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_dm_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL function of `procedures/maintenance.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str =
    "tpce_data_maintenance(text, bigint, bigint, bigint, text, integer, integer, text)";
pub const CALL: Statement = Statement {
    name: "tpce_dm_call",
    sql: "SELECT * FROM tpce_data_maintenance($1::text, $2::bigint, $3::bigint, $4::bigint, \
          $5::text, $6::int, $7::int, $8::text)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, MAINTAIN, COMMIT, CALL];

/// The tables Data-Maintenance changes, in TPC-E's round-robin order (tpce.md §3.2); the
/// first is the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Table {
    #[default]
    AccountPermission,
    Address,
    Company,
    Customer,
    CustomerTaxrate,
    DailyMarket,
    Exchange,
    Financial,
    NewsItem,
    Security,
    Taxrate,
    WatchItem,
}

impl Table {
    pub const ALL: [Table; 12] = [
        Table::AccountPermission,
        Table::Address,
        Table::Company,
        Table::Customer,
        Table::CustomerTaxrate,
        Table::DailyMarket,
        Table::Exchange,
        Table::Financial,
        Table::NewsItem,
        Table::Security,
        Table::Taxrate,
        Table::WatchItem,
    ];

    /// The table's name as TPC-E writes it, which [`MAINTAIN`] matches on.
    pub fn name(self) -> &'static str {
        match self {
            Table::AccountPermission => "ACCOUNT_PERMISSION",
            Table::Address => "ADDRESS",
            Table::Company => "COMPANY",
            Table::Customer => "CUSTOMER",
            Table::CustomerTaxrate => "CUSTOMER_TAXRATE",
            Table::DailyMarket => "DAILY_MARKET",
            Table::Exchange => "EXCHANGE",
            Table::Financial => "FINANCIAL",
            Table::NewsItem => "NEWS_ITEM",
            Table::Security => "SECURITY",
            Table::Taxrate => "TAXRATE",
            Table::WatchItem => "WATCH_ITEM",
        }
    }

    /// The table after this one, WATCH_ITEM wrapping to ACCOUNT_PERMISSION.
    pub fn next(self) -> Table {
        Table::ALL[(self as usize + 1) % Table::ALL.len()]
    }
}

/// One change: the table and what [`draw`] picked for it. Fields the table does not use are
/// 0 or empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    pub table: Table,
    /// ACCOUNT_PERMISSION: the account whose permissions change.
    pub ca_id: i64,
    /// CUSTOMER, CUSTOMER_TAXRATE, WATCH_ITEM, and ADDRESS when it is a customer's.
    pub c_id: i64,
    /// COMPANY, FINANCIAL, NEWS_ITEM, and ADDRESS when it is a company's.
    pub co_id: i64,
    /// DAILY_MARKET and SECURITY: the security; WATCH_ITEM: where its swap starts.
    pub symbol: String,
    /// DAILY_MARKET: the day of the month (1–31) whose rows change.
    pub day_of_month: i32,
    /// DAILY_MARKET: shares added to each row's volume.
    pub vol_incr: i32,
    /// TAXRATE: the rate whose name changes.
    pub tx_id: String,
}

/// What `table`'s change needs, drawn from entities loaded at `inputs`' scale: customers and
/// accounts by the customer selection of tpce.md §3.2, companies, securities and tax rates
/// uniformly.
pub fn draw(inputs: &Inputs, rng: &mut Rng, table: Table) -> Args {
    let mut a = Args {
        table,
        ..Args::default()
    };
    let company = |rng: &mut Rng| rng.gen_range(1..=inputs.scale().companies()) as i64;
    let security = |rng: &mut Rng| symbol(inputs.seed(), inputs.security(rng));
    match table {
        Table::AccountPermission => {
            let c_id = inputs.customer(rng);
            a.ca_id = inputs.account(rng, c_id) as i64;
        }
        Table::Address => {
            if rng.gen_range(1..=100) <= CUSTOMER_ADDRESS_SHARE {
                a.c_id = inputs.customer(rng) as i64;
            } else {
                a.co_id = company(rng);
            }
        }
        Table::Customer | Table::CustomerTaxrate => a.c_id = inputs.customer(rng) as i64,
        Table::Company | Table::Financial | Table::NewsItem => a.co_id = company(rng),
        Table::DailyMarket => {
            a.symbol = security(rng);
            a.day_of_month = rng.gen_range(1..=31);
            a.vol_incr = rng.gen_range(VOLUME_INCREMENT.0..=VOLUME_INCREMENT.1);
        }
        Table::Exchange => {}
        Table::Security => a.symbol = security(rng),
        Table::Taxrate => a.tx_id = taxrate(inputs.seed(), rng.gen_range(0..TAXRATES)).0,
        Table::WatchItem => {
            a.c_id = inputs.customer(rng) as i64;
            a.symbol = security(rng);
        }
    }
    a
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let stmt = if procedures { &CALL } else { &MAINTAIN };
    let params = [
        Param::Text(args.table.name()),
        Param::Int(args.ca_id),
        Param::Int(args.c_id),
        Param::Int(args.co_id),
        Param::Text(&args.symbol),
        Param::Int(i64::from(args.day_of_month)),
        Param::Int(i64::from(args.vol_incr)),
        Param::Text(&args.tx_id),
    ];
    conn.execute(protocol, &BEGIN, &[]).await?;
    let changed = conn
        .execute(protocol, stmt, &params)
        .await?
        .get_i64(0, 0)
        .unwrap_or(0);
    if changed == 0 {
        return Err(abandon(
            conn,
            format!(
                "data-maintenance of {}: no row to change for {args:?}",
                args.table.name()
            ),
        )
        .await);
    }
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(changed as u64))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::SeedableRng;

    use super::super::history::tests::{inputs, squeezed};
    use super::*;

    #[test]
    fn the_round_robin_visits_every_table_once_in_tpc_e_order() {
        let mut t = Table::ALL[0];
        let mut seen = Vec::new();
        for _ in 0..Table::ALL.len() {
            seen.push(t);
            t = t.next();
        }
        assert_eq!(seen, Table::ALL);
        assert_eq!(t, Table::AccountPermission, "WATCH_ITEM wraps to the first");
        let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "TPC-E's order is alphabetical");
    }

    #[test]
    fn draws_pick_loaded_entities_for_every_table() {
        let inputs = inputs(1_000, 1);
        let seed = inputs.seed();
        let symbols: HashSet<String> = (1..=685).map(|s| symbol(seed, s)).collect();
        let tax_ids: HashSet<String> = (0..TAXRATES).map(|i| taxrate(seed, i).0).collect();
        let mut rng = Rng::seed_from_u64(8);
        let (mut customer_addresses, mut company_addresses) = (0, 0);
        let mut days = HashSet::new();
        for table in Table::ALL {
            for _ in 0..2_000 {
                let a = draw(&inputs, &mut rng, table);
                assert_eq!(a.table, table);
                let customer = (1..=1_000).contains(&a.c_id);
                let company = (1..=500).contains(&a.co_id);
                let security = symbols.contains(&a.symbol);
                match table {
                    Table::AccountPermission => {
                        assert!(inputs.account_exists(a.ca_id as u64), "{a:?}")
                    }
                    Table::Address => {
                        assert!(customer != company, "one owner: {a:?}");
                        customer_addresses += u32::from(customer);
                        company_addresses += u32::from(company);
                    }
                    Table::Customer | Table::CustomerTaxrate => assert!(customer, "{a:?}"),
                    Table::Company | Table::Financial | Table::NewsItem => {
                        assert!(company, "{a:?}")
                    }
                    Table::DailyMarket => {
                        assert!(security, "{a:?}");
                        assert!((1..=31).contains(&a.day_of_month), "{a:?}");
                        assert!(a.vol_incr >= VOLUME_INCREMENT.0, "{a:?}");
                        assert!(a.vol_incr <= VOLUME_INCREMENT.1, "{a:?}");
                        days.insert(a.day_of_month);
                    }
                    Table::Exchange => assert_eq!(
                        a,
                        Args {
                            table,
                            ..Args::default()
                        }
                    ),
                    Table::Security => assert!(security, "{a:?}"),
                    Table::Taxrate => assert!(tax_ids.contains(&a.tx_id), "{a:?}"),
                    Table::WatchItem => assert!(customer && security, "{a:?}"),
                }
            }
        }
        assert_eq!(days.len(), 31);
        let share = f64::from(customer_addresses) / 2_000.0;
        assert!((share - 0.5).abs() < 0.05, "{share}");
        assert_eq!(customer_addresses + company_addresses, 2_000);
    }

    #[test]
    fn the_statement_has_a_gated_branch_per_table_and_the_function_runs_it() {
        for t in Table::ALL {
            let gate = format!("$1::text = '{}'", t.name());
            assert!(MAINTAIN.sql.contains(&gate), "{gate}");
        }
        let sql = squeezed(include_str!("../procedures/maintenance.sql"));
        let head = format!("CREATE OR REPLACE FUNCTION {FUNCTION}");
        let body = &sql[sql
            .find(&head)
            .expect("maintenance.sql defines the function")..];
        assert!(
            body.contains(&squeezed(MAINTAIN.sql)),
            "tpce_data_maintenance does not run MAINTAIN word for word"
        );
    }
}
