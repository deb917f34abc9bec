//! Market-Watch (TPC-E clause 3.3.4; tpce.md §3.2): the percent change in market cap of a set
//! of securities since a start day: a customer's watch list (60 %), an account's holdings
//! (35 %) or an industry's securities within a window of companies (5 %). Market cap then =
//! Σ S_NUM_OUT × DM_CLOSE on the start day, now = Σ S_NUM_OUT × LT_PRICE. Read-only, read
//! committed, one statement.
//!
//! The three lists are branches of one UNION ALL whose unused ones get a null key and find
//! nothing through their index, so one statement (and one PL/pgSQL function) serves all three.
//!
//! `Outcome.rows`: the securities priced (found in SECURITY, LAST_TRADE and DAILY_MARKET on the
//! start day), not the single percent-change row. A watch list always holds securities
//! (50–150, tpce.md §2.1), so one that prices none is a failure ([`super::missing`]); an
//! account without holdings or an industry without companies in the window is not.

use pgwire::{Connection, Param, Protocol, Statement};
use rand::Rng as _;

use super::history::nu;
use super::{abandon, Outcome};
use crate::workload::tpce::gen::catalog::{industry, INDUSTRIES};
use crate::workload::tpce::gen::clock::Day;
use crate::workload::tpce::inputs::Inputs;
use crate::workload::Rng;

/// Shares of the lists, percent: watch list, holdings, industry (tpce.md §3.2).
pub const SHARES: [u32; 3] = [60, 35, 5];
/// The widest window of companies an industry list looks at (tpce.md §3.2).
pub const COMPANY_WINDOW: u64 = 5_000;
/// Start weeks 5–260 of the 261 DAILY_MARKET weeks, NU with A = 255 (tpce.md §3.2).
pub const FIRST_WEEK: i64 = 5;
pub const WEEK_A: i64 = 255;
/// Share of start days that are Fridays, percent; the other days share the rest evenly.
pub const FRIDAY_SHARE: u32 = 60;

pub const BEGIN: Statement = Statement {
    name: "tpce_mw_begin",
    sql: "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
};
/// $1 watch list owner C_ID, $2 CA_ID, or $3 industry name with CO_ID window $4..=$5 (the
/// unused keys null); $6 the start day. Percent change rounded to 4 places; 0 when nothing
/// is priced.
pub const WATCH: Statement = Statement {
    name: "tpce_mw_watch",
    sql: "WITH list AS (SELECT wi.wi_s_symb AS symb FROM watch_list wl \
                        JOIN watch_item wi ON wi.wi_wl_id = wl.wl_id WHERE wl.wl_c_id = $1::bigint \
                        UNION ALL \
                        SELECT hs.hs_s_symb FROM holding_summary hs WHERE hs.hs_ca_id = $2::bigint \
                        UNION ALL \
                        SELECT s.s_symb FROM industry i \
                        JOIN company co ON co.co_in_id = i.in_id \
                        JOIN security s ON s.s_co_id = co.co_id \
                        WHERE i.in_name = $3::text AND co.co_id BETWEEN $4::bigint AND $5::bigint) \
          SELECT count(*) AS priced, \
                 coalesce(round(100 * (sum(s.s_num_out * lt.lt_price) \
                                       / nullif(sum(s.s_num_out * dm.dm_close), 0) - 1), 4), 0) \
                   AS pct_change \
          FROM list JOIN security s ON s.s_symb = list.symb \
          JOIN last_trade lt ON lt.lt_s_symb = list.symb \
          JOIN daily_market dm ON dm.dm_s_symb = list.symb AND dm.dm_date = $6::date",
};
pub const COMMIT: Statement = Statement {
    name: "tpce_mw_commit",
    sql: "COMMIT",
};

/// The PL/pgSQL function of `procedures/reads.sql` (as `to_regprocedure` reads it).
pub const FUNCTION: &str = "tpce_market_watch(bigint, bigint, text, bigint, bigint, date)";
pub const CALL: Statement = Statement {
    name: "tpce_mw_call",
    sql: "SELECT * FROM tpce_market_watch($1::bigint, $2::bigint, $3::text, $4::bigint, \
          $5::bigint, $6::date)",
};

/// Every statement this type sends, in SQL or as its procedure call: what the wait sampler
/// matches a session's query against.
pub const STATEMENTS: &[Statement] = &[BEGIN, WATCH, COMMIT, CALL];

/// Whose securities are watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum List {
    /// The watch list of customer C_ID.
    WatchList(i64),
    /// The holdings of account CA_ID.
    Holdings(i64),
    /// The securities of the industry named `name` whose company is in `companies`.
    Industry { name: String, companies: (i64, i64) },
}

#[derive(Debug, Clone)]
pub struct Args {
    pub list: List,
    pub start_day: Day,
}

/// The list by the 60/35/5 shares (customers and accounts as tpce.md §3.2's customer
/// selection; a uniform industry and company window), and the start day.
pub fn draw(inputs: &Inputs, rng: &mut Rng) -> Args {
    let list = match super::history::share_index(rng.gen_range(1..=100), &SHARES) {
        0 => List::WatchList(inputs.customer(rng) as i64),
        1 => {
            let c_id = inputs.customer(rng);
            List::Holdings(inputs.account(rng, c_id) as i64)
        }
        _ => {
            let companies = inputs.scale().companies();
            let first = if companies > COMPANY_WINDOW {
                rng.gen_range(1..=companies - COMPANY_WINDOW + 1)
            } else {
                1
            };
            let last = (first + COMPANY_WINDOW - 1).min(companies);
            List::Industry {
                name: industry(rng.gen_range(0..INDUSTRIES)).1,
                companies: (first as i64, last as i64),
            }
        }
    };
    Args {
        list,
        start_day: start_day(rng),
    }
}

