//! The advisory lock every `prepare` holds on its control session for the whole load, so that
//! two loads of one database (of any workload) never drop each other's staging tables.

use std::time::Duration;

use tokio_postgres::Client;

use crate::target::{describe_pg_error, ResolvedTarget};
use crate::workload::WorkloadError;

/// An arbitrary constant ("tidepgb1"), the same for every workload.
const LOAD_LOCK_KEY: i64 = 0x7469_6465_7067_6231;
/// How long to wait for the lock: 25 tries 200 ms apart.
const LOCK_TRIES: u32 = 25;
const LOCK_RETRY: Duration = Duration::from_millis(200);

/// Takes the load lock, waiting a little: right after a Ctrl-C the interrupted load's
/// session may still be on its way out, holding the lock for a moment. `what` names the
/// tables, e.g. "pgbench tables".
pub async fn take(
    control: &Client,
    target: &ResolvedTarget,
    what: &str,
) -> Result<(), WorkloadError> {
    for _ in 0..LOCK_TRIES {
        let row = control
            .query_one("select pg_try_advisory_lock($1)", &[&LOAD_LOCK_KEY])
            .await
            .map_err(|e| WorkloadError::Server {
                target: target.label.clone(),
                what: "taking the load lock".into(),
                message: describe_pg_error(&e),
            })?;
        if row.get::<_, bool>(0) {
            return Ok(());
        }
        tokio::time::sleep(LOCK_RETRY).await;
    }
    Err(WorkloadError::LoadLocked {
        target: target.label.clone(),
        what: what.to_string(),
    })
}
