//! Trade-Cleanup (tpce.md §3.1 row 12, §3.2): run once per database before the customer
//! transactions start, it cancels the orders an earlier run left in flight, which no market
//! exchange emulator will ever complete now:
//!
//! - every TRADE_REQUEST is deleted, and its trade, pending (PNDG), is cancelled;
//! - every submitted (SBMT) trade from the first run-time trade id on (`tpce_meta`'s
//!   `first_trade_id`, [`Scale::first_run_trade_id`]) is cancelled. Loaded trades are all
//!   completed, so the bound only keeps the update on the run's own ids.
//!
//! Cancelling sets the status to CNCL and `t_dts` to now (as Market-Feed and Trade-Result
//! stamp the trade when its status moves) and adds a CNCL TRADE_HISTORY row, so the trade's
//! history is PNDG, CNCL for a limit order and SBMT, CNCL for a market one, the paths
//! `tidebench check`'s condition 4 allows. A pending order gets no SBMT row: it never reached
//! the market.
//!
//! Client-side only (DBT-5 has no stored function for it either), at read committed: one
//! statement does both steps from one snapshot, and a trade a concurrent Trade-Result
//! completes meanwhile fails the status test on re-check and is left alone. Three round
//! trips: BEGIN, the statement, COMMIT. A second Trade-Cleanup finds nothing to cancel.
//!
//! [`Outcome::rows`]: the trades cancelled.

use pgwire::{Connection, Param, Protocol, Statement};

use super::Outcome;
use crate::workload::tpce::scale::Scale;

pub const BEGIN: Statement = Statement {
    name: "tpce_tc_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED",
};
/// $1 the first run-time trade id. Returns the requests deleted, the pending trades and the
/// submitted trades cancelled.
pub const CLEANUP: Statement = Statement {
    name: "tpce_tc_cleanup",
    sql: "WITH req AS (DELETE FROM trade_request RETURNING tr_t_id), \
          pending AS (UPDATE trade SET t_st_id = 'CNCL', t_dts = now() FROM req \
                      WHERE trade.t_id = req.tr_t_id AND trade.t_st_id = 'PNDG' \
                      RETURNING trade.t_id), \
          submitted AS (UPDATE trade SET t_st_id = 'CNCL', t_dts = now() \
                        WHERE t_id >= $1::bigint AND t_st_id = 'SBMT' RETURNING t_id), \
          th AS (INSERT INTO trade_history (th_t_id, th_dts, th_st_id) \
                 SELECT t_id, clock_timestamp(), 'CNCL' FROM pending \
                 UNION ALL SELECT t_id, now(), 'CNCL' FROM submitted RETURNING 1) \
          SELECT (SELECT count(*) FROM req), (SELECT count(*) FROM pending), \
                 (SELECT count(*) FROM submitted)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, CLEANUP, COMMIT];
pub const COMMIT: Statement = Statement {
    name: "tpce_tc_commit",
    sql: "COMMIT",
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Trades from this id on are the run's own (`tpce_meta.first_trade_id`).
    pub first_run_trade_id: i64,
}

impl Args {
    /// The cleanup of a database loaded at `scale`.
    pub fn for_scale(scale: &Scale) -> Args {
        Args {
            first_run_trade_id: scale.first_run_trade_id() as i64,
        }
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
) -> Result<Outcome, pgwire::Error> {
    conn.execute(protocol, &BEGIN, &[]).await?;
    let cancelled = {
        let r = conn
            .execute(protocol, &CLEANUP, &[Param::Int(args.first_run_trade_id)])
            .await?;
        r.get_i64(0, 1).unwrap_or(0) + r.get_i64(0, 2).unwrap_or(0)
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(cancelled as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_first_id_after_the_load() {
        let scale = Scale::new(1_000, 1, 500).unwrap();
        let a = Args::for_scale(&scale);
        assert_eq!(a.first_run_trade_id as u64, scale.first_run_trade_id());
        // Everything the cleanup writes is a cancellation, and it touches only run-time
        // SBMT trades beyond the requests' own.
        assert_eq!(CLEANUP.sql.matches("'CNCL'").count(), 4);
        assert!(CLEANUP
            .sql
            .contains("t_id >= $1::bigint AND t_st_id = 'SBMT'"));
        assert!(CLEANUP.sql.contains("trade.t_st_id = 'PNDG'"));
    }
}
