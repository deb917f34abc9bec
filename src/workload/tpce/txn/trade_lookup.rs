//! Trade-Lookup (TPC-E clause 3.3.6; tpce.md §3.2): one of four frames, chosen 30/30/30/10,
//! reading pre-loaded history only. Frames 1–3 list up to 20 trades, each with its type,
//! settlement, cash transaction (cash trades) and first three status changes:
//!
//! 1. 20 given trade ids;
//! 2. an account's first trades from a start time to the end of the initial trades;
//! 3. a security's first trades in such a window;
//! 4. an account's first trade from a start time, and the HOLDING_HISTORY of every lot that
//!    trade touched (up to 20 rows).
//!
//! Read-only, read committed; each frame is one statement (see [`super::history`]).
//!
//! `Outcome.rows`: frames 1–3 the trades listed, frame 4 the holding-history rows. Frame 1's
//! trades are all loaded, so finding fewer than asked is a failure ([`super::missing`]); an
//! empty window of frames 2–4 is a normal answer.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::history::{
    end_time, listed_by_account, listed_by_id, listed_by_symbol, listed_trades, share_index,
    start_time, trade_ids, ACCOUNT_BACK_OFF_MS, HOLDING_BACK_OFF_MS, SYMBOL_BACK_OFF_MS,
};
use super::history::{run_frame, Frame, FrameStatements};
use super::Outcome;
use crate::workload::tpce::gen::clock::MarketMs;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::symbol;
use crate::workload::Rng;

/// Shares of frames 1–4, percent (tpce.md §3.2).
pub const FRAME_SHARES: [u32; 4] = [30, 30, 30, 10];

