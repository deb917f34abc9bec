//! What Trade-Lookup and Trade-Update share: their inputs address only the pre-loaded trade
//! history (tpce.md §3.2, "Inputs only touch pre-loaded trades"), so a DSS copy of the
//! database serves them (tpce.md §8), and their frames 1–3 list trades with the same details.
//!
//! - [`nu`]: EGen's NU skew (tpce.md §3.2: a uniform value OR-ed with a shifted uniform in
//!   [0, A], taken modulo the range), also Market-Watch's start week;
//! - [`trade_ids`]: 20 distinct loaded trade ids, NU(A = 65535, s = 7) over the loaded ids;
//! - [`start_time`]: a start of market time, NU(A = 4095, s = 16), backed off from the end of
//!   the initial trades by 32 h (frame 2), 200 min (frame 3) or 500 min (Trade-Lookup frame 4);
//! - [`end_time`]: the end of every window, when the last initial trades have completed;
//! - `listed_trades!`: the SQL that lists trades with their settlement, cash transaction and
//!   first three history rows, optionally after an update of the same statement.

use std::fmt::Write as _;

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::abandon;

use crate::workload::tpce::gen::clock::{initial_trades_end, run_start, MarketMs};
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::scale::trade_id;
use crate::workload::Rng;

/// Trades a frame lists at most (Trade-Lookup frames 1–4, Trade-Update frames 1–3).
pub const MAX_TRADES: usize = 20;
/// NU constants of the frame 1 trade ids and of the start times (tpce.md §3.2).
pub const TRADE_ID_A: i64 = 65_535;
pub const TRADE_ID_S: u32 = 7;
pub const TIME_A: i64 = 4_095;
pub const TIME_S: u32 = 16;
/// How far before the end of the initial trades a start time may fall (tpce.md §3.2): by
/// account 32 hours (four trading days), by symbol 200 minutes, holding history 500 minutes.
pub const ACCOUNT_BACK_OFF_MS: i64 = 32 * 3_600_000;
pub const SYMBOL_BACK_OFF_MS: i64 = 200 * 60_000;
pub const HOLDING_BACK_OFF_MS: i64 = 500 * 60_000;

/// A value in `lo..=hi`, skewed: `(uniform | uniform[0, a] << s) mod span`. Setting bits of
/// the shifted draw favours values with many ones in those bit positions; `s` keeps the low
/// bits uniform (with times in ms, s = 16 skews at about one-minute granularity).
pub fn nu(rng: &mut Rng, lo: i64, hi: i64, a: i64, s: u32) -> i64 {
    if hi <= lo {
        return lo;
    }
    let span = hi - lo + 1;
    let skew = rng.gen_range(0..=a) << s;
    (rng.gen_range(0..span) | skew) % span + lo
}

