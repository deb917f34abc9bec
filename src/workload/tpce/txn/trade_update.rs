//! Trade-Update (TPC-E clause 3.3.10; tpce.md §3.2): Trade-Lookup's frames 1–3 with a write,
//! chosen 33/33/34, on pre-loaded history only:
//!
//! 1. 20 given trades: the executor name toggles between "First Last" and "First X Last";
//! 2. an account's first 20 trades in a window: the settlement's cash type toggles between
//!    'Cash Account' and 'Cash' (cash trades) or 'Margin' and 'Margin Account';
//! 3. a security's first 20 trades in a window: the cash transaction's name toggles between
//!    '… shares of …' and '… Shares of …' (cash trades; margin trades have none).
//!
//! Repeatable read; each frame is one statement: the changed rows are locked in key order
//! first (so two Trade-Updates never wait on each other in a cycle), updated in a
//! data-modifying CTE, and listed with the new value (see [`super::history`]). A concurrent
//! Trade-Update of the same rows fails with 40001, which the driver retries.
//!
//! `Outcome.rows`: the trades listed, at most 20. Each is updated, except frame 3's margin
//! trades, which have no cash transaction. Frame 1's trades are all loaded, so finding fewer
//! than asked is a failure ([`super::missing`]).

use pgwire::{Connection, Protocol, Statement};
use rand::Rng as _;

use super::history::{
    end_time, listed_by_account, listed_by_id, listed_by_symbol, listed_trades, share_index,
    start_time, trade_ids, ACCOUNT_BACK_OFF_MS, SYMBOL_BACK_OFF_MS,
};
use super::history::{run_frame, Frame, FrameStatements};
use super::Outcome;
use crate::workload::tpce::gen::clock::MarketMs;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::symbol;
use crate::workload::Rng;

/// Shares of frames 1–3, percent (tpce.md §3.2).
pub const FRAME_SHARES: [u32; 3] = [33, 33, 34];

