//! What a connection needs to know: where the server is, who we are, how statements are sent.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::Tls;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    /// A directory holding the `.s.PGSQL.<port>` socket, as libpq's `host=/dir`.
    Unix(PathBuf),
}

/// Everything needed to open one session. `password` is never printed by `Debug`.
#[derive(Clone)]
pub struct ConnectParams {
    pub host: Host,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub dbname: String,
    pub application_name: String,
    /// Command-line options for the server process (libpq's `options`, e.g.
    /// `-c default_transaction_isolation=serializable`); empty sends none.
    pub options: String,
    pub connect_timeout: Duration,
    /// libpq's `hostaddr`: the address to connect to when given, while `host` stays the
    /// name the certificate is checked against.
    pub hostaddr: Option<IpAddr>,
    /// TLS as `sslmode` and the certificate files say.
    pub tls: Tls,
    /// libpq's TCP keepalive keywords; unused on a Unix-domain socket.
    pub keepalive: KeepAlive,
}

/// libpq's `keepalives` (on unless 0), `keepalives_idle`, `keepalives_interval`,
/// `keepalives_count` and `tcp_user_timeout`, applied to a TCP socket when it is opened;
/// `None` keeps the system's value, as in libpq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepAlive {
    pub on: bool,
    pub idle: Option<Duration>,
    pub interval: Option<Duration>,
    pub count: Option<u32>,
    pub user_timeout: Option<Duration>,
}

impl Default for KeepAlive {
    /// libpq's default: keepalives on, every timing the system's.
    fn default() -> KeepAlive {
        KeepAlive {
            on: true,
            idle: None,
            interval: None,
            count: None,
            user_timeout: None,
        }
    }
}

impl std::fmt::Debug for ConnectParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectParams")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "********"))
            .field("dbname", &self.dbname)
            .field("application_name", &self.application_name)
            .field("options", &self.options)
            .field("hostaddr", &self.hostaddr)
            .field("tls", &self.tls)
            .field("keepalive", &self.keepalive)
            .finish()
    }
}

/// How statements travel, with pgbench's meanings of `-M simple|extended|prepared`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Query message with parameters inlined as literals.
    Simple,
    /// Unnamed statement: Parse+Bind+Execute+Sync every time.
    Extended,
    /// Named statement parsed once per connection, then Bind+Execute+Sync.
    Prepared,
}

/// One SQL statement with `$1..$n` placeholders. `name` must be unique per connection
/// (it names the server-side prepared statement in [`Protocol::Prepared`]).
#[derive(Debug, Clone, Copy)]
pub struct Statement {
    pub name: &'static str,
    pub sql: &'static str,
}

/// A parameter value. Sent in text format (as pgbench does), so the server infers types.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
    Null,
}
