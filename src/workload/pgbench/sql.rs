//! The statement texts of pgbench's built-in scripts, once: PostgreSQL 15's
//! `builtin_script[]` with `:var` replaced by `$n` in order of appearance, as pgbench sends them
//! in `-M extended|prepared`. Each script names its own prepared statements (as pgbench does,
//! per script), so the texts are shared and the names are not.

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
