//! Where a client's bearer tokens come from. A [`TokenProvider`] is asked
//! for a token before each HTTP request and told when the server refused
//! one, so it can refresh, step up its scopes or give up.

use super::error::ClientError;
use futures::future::BoxFuture;

/// A source of bearer tokens for HTTP requests.
pub trait TokenProvider: Send + Sync + 'static {
    /// The token to send, or `None` to send none.
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>>;

    /// The server refused the last token with this status and
    /// `WWW-Authenticate` challenge. `Ok(true)` makes the client try once
    /// more with a fresh [`token`](Self::token); the default gives up.
    fn refused(&self, status: u16, challenge: Option<String>) -> BoxFuture<'static, Result<bool, ClientError>> {
        let _ = (status, challenge);
        Box::pin(async { Ok(false) })
    }
}

/// A fixed token (an API key, or a token obtained elsewhere).
#[derive(Debug, Clone)]
pub struct StaticToken(pub String);

impl TokenProvider for StaticToken {
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>> {
        let t = self.0.clone();
        Box::pin(async move { Ok(Some(t)) })
    }
}
