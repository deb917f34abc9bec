//! TLS for the control sessions (tokio-postgres): the same rustls configuration the hot-path
//! sessions use, through tokio-rustls, so setup, loading and sampling verify the server
//! exactly as the benchmark's sessions do. Authentication runs without channel binding, as
//! in `pgwire`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use tokio_rustls::rustls;

/// Makes a TLS connector per host from the target's configuration (with verify-full's
/// name check bound to that host).
#[derive(Clone)]
pub(super) struct MakeRustls {
    pub tls: pgwire::Tls,
    /// Only `hostaddr` named the server: verify-full has no name to check.
    pub unnamed: bool,
}

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, host: &str) -> Result<RustlsConnect, io::Error> {
        let host = if self.unnamed { "" } else { host };
        let session = self
            .tls
            .config_for(host)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "TLS was not set up"))?;
        Ok(RustlsConnect {
            session,
            host: host.to_string(),
        })
    }
}

pub(super) struct RustlsConnect {
    session: pgwire::SessionTls,
    host: String,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let name = pgwire::Tls::server_name(&self.host);
            let connector = tokio_rustls::TlsConnector::from(self.session.config.clone());
            match connector.connect(name, stream).await {
                Ok(tls) => match self.session.check_after_handshake() {
                    Ok(()) => Ok(RustlsStream(tls)),
                    Err(e) => Err(io::Error::new(io::ErrorKind::PermissionDenied, e)),
                },
                // The verifier's refusal, in the words the hot-path sessions use.
                Err(e) => match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                {
                    Some(tls) => Err(io::Error::new(
                        e.kind(),
                        pgwire::describe_tls_error(tls, &self.host),
                    )),
                    None => Err(e),
                },
            }
        })
    }
}

pub(super) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}
