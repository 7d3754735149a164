//! [`Identity`]: who is calling, as an authenticator established it. A
//! handler reads it with [`RequestContext::auth`](crate::RequestContext::auth);
//! without authentication there is none.

use serde_json::{Map, Value};

/// The authenticated caller of a request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Identity {
    /// The subject (`sub` of a token): the user or service acting.
    pub subject: String,
    /// The OAuth client the token was issued to, if known.
    pub client_id: Option<String>,
    /// The token's issuer, if known.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the credentials expire, in seconds since the Unix epoch
    /// (`exp`); `None`: they do not.
    pub expires_at: Option<u64>,
    /// Every claim of the token (or introspection answer), for what the
    /// fields above do not cover.
    pub claims: Map<String, Value>,
}

impl Identity {
    /// An identity for `subject` with no scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity { subject: subject.into(), ..Self::default() }
    }

    /// This identity with `scopes` granted.
    #[must_use]
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Whether scope `scope` was granted (literally; hierarchies are the
    /// server's [`ScopePolicy`](crate::auth::ScopePolicy)).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}
