//! Control sessions (tokio-postgres): setup, loading, sampling and the server check, all off
//! the hot path. They connect as the benchmark's sessions do, TLS included (see
//! [`super::tokio_tls`]), with libpq's retries for `allow` and `prefer` made here, since
//! tokio-postgres knows only disable, prefer and require.

use super::{describe_pg_error, tokio_tls, ResolvedTarget, TargetError};

impl ResolvedTarget {
    /// Opens a tokio-postgres session (setup, loading, sampling: everything off the hot path).
    /// The connection task runs on the current tokio runtime.
    pub async fn connect_tokio(&self) -> Result<tokio_postgres::Client, TargetError> {
        self.connect_tokio_to(&self.params.dbname).await
    }

    /// Same, to another database of the same server (e.g. to read statistics from outside).
    pub async fn connect_tokio_to(
        &self,
        dbname: &str,
    ) -> Result<tokio_postgres::Client, TargetError> {
        Ok(self.connect_control(dbname).await?)
    }

    /// A session to `dbname`, else, when the server refuses that database to this user
    /// (pg_hba admits it to the target's database only, no CONNECT privilege, no such
    /// database, a pooler serving no such database), to the target's own database, as psql given the target's string would
    /// connect (issue 39). Returns the database it reached.
    pub async fn connect_tokio_or_own(
        &self,
        dbname: &str,
    ) -> Result<(tokio_postgres::Client, String), TargetError> {
        match self.connect_control(dbname).await {
            Ok(client) => Ok((client, dbname.to_string())),
            Err(e) if e.database_refused && dbname != self.params.dbname => {
                let own = self.params.dbname.clone();
                Ok((self.connect_tokio_to(&own).await?, own))
            }
            Err(e) => Err(e.error),
        }
    }

    async fn connect_control(
        &self,
        dbname: &str,
    ) -> Result<tokio_postgres::Client, ControlConnectError> {
        let p = &self.params;
        let mut cfg = tokio_postgres::Config::new();
        match &p.host {
            pgwire::Host::Tcp(h) => cfg.host(h),
            pgwire::Host::Unix(dir) => cfg.host_path(dir),
        };
        if let Some(addr) = p.hostaddr {
            cfg.hostaddr(addr);
        }
        cfg.port(p.port)
            .user(&p.user)
            .dbname(dbname)
            .application_name("tidebench-control")
            .connect_timeout(p.connect_timeout);
        if let Some(pw) = &p.password {
            cfg.password(pw);
        }
        if p.tls.negotiation == pgwire::Negotiation::Direct {
            cfg.ssl_negotiation(tokio_postgres::config::SslNegotiation::Direct);
        }
        use pgwire::SslMode as M;
        use tokio_postgres::config::SslMode as T;
        let tcp = matches!(p.host, pgwire::Host::Tcp(_));
        // tokio-postgres knows disable, prefer and require: libpq's retries are made here
        // (`allow` tries TLS after a refused plaintext session, `prefer` plaintext after a
        // failed handshake), and what is verified is the configuration's business.
        let (first, second) = match p.tls.mode {
            _ if !tcp => (T::Disable, None),
            M::Disable => (T::Disable, None),
            M::Allow => (T::Disable, Some(T::Require)),
            M::Prefer => (T::Prefer, Some(T::Disable)),
            M::Require | M::VerifyCa | M::VerifyFull => (T::Require, None),
        };
        let (client, connection) = match self.connect_tokio_with(&mut cfg, first).await {
            Err(e) if second.is_some_and(|_| e.retry_worthy(first)) => {
                self.connect_tokio_with(&mut cfg, second.expect("checked"))
                    .await?
            }
            other => other?,
        };
        tokio::spawn(async move {
            // The session ends when the client is dropped; errors then are of no interest.
            let _ = connection.await;
        });
        Ok(client)
    }
}

/// A control session's connect failure, with what `allow` and `prefer` retry on.
struct ControlConnectError {
    error: TargetError,
    /// The server answered with an error (a plaintext session refused by pg_hba).
    server_refused: bool,
    /// The TLS handshake failed.
    handshake_failed: bool,
    /// The server refused the database asked for to this user (SQLSTATE 28000, 3D000 or
    /// 42501), or a pooler serves no such database (08P01, pgbouncer's `no such database`),
    /// where another database may be admitted.
    database_refused: bool,
}

