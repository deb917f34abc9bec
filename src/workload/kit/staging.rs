//! Loading into a staging schema of tidebench's own ([`STAGING`]) and moving the complete
//! tables into the target schema (the session's `current_schema()`, normally `public`) in one
//! transaction: what TPC-C's and tpce's `prepare` share. Interrupted anywhere, the target schema
//! is as it was; the next prepare drops the staging schema (it is ours, so that needs no
//! `--force`).
//!
//! A workload's `schema.sql` holds its `CREATE TABLE`s above a line starting with
//! [`INDEX_MARKER`] and one key or index statement per line below it, so keys and indexes are
//! built once over the loaded rows, over the loader's sessions in parallel.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use futures_util::future::try_join_all;
use tokio_postgres::Client;

use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::WorkloadError;

/// Where a load is built. Nothing reads it, and only a prepare holding the load lock drops it.
pub const STAGING: &str = "tidebench_staging";
const INDEX_MARKER: &str = "-- @indexes";

/// A database error during a load, naming the step and the target.
pub fn db_error(target: &ResolvedTarget, what: &str, e: &tokio_postgres::Error) -> WorkloadError {
    WorkloadError::Server {
        target: target.label.clone(),
        what: what.to_string(),
        message: describe_pg_error(e),
    }
}

pub async fn connect(target: &ResolvedTarget) -> Result<Client, WorkloadError> {
    Ok(target.connect_tokio().await?)
}

/// A session whose unqualified names are the staging schema's: the loaders' and index
/// builders' COPY and DDL then read as they would on the target.
pub async fn connect_staging(target: &ResolvedTarget) -> Result<Client, WorkloadError> {
    let client = connect(target).await?;
    client
        .batch_execute(&format!("SET search_path TO {STAGING}"))
        .await
        .map_err(|e| db_error(target, "setting the staging search_path", &e))?;
    Ok(client)
}

/// `sql` in one transaction on the control session, its unqualified names the staging
/// schema's.
pub fn in_staging(sql: &str) -> String {
    format!("BEGIN;\nSET LOCAL search_path TO {STAGING};\n{sql}\nCOMMIT;")
}

/// `name` quoted as an SQL identifier.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A `schema.sql` split at its marker: the `CREATE TABLE` part and the key and index
/// statements, one per entry.
pub fn split_schema(schema: &str) -> (&str, Vec<String>) {
    let (create, indexes) = schema.split_once(INDEX_MARKER).unwrap_or((schema, ""));
    // The rest of the marker's line is its comment.
    let indexes = indexes.split_once('\n').map_or("", |(_, rest)| rest);
    let statements = indexes
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .map(String::from)
        .collect();
    (create, statements)
}

/// Drops a staging schema left by an interrupted load and creates it afresh with the tables
/// of `create`; `what` names the load in the schema's comment and in errors.
pub async fn create_fresh(
    control: &Client,
    target: &ResolvedTarget,
    create: &str,
    what: &str,
) -> Result<(), WorkloadError> {
    let fresh = format!(
        "DROP SCHEMA IF EXISTS {STAGING} CASCADE;\n\
         CREATE SCHEMA {STAGING};\n\
         COMMENT ON SCHEMA {STAGING} IS 'tidebench prepare: a {what} load in progress, or \
           one interrupted; the next prepare drops it';\n{}",
        in_staging(create)
    );
    control
        .batch_execute(&fresh)
        .await
        .map_err(|e| db_error(target, &format!("creating the {what} staging tables"), &e))
}

/// The last step of a load, one transaction: the old `tables` out (`force`), the loaded ones
/// into `schema`, `extra` run there (e.g. functions), staging gone. The staging schema is
/// dropped without CASCADE: anything still in it is a bug to report, not to lose.
pub fn move_sql(tables: &[&str], schema: &str, force: bool, extra: &str) -> String {
    let target = ident(schema);
    let mut sql = String::from("BEGIN;\n");
    if force {
        let old: Vec<String> = tables.iter().map(|t| format!("{target}.{t}")).collect();
        sql.push_str(&format!(
            "DROP TABLE IF EXISTS {} CASCADE;\n",
            old.join(", ")
        ));
    }
    for t in tables {
        sql.push_str(&format!("ALTER TABLE {STAGING}.{t} SET SCHEMA {target};\n"));
    }
    sql.push_str(extra);
    sql.push_str(&format!("\nDROP SCHEMA {STAGING};\nCOMMIT;\n"));
    sql
}

