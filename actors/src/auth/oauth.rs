//! [`OAuthAuthenticator`]: the server as an OAuth 2.1 resource server.
//! Bearer JWTs are verified against their issuer's published keys
//! (asymmetric algorithms only) and must carry `iss` (a trusted issuer),
//! `aud` (this server's canonical URI), `exp`, a subject, when present a
//! reached `nbf`, and an access token's `typ` (`at+jwt`, or none with
//! `auth.require_typ` off); opaque tokens go to RFC 7662 introspection when
//! it is configured, and their answers must say the same. Validated JWTs
//! are cached until they expire.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::LocalBoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::fetch::Fetcher;
use super::introspection::Introspector;
use super::issuer::{Issuer, Refresh};
use super::jwt::{check_audience, check_times, identity_of};
use super::token_cache::TokenCache;
use super::{bearer_token, now_secs, now_secs_f64, AuthError, Authenticator};
use crate::config::{AuthConfig, ConfigError};
use crate::facts::head::Head;
use crate::facts::identity::Identity;

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
    require_typ: bool,
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
            require_typ: config.require_typ,
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
            let answer = introspector.introspect(token, &self.fetcher).await?;
            return self.introspected(answer, introspector.endpoint()).map(Arc::new);
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
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::invalid("malformed token"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(AuthError::invalid(format!("algorithm {:?} is not accepted", header.alg)));
        }
        self.check_typ(header.typ.as_deref())?;
        let unverified: Map<String, Value> = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|_| AuthError::invalid("malformed token claims"))?;
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
        // The signature and `iss` here; the times (NumericDates with
        // fractions, which the library reads as integers only) and the
        // audience in `accept`.
        let mut validation = Validation::new(header.alg);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.set_issuer(&[iss]);
        validation.set_required_spec_claims(&["iss"]);
        let mut last = AuthError::invalid("no key verifies the token");
        for key in &keys {
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
                Ok(data) => return self.accept(data.claims, issuer.id()),
                Err(e) => last = AuthError::invalid(describe(e.kind())),
            }
        }
        Err(last)
    }

    /// RFC 9068 access tokens are typed `at+jwt`; `auth.require_typ` makes
    /// that a requirement, else an untyped token or a plain `JWT` passes
    /// too. A token typed as anything else (an ID token, a logout token, a
    /// DPoP proof) is never an access token.
    fn check_typ(&self, typ: Option<&str>) -> Result<(), AuthError> {
        let typ = typ.map(|t| t.strip_prefix("application/").unwrap_or(t).to_ascii_lowercase());
        match typ.as_deref() {
            Some("at+jwt") => Ok(()),
            None | Some("jwt") if !self.require_typ => Ok(()),
            None => Err(AuthError::invalid("the token has no typ; at+jwt is required (RFC 9068)")),
            Some(other) => Err(AuthError::invalid(format!("a token of typ {other:?} is not an access token (at+jwt)"))),
        }
    }

    /// Checks what the signature checks do not: the times, the audience,
    /// and that the token names its caller.
    fn accept(&self, claims: Map<String, Value>, issuer: &str) -> Result<Identity, AuthError> {
        check_times(&claims, now_secs_f64(), self.leeway, true)?;
        check_audience(&claims, &self.resource)?;
        identity_of(claims, issuer)
    }

    /// An active introspection answer: the same checks as a JWT's claims
    /// (an `exp` is optional here: the issuer said the token is active).
    /// Its issuer must be trusted when it names one; without `iss` the
    /// introspection endpoint vouches for it.
    fn introspected(&self, claims: Map<String, Value>, endpoint: &str) -> Result<Identity, AuthError> {
        check_times(&claims, now_secs_f64(), self.leeway, false)?;
        let issuer = match claims.get("iss") {
            None => endpoint.to_owned(),
            Some(iss) => {
                let iss = iss.as_str().unwrap_or_default();
                let trusted = self.issuers.iter().find(|i| i.is(iss));
                trusted.ok_or_else(|| AuthError::invalid(format!("issuer {iss:?} is not trusted")))?.id().to_owned()
            }
        };
        check_audience(&claims, &self.resource)?;
        identity_of(claims, &issuer)
    }

    /// The state of each issuer's key set, for the status page.
    pub fn health(&self) -> Value {
        Value::Array(self.issuers.iter().map(Issuer::health).collect())
    }
}

fn describe(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::InvalidSignature => "the signature does not verify".into(),
        ErrorKind::InvalidIssuer => "the issuer does not match".into(),
        ErrorKind::MissingRequiredClaim(c) => format!("the token has no {c} claim"),
        ErrorKind::InvalidAlgorithm => "the algorithm does not fit the key".into(),
        _ => "the token does not verify".into(),
    }
}

impl Authenticator for OAuthAuthenticator {
    fn authenticate<'a>(&'a self, head: &'a Head<'a>) -> LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>> {
        Box::pin(async move {
            let token = bearer_token(head)?.ok_or(AuthError::Missing)?;
            self.validate(token).await
        })
    }

    fn health(&self) -> Option<Value> {
        Some(OAuthAuthenticator::health(self))
    }
}
