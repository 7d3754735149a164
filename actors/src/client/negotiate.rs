//! Choosing the era: the protocol crate's [`Negotiation`] decides
//! (`server/discover` first, else the `initialize` handshake, or only what
//! the caller pinned); this drives it over the connection and, in a legacy
//! session, finishes the handshake.

use std::sync::Arc;

use mcp_protocol::client::{Failure, Negotiation, Session, Spoken, Step};
use mcp_protocol::legacy::method as legacy;
use mcp_protocol::model::JsonObject;

use super::connection::Inner;
use super::error::{decode_raw, ClientError};
use super::options::{RequestOptions, VersionChoice};
use super::transport::Conduit;

/// Learns the server's era and facts; the connection speaks it afterwards.
pub(crate) async fn negotiate(inner: &Arc<Inner>) -> Result<(), ClientError> {
    let pinned = match inner.options.version {
        VersionChoice::Pin(v) => Some(v),
        VersionChoice::Auto => None,
    };
    let (mut negotiation, mut step) = Negotiation::new(&inner.session, pinned);
    // The last error without a JSON-RPC answer, which stands if the
    // negotiation gives up on it.
    let mut unanswered = None;
    loop {
        match step {
            Step::Ask { era, method, params } => {
                let answer = match inner.round(era, method, &mut params.into(), &RequestOptions::default()).await {
                    Ok(result) => Ok(decode_raw(method, &result)?),
                    Err(ClientError::Protocol(e)) => Err(Some(e)),
                    // Credentials and time are not the era's to decide.
                    Err(e @ (ClientError::Auth { .. } | ClientError::Timeout(_))) => return Err(e),
                    Err(e) => {
                        unanswered = Some(e);
                        Err(None)
                    }
                };
                step = negotiation.answered(answer);
            }
            Step::Done { era, server } => {
                *inner.server.lock().expect("server lock") = *server;
                *inner.era.lock().expect("era lock") = Some(era);
                return match era {
                    Spoken::Legacy(v) => initialized(inner, v.as_str()).await,
                    Spoken::Stateless(_) => Ok(()),
                };
            }
            Step::Failed(Some(Failure::Refused(e))) => return Err(e.into()),
            Step::Failed(Some(Failure::Unspoken(why))) => return Err(ClientError::transport(why)),
            Step::Failed(None) => {
                return Err(unanswered.unwrap_or_else(|| ClientError::transport("the server did not answer")))
            }
        }
    }
}

/// The rest of a legacy handshake: the session's version on every request,
/// `notifications/initialized`, the session's GET stream, and the log level
/// (asked only of a server that declares logging; others may refuse it).
async fn initialized(inner: &Arc<Inner>, version: &str) -> Result<(), ClientError> {
    if let Conduit::Http(h) = &inner.transport {
        h.set_version(version);
    }
    inner.send_message(Session::initialized()).await;
    if let Conduit::Http(h) = &inner.transport {
        h.open_get_stream().await?;
    }
    let logs = inner.server.lock().expect("server lock").logs();
    if let Some(level) = inner.options.log_level.filter(|_| logs) {
        let params = JsonObject::from_iter([("level".to_owned(), serde_json::to_value(level).unwrap_or_default())]);
        let era = inner.era();
        inner.round(era, legacy::LOGGING_SET_LEVEL, &mut params.into(), &RequestOptions::default()).await?;
    }
    Ok(())
}
