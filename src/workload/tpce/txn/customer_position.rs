//! Customer-Position (TPC-E clause 3.3.2; tpce.md §3.2): a customer found by C_ID or by tax
//! id, the cash balance and market value of up to 10 of their accounts (frame 1) and, when
//! history is wanted, the last 10 trades of one of those accounts with up to 30 of their
//! status changes (frame 2). Frame 3 is the commit. Read-only, read committed.
//!
//! Both frames are one statement: the accounts and the history come back as JSON arrays in
//! the customer's row, with their counts beside them. The account of frame 2 is the one at
//! the drawn index of frame 1's list (market value ascending, then CA_ID), as TPC-E has the
//! index refer to the frame 1 output.
//!
//! `Outcome.rows`: the accounts listed plus the history rows (0 when history is not wanted).
//! A customer that is not found is a failure ([`super::missing`]): every drawn customer is
//! loaded.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::{abandon, Outcome};
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::tax_id;
use crate::workload::tpce::scale::accounts;
use crate::workload::Rng;

pub const BEGIN: Statement = Statement {
    name: "tpce_cp_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// $1 C_ID or $2 C_TAX_ID (the other null); $3 the index of the frame 2 account, null for no
/// history. Market value = Σ HS_QTY × LT_PRICE over the account's holdings (0 without any).
pub const POSITION: Statement = Statement {
    name: "tpce_cp_position",
    sql: "WITH c AS (SELECT c_id, c_st_id, c_l_name, c_f_name, c_m_name, c_gndr, c_tier, c_dob, \
                            c_ad_id, c_ctry_1, c_area_1, c_local_1, c_ext_1, c_ctry_2, c_area_2, \
                            c_local_2, c_ext_2, c_ctry_3, c_area_3, c_local_3, c_ext_3, \
                            c_email_1, c_email_2 \
                     FROM customer WHERE c_id = $1::bigint OR c_tax_id = $2::text), \
          a AS (SELECT ca.ca_id, ca.ca_bal, coalesce(sum(hs.hs_qty * lt.lt_price), 0) AS assets \
                FROM customer_account ca \
                LEFT JOIN holding_summary hs ON hs.hs_ca_id = ca.ca_id \
                LEFT JOIN last_trade lt ON lt.lt_s_symb = hs.hs_s_symb \
                WHERE ca.ca_c_id = (SELECT c_id FROM c) \
                GROUP BY ca.ca_id, ca.ca_bal ORDER BY assets, ca.ca_id LIMIT 10), \
          t AS (SELECT t_id, t_s_symb, t_qty FROM trade \
                WHERE $3::int IS NOT NULL \
                  AND t_ca_id = (SELECT ca_id FROM a ORDER BY assets, ca_id OFFSET $3::int LIMIT 1) \
                ORDER BY t_dts DESC, t_id DESC LIMIT 10), \
          h AS (SELECT t.t_id, t.t_s_symb, t.t_qty, st.st_name, th.th_dts \
                FROM t JOIN trade_history th ON th.th_t_id = t.t_id \
                JOIN status_type st ON st.st_id = th.th_st_id \
                ORDER BY th.th_dts DESC, t.t_id DESC LIMIT 30) \
          SELECT c.c_id, c.c_st_id, c.c_l_name, c.c_f_name, c.c_m_name, c.c_gndr, c.c_tier, \
                 c.c_dob, c.c_ad_id, c.c_ctry_1, c.c_area_1, c.c_local_1, c.c_ext_1, c.c_ctry_2, \
                 c.c_area_2, c.c_local_2, c.c_ext_2, c.c_ctry_3, c.c_area_3, c.c_local_3, \
                 c.c_ext_3, c.c_email_1, c.c_email_2, \
                 (SELECT count(*) FROM a) AS accounts, \
                 (SELECT json_agg(a ORDER BY a.assets, a.ca_id) FROM a) AS account_list, \
                 (SELECT count(*) FROM h) AS history, \
                 (SELECT json_agg(h ORDER BY h.th_dts DESC, h.t_id DESC) FROM h) AS history_list \
          FROM c",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_cp_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL function of `procedures/reads.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str = "tpce_customer_position(bigint, text, integer)";
pub const CALL: Statement = Statement {
    name: "tpce_cp_call",
    sql: "SELECT * FROM tpce_customer_position($1::bigint, $2::text, $3::int)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, POSITION, COMMIT, CALL];

/// How the customer is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerKey {
    Id(i64),
    TaxId(String),
}

#[derive(Debug, Clone)]
pub struct Args {
    pub customer: CustomerKey,
    /// Frame 2's account: its index in frame 1's list; `None` skips frame 2.
    pub history_account: Option<i64>,
}

/// A non-uniform customer, named by C_ID or tax id 50/50; history in 50 % of calls, of an
/// account index uniform over the customer's accounts (tpce.md §3.2).
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let c_id = inputs.customer(rng);
    let customer = if rng.gen_bool(0.5) {
        CustomerKey::TaxId(tax_id(inputs.seed(), c_id))
    } else {
        CustomerKey::Id(c_id as i64)
    };
    let history_account = rng
        .gen_bool(0.5)
        .then(|| rng.gen_range(0..accounts(inputs.seed(), c_id)) as i64);
    Args {
        customer,
        history_account,
    }
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let (id, tax) = match &args.customer {
        CustomerKey::Id(id) => (Param::Int(*id), Param::Null),
        CustomerKey::TaxId(tax) => (Param::Null, Param::Text(tax)),
    };
    let index = args.history_account.map_or(Param::Null, Param::Int);
    let stmt = if procedures { &CALL } else { &POSITION };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let found = {
        let r = conn.execute(protocol, stmt, &[id, tax, index]).await?;
        (r.rows() > 0).then(|| r.get_i64(0, 23).unwrap_or(0) + r.get_i64(0, 25).unwrap_or(0))
    };
    let Some(rows) = found else {
        return Err(abandon(
            conn,
            format!("customer-position: no customer {:?}", args.customer),
        )
        .await);
    };
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(rows as u64))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs, output_columns};
    use super::*;
    use crate::workload::tpce::customer::Customer;

    #[test]
    fn keys_and_history_split_50_50_within_the_customers_accounts() {
        let inputs = inputs(2_000, 1);
        let by_tax_id: HashMap<String, u64> = (1..=2_000)
            .map(|c| (Customer::generate(inputs.seed(), c).tax_id, c))
            .collect();
        let mut rng = Rng::seed_from_u64(8);
        let n = 20_000;
        let (mut by_tax, mut history) = (0, 0);
        for _ in 0..n {
            let a = draw(&inputs, &mut rng);
            let c_id = match &a.customer {
                CustomerKey::Id(id) => *id as u64,
                CustomerKey::TaxId(tax) => {
                    by_tax += 1;
                    // The tax id is a loaded customer's.
                    by_tax_id[tax]
                }
            };
            assert!((1..=2_000).contains(&c_id));
            if let Some(k) = a.history_account {
                history += 1;
                assert!(
                    (0..accounts(inputs.seed(), c_id) as i64).contains(&k),
                    "{k}"
                );
            }
        }
        for count in [by_tax, history] {
            let share = f64::from(count) / f64::from(n);
            assert!((share - 0.5).abs() < 0.02, "{share}");
        }
    }

    #[test]
    fn the_function_runs_the_statement() {
        assert_function_runs(FUNCTION, POSITION.sql, "c.c_id, c.c_st_id");
        // The counts `run` reads: accounts at column 23, history rows at 25.
        let cols = output_columns(POSITION.sql, "c.c_id, c.c_st_id");
        assert!(cols[23].ends_with("AS accounts"), "{}", cols[23]);
        assert!(cols[25].ends_with("AS history"), "{}", cols[25]);
    }
}
