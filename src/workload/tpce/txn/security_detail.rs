//! Security-Detail (TPC-E clause 3.3.5; tpce.md §3.2): everything about one security: its
//! company with address and zip, exchange with address and zip, up to 3 competitors with their
//! industries, 20 quarters of financials, 5–20 days of DAILY_MARKET from a start day, the last
//! trade, and 2 news items (the LOB body in 1 % of calls, otherwise headline and summary).
//! Read-only, read committed, one statement: the lists come back as JSON arrays in the
//! security's row, each with its count.
//!
//! `Outcome.rows`: daily rows + financial rows + news items. A symbol that is not found is a
//! failure ([`super::missing`]): every drawn symbol is loaded.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::{abandon, Outcome};
use crate::workload::tpce::gen::clock::Day;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::symbol;
use crate::workload::tpce::scale::DAILY_MARKET_DAYS;
use crate::workload::Rng;

/// DAILY_MARKET rows asked for (tpce.md §3.2).
pub const DAYS: (i64, i64) = (5, 20);
/// Share of calls that read the news body (1 %, tpce.md §3.2).
pub const LOB_SHARE: f64 = 0.01;

pub const BEGIN: Statement = Statement {
    name: "tpce_sd_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// $1 the symbol, $2 the start day, $3 the daily rows wanted, $4 whether to read the news
/// body (then headline and summary are empty, else the body is).
pub const DETAIL: Statement = Statement {
    name: "tpce_sd_detail",
    sql: "SELECT s.s_name, co.co_id, co.co_name, co.co_sp_rate, co.co_ceo, co.co_desc, \
                 co.co_open_date, co.co_st_id, ca.ad_line1 AS co_ad_line1, \
                 ca.ad_line2 AS co_ad_line2, zca.zc_town AS co_ad_town, zca.zc_div AS co_ad_div, \
                 ca.ad_zc_code AS co_ad_zip, ca.ad_ctry AS co_ad_ctry, s.s_num_out, s.s_start_date, \
                 s.s_exch_date, s.s_pe, s.s_52wk_high, s.s_52wk_high_date, s.s_52wk_low, \
                 s.s_52wk_low_date, s.s_dividend, s.s_yield, ex.ex_name, ex.ex_desc, ex.ex_open, \
                 ex.ex_close, ex.ex_num_symb, ea.ad_line1 AS ex_ad_line1, \
                 ea.ad_line2 AS ex_ad_line2, zea.zc_town AS ex_ad_town, \
                 zea.zc_div AS ex_ad_div, ea.ad_zc_code AS ex_ad_zip, ea.ad_ctry AS ex_ad_ctry, \
                 lt.lt_price, lt.lt_open_price, lt.lt_vol, cp.list AS competitors, \
                 fi.n AS financials, fi.list AS financial_list, dm.n AS days, \
                 dm.list AS day_list, ni.n AS news, ni.list AS news_list \
          FROM security s JOIN company co ON co.co_id = s.s_co_id \
          JOIN address ca ON ca.ad_id = co.co_ad_id \
          JOIN zip_code zca ON zca.zc_code = ca.ad_zc_code \
          JOIN exchange ex ON ex.ex_id = s.s_ex_id \
          JOIN address ea ON ea.ad_id = ex.ex_ad_id \
          JOIN zip_code zea ON zea.zc_code = ea.ad_zc_code \
          LEFT JOIN last_trade lt ON lt.lt_s_symb = s.s_symb \
          CROSS JOIN LATERAL (SELECT json_agg(x ORDER BY x.cp_comp_co_id) AS list \
                              FROM (SELECT cp.cp_comp_co_id, c2.co_name, i.in_name \
                                    FROM company_competitor cp \
                                    JOIN company c2 ON c2.co_id = cp.cp_comp_co_id \
                                    JOIN industry i ON i.in_id = cp.cp_in_id \
                                    WHERE cp.cp_co_id = co.co_id \
                                    ORDER BY cp.cp_comp_co_id LIMIT 3) x) cp \
          CROSS JOIN LATERAL (SELECT count(*) AS n, json_agg(x ORDER BY x.fi_year, x.fi_qtr) AS list \
                              FROM (SELECT fi_year, fi_qtr, fi_qtr_start_date, fi_revenue, \
                                           fi_net_earn, fi_basic_eps, fi_dilut_eps, fi_margin, \
                                           fi_inventory, fi_assets, fi_liability, fi_out_basic, \
                                           fi_out_dilut \
                                    FROM financial WHERE fi_co_id = co.co_id \
                                    ORDER BY fi_year, fi_qtr LIMIT 20) x) fi \
          CROSS JOIN LATERAL (SELECT count(*) AS n, json_agg(x ORDER BY x.dm_date) AS list \
                              FROM (SELECT dm_date, dm_close, dm_high, dm_low, dm_vol \
                                    FROM daily_market \
                                    WHERE dm_s_symb = s.s_symb AND dm_date >= $2::date \
                                    ORDER BY dm_date LIMIT $3::int) x) dm \
          CROSS JOIN LATERAL (SELECT count(*) AS n, json_agg(x ORDER BY x.ni_id) AS list \
                              FROM (SELECT ni.ni_id, ni.ni_dts, ni.ni_source, ni.ni_author, \
                                           CASE WHEN $4::boolean THEN ni.ni_item ELSE '' END \
                                             AS ni_item, \
                                           CASE WHEN $4::boolean THEN '' ELSE ni.ni_headline END \
                                             AS ni_headline, \
                                           CASE WHEN $4::boolean THEN '' ELSE ni.ni_summary END \
                                             AS ni_summary \
                                    FROM news_xref nx JOIN news_item ni ON ni.ni_id = nx.nx_ni_id \
                                    WHERE nx.nx_co_id = co.co_id ORDER BY ni.ni_id LIMIT 2) x) ni \
          WHERE s.s_symb = $1::text",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_sd_commit",
    sql: "COMMIT",
};

/// Columns of [`DETAIL`] that `run` counts: financial rows, daily rows, news items.
const COUNT_COLUMNS: [usize; 3] = [39, 41, 43];

/// The PL/pgSQL function of `procedures/reads.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str = "tpce_security_detail(text, date, integer, boolean)";
pub const CALL: Statement = Statement {
    name: "tpce_sd_call",
    sql: "SELECT * FROM tpce_security_detail($1::text, $2::date, $3::int, $4::boolean)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, DETAIL, COMMIT, CALL];

#[derive(Debug, Clone)]
pub struct Args {
    pub symbol: String,
    pub start_day: Day,
    /// DAILY_MARKET rows wanted, 5–20.
    pub days: i64,
    /// Read the news body (LOB) instead of headline and summary.
    pub lob: bool,
}

/// A uniform security, 5–20 rows from a uniform start day that leaves room for them, the
/// news body in 1 % of calls (tpce.md §3.2).
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let symbol = symbol(inputs.seed(), inputs.security(rng));
    let lob = rng.gen_bool(LOB_SHARE);
    let days = rng.gen_range(DAYS.0..=DAYS.1);
    let start = rng.gen_range(0..=DAILY_MARKET_DAYS as i64 - days);
    Args {
        symbol,
        start_day: Day::daily_market(start as u64),
        days,
        lob,
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let day = args.start_day.text();
    let lob = if args.lob { "true" } else { "false" };
    let params = [
        Param::Text(&args.symbol),
        Param::Text(&day),
        Param::Int(args.days),
        Param::Text(lob),
    ];
    let stmt = if procedures { &CALL } else { &DETAIL };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let rows = {
        let r = conn.execute(protocol, stmt, &params).await?;
        (r.rows() > 0).then(|| {
            COUNT_COLUMNS
                .iter()
                .map(|&col| r.get_i64(0, col).unwrap_or(0))
                .sum::<i64>()
        })
    };
    let Some(rows) = rows else {
        return Err(abandon(
            conn,
            format!(
                "security-detail: no security {} (or its company, exchange or addresses)",
                args.symbol
            ),
        )
        .await);
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(rows as u64))
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs, output_columns};
    use super::*;

    #[test]
    fn days_leave_room_and_the_lob_is_rare() {
        let inputs = inputs(1_000, 1);
        let symbols: HashSet<String> = (1..=inputs.scale().securities())
            .map(|s| symbol(inputs.seed(), s))
            .collect();
        let index: HashMap<Day, u64> = (0..DAILY_MARKET_DAYS)
            .map(|k| (Day::daily_market(k), k))
            .collect();
        let mut rng = Rng::seed_from_u64(12);
        let n = 50_000;
        let (mut lobs, mut at_end, mut at_start) = (0, 0, 0);
        let mut lengths = HashSet::new();
        for _ in 0..n {
            let a = draw(&inputs, &mut rng);
            assert!(symbols.contains(&a.symbol));
            assert!((5..=20).contains(&a.days));
            lengths.insert(a.days);
            // The last wanted row is a DAILY_MARKET day.
            let k = index[&a.start_day];
            let end = k as i64 + a.days - 1;
            assert!(end < DAILY_MARKET_DAYS as i64, "{k} + {}", a.days);
            at_end += u32::from(end == DAILY_MARKET_DAYS as i64 - 1);
            at_start += u32::from(k == 0);
            lobs += u32::from(a.lob);
        }
        assert_eq!(lengths.len(), 16);
        assert!(at_end > 0 && at_start > 0, "{at_start} {at_end}");
        let share = f64::from(lobs) / f64::from(n);
        assert!((share - 0.01).abs() < 0.002, "{share}");
    }

    #[test]
    fn the_function_runs_the_statement() {
        assert_function_runs(FUNCTION, DETAIL.sql, "s.s_name, co.co_id");
        let cols = output_columns(DETAIL.sql, "s.s_name, co.co_id");
        assert_eq!(cols.len(), 45);
        for (col, name) in COUNT_COLUMNS.iter().zip(["financials", "days", "news"]) {
            assert!(
                cols[*col].ends_with(&format!("AS {name}")),
                "{}",
                cols[*col]
            );
        }
    }
}
