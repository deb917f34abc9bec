//! The PL/pgSQL functions `--procedures` calls, one per transaction: the read transactions'
//! (`procedures/reads.sql`) and the trade transactions' (`procedures/trades.sql`). `prepare`
//! installs them in the move transaction; a run with `--procedures` checks they are there.

use tokio_postgres::Client;

/// Both files, as `prepare` runs them.
pub const SQL: &str = concat!(
    include_str!("procedures/reads.sql"),
    "\n",
    include_str!("procedures/trades.sql")
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