pub const BEGIN: Statement = Statement {
    name: "tpce_tl_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// $1 the trade ids.
pub const BY_ID: Statement = Statement {
    name: "tpce_tl_by_id",
    sql: listed_trades!(listed_by_id!()),
};
/// $1 the account, $2..=$3 the window.
pub const BY_ACCOUNT: Statement = Statement {
    name: "tpce_tl_by_account",
    sql: listed_trades!(listed_by_account!()),
};
/// $1 the symbol, $2..=$3 the window.
pub const BY_SYMBOL: Statement = Statement {
    name: "tpce_tl_by_symbol",
    sql: listed_trades!(listed_by_symbol!()),
};
/// $1 the account, $2 the start time: the account's first trade from then, and the history
/// rows of the lots it touched (one row with nulls when it touched none; none without a trade).
pub const HOLDING_HISTORY: Statement = Statement {
    name: "tpce_tl_holding_history",
    sql: "WITH f AS (SELECT t_id FROM trade \
                     WHERE t_ca_id = $1::bigint AND t_dts >= $2::timestamp \
                     ORDER BY t_dts, t_id LIMIT 1) \
          SELECT f.t_id, hh.hh_h_t_id, hh.hh_t_id, hh.hh_before_qty, hh.hh_after_qty \
          FROM f LEFT JOIN LATERAL (SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty \
                                    FROM holding_history \
                                    WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history \
                                                        WHERE hh_t_id = f.t_id) \
                                    ORDER BY hh_h_t_id, hh_t_id LIMIT 20) hh ON true \
          ORDER BY hh.hh_h_t_id, hh.hh_t_id",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_tl_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL functions of `procedures/reads.sql`, frames 1–4 (as `to_regprocedure` reads
/// them).
pub const FUNCTIONS: [&str; 4] = [
    "tpce_trade_lookup_1(bigint[])",
    "tpce_trade_lookup_2(bigint, timestamp, timestamp)",
    "tpce_trade_lookup_3(text, timestamp, timestamp)",
    "tpce_trade_lookup_4(bigint, timestamp)",
];
pub const CALL_BY_ID: Statement = Statement {
    name: "tpce_tl_call_by_id",
    sql: "SELECT * FROM tpce_trade_lookup_1($1::bigint[])",
};
pub const CALL_BY_ACCOUNT: Statement = Statement {
    name: "tpce_tl_call_by_account",
    sql: "SELECT * FROM tpce_trade_lookup_2($1::bigint, $2::timestamp, $3::timestamp)",
};
pub const CALL_BY_SYMBOL: Statement = Statement {
    name: "tpce_tl_call_by_symbol",
    sql: "SELECT * FROM tpce_trade_lookup_3($1::text, $2::timestamp, $3::timestamp)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[
    BEGIN,
    BY_ID,
    BY_ACCOUNT,
    BY_SYMBOL,
    HOLDING_HISTORY,
    COMMIT,
    CALL_BY_ID,
    CALL_BY_ACCOUNT,
    CALL_BY_SYMBOL,
    CALL_HOLDING_HISTORY,
];
pub const CALL_HOLDING_HISTORY: Statement = Statement {
    name: "tpce_tl_call_holding_history",
    sql: "SELECT * FROM tpce_trade_lookup_4($1::bigint, $2::timestamp)",
};

/// Column of HH_H_T_ID in [`HOLDING_HISTORY`]: null when the trade touched no lot.
const HH_COLUMN: usize = 1;

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
    /// Frame 4: an account's first trade from `start` and its lots' history.
    HoldingHistory { ca_id: i64, start: MarketMs },
}

/// A frame by the 30/30/30/10 shares and its inputs (tpce.md §3.2): NU trade ids, a
/// non-uniform customer's uniform account, a uniform security, NU start times backed off by
/// 32 h, 200 min and 500 min from the end of the initial trades.
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let account = |rng: &mut Rng| {
        let c_id = inputs.customer(rng);
        inputs.account(rng, c_id) as i64
    };
    match share_index(rng.gen_range(1..=100), &FRAME_SHARES) {
        0 => Args::Trades(trade_ids(inputs, rng)),
        1 => Args::Account {
            ca_id: account(rng),
            start: start_time(inputs, rng, ACCOUNT_BACK_OFF_MS),
            end: end_time(inputs),
        },
        2 => Args::Symbol {
            symbol: symbol(inputs.seed(), inputs.security(rng)),
            start: start_time(inputs, rng, SYMBOL_BACK_OFF_MS),
            end: end_time(inputs),
        },
        _ => Args::HoldingHistory {
            ca_id: account(rng),
            start: start_time(inputs, rng, HOLDING_BACK_OFF_MS),
        },
    }
}

/// The statements of the frames Trade-Lookup shares with Trade-Update.
const SHARED: FrameStatements = FrameStatements {
    by_id: (&BY_ID, &CALL_BY_ID),
    by_account: (&BY_ACCOUNT, &CALL_BY_ACCOUNT),
    by_symbol: (&BY_SYMBOL, &CALL_BY_SYMBOL),
};

impl Args {
    /// Frames 1–3 as the shared [`Frame`]; frame 4's account and start time otherwise.
    fn split(&self) -> Result<Frame<'_>, (i64, MarketMs)> {
        Ok(match self {
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
            Args::HoldingHistory { ca_id, start } => return Err((*ca_id, *start)),
        })
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    conn.execute(protocol, &BEGIN, &[]).await?;
    let rows = match args.split() {
        Ok(frame) => run_frame(conn, protocol, &frame, &SHARED, procedures, "trade-lookup").await?,
        Err((ca_id, start)) => {
            let start = start.text();
            let params = [Param::Int(ca_id), Param::Text(&start)];
            let stmt = if procedures {
                &CALL_HOLDING_HISTORY
            } else {
                &HOLDING_HISTORY
            };
            let r = conn.execute(protocol, stmt, &params).await?;
            (0..r.rows())
                .filter(|&row| !r.is_null(row, HH_COLUMN))
                .count()
        }
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(rows as u64))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs, output_columns};
    use super::super::history::MAX_TRADES;
    use super::*;
    use crate::workload::tpce::gen::clock::initial_trades_end;

    #[test]
    fn frames_split_30_30_30_10_and_stay_in_the_loaded_history() {
        let inputs = inputs(1_000, 10);
        let history_end = initial_trades_end(10);
        let mut rng = Rng::seed_from_u64(21);
        let n = 20_000;
        let mut counts = [0u32; 4];
        for _ in 0..n {
            match draw(&inputs, &mut rng) {
                Args::Trades(ids) => {
                    counts[0] += 1;
                    assert_eq!(ids.len(), MAX_TRADES);
                }
                Args::Account { ca_id, start, end } => {
                    counts[1] += 1;
                    assert!(inputs.account_exists(ca_id as u64));
                    assert!(start.0 <= history_end.0 - ACCOUNT_BACK_OFF_MS);
                    assert_eq!(end, end_time(&inputs));
                }
                Args::Symbol { start, .. } => {
                    counts[2] += 1;
                    assert!(start.0 <= history_end.0 - SYMBOL_BACK_OFF_MS);
                }
                Args::HoldingHistory { ca_id, start } => {
                    counts[3] += 1;
                    assert!(inputs.account_exists(ca_id as u64));
                    assert!(start.0 <= history_end.0 - HOLDING_BACK_OFF_MS);
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
        }
        assert_function_runs(FUNCTIONS[3], HOLDING_HISTORY.sql, "f.t_id, hh.hh_h_t_id");
        for (call, n) in [
            &CALL_BY_ID,
            &CALL_BY_ACCOUNT,
            &CALL_BY_SYMBOL,
            &CALL_HOLDING_HISTORY,
        ]
        .iter()
        .zip(1..)
        {
            assert!(call.sql.contains(&format!("tpce_trade_lookup_{n}(")));
        }
        let cols = output_columns(HOLDING_HISTORY.sql, "f.t_id, hh.hh_h_t_id");
        assert_eq!(cols[HH_COLUMN], "hh.hh_h_t_id");
    }
}