pub const BEGIN: Statement = Statement {
    name: "tpce_tu_begin",
    sql: "BEGIN ISOLATION LEVEL REPEATABLE READ",
};
/// $1 the trade ids. T_EXEC_NAME gains " X " between first and last name, or loses it.
pub const BY_ID: Statement = Statement {
    name: "tpce_tu_by_id",
    sql: listed_trades!(
        listed_by_id!(),
        updates: "lk AS MATERIALIZED (SELECT t_id FROM trade WHERE t_id IN (SELECT l.t_id FROM l) \
                                      ORDER BY t_id FOR UPDATE), \
                  u AS (UPDATE trade tu \
                        SET t_exec_name = CASE WHEN tu.t_exec_name LIKE '% X %' \
                                               THEN replace(tu.t_exec_name, ' X ', ' ') \
                                               ELSE replace(tu.t_exec_name, ' ', ' X ') END \
                        FROM lk WHERE tu.t_id = lk.t_id \
                        RETURNING tu.t_id, tu.t_exec_name)",
        exec_name: "coalesce(u.t_exec_name, t.t_exec_name)",
        cash_type: "se.se_cash_type",
        ct_name: "ct.ct_name"
    ),
};
/// $1 the account, $2..=$3 the window. SE_CASH_TYPE toggles.
pub const BY_ACCOUNT: Statement = Statement {
    name: "tpce_tu_by_account",
    sql: listed_trades!(
        listed_by_account!(),
        updates: "lk AS MATERIALIZED (SELECT se_t_id AS t_id FROM settlement \
                                      WHERE se_t_id IN (SELECT l.t_id FROM l) \
                                      ORDER BY se_t_id FOR UPDATE), \
                  u AS (UPDATE settlement su \
                        SET se_cash_type = CASE WHEN tc.t_is_cash \
                              THEN CASE WHEN su.se_cash_type = 'Cash Account' THEN 'Cash' \
                                        ELSE 'Cash Account' END \
                              ELSE CASE WHEN su.se_cash_type = 'Margin' THEN 'Margin Account' \
                                        ELSE 'Margin' END END \
                        FROM lk JOIN trade tc ON tc.t_id = lk.t_id WHERE su.se_t_id = lk.t_id \
                        RETURNING su.se_t_id AS t_id, su.se_cash_type)",
        exec_name: "t.t_exec_name",
        cash_type: "coalesce(u.se_cash_type, se.se_cash_type)",
        ct_name: "ct.ct_name"
    ),
};
/// $1 the symbol, $2..=$3 the window. CT_NAME is rewritten as '<type name> <qty> shares of
/// <security name>' with "shares" capitalized or not, whichever it was not.
pub const BY_SYMBOL: Statement = Statement {
    name: "tpce_tu_by_symbol",
    sql: listed_trades!(
        listed_by_symbol!(),
        updates: "lk AS MATERIALIZED (SELECT ct_t_id AS t_id FROM cash_transaction \
                                      WHERE ct_t_id IN (SELECT l.t_id FROM l) \
                                      ORDER BY ct_t_id FOR UPDATE), \
                  u AS (UPDATE cash_transaction cu \
                        SET ct_name = tc.tt_name || ' ' || tc.t_qty \
                                      || CASE WHEN cu.ct_name LIKE '% shares of %' \
                                              THEN ' Shares of ' ELSE ' shares of ' END \
                                      || tc.s_name \
                        FROM lk JOIN (SELECT t.t_id, tt.tt_name, t.t_qty, s.s_name FROM trade t \
                                      JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
                                      JOIN security s ON s.s_symb = t.t_s_symb) tc \
                             ON tc.t_id = lk.t_id \
                        WHERE cu.ct_t_id = lk.t_id \
                        RETURNING cu.ct_t_id AS t_id, cu.ct_name)",
        exec_name: "t.t_exec_name",
        cash_type: "se.se_cash_type",
        ct_name: "coalesce(u.ct_name, ct.ct_name)"
    ),
};
pub const COMMIT: Statement = Statement {
    name: "tpce_tu_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL functions of `procedures/reads.sql`, frames 1–3 (as `to_regprocedure` reads
/// them).
pub const FUNCTIONS: [&str; 3] = [
    "tpce_trade_update_1(bigint[])",
    "tpce_trade_update_2(bigint, timestamp, timestamp)",
    "tpce_trade_update_3(text, timestamp, timestamp)",
];
pub const CALL_BY_ID: Statement = Statement {
    name: "tpce_tu_call_by_id",
    sql: "SELECT * FROM tpce_trade_update_1($1::bigint[])",
};
pub const CALL_BY_ACCOUNT: Statement = Statement {
    name: "tpce_tu_call_by_account",
    sql: "SELECT * FROM tpce_trade_update_2($1::bigint, $2::timestamp, $3::timestamp)",
};
pub const CALL_BY_SYMBOL: Statement = Statement {
    name: "tpce_tu_call_by_symbol",
    sql: "SELECT * FROM tpce_trade_update_3($1::text, $2::timestamp, $3::timestamp)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[
    BEGIN,
    BY_ID,
    BY_ACCOUNT,
    BY_SYMBOL,
    COMMIT,
    CALL_BY_ID,
    CALL_BY_ACCOUNT,
    CALL_BY_SYMBOL,
];

/// The frame to run, with its inputs.
#[derive(Debug, Clone)]
pub enum Args {
    /// Frame 1: distinct loaded trade ids.
    Trades(Vec<i64>),
    /// Frame 2: an account's trades in `start..=end`.
    Account {
        ca_id: i64,
        start: MarketMs,
        end: MarketMs,
    },
    /// Frame 3: a security's trades in `start..=end`.
    Symbol {
        symbol: String,
        start: MarketMs,
        end: MarketMs,
    },
}

/// A frame by the 33/33/34 shares and its inputs, as Trade-Lookup's frames 1–3 (tpce.md §3.2).
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    match share_index(rng.gen_range(1..=100), &FRAME_SHARES) {
        0 => Args::Trades(trade_ids(inputs, rng)),
        1 => {
            let c_id = inputs.customer(rng);
            Args::Account {
                ca_id: inputs.account(rng, c_id) as i64,
                start: start_time(inputs, rng, ACCOUNT_BACK_OFF_MS),
                end: end_time(inputs),
            }
        }
        _ => Args::Symbol {
            symbol: symbol(inputs.seed(), inputs.security(rng)),
            start: start_time(inputs, rng, SYMBOL_BACK_OFF_MS),
            end: end_time(inputs),
        },
    }
}

