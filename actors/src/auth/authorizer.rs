//! [`Authorizer`]: the server's authorization — its authenticator, the
//! scope policy and the protected-resource metadata — and the challenges
//! it answers refusals with.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use slog::{info, warn, Logger};

#[cfg(feature = "oauth")]
use super::OAuthAuthenticator;
use super::{ApiKeyAuthenticator, AuthError, Authenticator, ProtectedResource, ScopePolicy};
use crate::catalog::Catalog;
use crate::config::{AuthMode, Config, ConfigError};
use crate::facts::head::Head;
use crate::facts::identity::Identity;
use crate::telemetry::logging::RateLimit;

/// Authorization as a server applies it.
#[derive(Clone)]
pub struct Authorizer {
    authenticator: Arc<dyn Authenticator>,
    policy: ScopePolicy,
    resource: ProtectedResource,
    advertised: Vec<String>,
    /// Refusals are logged at info, at most this often: a client can cause
    /// them at will.
    refusals_logged: Arc<RateLimit>,
    /// Issuer failures are logged at warn, at most this often.
    failures_logged: Arc<RateLimit>,
}

/// Log lines of one kind per second, at most.
const LOG_LINES_PER_SECOND: u32 = 10;

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").field("resource", &self.resource).field("policy", &self.policy).finish()
    }
}

impl Authorizer {
    /// The authorization `config.auth` sets up; `None` for `mode = "none"`.
    pub fn from_config(config: &Config) -> Result<Option<Self>, ConfigError> {
        let authenticator: Arc<dyn Authenticator> = match config.auth.mode {
            AuthMode::None => return Ok(None),
            #[cfg(feature = "oauth")]
            AuthMode::Oauth => Arc::new(OAuthAuthenticator::new(&config.canonical_resource(), &config.auth)?),
            #[cfg(not(feature = "oauth"))]
            AuthMode::Oauth => return Err(crate::config::needs_feature("auth.mode = \"oauth\"", "oauth")),
            AuthMode::ApiKey => Arc::new(ApiKeyAuthenticator::from_config(&config.auth.api_keys)?),
        };
        Ok(Some(Self::new(authenticator, config)))
    }

    /// Authorization by `authenticator`, with the scopes, hierarchy and
    /// metadata of `config.auth`.
    pub fn new(authenticator: Arc<dyn Authenticator>, config: &Config) -> Self {
        let a = &config.auth;
        Authorizer {
            authenticator,
            policy: ScopePolicy::new(a.required_scopes.clone(), &a.scope_implies),
            resource: ProtectedResource::new(&config.canonical_resource(), a.issuers.clone()),
            advertised: a.required_scopes.iter().chain(&a.scopes_supported).cloned().collect(),
            refusals_logged: Arc::new(RateLimit::new(LOG_LINES_PER_SECOND, Duration::from_secs(1))),
            failures_logged: Arc::new(RateLimit::new(LOG_LINES_PER_SECOND, Duration::from_secs(1))),
        }
    }

    /// Reports a refusal to the operator: counted in
    /// `mcp_server_auth_failures_total{reason}`, and logged (rate-limited;
    /// the next line written counts those left out) with the reason, the
    /// issuer and client id the token names (unverified for a refused
    /// token) and the subject of a known caller — never token material. An
    /// issuer that could not be reached is a warning with its detail;
    /// any other refusal is info.
    pub fn report(&self, log: &Logger, e: &AuthError, token: Option<&str>, caller: Option<&Identity>) {
        crate::telemetry::auth_failure(e.reason());
        let (issuer, client_id) = match caller {
            Some(id) => (id.issuer.clone(), id.client_id.clone()),
            None => token.map(super::unverified_names).unwrap_or_default(),
        };
        let subject = caller.map(|id| id.subject.as_str());
        if let AuthError::Unavailable(detail) = e {
            if let Some(left_out) = self.failures_logged.admit() {
                warn!(log, "authorization unavailable: the token's issuer could not be asked";
                    "detail" => detail, "issuer" => issuer, "left_out" => left_out);
            }
        } else if let Some(left_out) = self.refusals_logged.admit() {
            info!(log, "request refused by authorization"; "reason" => e.reason(), "why" => e.to_string(),
                "issuer" => issuer, "client_id" => client_id, "subject" => subject, "left_out" => left_out);
        }
    }

