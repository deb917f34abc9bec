//! pgbench's built-in scripts (tpcb-like, select-only, simple-update) over pgbench's own
//! schema, with pgbench 15's semantics so results compare one to one: the same statements,
//! the same uniform `random(lb, ub)` draws (from the client's pg_prng state seeded as pgbench
//! seeds it, so the same `--seed` touches the same accounts in the same order per client),
//! the same transaction boundaries, one round trip per statement.
//!
//! Files: `init` (`pgbench -i`'s options), `schema` (tables and the steps' statements),
//! `loader` + `generate` + `copy` (`prepare`, on the shared [`crate::workload::kit`]),
//! `before_run` (the branch count and vacuum pgbench does before a run), one file per script
//! with its SQL at the top.

mod before_run;
mod copy;
mod generate;
pub mod init;
mod loader;
mod plugin;
pub mod schema;
pub mod select_only;
pub mod simple_update;
mod sql;
pub mod tpcb;

use super::pg_prng::PgPrng;
use super::{Rng, TxnEnd, TxnType, WorkloadError};
use schema::{ACCOUNTS_PER_SCALE, BRANCHES_PER_SCALE, TABLES, TELLERS_PER_SCALE};

pub use before_run::{before_run, BeforeRunError};
pub use loader::prepare;
pub use plugin::{Script, SELECT_ONLY, SIMPLE_UPDATE, TPCB};

/// The three scripts, which run on the same tables, so any pgbench group can mix them; a
/// script's index here is its transaction type id.
pub const SCRIPTS: [&str; 3] = ["tpcb", "select-only", "simple-update"];
pub const TPCB_TXN: usize = 0;
pub const SELECT_ONLY_TXN: usize = 1;
pub const SIMPLE_UPDATE_TXN: usize = 2;

/// One pgbench script at a known scale.
#[derive(Debug, Clone)]
pub struct Pgbench {
    /// The script run when no mix is given: index into [`SCRIPTS`].
    pub script: usize,
    pub scale: u32,
    types: Vec<TxnType>,
    /// Upper bounds of pgbench's draws: `100000 * :scale`, `1 * :scale`, `10 * :scale`.
    naccounts: i64,
    nbranches: i64,
    ntellers: i64,
}

/// The script's variables (`\set aid ...` etc.). Select-only draws only `aid`; the others
/// stay 0 there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
}

impl Pgbench {
    pub fn new(script: usize, scale: u32) -> Pgbench {
        // Scale 0 would make every draw range empty; validation rejects it, this keeps draws sane.
        let scale = i64::from(scale.max(1));
        Pgbench {
            script: script.min(SCRIPTS.len() - 1),
            scale: scale as u32,
            types: SCRIPTS
                .iter()
                .map(|s| TxnType::new(*s, crate::config::DEFAULT_ROLE))
                .collect(),
            naccounts: ACCOUNTS_PER_SCALE * scale,
            nbranches: BRANCHES_PER_SCALE * scale,
            ntellers: TELLERS_PER_SCALE * scale,
        }
    }

    pub fn name(&self) -> &'static str {
        SCRIPTS[self.script]
    }

    /// Without a mix, always the workload's own script.
    pub fn draw_txn(&self, _rng: &mut Rng) -> usize {
        self.script
    }

    /// The script's `\set` lines, in pgbench's order: `aid`, `bid`, `tid`, `delta`, each
    /// pgbench's `random(lb, ub)` (`getrand`) on the client's function state.
    pub fn draw_args(&self, txn: usize, rng: &mut PgPrng) -> Args {
        let aid = rng.getrand(1, self.naccounts);
        if txn == SELECT_ONLY_TXN {
            return Args {
                aid,
                bid: 0,
                tid: 0,
                delta: 0,
            };
        }
        Args {
            aid,
            bid: rng.getrand(1, self.nbranches),
            tid: rng.getrand(1, self.ntellers),
            delta: rng.getrand(-5000, 5000),
        }
    }

    pub async fn execute(
        &self,
        conn: &mut pgwire::Connection,
        protocol: pgwire::Protocol,
        txn: usize,
        args: &Args,
    ) -> Result<TxnEnd, pgwire::Error> {
        match txn {
            SELECT_ONLY_TXN => select_only::run(conn, protocol, args).await,
            SIMPLE_UPDATE_TXN => simple_update::run(conn, protocol, args).await,
            _ => tpcb::run(conn, protocol, args).await,
        }
    }
}