/// The statements of the frames Trade-Update shares with Trade-Lookup.
const SHARED: FrameStatements = FrameStatements {
    by_id: (&BY_ID, &CALL_BY_ID),
    by_account: (&BY_ACCOUNT, &CALL_BY_ACCOUNT),
    by_symbol: (&BY_SYMBOL, &CALL_BY_SYMBOL),
};

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let frame = match args {
        Args::Trades(ids) => Frame::Trades(ids),
        Args::Account { ca_id, start, end } => Frame::Account {
            ca_id: *ca_id,
            start: *start,
            end: *end,
        },
        Args::Symbol { symbol, start, end } => Frame::Symbol {
            symbol,
            start: *start,
            end: *end,
        },
    };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let rows = run_frame(conn, protocol, &frame, &SHARED, procedures, "trade-update").await?;
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(rows as u64))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs};
    use super::super::history::MAX_TRADES;
    use super::*;
    use crate::workload::tpce::gen::clock::initial_trades_end;
    use crate::workload::tpce::scale::trade_index;

    #[test]
    fn frames_split_33_33_34_and_stay_in_the_loaded_history() {
        let inputs = inputs(1_000, 10);
        let loaded = inputs.scale().initial_trades();
        let history_end = initial_trades_end(10);
        let mut rng = Rng::seed_from_u64(31);
        let n = 20_000;
        let mut counts = [0u32; 3];
        for _ in 0..n {
            match draw(&inputs, &mut rng) {
                Args::Trades(ids) => {
                    counts[0] += 1;
                    assert_eq!(ids.len(), MAX_TRADES);
                    for id in ids {
                        let k = trade_index(id as u64).expect("a loaded id, not a skipped one");
                        assert!(k < loaded);
                    }
                }
                Args::Account { ca_id, start, end } => {
                    counts[1] += 1;
                    assert!(inputs.account_exists(ca_id as u64));
                    assert!(start.0 <= history_end.0 - ACCOUNT_BACK_OFF_MS);
                    assert!(start < end);
                }
                Args::Symbol { start, .. } => {
                    counts[2] += 1;
                    assert!(start.0 <= history_end.0 - SYMBOL_BACK_OFF_MS);
                }
            }
        }
        for (count, want) in counts.iter().zip(FRAME_SHARES) {
            let share = f64::from(*count) * 100.0 / f64::from(n);
            assert!((share - f64::from(want)).abs() < 1.5, "{counts:?}");
        }
    }

    #[test]
    fn the_functions_run_the_statements() {
        for (function, stmt) in FUNCTIONS.iter().zip([&BY_ID, &BY_ACCOUNT, &BY_SYMBOL]) {
            assert_function_runs(function, stmt.sql, "t.t_id, t.t_ca_id");
            // Rows are locked in key order before they change.
            assert!(stmt.sql.contains("FOR UPDATE), u AS (UPDATE"));
        }
        for (call, n) in [&CALL_BY_ID, &CALL_BY_ACCOUNT, &CALL_BY_SYMBOL]
            .iter()
            .zip(1..)
        {
            assert!(call.sql.contains(&format!("tpce_trade_update_{n}(")));
        }
    }
}