impl ControlConnectError {
    fn retry_worthy(&self, tried: tokio_postgres::config::SslMode) -> bool {
        match tried {
            tokio_postgres::config::SslMode::Disable => self.server_refused,
            _ => self.handshake_failed,
        }
    }
}

impl From<ControlConnectError> for TargetError {
    fn from(e: ControlConnectError) -> TargetError {
        e.error
    }
}

impl ResolvedTarget {
    async fn connect_tokio_with(
        &self,
        cfg: &mut tokio_postgres::Config,
        mode: tokio_postgres::config::SslMode,
    ) -> Result<
        (
            tokio_postgres::Client,
            tokio_postgres::Connection<
                tokio_postgres::Socket,
                tokio_tls::RustlsStream<tokio_postgres::Socket>,
            >,
        ),
        ControlConnectError,
    > {
        let p = &self.params;
        let fail =
            |message: String, server_refused: bool, handshake_failed: bool| ControlConnectError {
                error: TargetError::Connect {
                    label: self.label.clone(),
                    message,
                },
                server_refused,
                handshake_failed,
                database_refused: false,
            };
        cfg.ssl_mode(mode);
        let tls = tokio_tls::MakeRustls {
            unnamed: match &p.host {
                pgwire::Host::Tcp(h) => pgwire::Tls::verified_name(h, p.hostaddr).is_empty(),
                pgwire::Host::Unix(_) => false,
            },
            tls: match &p.tls.config {
                Some(_) => p.tls.clone(),
                // Never used with sslmode=disable, but the connector wants one.
                None => pgwire::Tls::new(
                    pgwire::SslMode::Require,
                    pgwire::Negotiation::Postgres,
                    &pgwire::TlsFiles::default(),
                )
                .map_err(|e| fail(crate::error_chain::one_line(&e), false, false))?,
            },
        };
        // tokio-postgres's connect_timeout covers the socket's connect only: a server that
        // accepts it but never answers the startup (a stopped postmaster) must not hang a
        // control session either, so the whole handshake gets the same bound.
        let whole = p.connect_timeout.max(std::time::Duration::from_secs(1));
        match tokio::time::timeout(whole, cfg.connect(tls)).await {
            Err(_) => Err(fail(
                format!(
                    "the server accepted the connection but did not answer within {whole:?} \
                     (stopped or hung?); check it, or raise connect_timeout in the DSN"
                ),
                false,
                false,
            )),
            Ok(Err(e)) => {
                let mut text = describe_pg_error(&e);
                let handshake = text.contains("TLS") || text.contains("handshake");
                // tokio-postgres's words for an N to the SSL request, in the hot path's.
                if text.contains("server does not support TLS") {
                    text = pgwire::no_tls_at_server(p.tls.mode);
                }
                use tokio_postgres::error::SqlState;
                // A pooler answers a database it is not configured for with 08P01 where the
                // server says 3D000 (issue 57); at the startup nothing else sends it.
                let refused = [
                    SqlState::INVALID_AUTHORIZATION_SPECIFICATION,
                    SqlState::INVALID_CATALOG_NAME,
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    SqlState::PROTOCOL_VIOLATION,
                ];
                let database_refused = e.code().is_some_and(|c| refused.contains(c));
                Err(ControlConnectError {
                    database_refused,
                    ..fail(text, e.as_db_error().is_some(), handshake)
                })
            }
            Ok(Ok(pair)) => Ok(pair),
        }
    }

    /// The server this target lives on (host or socket dir, and port).
    pub fn server_key(&self) -> (String, u16) {
        let host = match &self.params.host {
            pgwire::Host::Tcp(h) => h.clone(),
            pgwire::Host::Unix(p) => p.display().to_string(),
        };
        (host, self.params.port)
    }

    /// A control session for reading statistics of this target's server, opened to a database
    /// that none of `all` measures: its own transactions must never count in a measured one.
    pub async fn connect_for_stats(
        &self,
        all: &[ResolvedTarget],
    ) -> Result<tokio_postgres::Client, TargetError> {
        self.connect_tokio_to(self.stats_dbname(all)).await
    }

    /// The database [`connect_for_stats`](Self::connect_for_stats) connects to: `postgres`,
    /// or `template1` when one of `all` on this server measures `postgres`.
    pub fn stats_dbname(&self, all: &[ResolvedTarget]) -> &'static str {
        let key = self.server_key();
        let measured_postgres = all
            .iter()
            .any(|o| o.server_key() == key && o.params.dbname == "postgres");
        if measured_postgres {
            "template1"
        } else {
            "postgres"
        }
    }
}
