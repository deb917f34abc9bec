//! The statement texts of pgbench's built-in scripts, once: PostgreSQL 15's
//! `builtin_script[]` with `:var` replaced by `$n` in order of appearance, as pgbench sends them
//! in `-M extended|prepared`. Each script names its own prepared statements (as pgbench does,
//! per script), so the texts are shared and the names are not.

use pgwire::Statement;

pub const BEGIN: &str = "BEGIN;";
pub const UPDATE_ACCOUNT: &str =
    "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;";
pub const SELECT_BALANCE: &str = "SELECT abalance FROM pgbench_accounts WHERE aid = $1;";
pub const UPDATE_TELLER: &str =
    "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;";
pub const UPDATE_BRANCH: &str =
    "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2;";
pub const INSERT_HISTORY: &str = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
                                  VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);";
pub const END: &str = "END;";

/// Each built-in script's texts, as (index into `SCRIPTS`, text), for the wait sampler.
pub fn by_script() -> Vec<(usize, &'static str)> {
    use super::{SELECT_ONLY_TXN, SIMPLE_UPDATE_TXN, TPCB_TXN};
    let tpcb = [
        BEGIN,
        UPDATE_ACCOUNT,
        SELECT_BALANCE,
        UPDATE_TELLER,
        UPDATE_BRANCH,
        INSERT_HISTORY,
        END,
    ];
    let simple_update = [BEGIN, UPDATE_ACCOUNT, SELECT_BALANCE, INSERT_HISTORY, END];
    let mut out: Vec<(usize, &'static str)> = tpcb.iter().map(|s| (TPCB_TXN, *s)).collect();
    out.push((SELECT_ONLY_TXN, SELECT_BALANCE));
    out.extend(simple_update.iter().map(|s| (SIMPLE_UPDATE_TXN, *s)));
    out
}

/// The statements of one transaction of the TPC-B-like script under one script's names.
/// simple-update sends the same ones but the tellers' and branches' updates.
pub struct Statements {
    pub begin: Statement,
    pub update_account: Statement,
    pub select_balance: Statement,
    pub update_teller: Statement,
    pub update_branch: Statement,
    pub insert_history: Statement,
    pub end: Statement,
}

/// Script `$script`'s [`Statements`]: the shared texts under names of its own
/// (`pgb_<script>_<step>`), as each pgbench script prepares its own statements.
macro_rules! statements {
    ($script:literal) => {
        $crate::workload::pgbench::sql::Statements {
            begin: $crate::workload::pgbench::sql::statements!(@ $script, "begin", BEGIN),
            update_account: $crate::workload::pgbench::sql::statements!(@ $script, "update_account", UPDATE_ACCOUNT),
            select_balance: $crate::workload::pgbench::sql::statements!(@ $script, "select_balance", SELECT_BALANCE),
            update_teller: $crate::workload::pgbench::sql::statements!(@ $script, "update_teller", UPDATE_TELLER),
            update_branch: $crate::workload::pgbench::sql::statements!(@ $script, "update_branch", UPDATE_BRANCH),
            insert_history: $crate::workload::pgbench::sql::statements!(@ $script, "insert_history", INSERT_HISTORY),
            end: $crate::workload::pgbench::sql::statements!(@ $script, "end", END),
        }
    };
    (@ $script:literal, $step:literal, $sql:ident) => {
        pgwire::Statement {
            name: concat!("pgb_", $script, "_", $step),
            sql: $crate::workload::pgbench::sql::$sql,
        }
    };
}

pub(super) use statements;
