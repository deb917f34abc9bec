//! New-Order (TPC-C clause 2.4): enter an order of 5-15 lines for a customer of the home
//! warehouse; 1% of orders name an unused item and are rolled back (clause 2.4.1.4), counted as
//! expected rollbacks.
//!
//! Six round trips instead of one per row: the items in one `= ANY` query, the district
//! increment joined with the warehouse and customer reads, every stock line in one `UPDATE`
//! over unnested arrays, and the order, new-order and order-line rows in one `INSERT` with
//! CTEs. Order lines name distinct items (re-drawn on a repeat), so the single stock `UPDATE`
//! changes each row exactly once as the per-line loop of clause 2.4.2.2 would.

use std::fmt::Write as _;

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::random::{nurand, OL_I_ID_RUN};
use super::{missing, Client, Tpcc, DISTRICTS, ITEMS as ITEM_COUNT};
use crate::workload::{Rng, TxnEnd};

pub const BEGIN: Statement = Statement {
    name: "tpcc_no_begin",
    sql: "BEGIN",
};
/// Clause 2.4.2.2: I_PRICE, I_NAME, I_DATA of every line's item.
pub const ITEMS: Statement = Statement {
    name: "tpcc_no_items",
    sql: "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id = ANY($1::int[])",
};
/// Clause 2.4.2.2: W_TAX; D_TAX and D_NEXT_O_ID read and incremented under the district's row
/// lock (the UPDATE takes it, as SELECT ... FOR UPDATE would); C_DISCOUNT, C_LAST, C_CREDIT.
pub const DISTRICT: Statement = Statement {
    name: "tpcc_no_district",
    sql: "WITH d AS (UPDATE district SET d_next_o_id = d_next_o_id + 1 \
                     WHERE d_w_id = $1 AND d_id = $2 \
                     RETURNING d_tax, d_next_o_id - 1 AS o_id) \
          SELECT d.o_id, d.d_tax, w.w_tax, c.c_discount, c.c_last, c.c_credit \
          FROM d, warehouse w, customer c \
          WHERE w.w_id = $1 AND c.c_w_id = $1 AND c.c_d_id = $2 AND c.c_id = $3",
};
/// Clause 2.4.2.2: per line, S_QUANTITY decreased by OL_QUANTITY if that leaves at least 10,
/// else decreased and increased by 91; S_YTD += OL_QUANTITY; S_ORDER_CNT += 1; S_REMOTE_CNT += 1
/// for a remote supplier. Rows are locked in (warehouse, item) order first, so concurrent
/// New-Orders never wait on each other in a cycle.
pub const STOCK: Statement = Statement {
    name: "tpcc_no_stock",
    sql:
        "WITH v AS (SELECT * FROM unnest($1::int[], $2::int[], $3::int[]) AS t(i_id, w_id, qty)), \
          lk AS MATERIALIZED (SELECT s_i_id, s_w_id, v.qty FROM stock \
                              JOIN v ON s_i_id = v.i_id AND s_w_id = v.w_id \
                              ORDER BY s_w_id, s_i_id FOR UPDATE OF stock) \
          UPDATE stock s SET \
            s_quantity = CASE WHEN s.s_quantity - lk.qty >= 10 THEN s.s_quantity - lk.qty \
                              ELSE s.s_quantity - lk.qty + 91 END, \
            s_ytd = s.s_ytd + lk.qty, \
            s_order_cnt = s.s_order_cnt + 1, \
            s_remote_cnt = s.s_remote_cnt + CASE WHEN lk.s_w_id <> $4 THEN 1 ELSE 0 END \
          FROM lk WHERE s.s_i_id = lk.s_i_id AND s.s_w_id = lk.s_w_id \
          RETURNING s.s_i_id, s.s_w_id, s.s_quantity, \
            CASE $5::int WHEN 1 THEN s.s_dist_01 WHEN 2 THEN s.s_dist_02 WHEN 3 THEN s.s_dist_03 \
              WHEN 4 THEN s.s_dist_04 WHEN 5 THEN s.s_dist_05 WHEN 6 THEN s.s_dist_06 \
              WHEN 7 THEN s.s_dist_07 WHEN 8 THEN s.s_dist_08 WHEN 9 THEN s.s_dist_09 \
              ELSE s.s_dist_10 END, \
            s.s_data",
};
/// Clause 2.4.2.2: the ORDER (O_CARRIER_ID null), NEW-ORDER and ORDER-LINE rows
/// (OL_DELIVERY_D null, OL_AMOUNT = OL_QUANTITY * I_PRICE, OL_DIST_INFO = S_DIST_xx).
pub const INSERT: Statement = Statement {
    name: "tpcc_no_insert",
    sql: "WITH o AS (INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
                                         o_ol_cnt, o_all_local) \
                     VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)), \
          n AS (INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)) \
          INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
                                  ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
          SELECT $1, $2, $3, t.n, t.i_id, t.w_id, NULL, t.qty, t.amount, t.dist \
          FROM unnest($7::int[], $8::int[], $9::int[], $10::numeric[], $11::text[]) \
               WITH ORDINALITY AS t(i_id, w_id, qty, amount, dist, n)",
};
pub const COMMIT: Statement = Statement {
    name: "tpcc_no_commit",
    sql: "COMMIT",
};
pub const ROLLBACK: Statement = Statement {
    name: "tpcc_no_rollback",
    sql: "ROLLBACK",
};

