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

    /// This identity as issued by `issuer`.
    #[must_use]
    pub fn with_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The key of this caller wherever something is bound to it (its tasks,
    /// legacy sessions, `requestState`, task listens): the issuer and the
    /// subject together, so that the same `sub` from two issuers is two
    /// callers. Length-prefixed, so no pair of issuer and subject can spell
    /// another pair's key.
    pub fn key(&self) -> String {
        match &self.issuer {
            Some(issuer) => format!("{}:{issuer}{}", issuer.len(), self.subject),
            None => format!("-:{}", self.subject),
        }
    }

    /// The key of a caller as the policy, the quotas and the audit log name
    /// it: its [`Identity::key`], or `anonymous` without credentials.
    pub fn key_of(caller: Option<&Identity>) -> String {
        caller.map_or_else(|| "anonymous".to_owned(), Identity::key)
    }

    /// How long until the credentials expire (zero once they have), from
    /// now to the second of `expires_at`; `None`: they do not.
    pub fn expires_in(&self) -> Option<std::time::Duration> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        self.expires_at.map(|exp| std::time::Duration::from_secs(exp).saturating_sub(now))
    }

    /// Whether scope `scope` was granted (literally; hierarchies are the
    /// server's [`ScopePolicy`](crate::auth::ScopePolicy)).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_issuer_and_subject() {
        let a = Identity::new("alice").with_issuer("https://one.example");
        let b = Identity::new("alice").with_issuer("https://two.example");
        assert_ne!(a.key(), b.key());
        assert_ne!(Identity::new("alice").key(), a.key());
        // No pair spells another pair's key.
        let c = Identity::new("bc").with_issuer("a");
        let d = Identity::new("c").with_issuer("ab");
        assert_ne!(c.key(), d.key());
        assert_eq!(a.key(), Identity::new("alice").with_issuer("https://one.example").key());
    }
}
