//! Broker-Volume (TPC-E clause 3.3.1; tpce.md §3.2): the volume (quantity × bid) of pending
//! limit orders per broker, for 20–40 named brokers and one sector. Read-only, read committed,
//! one statement.
//!
//! TRADE_REQUEST holds only the run's own pending limit orders (it is empty after the load and
//! after Trade-Cleanup), so summing nothing is a normal, empty answer.
//!
//! `Outcome.rows`: the brokers listed (those with pending volume in the sector).

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::Outcome;
use crate::workload::tpce::gen::catalog::SECTORS;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::tpce::names::broker_name;
use crate::workload::Rng;

/// Brokers named per call (tpce.md §3.2), fewer when the database has fewer brokers (one load
/// unit has 10).
pub const BROKERS: (usize, usize) = (20, 40);

pub const BEGIN: Statement = Statement {
    name: "tpce_bv_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// Per named broker, Σ TR_QTY × TR_BID_PRICE of its requests for securities of companies in
/// the sector's industries, largest first.
pub const VOLUME: Statement = Statement {
    name: "tpce_bv_volume",
    sql: "SELECT b.b_name, sum(tr.tr_qty * tr.tr_bid_price) AS volume \
          FROM broker b JOIN trade_request tr ON tr.tr_b_id = b.b_id \
          JOIN security s ON s.s_symb = tr.tr_s_symb \
          JOIN company co ON co.co_id = s.s_co_id \
          JOIN industry i ON i.in_id = co.co_in_id \
          JOIN sector sc ON sc.sc_id = i.in_sc_id \
          WHERE b.b_name = ANY($1::text[]) AND sc.sc_name = $2::text \
          GROUP BY b.b_name ORDER BY volume DESC, b.b_name",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_bv_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL function of `procedures/reads.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str = "tpce_broker_volume(text[], text)";
pub const CALL: Statement = Statement {
    name: "tpce_bv_call",
    sql: "SELECT * FROM tpce_broker_volume($1::text[], $2::text)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, VOLUME, COMMIT, CALL];

#[derive(Debug, Clone)]
pub struct Args {
    /// Distinct broker names (B_NAME).
    pub brokers: Vec<String>,
    /// A sector name (SC_NAME).
    pub sector: String,
}

/// 20–40 distinct brokers, uniform among all, and a uniform sector (tpce.md §3.2).
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let all = inputs.scale().brokers() as usize;
    let count = rng.gen_range(BROKERS.0..=BROKERS.1).min(all);
    let brokers = rand::seq::index::sample(rng, all, count)
        .iter()
        .map(|i| broker_name(inputs.seed(), i as u64 + 1))
        .collect();
    let sector = SECTORS[rng.gen_range(0..SECTORS.len())].1.to_string();
    Args { brokers, sector }
}

/// `{"a b","c"}`: the PostgreSQL array literal of `items`, each quoted.
fn text_array(items: &[String]) -> String {
    let mut s = String::with_capacity(items.iter().map(|i| i.len() + 3).sum::<usize>() + 2);
    s.push('{');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        for c in item.chars() {
            if c == '"' || c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        s.push('"');
    }
    s.push('}');
    s
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let names = text_array(&args.brokers);
    let params = [Param::Text(&names), Param::Text(&args.sector)];
    let stmt = if procedures { &CALL } else { &VOLUME };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let rows = conn.execute(protocol, stmt, &params).await?.rows() as u64;
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(rows))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs};
    use super::*;

    #[test]
    fn brokers_are_distinct_and_number_20_to_40() {
        let inputs = inputs(5_000, 1);
        let all: HashSet<String> = (1..=inputs.scale().brokers())
            .map(|b| broker_name(inputs.seed(), b))
            .collect();
        let mut rng = Rng::seed_from_u64(2);
        let mut counts = HashSet::new();
        let mut sectors = HashSet::new();
        for _ in 0..2_000 {
            let a = draw(&inputs, &mut rng);
            assert!((20..=40).contains(&a.brokers.len()), "{}", a.brokers.len());
            let distinct: HashSet<&String> = a.brokers.iter().collect();
            assert_eq!(distinct.len(), a.brokers.len());
            assert!(a.brokers.iter().all(|b| all.contains(b)));
            counts.insert(a.brokers.len());
            sectors.insert(a.sector);
        }
        assert_eq!(counts.len(), 21, "every count 20..=40 occurs");
        assert_eq!(sectors.len(), SECTORS.len());
    }

    #[test]
    fn a_small_database_names_all_its_brokers() {
        let inputs = inputs(1_000, 1);
        let a = draw(&inputs, &mut Rng::seed_from_u64(1));
        assert_eq!(a.brokers.len(), 10);
        let distinct: HashSet<&String> = a.brokers.iter().collect();
        assert_eq!(distinct.len(), 10);
    }

    #[test]
    fn names_are_quoted_in_the_array() {
        let items = ["Selina Kavoru".to_string(), "a\"b\\c".to_string()];
        assert_eq!(text_array(&items), r#"{"Selina Kavoru","a\"b\\c"}"#);
        assert_eq!(text_array(&[]), "{}");
    }

    #[test]
    fn the_function_runs_the_statement() {
        assert_function_runs(FUNCTION, VOLUME.sql, "b.b_name, sum(");
        assert!(CALL.sql.contains("tpce_broker_volume("));
    }
}
