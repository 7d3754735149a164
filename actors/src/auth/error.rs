//! [`AuthError`]: why a request was not authorized, and the HTTP answer
//! each reason gets (OAuth 2.1 §5.3, RFC 6750 §3).

/// Why an authenticator refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// No credentials were presented: 401 with a bare challenge.
    Missing,
    /// The credentials were presented but are not valid here (malformed,
    /// expired, not yet valid, for another audience, from an untrusted
    /// issuer, badly signed, revoked): 401 `error="invalid_token"`.
    InvalidToken(String),
    /// The request carries credentials in a way that is not allowed (two
    /// `Authorization` headers, a token in the query string): 400
    /// `error="invalid_request"`.
    InvalidRequest(String),
    /// Valid credentials lacking scopes this operation needs: 403
    /// `error="insufficient_scope"` naming all of them.
    InsufficientScope(Vec<String>),
    /// The credentials could not be checked now (the issuer is
    /// unreachable): 503.
    Unavailable(String),
}

impl AuthError {
    /// An invalid token, with a description for the client.
    pub fn invalid(why: impl Into<String>) -> Self {
        AuthError::InvalidToken(why.into())
    }

    /// The OAuth error code (`None` for a missing token).
    pub fn code(&self) -> Option<&'static str> {
        match self {
            AuthError::Missing | AuthError::Unavailable(_) => None,
            AuthError::InvalidToken(_) => Some("invalid_token"),
            AuthError::InvalidRequest(_) => Some("invalid_request"),
            AuthError::InsufficientScope(_) => Some("insufficient_scope"),
        }
    }

    /// The reason as a bounded label (`missing`, `invalid_token`,
    /// `invalid_request`, `insufficient_scope`, `unavailable`): the
    /// `reason` of `mcp_server_auth_failures_total` and of the log line.
    pub fn reason(&self) -> &'static str {
        match self {
            AuthError::Missing => "missing",
            AuthError::InvalidToken(_) => "invalid_token",
            AuthError::InvalidRequest(_) => "invalid_request",
            AuthError::InsufficientScope(_) => "insufficient_scope",
            AuthError::Unavailable(_) => "unavailable",
        }
    }

    /// What a client is told: everything but why the issuer could not be
    /// reached, which is for the operator's log only.
    pub fn for_client(&self) -> String {
        match self {
            AuthError::Unavailable(_) => {
                "authorization unavailable: the token cannot be checked right now; try again later".into()
            }
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Missing => f.write_str("authorization required: send Authorization: Bearer <token>"),
            AuthError::InvalidToken(why) => write!(f, "invalid token: {why}"),
            AuthError::InvalidRequest(why) => write!(f, "invalid request: {why}"),
            AuthError::InsufficientScope(s) => write!(f, "insufficient scope: this operation needs {}", s.join(" ")),
            AuthError::Unavailable(why) => write!(f, "authorization unavailable: {why}"),
        }
    }
}

impl std::error::Error for AuthError {}
