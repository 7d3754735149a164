//! [`OAuthAuthenticator`]: the server as an OAuth 2.1 resource server.
//! Bearer JWTs are verified against their issuer's published keys
//! (asymmetric algorithms only) and must carry `iss` (a trusted issuer),
//! `aud` (this server's canonical URI), `exp` and, when present, a
//! reached `nbf`; opaque tokens go to RFC 7662 introspection when it is
//! configured. Validated tokens are cached until they expire.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::RequestHead;
use futures::future::LocalBoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::fetch::Fetcher;
use super::introspection::Introspector;
use super::issuer::{Issuer, Refresh};
use super::jwt::{audience_matches, identity_of};
use super::token_cache::TokenCache;
use super::{bearer_token, now_secs, AuthError, Authenticator};
use crate::config::{AuthConfig, ConfigError};
use crate::identity::Identity;

/// Validates bearer tokens issued for this server.
pub struct OAuthAuthenticator {
    resource: url::Url,
    issuers: Vec<Issuer>,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    refresh: Refresh,
    fetcher: Fetcher,
    cache: TokenCache,
    introspection: Option<Introspector>,
}

impl std::fmt::Debug for OAuthAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthAuthenticator")
            .field("resource", &self.resource.as_str())
            .field("issuers", &self.issuers)
            .finish()
    }
}

impl OAuthAuthenticator {
    /// An authenticator for the resource with canonical URI `resource`,
    /// trusting the issuers of `config`.
    pub fn new(resource: &str, config: &AuthConfig) -> Result<Self, ConfigError> {
        let resource =
            url::Url::parse(resource).map_err(|e| ConfigError(format!("the canonical resource {resource:?}: {e}")))?;
        let jwks = (!config.jwks_uri.is_empty()).then(|| config.jwks_uri.clone());
        let algorithms = config
            .algorithms
            .iter()
            .map(|a| Algorithm::from_str(a).map_err(|_| ConfigError(format!("auth.algorithms: unknown {a:?}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OAuthAuthenticator {
            resource,
            issuers: config.issuers.iter().map(|i| Issuer::new(i, jwks.clone())).collect(),
            algorithms,
            leeway: config.leeway_secs,
            refresh: Refresh {
                min_interval: Duration::from_secs(config.jwks_min_refresh_secs),
                max_age: Duration::from_secs(config.jwks_max_age_secs),
            },
            fetcher: Fetcher::new(Duration::from_millis(config.fetch_timeout_ms)),
            cache: TokenCache::new(config.token_cache),
            introspection: Introspector::new(&config.introspection),
        })
    }

    /// The identity of a bearer token, or why it is not valid here.
    pub async fn validate(&self, token: &str) -> Result<Arc<Identity>, AuthError> {
        let now = now_secs();
        if let Some(identity) = self.cache.get(token, now) {
            return Ok(identity);
        }
        let identity = if token.bytes().filter(|&b| b == b'.').count() == 2 {
            self.validate_jwt(token).await?
        } else if let Some(introspector) = &self.introspection {
            // Introspected tokens are asked about at every use, so that a
            // revocation takes effect at once.
            return self.introspected(introspector.introspect(token, &self.fetcher).await?, now).map(Arc::new);
        } else {
            return Err(AuthError::invalid("not a JWT, and no introspection endpoint is configured"));
        };
        let identity = Arc::new(identity);
        if let Some(exp) = identity.expires_at {
            self.cache.put(token, identity.clone(), exp.saturating_add(self.leeway), now);
        }
        Ok(identity)
    }

    async fn validate_jwt(&self, token: &str) -> Result<Identity, AuthError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| AuthError::invalid(format!("malformed token: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(AuthError::invalid(format!("algorithm {:?} is not accepted", header.alg)));
        }
        let unverified: Map<String, Value> = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| AuthError::invalid(format!("malformed token claims: {e}")))?;
        let iss = unverified
            .get("iss")
            .and_then(Value::as_str)
            .ok_or_else(|| AuthError::invalid("the token has no iss claim"))?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.is(iss))
            .ok_or_else(|| AuthError::invalid(format!("issuer {iss:?} is not trusted")))?;
        let keys = issuer.keys_for(header.kid.as_deref(), header.alg, &self.fetcher, self.refresh).await?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        validation.validate_aud = false;
        validation.set_issuer(&[iss]);
        validation.set_required_spec_claims(&["exp", "iss"]);
        let mut last = AuthError::invalid("no key verifies the token");
        for key in &keys {
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
                Ok(data) => return self.accept(data.claims),
                Err(e) => last = AuthError::invalid(describe(e.kind())),
            }
        }
        Err(last)
    }

    /// Checks what the signature checks do not: the audience.
    fn accept(&self, claims: Map<String, Value>) -> Result<Identity, AuthError> {
        if !audience_matches(claims.get("aud"), &self.resource) {
            return Err(AuthError::invalid(format!("the token's audience does not include {}", self.resource)));
        }
        Ok(identity_of(claims))
    }

    fn introspected(&self, claims: Map<String, Value>, now: u64) -> Result<Identity, AuthError> {
        if let Some(exp) = claims.get("exp").and_then(Value::as_u64) {
            if exp.saturating_add(self.leeway) <= now {
                return Err(AuthError::invalid("the token has expired"));
            }
        }
        if let Some(iss) = claims.get("iss").and_then(Value::as_str) {
            if !self.issuers.iter().any(|i| i.is(iss)) {
                return Err(AuthError::invalid(format!("issuer {iss:?} is not trusted")));
            }
        }
        // The issuer vouches for the token; when it names an audience,
        // that must be this server.
        if claims.contains_key("aud") && !audience_matches(claims.get("aud"), &self.resource) {
            return Err(AuthError::invalid(format!("the token's audience does not include {}", self.resource)));
        }
        Ok(identity_of(claims))
    }
}

fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidSignature => "the signature does not verify".into(),
        ErrorKind::InvalidIssuer => "the issuer does not match".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("the token has no {c} claim"),
        ErrorKind::InvalidAlgorithm => "the algorithm does not fit the key".into(),
        other => format!("the token does not verify: {other:?}"),
    }
}

impl Authenticator for OAuthAuthenticator {
    fn authenticate<'a>(&'a self, head: &'a RequestHead) -> LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>> {
        Box::pin(async move {
            let token = bearer_token(head)?.ok_or(AuthError::Missing)?;
            self.validate(token).await
        })
    }
}