/// Checks that the four tables exist and returns the scale, which is, as for pgbench,
/// `count(*)` of pgbench_branches (the same tables serve all three scripts).
pub async fn check_ready(client: &tokio_postgres::Client) -> Result<u32, WorkloadError> {
    const HOW: &str =
        "run `tidebench prepare --workload tpcb --scale N` (or `pgbench -i -s N`) first";
    let db = || WorkloadError::query("checking the pgbench tables");
    let names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
    let missing: Vec<String> = client
        .query_typed(
            "select t from unnest($1::text[]) as t where to_regclass(t) is null order by t",
            &[(&names, tokio_postgres::types::Type::TEXT_ARRAY)],
        )
        .await
        .map_err(db())?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if missing.len() == TABLES.len() {
        return Err(WorkloadError::not_prepared(
            "target has no pgbench tables",
            HOW,
        ));
    }
    if !missing.is_empty() {
        return Err(WorkloadError::not_prepared(
            format!("target lacks pgbench tables {}", missing.join(", ")),
            format!("{HOW} (add `--force` to reload)"),
        ));
    }
    let count: i64 = client
        .query_typed_one("select count(*) from pgbench_branches", &[])
        .await
        .map_err(db())?
        .get(0);
    match u32::try_from(count) {
        Ok(0) => Err(WorkloadError::not_prepared(
            "pgbench_branches is empty, so the scale is unknown",
            format!("{HOW} (add `--force` to reload)"),
        )),
        Ok(scale) => Ok(scale),
        Err(_) => Err(WorkloadError::not_prepared(
            format!("pgbench_branches has {count} rows, more than any scale tidebench supports"),
            HOW,
        )),
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn draws(script: usize, scale: u32, n: usize) -> Vec<Args> {
        let w = Pgbench::new(script, scale);
        let mut rng = Rng::seed_from_u64(42);
        let mut state = PgPrng::seeded(42);
        (0..n)
            .map(|_| w.draw_args(w.draw_txn(&mut rng), &mut state))
            .collect()
    }

    #[test]
    fn tpcb_draws_stay_in_pgbench_ranges_and_reach_both_ends() {
        let a = draws(TPCB_TXN, 2, 200_000);
        assert!(a.iter().all(|x| (1..=200_000).contains(&x.aid)));
        assert!(a.iter().all(|x| (1..=2).contains(&x.bid)));
        assert!(a.iter().all(|x| (1..=20).contains(&x.tid)));
        assert!(a.iter().all(|x| (-5000..=5000).contains(&x.delta)));
        for (lo, hi, get) in [
            (1, 2, (|x: &Args| x.bid) as fn(&Args) -> i64),
            (1, 20, |x: &Args| x.tid),
            (-5000, 5000, |x: &Args| x.delta),
        ] {
            assert_eq!(a.iter().map(get).min(), Some(lo));
            assert_eq!(a.iter().map(get).max(), Some(hi));
        }
    }

    #[test]
    fn draws_are_roughly_uniform() {
        let a = draws(SIMPLE_UPDATE_TXN, 1, 100_000);
        let mut per_teller = [0u32; 10];
        for x in &a {
            per_teller[(x.tid - 1) as usize] += 1;
        }
        // 10 000 expected per teller; 5 sigma is about 475.
        assert!(
            per_teller.iter().all(|&c| (9_500..=10_500).contains(&c)),
            "{per_teller:?}"
        );
    }

    #[test]
    fn select_only_draws_only_aid() {
        let a = draws(SELECT_ONLY_TXN, 3, 1000);
        assert!(a
            .iter()
            .all(|x| (1..=300_000).contains(&x.aid) && x.bid == 0 && x.tid == 0 && x.delta == 0));
    }

    #[test]
    fn same_seed_same_draws() {
        assert_eq!(draws(TPCB_TXN, 5, 100), draws(TPCB_TXN, 5, 100));
    }

    #[test]
    fn the_workload_name_picks_the_default_script() {
        for script in [TPCB_TXN, SELECT_ONLY_TXN, SIMPLE_UPDATE_TXN] {
            let w = Pgbench::new(script, 1);
            let mut rng = Rng::seed_from_u64(1);
            assert_eq!(SCRIPTS[w.draw_txn(&mut rng)], w.name());
        }
    }

    #[test]
    fn statement_names_are_unique_across_scripts() {
        let script = |s: &sql::Statements| {
            [
                s.begin,
                s.update_account,
                s.select_balance,
                s.update_teller,
                s.update_branch,
                s.insert_history,
                s.end,
            ]
        };
        let mut all = script(&tpcb::STATEMENTS).to_vec();
        all.extend(script(&simple_update::STATEMENTS));
        all.push(select_only::SELECT_BALANCE);
        let mut names: Vec<&str> = all.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert!(names.iter().all(|n| n.starts_with("pgb_")));
    }
}