/// `MAX_TRADES` distinct ids of loaded trades (fewer only if the load has fewer trades).
/// Drawn as loaded-trade numbers, so the ids skipped at load (every multiple of 101) and the
/// run's own trades are never named.
pub fn trade_ids(inputs: &Inputs, rng: &mut Rng) -> Vec<i64> {
    let loaded = inputs.scale().initial_trades() as i64;
    let want = MAX_TRADES.min(loaded as usize);
    let mut ids: Vec<i64> = Vec::with_capacity(want);
    while ids.len() < want {
        let n = nu(rng, 0, loaded - 1, TRADE_ID_A, TRADE_ID_S);
        let id = trade_id(n as u64) as i64;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// A window start `back_off_ms` or more before the end of the initial trades' submissions.
/// A history shorter than the back-off (fewer than five trade days for frame 2) leaves
/// only its very start.
pub fn start_time(inputs: &Inputs, rng: &mut Rng, back_off_ms: i64) -> MarketMs {
    let last = initial_trades_end(inputs.scale().trade_days()).0 - back_off_ms;
    MarketMs(nu(rng, 0, last.max(0), TIME_A, TIME_S))
}

/// The end of every window: the initial trades' last completion, 15 minutes after their last
/// submission (tpce.md §6).
pub fn end_time(inputs: &Inputs) -> MarketMs {
    run_start(inputs.scale().trade_days())
}

/// The index of the share `percent` (1..=100) falls in: `share_index(37, &[30, 30, 30, 10])`
/// is 1.
pub fn share_index(percent: u32, shares: &[u32]) -> usize {
    let mut upto = 0;
    for (i, share) in shares.iter().enumerate() {
        upto += share;
        if percent <= upto {
            return i;
        }
    }
    shares.len().saturating_sub(1)
}

/// `{1,2,3}`: the PostgreSQL array literal of `ids`.
pub fn id_array(ids: &[i64]) -> String {
    let mut s = String::with_capacity(ids.len() * 8 + 2);
    s.push('{');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{id}");
    }
    s.push('}');
    s
}

/// The statement listing trades: `$listed` selects `(t_id, ord)` of the frame's trades in
/// output order; each comes with its type, settlement, cash transaction (cash trades only)
/// and first three history rows, in one round trip instead of four lookups per trade.
///
/// With `updates` (more CTEs, the last a data-modifying `u` returning `t_id` and the new
/// value), one column of the listed trades changes in the same statement; the outer query
/// still sees the rows as they were before, so the changed column is taken from `u` (the
/// `exec_name`, `cash_type` or `ct_name` expressions).
macro_rules! listed_trades {
    ($listed:expr) => {
        concat!(
            "WITH l AS (",
            $listed,
            ") ",
            listed_trades!(@select "t.t_exec_name", "se.se_cash_type", "ct.ct_name", "")
        )
    };
    ($listed:expr, updates: $u:expr, exec_name: $e:expr, cash_type: $c:expr, ct_name: $n:expr) => {
        concat!(
            "WITH l AS (",
            $listed,
            "), ",
            $u,
            " ",
            listed_trades!(@select $e, $c, $n, "LEFT JOIN u ON u.t_id = t.t_id ")
        )
    };
    (@select $e:expr, $c:expr, $n:expr, $join:expr) => {
        concat!(
            "SELECT t.t_id, t.t_ca_id, t.t_tt_id, tt.tt_is_mrkt, t.t_is_cash, ",
            $e,
            " AS t_exec_name, t.t_bid_price, t.t_trade_price, t.t_qty, t.t_dts, \
             se.se_amt, se.se_cash_due_date, ",
            $c,
            " AS se_cash_type, ct.ct_amt, ct.ct_dts, ",
            $n,
            " AS ct_name, h.th_dts, h.th_st_ids \
             FROM l JOIN trade t ON t.t_id = l.t_id \
             JOIN trade_type tt ON tt.tt_id = t.t_tt_id ",
            $join,
            "LEFT JOIN settlement se ON se.se_t_id = t.t_id \
             LEFT JOIN cash_transaction ct ON t.t_is_cash AND ct.ct_t_id = t.t_id \
             CROSS JOIN LATERAL (SELECT array_agg(x.th_dts ORDER BY x.th_dts) AS th_dts, \
                                        array_agg(x.th_st_id ORDER BY x.th_dts) AS th_st_ids \
                                 FROM (SELECT th_dts, th_st_id FROM trade_history \
                                       WHERE th_t_id = t.t_id ORDER BY th_dts LIMIT 3) x) h \
             ORDER BY l.ord"
        )
    };
}
pub(crate) use listed_trades;

/// The trades of frame 1: the given ids, in the order given.
macro_rules! listed_by_id {
    () => {
        "SELECT x.id AS t_id, x.ord FROM unnest($1::bigint[]) WITH ORDINALITY AS x(id, ord)"
    };
}
pub(crate) use listed_by_id;

/// The trades of frame 2: an account's first 20 in the window `$2..=$3`, oldest first.
macro_rules! listed_by_account {
    () => {
        "SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord \
         FROM (SELECT t_id, t_dts FROM trade \
               WHERE t_ca_id = $1::bigint AND t_dts >= $2::timestamp AND t_dts <= $3::timestamp \
               ORDER BY t_dts, t_id LIMIT 20) x"
    };
}
pub(crate) use listed_by_account;

/// The trades of frame 3: a security's first 20 in the window `$2..=$3`, oldest first.
macro_rules! listed_by_symbol {
    () => {
        "SELECT x.t_id, row_number() OVER (ORDER BY x.t_dts, x.t_id) AS ord \
         FROM (SELECT t_id, t_dts FROM trade \
               WHERE t_s_symb = $1::text AND t_dts >= $2::timestamp AND t_dts <= $3::timestamp \
               ORDER BY t_dts, t_id LIMIT 20) x"
    };
}
pub(crate) use listed_by_symbol;

/// Frames 1–3 that Trade-Lookup and Trade-Update share: listed trades by id, an account's or a
/// security's trades in a time window.
pub enum Frame<'a> {
    Trades(&'a [i64]),
    Account {
        ca_id: i64,
        start: MarketMs,
        end: MarketMs,
    },
    Symbol {
        symbol: &'a str,
        start: MarketMs,
        end: MarketMs,
    },
}

/// A transaction's statement per shared frame: (client-side, procedure call).
pub struct FrameStatements {
    pub by_id: (&'static Statement, &'static Statement),
    pub by_account: (&'static Statement, &'static Statement),
    pub by_symbol: (&'static Statement, &'static Statement),
}

/// Runs one shared frame inside the caller's transaction; returns the rows listed. Frame 1
/// must find all its pre-loaded trades: fewer rolls back and is an error (`what` names the
/// transaction), counted as failed.
pub async fn run_frame(
    conn: &mut Connection,
    protocol: Protocol,
    frame: &Frame<'_>,
    statements: &FrameStatements,
    procedures: bool,
    what: &str,
) -> Result<usize, pgwire::Error> {
    let pick = |(client, call): (&'static Statement, &'static Statement)| {
        if procedures {
            call
        } else {
            client
        }
    };
    match frame {
        Frame::Trades(ids) => {
            let list = id_array(ids);
            let stmt = pick(statements.by_id);
            let found = conn
                .execute(protocol, stmt, &[Param::Text(&list)])
                .await?
                .rows();
            if found < ids.len() {
                return Err(abandon(
                    conn,
                    format!(
                        "{what}: {found} of the {} loaded trades {list} found",
                        ids.len()
                    ),
                )
                .await);
            }
            Ok(found)
        }
        Frame::Account { ca_id, start, end } => {
            let (start, end) = (start.text(), end.text());
            let params = [Param::Int(*ca_id), Param::Text(&start), Param::Text(&end)];
            let stmt = pick(statements.by_account);
            Ok(conn.execute(protocol, stmt, &params).await?.rows())
        }
        Frame::Symbol { symbol, start, end } => {
            let (start, end) = (start.text(), end.text());
            let params = [Param::Text(symbol), Param::Text(&start), Param::Text(&end)];
            let stmt = pick(statements.by_symbol);
            Ok(conn.execute(protocol, stmt, &params).await?.rows())
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::workload::tpce::gen::clock::TRADE_DAY_MS;
    use crate::workload::tpce::scale::{trade_index, Scale};

    pub(crate) fn inputs(customers: u64, trade_days: u32) -> Inputs {
        Inputs::new(5, Scale::new(customers, trade_days, 500).unwrap())
    }

    /// The statements of `reads.sql`, whitespace squeezed, for checking that every function
    /// runs its client-side statement word for word.
    pub(crate) fn squeezed(sql: &str) -> String {
        sql.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    pub(crate) const READS_SQL: &str = include_str!("../procedures/reads.sql");

    /// Asserts that `reads.sql` defines `function` (a `name(types)` signature), that its body
    /// holds `sql`, and that its result columns are the statement's, by name and in order
    /// (`first` is the text of the statement's first output column).
    pub(crate) fn assert_function_runs(function: &str, sql: &str, first: &str) {
        let (name, _) = function.split_once('(').unwrap();
        let all = squeezed(READS_SQL);
        let head = format!("CREATE OR REPLACE FUNCTION {function}");
        let start = all
            .find(&head)
            .unwrap_or_else(|| panic!("reads.sql lacks {head}"));
        let body = &all[start..];
        let end = body.find("END $$;").expect("function body ends");
        assert!(
            body[..end].contains(&squeezed(sql)),
            "{name} does not run its client-side statement:\n{}",
            squeezed(sql)
        );
        let declared: Vec<&str> = body
            .split_once("RETURNS TABLE ( ")
            .and_then(|(_, rest)| rest.split_once(" ) LANGUAGE"))
            .map(|(cols, _)| {
                cols.split(", ")
                    .filter_map(|c| c.split(' ').next())
                    .collect()
            })
            .unwrap_or_default();
        let returned: Vec<String> = output_columns(sql, first)
            .iter()
            .map(|c| match c.rsplit_once(" AS ") {
                Some((_, alias)) => alias.to_string(),
                None => c.rsplit('.').next().unwrap_or(c).to_string(),
            })
            .collect();
        assert_eq!(declared, returned, "{name}: result columns");
    }

    /// The output columns of the outer SELECT of `sql`, which starts at the last occurrence of
    /// `first` (its first column's text) and ends at the next top-level FROM.
    pub(crate) fn output_columns(sql: &str, first: &str) -> Vec<String> {
        let sql = squeezed(sql);
        let start = sql.rfind(first).expect("the first column");
        let mut cols = vec![String::new()];
        let mut depth = 0;
        let rest = &sql[start..];
        for (i, c) in rest.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    cols.push(String::new());
                    continue;
                }
                ' ' if depth == 0 && rest[i..].starts_with(" FROM ") => break,
                _ => {}
            }
            cols.last_mut().unwrap().push(c);
        }
        cols.iter().map(|c| c.trim().to_string()).collect()
    }

    #[test]
    fn nu_stays_in_range_and_skews_towards_set_bits() {
        let mut rng = Rng::seed_from_u64(3);
        let mut high = 0;
        let n = 40_000;
        for _ in 0..n {
            let v = nu(&mut rng, 0, 255, 255, 0);
            assert!((0..=255).contains(&v));
            high += u32::from(v >= 128);
        }
        // With A = 255 and s = 0 the top bit is set three times in four.
        let share = f64::from(high) / f64::from(n);
        assert!((share - 0.75).abs() < 0.02, "{share}");
        for _ in 0..10_000 {
            let v = nu(&mut rng, 10, 20, TIME_A, TIME_S);
            assert!((10..=20).contains(&v));
        }
        assert_eq!(nu(&mut rng, 7, 7, 255, 0), 7);
    }

    #[test]
    fn trade_ids_are_distinct_loaded_ids() {
        let inputs = inputs(1_000, 1);
        let loaded = inputs.scale().initial_trades();
        let last = trade_id(loaded - 1) as i64;
        let mut rng = Rng::seed_from_u64(9);
        let mut lowest = i64::MAX;
        let mut highest = 0;
        for _ in 0..2_000 {
            let ids = trade_ids(&inputs, &mut rng);
            assert_eq!(ids.len(), MAX_TRADES);
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), ids.len(), "{ids:?}");
            for &id in &ids {
                assert!((1..=last).contains(&id), "{id} beyond {last}");
                assert_ne!(id % 101, 0, "skipped id {id} drawn");
                assert!(trade_index(id as u64).is_some());
            }
            lowest = lowest.min(sorted[0]);
            highest = highest.max(sorted[sorted.len() - 1]);
        }
        // The draws reach both ends of the loaded ids.
        assert!(lowest < last / 100, "{lowest}");
        assert!(highest > last - last / 100, "{highest}");
    }

    #[test]
    fn start_times_stay_inside_the_history_and_its_back_off() {
        let inputs = inputs(1_000, 10);
        let end = initial_trades_end(10).0;
        let mut rng = Rng::seed_from_u64(4);
        for back_off in [ACCOUNT_BACK_OFF_MS, SYMBOL_BACK_OFF_MS, HOLDING_BACK_OFF_MS] {
            let mut latest = 0;
            for _ in 0..20_000 {
                let t = start_time(&inputs, &mut rng, back_off).0;
                assert!((0..=end - back_off).contains(&t), "{t}");
                latest = latest.max(t);
            }
            // Not stuck at the start: the latest draw is in the last tenth of the window.
            assert!(latest > (end - back_off) * 9 / 10, "{latest}");
        }
        // One trade day is shorter than the 32-hour back-off: the window shrinks to its start.
        let short = super::tests::inputs(1_000, 1);
        assert_eq!(
            start_time(&short, &mut rng, ACCOUNT_BACK_OFF_MS),
            MarketMs(0)
        );
        assert!(start_time(&short, &mut rng, SYMBOL_BACK_OFF_MS).0 <= TRADE_DAY_MS - 200 * 60_000);
        assert_eq!(end_time(&short), MarketMs(TRADE_DAY_MS + 15 * 60_000));
    }

    #[test]
    fn shares_pick_their_index() {
        let shares = [30, 30, 30, 10];
        let picks: Vec<usize> = [1, 30, 31, 60, 61, 90, 91, 100]
            .iter()
            .map(|&p| share_index(p, &shares))
            .collect();
        assert_eq!(picks, [0, 0, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn arrays_are_postgres_literals() {
        assert_eq!(id_array(&[1, 22, 333]), "{1,22,333}");
        assert_eq!(id_array(&[]), "{}");
    }

    #[test]
    fn listed_trades_reads_the_updated_value_from_u() {
        let plain = listed_trades!(listed_by_id!());
        assert!(plain.contains("t.t_exec_name AS t_exec_name"));
        assert!(!plain.contains("u AS ("));
        let updated = listed_trades!(
            listed_by_id!(),
            updates: "u AS (UPDATE x)",
            exec_name: "coalesce(u.v, t.t_exec_name)",
            cash_type: "se.se_cash_type",
            ct_name: "ct.ct_name"
        );
        assert!(updated.contains("), u AS (UPDATE x) SELECT"));
        assert!(updated.contains("LEFT JOIN u ON u.t_id = t.t_id LEFT JOIN settlement"));
    }
}