/// An item id no row has (clause 2.4.1.5: "an unused value").
pub const UNUSED_ITEM: i64 = ITEM_COUNT + 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub i_id: i64,
    pub supply_w_id: i64,
    pub quantity: i64,
}

#[derive(Debug, Clone)]
pub struct Args {
    pub w_id: i64,
    pub d_id: i64,
    pub c_id: i64,
    pub lines: Vec<Line>,
    /// The 1% rollback: the last line's item is replaced by [`UNUSED_ITEM`] when run.
    pub rollback: bool,
}

/// Clause 2.4.1: district uniform, customer NURand(1023), 5-15 lines with items NURand(8191),
/// 1% of lines from a remote warehouse, quantities 1-10, 1% of orders rolled back.
pub fn draw(w: &Tpcc, client: &Client, rng: &mut Rng) -> Args {
    let count = rng.gen_range(5..=15usize);
    let mut lines: Vec<Line> = Vec::with_capacity(count);
    while lines.len() < count {
        let i_id = nurand(rng, 8191, 1, ITEM_COUNT, OL_I_ID_RUN);
        if lines.iter().any(|l| l.i_id == i_id) {
            continue;
        }
        let supply_w_id = if rng.gen_range(1..=100) == 1 {
            w.remote_warehouse(client.w_id, rng)
        } else {
            client.w_id
        };
        lines.push(Line {
            i_id,
            supply_w_id,
            quantity: rng.gen_range(1..=10),
        });
    }
    Args {
        w_id: client.w_id,
        d_id: rng.gen_range(1..=DISTRICTS),
        c_id: nurand(
            rng,
            1023,
            1,
            super::CUSTOMERS_PER_DISTRICT,
            super::random::C_ID_RUN,
        ),
        lines,
        rollback: rng.gen_range(1..=100) == 1,
    }
}

impl Args {
    /// The item of line `i` as sent: [`UNUSED_ITEM`] on the last line of a 1% rollback.
    pub fn item_id(&self, i: usize) -> i64 {
        if self.rollback && i + 1 == self.lines.len() {
            UNUSED_ITEM
        } else {
            self.lines[i].i_id
        }
    }
}

/// Formats `values` as a PostgreSQL array literal, e.g. `{1,2,3}`.
pub(super) fn array<T: std::fmt::Display>(values: impl Iterator<Item = T>) -> String {
    let mut s = String::with_capacity(96);
    s.push('{');
    for (i, v) in values.enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(s, "{v}");
    }
    s.push('}');
    s
}

