//! [`HttpError`]: every refusal of the HTTP transport, as a JSON-RPC error
//! body with its HTTP status. Protocol error codes map to statuses in one
//! place, `ErrorCode::http_status` of the protocol crate ([`status_for`]
//! reads it); a refusal of the intake gets the status of its cause
//! (`HttpError::refused`).

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use mcp_protocol::jsonrpc::encode_error;
use mcp_protocol::{ErrorCode, ErrorData, RequestId};

use crate::auth::{AuthError, Authorizer};
use crate::pipeline::intake::{Cause, Refusal};

/// The HTTP status for a JSON-RPC error code in the stateless era (`None`:
/// success). The legacy era answers JSON-RPC errors with 200.
pub fn status_for(code: Option<i32>) -> StatusCode {
    let status = code.map_or(200, |c| mcp_protocol::ErrorCode(c).http_status());
    StatusCode::from_u16(status).unwrap_or(StatusCode::OK)
}

/// The status of an authorization refusal (OAuth 2.1 §5.3, RFC 6750 §3):
/// 401 without valid credentials, 400 for credentials sent in a way not
/// allowed, 403 for missing scopes, 503 when they cannot be checked now.
fn auth_status(e: &AuthError) -> StatusCode {
    match e {
        AuthError::Missing | AuthError::InvalidToken(_) => StatusCode::UNAUTHORIZED,
        AuthError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
        AuthError::InsufficientScope(_) => StatusCode::FORBIDDEN,
        AuthError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// A request the HTTP transport answers with an error.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpError {
    status: StatusCode,
    id: Option<RequestId>,
    /// Boxed: an `HttpError` travels in a `Result`, kept small.
    error: Box<ErrorData>,
    /// 405: the `Allow` header goes with it.
    allow: bool,
    /// 401/403: the `WWW-Authenticate` challenge.
    challenge: Option<String>,
}

impl HttpError {
    fn new(status: StatusCode, id: Option<&RequestId>, code: ErrorCode, message: impl Into<String>) -> Self {
        HttpError::with_status(status, id, ErrorData::new(code, message))
    }

    /// A refused message: the status of its code, 503 when the server is
    /// full, an authorization refusal's status with `auth`'s challenge.
    pub(crate) fn refused(r: Refusal, auth: Option<&Authorizer>) -> Self {
        let (status, challenge) = match &r.cause {
            Cause::Protocol => (status_for(Some(r.error.code.0)), None),
            Cause::Full => (StatusCode::SERVICE_UNAVAILABLE, None),
            Cause::Auth(e) => (auth_status(e), auth.map(|a| a.challenge(e))),
        };
        HttpError { status, id: r.id, error: r.error, allow: false, challenge }
    }

    /// An error with an explicit status (503 for a full hub, 400 for a refused `initialize`).
    pub fn with_status(status: StatusCode, id: Option<&RequestId>, error: ErrorData) -> Self {
        HttpError { status, id: id.cloned(), error: Box::new(error), allow: false, challenge: None }
    }

    /// 403: the Host/Origin guard refused the request.
    pub fn forbidden(reason: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, None, ErrorCode::INVALID_REQUEST, format!("Forbidden: {reason}"))
    }

    /// 413: the body is over `http.max_body_bytes`.
    pub fn too_large(limit: usize) -> Self {
        let message = format!("Request body exceeds the limit of {limit} bytes");
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, None, ErrorCode::INVALID_REQUEST, message)
    }

    /// 415: the body is not JSON.
    pub fn unsupported_media_type(content_type: &str) -> Self {
        let message = format!("Content-Type must be application/json, not {content_type:?}");
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, ErrorCode::INVALID_REQUEST, message)
    }

    /// 415: the body is compressed or otherwise encoded.
    pub fn unsupported_encoding(encoding: &str) -> Self {
        let message = format!("Content-Encoding {encoding:?} is not supported; send the JSON body unencoded");
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, ErrorCode::INVALID_REQUEST, message)
    }

    /// 408: the body did not arrive in time.
    pub fn body_timeout(timeout: std::time::Duration) -> Self {
        let message = format!("The request body did not arrive within {} ms", timeout.as_millis());
        Self::new(StatusCode::REQUEST_TIMEOUT, None, ErrorCode::INVALID_REQUEST, message)
    }

    /// 400: the body could not be read.
    pub fn unreadable(e: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, None, ErrorCode::PARSE_ERROR, format!("Could not read the body: {e}"))
    }

    /// 400: a well-formed message this endpoint does not take.
    pub fn invalid(id: Option<&RequestId>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, id, ErrorCode::INVALID_REQUEST, message)
    }

    /// 404: the `Mcp-Session-Id` names no open session.
    pub fn no_session(id: Option<&RequestId>) -> Self {
        let message = "Session not found (expired or ended); initialize again";
        Self::new(StatusCode::NOT_FOUND, id, ErrorCode::INVALID_REQUEST, message)
    }

    /// 405, with the methods the endpoint has.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        HttpError {
            allow: true,
            ..Self::new(StatusCode::METHOD_NOT_ALLOWED, None, ErrorCode::INVALID_REQUEST, message)
        }
    }

    /// 500.
    pub fn internal(id: Option<&RequestId>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, id, ErrorCode::INTERNAL_ERROR, message)
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.error.code.0, self.error.message)
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status)
            .content_type("application/json")
            .body(encode_error(self.id.as_ref(), &self.error));
        if let Some(c) = self.challenge.as_deref().and_then(|c| header::HeaderValue::from_str(c).ok()) {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, c);
        }
        if self.allow {
            res.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("POST, GET, DELETE"));
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    #[test]
    fn statuses_and_bodies() {
        assert_eq!(status_for(Some(-32601)), StatusCode::NOT_FOUND);
        assert_eq!(status_for(Some(-32020)), StatusCode::BAD_REQUEST);
        assert_eq!(status_for(Some(-32001)), StatusCode::BAD_REQUEST);
        assert_eq!(status_for(Some(-32603)), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(status_for(Some(-32000)), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(status_for(Some(1234)), StatusCode::OK);
        let e = HttpError::method_not_allowed("PUT is not supported");
        let res = e.error_response();
        assert_eq!(res.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(res.headers().get(header::ALLOW).unwrap(), "POST, GET, DELETE");
        let body = res.into_body().try_into_bytes().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["code"], -32600);
        assert_eq!(v["id"], serde_json::Value::Null);
    }

    #[test]
    fn a_refusal_gets_the_status_of_its_cause() {
        let status = |r: Refusal| HttpError::refused(r, None).status;
        let e = ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "no");
        assert_eq!(status(Refusal::of(None, e.clone())), StatusCode::NOT_FOUND);
        assert_eq!(status(Refusal::full(None, e)), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(status(Refusal::auth(None, AuthError::Missing)), StatusCode::UNAUTHORIZED);
        assert_eq!(status(Refusal::auth(None, AuthError::invalid("expired"))), StatusCode::UNAUTHORIZED);
        assert_eq!(status(Refusal::auth(None, AuthError::InvalidRequest("two".into()))), StatusCode::BAD_REQUEST);
        assert_eq!(status(Refusal::auth(None, AuthError::InsufficientScope(vec![]))), StatusCode::FORBIDDEN);
        assert_eq!(status(Refusal::auth(None, AuthError::Unavailable("down".into()))), StatusCode::SERVICE_UNAVAILABLE);
        // Without an authorizer there is no challenge to give.
        assert_eq!(HttpError::refused(Refusal::auth(None, AuthError::Missing), None).challenge, None);
    }
}
