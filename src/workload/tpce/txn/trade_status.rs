//! Trade-Status (TPC-E clause 3.3.9; tpce.md §3.2): the last 50 trades of one account with
//! their status and type names, security and exchange names, and the owner's and broker's
//! names. Read-only, read committed, one statement: one row per trade with the names beside
//! it, or one row of names alone for an account without trades.
//!
//! `Outcome.rows`: the trades listed, at most 50. An account that is not found (or whose
//! owner or broker is not) is a failure ([`super::missing`]): every drawn account is loaded.

use pgwire::{Connection, Param, Protocol, Statement};

use super::{abandon, Outcome};
use crate::workload::tpce::inputs::Inputs;
use crate::workload::Rng;

/// Trades listed at most.
pub const MAX_TRADES: usize = 50;

pub const BEGIN: Statement = Statement {
    name: "tpce_ts_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// $1 the account (CA_ID); newest trade first.
pub const STATUS: Statement = Statement {
    name: "tpce_ts_status",
    sql: "SELECT c.c_l_name, c.c_f_name, b.b_name, t.t_id, t.t_dts, st.st_name, tt.tt_name, \
                 t.t_s_symb, t.t_qty, t.t_exec_name, t.t_chrg, s.s_name, ex.ex_name \
          FROM customer_account ca JOIN customer c ON c.c_id = ca.ca_c_id \
          JOIN broker b ON b.b_id = ca.ca_b_id \
          LEFT JOIN LATERAL (SELECT t_id, t_dts, t_st_id, t_tt_id, t_s_symb, t_qty, \
                                    t_exec_name, t_chrg \
                             FROM trade WHERE t_ca_id = ca.ca_id \
                             ORDER BY t_dts DESC, t_id DESC LIMIT 50) t ON true \
          LEFT JOIN status_type st ON st.st_id = t.t_st_id \
          LEFT JOIN trade_type tt ON tt.tt_id = t.t_tt_id \
          LEFT JOIN security s ON s.s_symb = t.t_s_symb \
          LEFT JOIN exchange ex ON ex.ex_id = s.s_ex_id \
          WHERE ca.ca_id = $1::bigint \
          ORDER BY t.t_dts DESC, t.t_id DESC",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_ts_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL function of `procedures/reads.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str = "tpce_trade_status(bigint)";
pub const CALL: Statement = Statement {
    name: "tpce_ts_call",
    sql: "SELECT * FROM tpce_trade_status($1::bigint)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, STATUS, COMMIT, CALL];

/// Column of T_ID in [`STATUS`]: null in the one row of an account without trades.
const T_ID_COLUMN: usize = 3;

#[derive(Debug, Clone)]
pub struct Args {
    pub ca_id: i64,
}

/// A non-uniform customer and a uniform account of theirs (tpce.md §3.2).
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let c_id = inputs.customer(rng);
    Args {
        ca_id: inputs.account(rng, c_id) as i64,
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let stmt = if procedures { &CALL } else { &STATUS };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let (found, trades) = {
        let r = conn
            .execute(protocol, stmt, &[Param::Int(args.ca_id)])
            .await?;
        let trades = (0..r.rows())
            .filter(|&row| !r.is_null(row, T_ID_COLUMN))
            .count();
        (r.rows() > 0, trades as u64)
    };
    if !found {
        return Err(abandon(
            conn,
            format!(
                "trade-status: no account {} with its customer and broker",
                args.ca_id
            ),
        )
        .await);
    }
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(trades))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs, output_columns};
    use super::*;
    use crate::workload::tpce::customer::account_slot;
    use crate::workload::tpce::scale::{tier, Tier};

    #[test]
    fn accounts_are_loaded_and_their_owners_skewed_by_tier() {
        let inputs = inputs(1_000, 1);
        let mut rng = Rng::seed_from_u64(3);
        let n = 20_000;
        let mut tier_one = 0;
        for _ in 0..n {
            let a = draw(&inputs, &mut rng);
            assert!(inputs.account_exists(a.ca_id as u64), "{}", a.ca_id);
            let (owner, _) = account_slot(a.ca_id as u64);
            tier_one += u32::from(tier(inputs.seed(), owner) == Tier::One);
        }
        // Tier 1 is 20 % of customers but 10 % of picks (tpce.md §3.2).
        let share = f64::from(tier_one) / f64::from(n);
        assert!((share - 0.10).abs() < 0.01, "{share}");
    }

    #[test]
    fn the_function_runs_the_statement() {
        assert_function_runs(FUNCTION, STATUS.sql, "c.c_l_name, c.c_f_name");
        let cols = output_columns(STATUS.sql, "c.c_l_name, c.c_f_name");
        assert_eq!(cols[T_ID_COLUMN], "t.t_id");
        assert!(STATUS.sql.contains(&format!("LIMIT {MAX_TRADES})")));
    }
}
