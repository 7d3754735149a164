//! Where a client's bearer tokens come from. A [`TokenProvider`] is asked
//! for a token before each HTTP request and told when the server refused
//! one, so it can refresh, step up its scopes or give up.

use super::error::ClientError;
use futures::future::BoxFuture;

/// How the server refused the credentials of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, as sent.
    pub challenge: Option<String>,
    /// The `DPoP-Nonce` header (RFC 9449 §9), if sent.
    pub dpop_nonce: Option<String>,
}

/// A source of credentials for HTTP requests.
pub trait TokenProvider: Send + Sync + 'static {
    /// The token to send, or `None` to send none.
    fn token(&self) -> BoxFuture<'static, Result<Option<String>, ClientError>>;

    /// The headers that authorize one request (its method and URL): by
    /// default `Authorization: Bearer` with [`token`](Self::token). A
    /// sender-constrained token adds its proof here (DPoP).
    fn authorization(&self, method: &str, url: &str) -> BoxFuture<'static, Result<Vec<(String, String)>, ClientError>> {
        let _ = (method, url);
        let token = self.token();
        Box::pin(async move {
            Ok(token.await?.map(|t| ("Authorization".to_owned(), format!("Bearer {t}"))).into_iter().collect())
        })
    }

    /// The server refused the last credentials. `Ok(true)` makes the client
    /// try again with fresh [`authorization`](Self::authorization) (a few
    /// times at most); the default gives up.
    fn refused(&self, refusal: Refusal) -> BoxFuture<'static, Result<bool, ClientError>> {
        let _ = refusal;
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
