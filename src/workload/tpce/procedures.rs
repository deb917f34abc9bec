//! The PL/pgSQL functions `--procedures` calls, one per transaction: the read transactions'
//! (`procedures/reads.sql`), the trade transactions' (`procedures/trades.sql`) and
//! Data-Maintenance's (`procedures/maintenance.sql`; Trade-Cleanup is client-side only, as in
//! DBT-5). `prepare` installs them in the move transaction; a run with `--procedures` checks
//! they are there.

use tokio_postgres::Client;

/// The three files, as `prepare` runs them.
pub const SQL: &str = concat!(
    include_str!("procedures/reads.sql"),
    "\n",
    include_str!("procedures/trades.sql"),
    "\n",
    include_str!("procedures/maintenance.sql")
);

/// The functions the SQL defines: every `CREATE OR REPLACE FUNCTION name(`.
pub fn function_names() -> Vec<&'static str> {
    SQL.split("CREATE OR REPLACE FUNCTION ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .map(str::trim)
        .collect()
}

/// The functions missing from the database's search path.
pub async fn missing_functions(client: &Client) -> Result<Vec<String>, tokio_postgres::Error> {
    let names = function_names();
    Ok(client
        .query(
            "SELECT f FROM unnest($1::text[]) AS f \
             WHERE NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = f \
                               AND pg_function_is_visible(oid))",
            &[&names],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_defines_its_functions_once() {
        let names = function_names();
        for f in [
            "tpce_trade_status",
            "tpce_trade_result",
            "tpce_data_maintenance",
        ] {
            assert!(names.contains(&f), "{f} missing from {names:?}");
        }
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
    }
}