    /// What the status page shows of authorization: the mode's
    /// dependencies (each issuer's key set) when the authenticator has any.
    pub fn health(&self) -> Option<Value> {
        self.authenticator.health()
    }

    /// The caller of a request, holding the scopes every request needs.
    pub async fn authenticate(&self, head: &Head<'_>) -> Result<Arc<Identity>, AuthError> {
        let identity = self.authenticator.authenticate(head).await?;
        self.permit(&identity, &[])?;
        Ok(identity)
    }

    /// Whether `identity` may use an item needing `scopes` (besides the
    /// required ones): a 403 naming every scope the operation needs if not.
    pub fn permit(&self, identity: &Identity, scopes: &[String]) -> Result<(), AuthError> {
        match self.policy.insufficient(&identity.scopes, scopes) {
            None => Ok(()),
            Some(needed) => Err(AuthError::InsufficientScope(needed)),
        }
    }

    /// The protected-resource metadata.
    pub fn protected_resource(&self) -> &ProtectedResource {
        &self.resource
    }

    /// The metadata document: the configured scopes and every scope an
    /// item of `catalog` asks for.
    pub fn document(&self, catalog: &Catalog) -> Value {
        self.resource.document(self.advertised.iter().cloned().chain(catalog.scopes_in_use()))
    }

    /// The `WWW-Authenticate` value for a refusal (RFC 6750 §3, RFC 9728
    /// §5.1): the metadata URL, the scopes (those every request needs for
    /// a 401, all those the operation needs for a 403), and for a presented
    /// token the error code with a description.
    pub fn challenge(&self, e: &AuthError) -> String {
        let mut out = format!("Bearer resource_metadata=\"{}\"", self.resource.metadata_url());
        let scopes = match e {
            AuthError::InsufficientScope(needed) => needed.as_slice(),
            _ => self.policy.required(),
        };
        if !scopes.is_empty() {
            out.push_str(&format!(", scope=\"{}\"", quoted(&scopes.join(" "))));
        }
        if let Some(code) = e.code() {
            out.push_str(&format!(", error=\"{code}\", error_description=\"{}\"", quoted(&e.for_client())));
        }
        out
    }
}

/// Text safe inside an RFC 6750 quoted string: printable ASCII without
/// `"` and `\`.
fn quoted(text: &str) -> String {
    text.chars().filter(|c| matches!(c, ' ' | '!' | '#'..='[' | ']'..='~')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiKeyConfig;

    fn authorizer() -> Authorizer {
        let mut c = Config::default();
        c.auth.mode = AuthMode::ApiKey;
        c.auth.resource = "https://mcp.example.com/mcp".into();
        c.auth.required_scopes = vec!["mcp".into()];
        c.auth.api_keys = vec![ApiKeyConfig { sha256: "0".repeat(64), subject: "s".into(), ..Default::default() }];
        Authorizer::from_config(&c).unwrap().unwrap()
    }

    #[test]
    fn challenges_name_metadata_scopes_and_error() {
        let a = authorizer();
        let md = "resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\"";
        assert_eq!(a.challenge(&AuthError::Missing), format!("Bearer {md}, scope=\"mcp\""));
        let c = a.challenge(&AuthError::invalid("the \"token\" has expired"));
        assert!(
            c.contains("error=\"invalid_token\"")
                && c.contains("error_description=\"invalid token: the token has expired\""),
            "{c}"
        );
        let e = a.permit(&Identity::new("u").with_scopes(["mcp"]), &["files:write".into()]).unwrap_err();
        let c = a.challenge(&e);
        assert!(c.contains("scope=\"mcp files:write\"") && c.contains("error=\"insufficient_scope\""), "{c}");
        assert!(a.permit(&Identity::new("u").with_scopes(["mcp", "files:write"]), &["files:write".into()]).is_ok());
    }
}
