//! Session startup: the StartupMessage, authentication (trust, cleartext, MD5,
//! SCRAM-SHA-256 without channel binding), then settings and keys up to the first
//! ReadyForQuery.

use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{self, ChannelBinding, ScramSha256};
use postgres_protocol::message::backend::{AuthenticationSaslBody, Message};
use postgres_protocol::message::frontend;

use crate::connection::record_server_param;
use crate::response::tx_status;
use crate::{ConnectParams, Connection, Error};

impl Connection {
    pub(crate) async fn startup(&mut self, params: &ConnectParams) -> Result<(), Error> {
        let mut settings = vec![
            ("user", params.user.as_str()),
            ("database", params.dbname.as_str()),
            // Row values are handed out as &str: have the server send UTF-8 whatever the
            // database encoding.
            ("client_encoding", "UTF8"),
        ];
        if !params.application_name.is_empty() {
            settings.push(("application_name", params.application_name.as_str()));
        }
        if !params.options.is_empty() {
            settings.push(("options", params.options.as_str()));
        }
        frontend::startup_message(settings, &mut self.wbuf)
            .map_err(|e| Error::protocol(format!("cannot encode the startup message: {e}")))?;
        self.flush().await?;
        self.authenticate(params).await?;
        loop {
            match self.next_message().await? {
                Message::BackendKeyData(body) => {
                    self.backend_pid = body.process_id();
                    self.secret_key = body.secret_key();
                }
                Message::ParameterStatus(body) => {
                    record_server_param(&mut self.server_params, &body)?
                }
                Message::ReadyForQuery(body) => {
                    self.tx_status = tx_status(body.status())?;
                    return Ok(());
                }
                Message::ErrorResponse(body) => return Err(Error::from_fields(&body)),
                Message::NoticeResponse(_) => {}
                _ => return Err(unexpected("after authentication")),
            }
        }
    }

    async fn authenticate(&mut self, params: &ConnectParams) -> Result<(), Error> {
        loop {
            match self.next_message().await? {
                Message::AuthenticationOk => return Ok(()),
                Message::AuthenticationCleartextPassword => {
                    let password = password(params)?;
                    frontend::password_message(password.as_bytes(), &mut self.wbuf)
                        .map_err(|e| Error::auth(format!("cannot send the password: {e}")))?;
                    self.flush().await?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = password(params)?;
                    let hash = md5_hash(params.user.as_bytes(), password.as_bytes(), body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.wbuf)
                        .map_err(|e| Error::auth(format!("cannot send the password: {e}")))?;
                    self.flush().await?;
                }
                Message::AuthenticationSasl(body) => self.scram(params, &body).await?,
                // A wrong password (28P01), an unknown database (3D000), no pg_hba.conf
                // entry (28000): the server's own words are the clearest.
                Message::ErrorResponse(body) => return Err(Error::from_fields(&body)),
                Message::NoticeResponse(_) => {}
                Message::AuthenticationKerberosV5
                | Message::AuthenticationScmCredential
                | Message::AuthenticationGss
                | Message::AuthenticationGssContinue(_)
                | Message::AuthenticationSspi => {
                    return Err(Error::auth(format!(
                        "the server asks user {:?} for Kerberos/GSSAPI/SSPI authentication, which \
                         tidebench does not speak; use trust, password, md5 or scram-sha-256 in \
                         pg_hba.conf",
                        params.user
                    )))
                }
                _ => return Err(unexpected("during authentication")),
            }
        }
    }

    /// SCRAM-SHA-256 (RFC 7677) as PostgreSQL runs it in SASL messages, without channel binding
    /// ("n,,") even over TLS: the server accepts that from a client that does not bind, as
    /// from libpq with channel_binding=disable.
    async fn scram(
        &mut self,
        params: &ConnectParams,
        body: &AuthenticationSaslBody,
    ) -> Result<(), Error> {
        let mut offered = Vec::new();
        let mut mechanisms = body.mechanisms();
        while let Some(mechanism) = mechanisms
            .next()
            .map_err(|e| Error::protocol(format!("malformed AuthenticationSASL: {e}")))?
        {
            offered.push(mechanism.to_owned());
        }
        if !offered.iter().any(|m| m == sasl::SCRAM_SHA_256) {
            return Err(Error::auth(format!(
                "the server offers SASL mechanisms {offered:?} but not {}, the one tidebench \
                 speaks",
                sasl::SCRAM_SHA_256
            )));
        }
        let password = password(params)?;
        let mut scram = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
        frontend::sasl_initial_response(sasl::SCRAM_SHA_256, scram.message(), &mut self.wbuf)
            .map_err(|e| Error::auth(format!("cannot send the SCRAM first message: {e}")))?;
        self.flush().await?;

        match self.next_message().await? {
            Message::AuthenticationSaslContinue(body) => {
                scram.update(body.data()).map_err(|e| {
                    Error::auth(format!("the server's SCRAM challenge is invalid: {e}"))
                })?
            }
            Message::ErrorResponse(body) => return Err(Error::from_fields(&body)),
            _ => return Err(unexpected("during SCRAM authentication")),
        }
        frontend::sasl_response(scram.message(), &mut self.wbuf)
            .map_err(|e| Error::auth(format!("cannot send the SCRAM proof: {e}")))?;
        self.flush().await?;

        match self.next_message().await? {
            // Checking the server's signature proves the server knows the password too.
            Message::AuthenticationSaslFinal(body) => scram.finish(body.data()).map_err(|e| {
                Error::auth(format!("the server's SCRAM signature does not verify: {e}"))
            }),
            Message::ErrorResponse(body) => Err(Error::from_fields(&body)),
            _ => Err(unexpected("during SCRAM authentication")),
        }
    }
}

fn password(params: &ConnectParams) -> Result<&str, Error> {
    params.password.as_deref().ok_or_else(|| {
        Error::auth(format!(
            "the server asks for a password for user {:?} and none was given; put it in the DSN \
             (password=... or postgresql://user:password@host/db) or set PGPASSWORD",
            params.user
        ))
    })
}

fn unexpected(when: &str) -> Error {
    Error::protocol(format!("the server sent an unexpected message {when}"))
}
