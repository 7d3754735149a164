//! [`Issuer`]: one trusted token issuer, its metadata and its signing keys,
//! fetched when first needed and cached. A token signed with a key id the
//! cache does not know refetches the key set (the issuer rotated its keys),
//! at most once per `min_refresh`, so made-up key ids cannot hammer it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::fetch::Fetcher;
use super::AuthError;

/// One signing key of an issuer.
#[derive(Clone)]
struct Key {
    kid: Option<String>,
    alg: Option<KeyAlgorithm>,
    key: DecodingKey,
}

#[derive(Default)]
struct Keys {
    jwks_uri: Option<String>,
    keys: Vec<Key>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
}

/// A trusted issuer.
pub(super) struct Issuer {
    /// The issuer identifier, as tokens carry it in `iss`.
    id: String,
    configured_jwks: Option<String>,
    keys: Mutex<Keys>,
    refreshing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer").field("id", &self.id).finish()
    }
}

/// How often key sets may be refetched.
#[derive(Debug, Clone, Copy)]
pub(super) struct Refresh {
    /// An unknown key id refetches at most once per this.
    pub(super) min_interval: Duration,
    /// Keys older than this are refetched anyway.
    pub(super) max_age: Duration,
}

impl Issuer {
    /// The issuer `id`, its keys at `jwks_uri` or (`None`) from its metadata.
    pub(super) fn new(id: &str, jwks_uri: Option<String>) -> Self {
        Issuer {
            id: id.trim_end_matches('/').to_owned(),
            configured_jwks: jwks_uri,
            keys: Mutex::new(Keys::default()),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    /// Whether `iss` names this issuer (a trailing slash aside).
    pub(super) fn is(&self, iss: &str) -> bool {
        iss.trim_end_matches('/') == self.id
    }

    /// The keys that may have signed a token with key id `kid` and
    /// algorithm `alg`, fetching or refetching the key set when needed.
    pub(super) async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
        fetcher: &Fetcher,
        refresh: Refresh,
    ) -> Result<Vec<DecodingKey>, AuthError> {
        let attempt_before = {
            let keys = self.lock();
            let fresh = keys.fetched_at.is_some_and(|t| t.elapsed() < refresh.max_age);
            let found = matching(&keys.keys, kid, alg);
            if fresh && !found.is_empty() {
                return Ok(found);
            }
            let may_refresh = !fresh || keys.last_attempt.is_none_or(|t| t.elapsed() >= refresh.min_interval);
            if !may_refresh {
                return Err(unknown(kid));
            }
            keys.last_attempt
        };
        let _one_at_a_time = self.refreshing.lock().await;
        // Another request may have refetched while this one waited.
        if self.lock().last_attempt == attempt_before {
            self.lock().last_attempt = Some(Instant::now());
            let (jwks_uri, set) = self.fetch(fetcher).await?;
            let mut keys = self.lock();
            keys.jwks_uri = Some(jwks_uri);
            keys.keys = set;
            keys.fetched_at = Some(Instant::now());
        }
        let found = matching(&self.lock().keys, kid, alg);
        if found.is_empty() {
            return Err(unknown(kid));
        }
        Ok(found)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fetches the key set (discovering its URI first if needed).
    async fn fetch(&self, fetcher: &Fetcher) -> Result<(String, Vec<Key>), AuthError> {
        let known = self.configured_jwks.clone().or_else(|| self.lock().jwks_uri.clone());
        let jwks_uri = match known {
            Some(u) => u,
            None => self.discover(fetcher).await?,
        };
        let doc =
            fetcher.get(&jwks_uri).await?.ok_or_else(|| AuthError::Unavailable(format!("{jwks_uri} answered 404")))?;
        let set: JwkSet = serde_json::from_value(doc)
            .map_err(|e| AuthError::Unavailable(format!("{jwks_uri} is not a JWK set: {e}")))?;
        let keys = set
            .keys
            .iter()
            .filter(|k| !matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption)))
            .filter_map(|k| {
                let key = DecodingKey::from_jwk(k).ok()?;
                // Never a symmetric key: a public key must not serve as an HMAC secret.
                (key.family() != jsonwebtoken::AlgorithmFamily::Hmac).then(|| Key {
                    kid: k.common.key_id.clone(),
                    alg: k.common.key_algorithm,
                    key,
                })
            })
            .collect();
        Ok((jwks_uri, keys))
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414 (path-inserted),
    /// then OpenID Connect discovery (appended). The document must name
    /// this issuer (RFC 8414 §3.3).
    async fn discover(&self, fetcher: &Fetcher) -> Result<String, AuthError> {
        let url = url::Url::parse(&self.id).map_err(|e| AuthError::Unavailable(format!("issuer {}: {e}", self.id)))?;
        let path = url.path().trim_end_matches('/');
        let origin = url.origin().ascii_serialization();
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{}/.well-known/openid-configuration", self.id),
        ];
        for candidate in &candidates {
            let Some(doc) = fetcher.get(candidate).await? else { continue };
            let named = doc.get("issuer").and_then(Value::as_str).map(|s| s.trim_end_matches('/'));
            if named != Some(self.id.as_str()) {
                return Err(AuthError::Unavailable(format!("{candidate} names issuer {named:?}, not {:?}", self.id)));
            }
            return doc
                .get("jwks_uri")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| AuthError::Unavailable(format!("{candidate} has no jwks_uri")));
        }
        Err(AuthError::Unavailable(format!(
            "no authorization server metadata for {} ({})",
            self.id,
            candidates.join(", ")
        )))
    }
}

fn unknown(kid: Option<&str>) -> AuthError {
    AuthError::invalid(match kid {
        Some(k) => format!("no key {k:?} is known for the issuer"),
        None => "no key of the issuer fits the token".to_owned(),
    })
}

/// The keys fitting a token: by key id when it has one, else every key of
/// the algorithm's family; a key that names its algorithm must name this one.
fn matching(keys: &[Key], kid: Option<&str>, alg: Algorithm) -> Vec<DecodingKey> {
    keys.iter()
        .filter(|k| match kid {
            Some(kid) => k.kid.as_deref() == Some(kid),
            None => k.key.family() == alg.family(),
        })
        .filter(|k| k.alg.is_none_or(|a| format!("{a:?}") == format!("{alg:?}")))
        .map(|k| k.key.clone())
        .collect()
}
