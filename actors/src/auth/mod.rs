//! Authorization of HTTP requests: the server as an OAuth 2.1 resource
//! server (RFC 9728 metadata, audience-bound JWTs and RFC 7662
//! introspection, scopes per tool, resource and prompt), or static API
//! keys, or an [`Authenticator`] of the embedder's own.
//!
//! The transport asks the [`Authorizer`] for the caller of each request
//! from its [`Head`] alone, before the body is read, then for the scopes
//! the operation needs; handlers read the result with
//! [`RequestContext::auth`](crate::RequestContext::auth). The head is in no
//! transport's types, so any transport can carry credentials; the HTTP
//! transport does, and stdio does not ask (the specification has a stdio
//! server take its credentials from the environment).

mod api_key;
mod authorizer;
mod error;
#[cfg(feature = "oauth")]
mod fetch;
#[cfg(feature = "oauth")]
mod introspection;
#[cfg(feature = "oauth")]
mod issuer;
#[cfg(feature = "oauth")]
mod jwt;
mod metadata;
#[cfg(feature = "oauth")]
mod oauth;
mod scopes;
#[cfg(feature = "oauth")]
mod token_cache;

pub use api_key::ApiKeyAuthenticator;
pub use authorizer::Authorizer;
pub use error::AuthError;
pub use metadata::ProtectedResource;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use oauth::OAuthAuthenticator;
pub use scopes::ScopePolicy;

use std::sync::Arc;

use futures::future::LocalBoxFuture;

use crate::facts::head::{Head, Header, Repeated};
use crate::facts::identity::Identity;

/// Turns a request's [`Head`] into the caller's [`Identity`], or says why
/// not. The head is the transport's, in no transport's types: headers (none
/// on stdio), the query, the peer's address and a TLS client certificate
/// when the connection presented one.
/// The server's built-ins are `OAuthAuthenticator` (`auth.mode = "oauth"`, feature `oauth`)
/// and [`ApiKeyAuthenticator`] (`"api_key"`); an embedder supplies its own
/// with [`McpServerBuilder::authenticator`](crate::builder::McpServerBuilder::authenticator).
///
/// It runs on the HTTP worker that took the request; one value serves all
/// workers. Per-operation scopes are checked after it, by the server.
pub trait Authenticator: Send + Sync + 'static {
    /// The caller of the request with this head.
    fn authenticate<'a>(&'a self, head: &'a Head<'a>) -> LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>>;

    /// What the status page shows of the authenticator's dependencies (an
    /// OAuth authenticator: each issuer's key set). Default: nothing.
    fn health(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The bearer token of a request: `Ok(None)` without an `Authorization`
/// header; an error for a second header, another scheme, or a token in the
/// query string (OAuth 2.1 forbids it there).
pub fn bearer_token<'a>(head: &Head<'a>) -> Result<Option<&'a str>, AuthError> {
    if let Some(query) = head.query
        && query.split('&').any(|pair| pair.split('=').next() == Some("access_token"))
    {
        return Err(AuthError::InvalidRequest("tokens are accepted in the Authorization header only".into()));
    }
    let value = match head.header(Header::Authorization) {
        Ok(Some(value)) => value,
        Ok(None) => return Ok(None),
        Err(Repeated) => return Err(AuthError::InvalidRequest("more than one Authorization header".into())),
    };
    // Bytes, not `to_str`: a token is long and this runs for every request.
    // The HTTP parser already refused control characters; UTF-8 validation
    // is word-at-a-time for ASCII.
    let scheme_end = value.iter().position(|&b| b == b' ').unwrap_or(value.len());
    if !value[..scheme_end].eq_ignore_ascii_case(b"bearer") {
        let scheme = String::from_utf8_lossy(&value[..scheme_end]);
        return Err(AuthError::invalid(format!("the {scheme:?} scheme is not accepted; use Bearer")));
    }
    let token = value[scheme_end..].trim_ascii();
    if token.is_empty() || token.contains(&b' ') {
        return Err(AuthError::invalid("the bearer token is empty or malformed"));
    }
    std::str::from_utf8(token).map(Some).map_err(|_| AuthError::invalid("the bearer token is not ASCII"))
}

/// The issuer and client id a JWT names, read without verifying it: for
/// the operator's log of a refused token only (each at most 128 printable
/// characters; nothing for a token that is not a JWT).
pub(crate) fn unverified_names(token: &str) -> (Option<String>, Option<String>) {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).filter(|_| token.split('.').count() == 3);
    let decoded =
        payload.and_then(|p| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(p.trim_end_matches('=')).ok());
    let Some(Ok(claims)) = decoded.map(|b| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&b))
    else {
        return (None, None);
    };
    let text = |k: &str| {
        claims
            .get(k)
            .and_then(serde_json::Value::as_str)
            .map(|s| s.chars().filter(|c| !c.is_control()).take(128).collect::<String>())
    };
    (text("iss"), text("client_id").or_else(|| text("azp")))
}

/// Seconds since the Unix epoch (the time scale of `exp`).
pub fn now_secs() -> u64 {
    since_epoch().as_secs()
}

/// Seconds since the Unix epoch with their fraction (NumericDates may have one).
#[cfg(feature = "oauth")]
pub(crate) fn now_secs_f64() -> f64 {
    since_epoch().as_secs_f64()
}

fn since_epoch() -> std::time::Duration {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::head::Headers;

    /// `Authorization` headers, as many as given.
    struct Authorization(Vec<&'static str>);

    impl Headers for Authorization {
        fn get(&self, name: Header<'_>) -> Result<Option<&[u8]>, Repeated> {
            if name != Header::Authorization {
                return Ok(None);
            }
            match self.0.as_slice() {
                [] => Ok(None),
                [one] => Ok(Some(one.as_bytes())),
                _ => Err(Repeated),
            }
        }
    }

    fn token(values: &[&'static str], query: Option<&str>) -> Result<Option<String>, AuthError> {
        let headers = Authorization(values.to_vec());
        let head = Head { headers: Some(&headers), query, ..Head::default() };
        bearer_token(&head).map(|t| t.map(str::to_owned))
    }

    #[test]
    fn bearer_tokens_from_the_header_only() {
        assert_eq!(token(&[], None), Ok(None));
        assert_eq!(bearer_token(&Head::default()), Ok(None));
        assert_eq!(token(&["Bearer abc.def"], None), Ok(Some("abc.def".into())));
        assert_eq!(token(&["bearer  xyz "], None), Ok(Some("xyz".into())));
        assert!(matches!(token(&["Basic dXNlcjpwdw=="], None), Err(AuthError::InvalidToken(_))));
        assert!(matches!(token(&["Bearer "], None), Err(AuthError::InvalidToken(_))));
        assert!(matches!(token(&[], Some("access_token=abc")), Err(AuthError::InvalidRequest(_))));
        assert!(matches!(token(&["Bearer a", "Bearer b"], None), Err(AuthError::InvalidRequest(_))));
    }
}
