//! Where a target's sessions land (`tidebench target check`, issue 39): one session opened
//! as a run's benchmark sessions open theirs (the hot path's `pgwire`, on an evloop loop, with
//! the host already chosen), asked which server, port, user and database it reached, with or
//! without TLS. It is what a DBA runs to see what a connection string means, and what the
//! libpq conformance test compares with psql.

use super::{ResolvedTarget, TargetError};

/// Where a session landed. Holds no password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landing {
    /// The host as the connection string names it (a name, an address or a socket directory).
    pub host: String,
    /// The server's address as it saw the session (empty over a Unix socket).
    pub address: String,
    pub port: u16,
    pub user: String,
    pub database: String,
    /// The TLS version, or none for a plaintext session.
    pub tls: Option<String>,
    pub server_version: String,
}

const WHERE_SQL: &str = "SELECT coalesce(host(inet_server_addr()), ''), \
     current_setting('port'), current_user, current_database(), \
     coalesce((SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl), ''), \
     current_setting('server_version')";

impl ResolvedTarget {
    /// Opens one benchmark session (blocking: it runs its own evloop loop, so call it off
    /// any other loop) and reads where it landed.
    pub fn landing(&self) -> Result<Landing, TargetError> {
        let fail = |message: String| TargetError::Connect {
            label: self.label.clone(),
            message,
        };
        let params = self.params.clone();
        let read = evloop::block_on(async move {
            let mut conn = pgwire::Connection::connect(&params)
                .await
                .map_err(|e| e.to_string())?;
            let row = {
                let result = conn
                    .simple_query(WHERE_SQL)
                    .await
                    .map_err(|e| e.to_string())?;
                let col = |i: usize| result.get_str(0, i).unwrap_or_default().to_string();
                (0..6).map(col).collect::<Vec<String>>()
            };
            conn.close().await;
            Ok::<_, String>(row)
        })
        .map_err(|e| fail(format!("cannot start an event loop: {e}")))?
        .map_err(fail)?;
        let host = match &self.params.host {
            pgwire::Host::Tcp(h) => h.clone(),
            pgwire::Host::Unix(dir) => dir.display().to_string(),
        };
        Ok(Landing {
            host,
            address: read[0].clone(),
            port: read[1].parse().unwrap_or(self.params.port),
            user: read[2].clone(),
            database: read[3].clone(),
            tls: Some(read[4].clone()).filter(|v| !v.is_empty()),
            server_version: read[5].clone(),
        })
    }
}