/// `12.34` → 1234; None for anything else.
fn cents(price: &str) -> Option<i64> {
    let (units, hundredths) = price.split_once('.').unwrap_or((price, "0"));
    let frac: i64 = match hundredths.len() {
        1 => hundredths.parse::<i64>().ok()? * 10,
        2 => hundredths.parse().ok()?,
        _ => return None,
    };
    Some(units.parse::<i64>().ok()? * 100 + frac)
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    a: &Args,
) -> Result<TxnEnd, pgwire::Error> {
    let n = a.lines.len();
    let item_id = |i: usize| a.item_id(i);
    let ids = array((0..n).map(item_id));
    conn.execute(protocol, &BEGIN, &[]).await?;

    // Prices in cents, by line; the items are distinct, so rows map one to one.
    let mut price = [0i64; 15];
    let found = {
        let r = conn.execute(protocol, &ITEMS, &[Param::Text(&ids)]).await?;
        for row in 0..r.rows() {
            let (Some(id), Some(p)) = (r.get_i64(row, 0), r.get_str(row, 1).and_then(cents)) else {
                continue;
            };
            if let Some(i) = (0..n.min(15)).find(|&i| item_id(i) == id) {
                price[i] = p;
            }
        }
        r.rows()
    };
    if found < n {
        // Clause 2.4.2.3: an unused item rolls the whole order back.
        conn.execute(protocol, &ROLLBACK, &[]).await?;
        if a.rollback {
            return Ok(TxnEnd::ExpectedRollback);
        }
        return Err(missing(format!(
            "new-order: {} of the items {ids} are missing from table item",
            n - found
        )));
    }

    let o_id = {
        let r = conn
            .execute(
                protocol,
                &DISTRICT,
                &[Param::Int(a.w_id), Param::Int(a.d_id), Param::Int(a.c_id)],
            )
            .await?;
        r.get_i64(0, 0).ok_or_else(|| {
            missing(format!(
                "new-order: no district {}/{} or customer {} there",
                a.w_id, a.d_id, a.c_id
            ))
        })?
    };

    let supply = array(a.lines.iter().map(|l| l.supply_w_id));
    let qty = array(a.lines.iter().map(|l| l.quantity));
    let mut dist: Vec<String> = vec![String::new(); n];
    {
        let r = conn
            .execute(
                protocol,
                &STOCK,
                &[
                    Param::Text(&ids),
                    Param::Text(&supply),
                    Param::Text(&qty),
                    Param::Int(a.w_id),
                    Param::Int(a.d_id),
                ],
            )
            .await?;
        for row in 0..r.rows() {
            let (i_id, w_id) = (r.get_i64(row, 0), r.get_i64(row, 1));
            if let Some(i) = a
                .lines
                .iter()
                .position(|l| Some(l.i_id) == i_id && Some(l.supply_w_id) == w_id)
            {
                dist[i] = r.get_str(row, 3).unwrap_or_default().to_string();
            }
        }
        if r.rows() < n {
            return Err(missing(format!(
                "new-order: {} stock rows of {n} found for items {ids}",
                r.rows()
            )));
        }
    }

    let amounts = array(a.lines.iter().zip(price).map(|(l, p)| {
        let c = l.quantity * p;
        format!("{}.{:02}", c / 100, c % 100)
    }));
    let dists = array(dist.iter());
    let all_local = i64::from(a.lines.iter().all(|l| l.supply_w_id == a.w_id));
    conn.execute(
        protocol,
        &INSERT,
        &[
            Param::Int(o_id),
            Param::Int(a.d_id),
            Param::Int(a.w_id),
            Param::Int(a.c_id),
            Param::Int(n as i64),
            Param::Int(all_local),
            Param::Text(&ids),
            Param::Text(&supply),
            Param::Text(&qty),
            Param::Text(&amounts),
            Param::Text(&dists),
        ],
    )
    .await?;
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(TxnEnd::Committed)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::workload::ClientSlot;

    #[test]
    fn prices_parse_to_cents() {
        assert_eq!(cents("12.34"), Some(1234));
        assert_eq!(cents("1.5"), Some(150));
        assert_eq!(cents("7"), Some(700));
        assert_eq!(cents("x.10"), None);
    }

    #[test]
    fn arrays_are_postgres_literals() {
        assert_eq!(array([1, 2, 3].iter()), "{1,2,3}");
        assert_eq!(array(std::iter::empty::<i64>()), "{}");
    }

    #[test]
    fn draws_follow_clause_2_4_1() {
        let w = Tpcc::new(4, &crate::workload::tpcc::Options::default());
        let c = w.client(ClientSlot { index: 0, count: 1 });
        let mut rng = Rng::seed_from_u64(11);
        let (mut rollbacks, mut remote, mut lines) = (0, 0, 0);
        for _ in 0..20_000 {
            let a = draw(&w, &c, &mut rng);
            assert!((5..=15).contains(&a.lines.len()));
            assert!((1..=10).contains(&a.d_id) && (1..=3000).contains(&a.c_id));
            let mut ids: Vec<i64> = a.lines.iter().map(|l| l.i_id).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), a.lines.len());
            for l in &a.lines {
                assert!((1..=ITEM_COUNT).contains(&l.i_id) && (1..=10).contains(&l.quantity));
                remote += usize::from(l.supply_w_id != 1);
                lines += 1;
            }
            rollbacks += usize::from(a.rollback);
        }
        assert!((120..=290).contains(&rollbacks), "{rollbacks}");
        assert!(remote * 1000 > lines * 7 && remote * 1000 < lines * 13);
    }
}
