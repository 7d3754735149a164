//! RFC 7662 token introspection, for opaque tokens: the issuer says whether
//! the token is active and for whom.

use serde_json::Value;

use super::fetch::Fetcher;
use super::AuthError;
use crate::config::IntrospectionConfig;

/// Asks the configured endpoint about tokens.
#[derive(Debug, Clone)]
pub(super) struct Introspector {
    endpoint: String,
    client_id: String,
    client_secret: String,
}

impl Introspector {
    /// `None` when no endpoint is configured.
    pub(super) fn new(c: &IntrospectionConfig) -> Option<Self> {
        (!c.endpoint.is_empty()).then(|| Introspector {
            endpoint: c.endpoint.clone(),
            client_id: c.client_id.clone(),
            client_secret: c.client_secret.clone(),
        })
    }

    /// The endpoint (it vouches for answers that name no issuer).
    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The introspection answer for an active token; an error for an
    /// inactive (revoked, expired, unknown) one.
    pub(super) async fn introspect(
        &self,
        token: &str,
        fetcher: &Fetcher,
    ) -> Result<serde_json::Map<String, Value>, AuthError> {
        let basic = (!self.client_id.is_empty()).then_some((self.client_id.as_str(), self.client_secret.as_str()));
        let form = [("token", token), ("token_type_hint", "access_token")];
        let answer = fetcher.post_form(&self.endpoint, &form, basic).await?;
        let Value::Object(claims) = answer else {
            return Err(AuthError::Unavailable("the introspection answer is not an object".into()));
        };
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(AuthError::invalid("the token is not active (revoked, expired or unknown)"));
        }
        Ok(claims)
    }
}