/// A DAILY_MARKET day: an NU week in 5–260, then Friday (60 %) or another weekday.
fn start_day(rng: &mut Rng) -> Day {
    let week = FIRST_WEEK + nu(rng, 0, WEEK_A, WEEK_A, 0);
    let weekday = if rng.gen_range(1..=100) <= FRIDAY_SHARE {
        4
    } else {
        rng.gen_range(0..4)
    };
    Day::daily_market((week * 5 + weekday) as u64)
}

pub async fn run(
    conn: &mut Connection,
    protocol: Protocol,
    args: &Args,
    procedures: bool,
) -> Result<Outcome, pgwire::Error> {
    let day = args.start_day.text();
    let mut params = [
        Param::Null,
        Param::Null,
        Param::Null,
        Param::Null,
        Param::Null,
        Param::Text(&day),
    ];
    match &args.list {
        List::WatchList(c_id) => params[0] = Param::Int(*c_id),
        List::Holdings(ca_id) => params[1] = Param::Int(*ca_id),
        List::Industry { name, companies } => {
            params[2] = Param::Text(name);
            params[3] = Param::Int(companies.0);
            params[4] = Param::Int(companies.1);
        }
    }
    let stmt = if procedures { &CALL } else { &WATCH };
    conn.execute(protocol, &BEGIN, &[]).await?;
    let priced = conn
        .execute(protocol, stmt, &params)
        .await?
        .get_i64(0, 0)
        .unwrap_or(0);
    if let (0, List::WatchList(c_id)) = (priced, &args.list) {
        return Err(abandon(
            conn,
            format!("market-watch: the watch list of customer {c_id} prices no security on {day}"),
        )
        .await);
    }
    conn.execute(protocol, &COMMIT, &[]).await?;
    Ok(Outcome::committed(priced as u64))
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::super::history::tests::{assert_function_runs, inputs};
    use super::*;
    use crate::workload::tpce::gen::clock::DAILY_MARKET_START;
    use crate::workload::tpce::scale::DAILY_MARKET_DAYS;

    #[test]
    fn lists_split_60_35_5() {
        let inputs = inputs(2_000, 1);
        let mut rng = Rng::seed_from_u64(16);
        let n = 40_000;
        let mut counts = [0u32; 3];
        for _ in 0..n {
            match draw(&inputs, &mut rng).list {
                List::WatchList(c) => {
                    counts[0] += 1;
                    assert!((1..=2_000).contains(&c));
                }
                List::Holdings(ca) => {
                    counts[1] += 1;
                    assert!(inputs.account_exists(ca as u64));
                }
                List::Industry { name, companies } => {
                    counts[2] += 1;
                    assert!((0..INDUSTRIES).any(|i| industry(i).1 == name));
                    // Two load units have 1,000 companies: all in the window.
                    assert_eq!(companies, (1, 1_000));
                }
            }
        }
        for (count, want) in counts.iter().zip(SHARES) {
            let share = f64::from(*count) * 100.0 / f64::from(n);
            assert!((share - f64::from(want)).abs() < 1.5, "{counts:?}");
        }
    }

    #[test]
    fn company_windows_hold_5000_companies_inside_the_database() {
        let inputs = inputs(20_000, 1);
        let companies = inputs.scale().companies() as i64;
        let mut rng = Rng::seed_from_u64(7);
        let (mut lowest, mut highest) = (i64::MAX, 0);
        for _ in 0..20_000 {
            if let List::Industry {
                companies: (a, b), ..
            } = draw(&inputs, &mut rng).list
            {
                assert_eq!(b - a + 1, COMPANY_WINDOW as i64);
                assert!(a >= 1 && b <= companies, "{a}..{b}");
                lowest = lowest.min(a);
                highest = highest.max(b);
            }
        }
        assert!(
            lowest < 100 && highest > companies - 100,
            "{lowest} {highest}"
        );
    }

    #[test]
    fn start_days_fall_in_weeks_5_to_260_mostly_on_fridays() {
        let mut rng = Rng::seed_from_u64(5);
        let n = 40_000;
        let mut weekdays = [0u32; 5];
        let first = Day::daily_market(5 * 5);
        let last = Day::daily_market(DAILY_MARKET_DAYS - 1);
        let mut late = 0;
        for _ in 0..n {
            let d = start_day(&mut rng);
            assert!(d >= first && d <= last, "{}", d.text());
            assert!(d > DAILY_MARKET_START);
            weekdays[d.weekday() as usize] += 1;
            late += u32::from(d >= Day::daily_market(133 * 5));
        }
        let friday = f64::from(weekdays[4]) / f64::from(n);
        assert!((friday - 0.60).abs() < 0.01, "{weekdays:?}");
        for w in &weekdays[..4] {
            let share = f64::from(*w) / f64::from(n);
            assert!((share - 0.10).abs() < 0.01, "{weekdays:?}");
        }
        // NU with A = 255 favours later weeks: the upper half of weeks gets about 3/4.
        let share = f64::from(late) / f64::from(n);
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }

    #[test]
    fn the_function_runs_the_statement() {
        assert_function_runs(FUNCTION, WATCH.sql, "count(*) AS priced");
    }
}