/// The schema unqualified names go to: where the tables end up.
pub async fn target_schema(
    client: &Client,
    target: &ResolvedTarget,
) -> Result<String, WorkloadError> {
    let schema: Option<String> = client
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(|e| db_error(target, "reading current_schema()", &e))?
        .get(0);
    match schema {
        Some(s) if s != STAGING => Ok(s),
        _ => Err(WorkloadError::NoSchema {
            target: target.label.clone(),
        }),
    }
}

/// Which of `tables` exist in `schema`.
pub async fn existing_tables(
    client: &Client,
    target: &ResolvedTarget,
    schema: &str,
    tables: &[&str],
) -> Result<Vec<String>, WorkloadError> {
    let names: Vec<&str> = tables.to_vec();
    Ok(client
        .query(
            "SELECT t FROM unnest($1::text[]) AS t \
             WHERE to_regclass(quote_ident($2) || '.' || quote_ident(t)) IS NOT NULL",
            &[&names, &schema],
        )
        .await
        .map_err(|e| db_error(target, "looking for existing tables", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Runs `statements` on the staging tables over up to `jobs` sessions, each taking the next
/// one when done.
pub async fn run_parallel(
    target: &ResolvedTarget,
    statements: Vec<String>,
    jobs: u32,
) -> Result<(), WorkloadError> {
    if statements.is_empty() {
        return Ok(());
    }
    let statements = Arc::new(statements);
    let next = Arc::new(AtomicU32::new(0));
    let sessions = (jobs.max(1) as usize).min(statements.len());
    try_join_all((0..sessions).map(|_| {
        let (statements, next) = (Arc::clone(&statements), Arc::clone(&next));
        async move {
            let client = connect_staging(target).await?;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(sql) = statements.get(i) else {
                    return Ok::<(), WorkloadError>(());
                };
                client
                    .batch_execute(sql)
                    .await
                    .map_err(|e| db_error(target, sql, &e))?;
            }
        }
    }))
    .await?;
    Ok(())
}

/// CopyData message size, as pgbench's loader uses.
const CHUNK_BYTES: usize = 256 * 1024;

/// COPYs `text` (rows in COPY's text format) into `table` on `client`.
pub async fn copy_text(
    client: &Client,
    target: &ResolvedTarget,
    table: &str,
    text: String,
) -> Result<u64, WorkloadError> {
    use futures_util::SinkExt;

    let what = format!("loading {table}");
    let sink = client
        .copy_in::<_, bytes::Bytes>(&format!("COPY {table} FROM STDIN"))
        .await
        .map_err(|e| db_error(target, &what, &e))?;
    let mut sink = Box::pin(sink);
    let all = bytes::Bytes::from(text.into_bytes());
    let mut at = 0;
    while at < all.len() {
        let end = (at + CHUNK_BYTES).min(all.len());
        sink.feed(all.slice(at..end))
            .await
            .map_err(|e| db_error(target, &what, &e))?;
        at = end;
    }
    sink.as_mut()
        .finish()
        .await
        .map_err(|e| db_error(target, &what, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_move_drops_old_tables_only_when_forced() {
        let tables = ["warehouse", "tpcc_meta"];
        let plain = move_sql(&tables, "public", false, "");
        assert!(plain.starts_with("BEGIN;\nALTER TABLE tidebench_staging.warehouse SET SCHEMA"));
        assert!(!plain.contains("DROP TABLE"));
        assert_eq!(plain.matches("SET SCHEMA \"public\";").count(), 2);
        assert!(plain.ends_with("DROP SCHEMA tidebench_staging;\nCOMMIT;\n"));
        let forced = move_sql(&tables, "public", true, "SELECT 1;");
        assert!(forced.starts_with("BEGIN;\nDROP TABLE IF EXISTS \"public\".warehouse, "));
        assert!(forced.contains("\"public\".tpcc_meta CASCADE;\nALTER TABLE"));
        assert!(forced.contains("SELECT 1;\nDROP SCHEMA"));
    }

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(ident("public"), "\"public\"");
        assert_eq!(ident("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn schemas_split_at_the_marker() {
        let (create, indexes) =
            split_schema("CREATE TABLE a (x int);\n-- @indexes: comment\nALTER a;\n\n-- c\nB;\n");
        assert_eq!(create, "CREATE TABLE a (x int);\n");
        assert_eq!(indexes, ["ALTER a;", "B;"]);
    }
}
