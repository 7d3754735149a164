//! [`Refusal`]: a message refused before any handler ran — the id to echo,
//! the error, why it was refused ([`Cause`]) and the labels an observer
//! counts it under. How a transport answers it is the transport's own
//! business: HTTP gives each cause its status (and an authorization
//! refusal its `WWW-Authenticate` challenge), stdio writes the bytes.

use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::{ErrorCode, ErrorData, ErrorProfile, ProtocolError, ProtocolVersion, RequestId};

use super::OTHER;
use crate::auth::AuthError;

/// Why a message was refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cause {
    /// The message itself: its error code says what was wrong.
    Protocol,
    /// The server is at capacity (the hub's listener limit).
    Full,
    /// The caller's credentials do not allow it (boxed: rare, and a
    /// refusal travels in every intake result).
    Auth(Box<AuthError>),
}

/// A message refused before any handler ran.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// The id to echo (`None` renders `null`).
    pub id: Option<RequestId>,
    /// The error (boxed: a refusal travels in a `Result`, kept small).
    pub error: Box<ErrorData>,
    /// Why.
    pub cause: Cause,
    /// The method it is counted under (`_OTHER` when unknown or unread).
    pub method: &'static str,
    /// The protocol version it named, if one this server knows.
    pub version: Option<ProtocolVersion>,
}

impl Refusal {
    /// Renders a protocol error with `profile`'s codes.
    pub(crate) fn new(id: Option<RequestId>, error: &ProtocolError, profile: ErrorProfile) -> Self {
        Self::of(id, error.to_error_data(profile))
    }

    /// An error in the message.
    pub(crate) fn of(id: Option<RequestId>, error: ErrorData) -> Self {
        Refusal { id, error: Box::new(error), cause: Cause::Protocol, method: OTHER, version: None }
    }

    /// The server is at capacity.
    pub(crate) fn full(id: Option<RequestId>, error: ErrorData) -> Self {
        Refusal { cause: Cause::Full, ..Self::of(id, error) }
    }

    /// An authorization refusal: -32600, or -32603 when the authorization
    /// server could not be asked; the error names the kind of refusal and
    /// what the client may know of it (the detail stays with the operator).
    pub(crate) fn auth(id: Option<RequestId>, e: AuthError) -> Self {
        let prefix = match e {
            AuthError::Missing | AuthError::InvalidToken(_) => "Unauthorized",
            AuthError::InvalidRequest(_) => "Bad request",
            AuthError::InsufficientScope(_) => "Forbidden",
            AuthError::Unavailable(_) => "Unavailable",
        };
        let code = if prefix == "Unavailable" { ErrorCode::INTERNAL_ERROR } else { ErrorCode::INVALID_REQUEST };
        let error = ErrorData::new(code, format!("{prefix}: {}", e.for_client()));
        Refusal { cause: Cause::Auth(Box::new(e)), ..Self::of(id, error) }
    }

    /// The same refusal, counted under `method` and `version`.
    pub(crate) fn labelled(self, method: &'static str, version: Option<ProtocolVersion>) -> Self {
        Refusal { method, version, ..self }
    }

    /// The encoded error response.
    pub(crate) fn encode(&self) -> Vec<u8> {
        encode_error(self.id.as_ref(), &self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_encode_and_name_their_cause() {
        let r = Refusal::of(Some(RequestId::number(3)), ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no"));
        assert_eq!((r.cause.clone(), r.method, r.version), (Cause::Protocol, OTHER, None));
        let v: serde_json::Value = serde_json::from_slice(&r.encode()).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32601);
        let r = Refusal::auth(None, AuthError::Missing).labelled("tools/call", Some(ProtocolVersion::V2026_07_28));
        assert_eq!(r.error.code, ErrorCode::INVALID_REQUEST);
        assert!(r.error.message.starts_with("Unauthorized: "), "{}", r.error.message);
        assert_eq!((r.cause, r.method), (Cause::Auth(Box::new(AuthError::Missing)), "tools/call"));
        let r = Refusal::auth(None, AuthError::Unavailable("down".into()));
        assert_eq!(r.error.code, ErrorCode::INTERNAL_ERROR);
        assert!(!r.error.message.contains("down"), "{}", r.error.message);
    }
}
