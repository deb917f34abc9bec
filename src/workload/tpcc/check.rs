//! The consistency conditions 1-4 of TPC-C clause 3.3.2, run after (or between) runs by
//! `tidebench check --workload tpcc`. Each query lists the offending rows; none means pass.

use tokio_postgres::Client;

use crate::workload::{CheckOutcome as Outcome, WorkloadError};

/// Offending rows shown per condition; the count of all of them is reported too.
const SHOWN: usize = 10;

/// One condition: the SQL listing rows that break it, as text columns.
struct Condition {
    name: &'static str,
    sql: &'static str,
}

const CONDITIONS: [Condition; 4] = [
    Condition {
        name: "1: W_YTD = sum(D_YTD) per warehouse (3.3.2.1)",
        sql: "SELECT format('w_id=%s w_ytd=%s sum(d_ytd)=%s', w_id, w_ytd, s) \
              FROM (SELECT w_id, w_ytd, sum(d_ytd) AS s FROM warehouse \
                    JOIN district ON d_w_id = w_id GROUP BY w_id, w_ytd) x \
              WHERE w_ytd <> s ORDER BY w_id",
    },
    Condition {
        name: "2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district (3.3.2.2)",
        sql: "SELECT format('w_id=%s d_id=%s d_next_o_id=%s max(o_id)=%s max(no_o_id)=%s', \
                            d_w_id, d_id, d_next_o_id, mo, mno) \
              FROM (SELECT d_w_id, d_id, d_next_o_id, \
                      (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo, \
                      (SELECT max(no_o_id) FROM new_order \
                       WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mno \
                    FROM district) x \
              WHERE mo IS DISTINCT FROM d_next_o_id - 1 \
                 OR (mno IS NOT NULL AND mno <> d_next_o_id - 1) \
              ORDER BY d_w_id, d_id",
    },
    Condition {
        name: "3: max(NO_O_ID) - min(NO_O_ID) + 1 = count of NEW-ORDER rows per district (3.3.2.3)",
        sql: "SELECT format('w_id=%s d_id=%s min=%s max=%s count=%s', no_w_id, no_d_id, lo, hi, n) \
              FROM (SELECT no_w_id, no_d_id, min(no_o_id) AS lo, max(no_o_id) AS hi, \
                      count(*) AS n FROM new_order GROUP BY no_w_id, no_d_id) x \
              WHERE hi - lo + 1 <> n ORDER BY no_w_id, no_d_id",
    },
    Condition {
        name: "4: sum(O_OL_CNT) = count of ORDER-LINE rows per district (3.3.2.4)",
        sql: "SELECT format('w_id=%s d_id=%s sum(o_ol_cnt)=%s order_lines=%s', \
                            o_w_id, o_d_id, s, coalesce(n, 0)) \
              FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s FROM orders \
                    GROUP BY o_w_id, o_d_id) o \
              LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line \
                         GROUP BY ol_w_id, ol_d_id) l \
                ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id \
              WHERE s IS DISTINCT FROM n ORDER BY o_w_id, o_d_id",
    },
];

/// Runs the four conditions in one repeatable-read snapshot, so a run still going elsewhere
/// cannot make them disagree with each other.
pub async fn run(client: &Client) -> Result<Vec<Outcome>, WorkloadError> {
    let db = |what: &str, e: tokio_postgres::Error| WorkloadError::query(what)(e);
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(|e| db("starting the check transaction", e))?;
    let mut out = Vec::with_capacity(CONDITIONS.len());
    for c in &CONDITIONS {
        let rows = client.query(c.sql, &[]).await.map_err(|e| {
            db(
                &format!(
                    "checking condition {} (are the TPC-C tables there?)",
                    c.name
                ),
                e,
            )
        })?;
        out.push(Outcome {
            name: c.name.to_string(),
            offending: rows.len() as u64,
            examples: rows.iter().take(SHOWN).map(|r| r.get(0)).collect(),
        });
    }
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| db("ending the check transaction", e))?;
    Ok(out)
}
