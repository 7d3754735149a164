//! [`Refusal`]: a message refused before any handler ran, with everything a
//! transport needs to answer it — the encoded error, the HTTP status the
//! stateless binding gives it and, for an authorization refusal, its
//! `WWW-Authenticate` challenge. A transport without statuses (stdio, a
//! WebSocket) writes the bytes and ignores the rest.

use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::{ErrorCode, ErrorData, ErrorProfile, ProtocolError, RequestId};
use slog::Logger;

use crate::auth::{AuthError, Authorizer};
use crate::facts::identity::Identity;

/// The HTTP status for a JSON-RPC error code in the stateless era (`None`:
/// success). The legacy era answers JSON-RPC errors with 200.
pub(crate) fn status_for(code: Option<i32>) -> u16 {
    match code {
        None => 200,
        Some(-32601) => 404,
        Some(-32603) => 500,
        Some(-32000) => 429,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022 | -32001 | -32003) => 400,
        Some(_) => 200,
    }
}

/// A message refused before any handler ran.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// The id to echo (`None` renders `null`).
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorData,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The `WWW-Authenticate` challenge of an authorization refusal.
    pub challenge: Option<String>,
}

impl Refusal {
    /// Renders a protocol error with `profile`'s codes, with the status of
    /// its code.
    pub(crate) fn new(id: Option<RequestId>, error: &ProtocolError, profile: ErrorProfile) -> Self {
        Self::of(id, error.to_error_data(profile))
    }

    /// An error, with the status of its code.
    pub(crate) fn of(id: Option<RequestId>, error: ErrorData) -> Self {
        Refusal { status: status_for(Some(error.code.0)), id, error, challenge: None }
    }

    /// An error with an explicit status (503 for a full hub).
    pub(crate) fn with_status(status: u16, id: Option<RequestId>, error: ErrorData) -> Self {
        Refusal { status, id, error, challenge: None }
    }

    /// An authorization refusal (401, 400, 403 or 503, with its
    /// challenge), reported to the operator first ([`Authorizer::report`]:
    /// the presented `token` or the known `caller` who was refused; an
    /// unreachable issuer's detail stays in the log).
    pub(crate) fn unauthorized(
        auth: &Authorizer,
        log: &Logger,
        id: Option<RequestId>,
        e: &AuthError,
        token: Option<&str>,
        caller: Option<&Identity>,
    ) -> Self {
        auth.report(log, e, token, caller);
        let (status, prefix) = match e {
            AuthError::Missing | AuthError::InvalidToken(_) => (401, "Unauthorized"),
            AuthError::InvalidRequest(_) => (400, "Bad request"),
            AuthError::InsufficientScope(_) => (403, "Forbidden"),
            AuthError::Unavailable(_) => (503, "Unavailable"),
        };
        let code = if status == 503 { ErrorCode::INTERNAL_ERROR } else { ErrorCode::INVALID_REQUEST };
        let error = ErrorData::new(code, format!("{prefix}: {}", e.for_client()));
        Refusal { status, id, error, challenge: Some(auth.challenge(e)) }
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
    fn statuses_of_codes() {
        assert_eq!(status_for(None), 200);
        assert_eq!(status_for(Some(-32601)), 404);
        assert_eq!(status_for(Some(-32020)), 400);
        assert_eq!(status_for(Some(-32001)), 400);
        assert_eq!(status_for(Some(-32603)), 500);
        assert_eq!(status_for(Some(-32000)), 429);
        assert_eq!(status_for(Some(1234)), 200);
        let r = Refusal::of(Some(RequestId::number(3)), ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no"));
        assert_eq!(r.status, 404);
        let v: serde_json::Value = serde_json::from_slice(&r.encode()).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32601);
    }
}
