//! [`Issuer`]: one trusted token issuer, its metadata and its signing keys,
//! fetched when first needed and cached. A token signed with a key id the
//! cache does not know refetches the key set (the issuer rotated its keys),
//! at most once per `min_refresh`, so made-up key ids cannot hammer it; a
//! failed fetch backs off (1 s, doubling, up to `min_refresh`), one fetch
//! is in flight at a time, and the metadata is discovered once.

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
    /// Discovered (or configured) once, kept across failed key fetches.
    jwks_uri: Option<String>,
    keys: Vec<Key>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    /// Attempts finished so far (succeeded or failed).
    finished: u64,
    /// Fetches that failed in a row since the last success.
    failures: u32,
    /// Why the last fetch failed (for the log and the status page, never
    /// for clients).
    last_error: Option<String>,
}

/// A trusted issuer.
pub(super) struct Issuer {
    /// The issuer identifier, as tokens carry it in `iss`.
    id: String,
    configured_jwks: Option<String>,
    keys: Mutex<Keys>,
    /// One fetch at a time: callers that need keys meanwhile wait on it and
    /// share its outcome.
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
    /// An unknown key id refetches at most once per this; after failures,
    /// the back-off grows up to this.
    pub(super) min_interval: Duration,
    /// Keys older than this are refetched anyway.
    pub(super) max_age: Duration,
}

/// The first wait after a failed fetch; it doubles with each failure in a
/// row, up to `Refresh::min_interval`.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

impl Refresh {
    /// How long after an attempt the issuer may be asked again.
    fn wait_after(&self, failures: u32, fresh: bool) -> Duration {
        match failures {
            0 if !fresh => Duration::ZERO,
            0 => self.min_interval,
            n => FIRST_BACKOFF.saturating_mul(1 << (n - 1).min(16)).min(self.min_interval.max(FIRST_BACKOFF)),
        }
    }
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

    /// The issuer identifier (without a trailing slash): the issuer part of
    /// the identities of its tokens.
    pub(super) fn id(&self) -> &str {
        &self.id
    }

    /// The state of the key set: keys held, their age, failures in a row
    /// and the last error.
    pub(super) fn health(&self) -> Value {
        let k = self.lock();
        serde_json::json!({
            "issuer": self.id,
            "jwks_uri": k.jwks_uri,
            "keys": k.keys.len(),
            "fetched_secs_ago": k.fetched_at.map(|t| t.elapsed().as_secs()),
            "failures": k.failures,
            "last_error": k.last_error,
            "healthy": k.failures == 0 && k.fetched_at.is_some(),
        })
    }

    /// The keys that may have signed a token with key id `kid` and
    /// algorithm `alg`, fetching or refetching the key set when needed.
    /// The issuer is asked at most once per `refresh.min_interval` for
    /// unknown key ids, and after a failure only once the back-off has run
    /// out (1 s doubling up to `min_interval`): a failing issuer is not
    /// hammered by the tokens that keep arriving. Until then requests are
    /// refused as unavailable, or served from the keys already held.
    pub(super) async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
        fetcher: &Fetcher,
        refresh: Refresh,
    ) -> Result<Vec<DecodingKey>, AuthError> {
        let finished_before = {
            let keys = self.lock();
            let fresh = keys.fetched_at.is_some_and(|t| t.elapsed() < refresh.max_age);
            let found = matching(&keys.keys, kid, alg);
            if fresh && !found.is_empty() {
                return Ok(found);
            }
            let wait = refresh.wait_after(keys.failures, fresh);
            if keys.last_attempt.is_some_and(|t| t.elapsed() < wait) {
                return held_or(found, &keys, kid);
            }
            keys.finished
        };
        let _one_at_a_time = self.refreshing.lock().await;
        // An attempt that finished while this request waited (or was
        // already under way when it looked) is its attempt too.
        if self.lock().finished == finished_before {
            self.lock().last_attempt = Some(Instant::now());
            let fetched = self.fetch(fetcher).await;
            let mut keys = self.lock();
            keys.finished += 1;
            match fetched {
                Ok(set) => {
                    keys.keys = set;
                    keys.fetched_at = Some(Instant::now());
                    keys.failures = 0;
                    keys.last_error = None;
                }
                Err(e) => {
                    keys.failures = keys.failures.saturating_add(1);
                    keys.last_error = Some(match e {
                        AuthError::Unavailable(why) => why,
                        other => other.to_string(),
                    });
                }
            }
        }
        let keys = self.lock();
        held_or(matching(&keys.keys, kid, alg), &keys, kid)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fetches the key set (discovering its URI first, once).
    async fn fetch(&self, fetcher: &Fetcher) -> Result<Vec<Key>, AuthError> {
        let known = self.configured_jwks.clone().or_else(|| self.lock().jwks_uri.clone());
        let jwks_uri = match known {
            Some(u) => u,
            None => {
                let u = self.discover(fetcher).await?;
                self.lock().jwks_uri = Some(u.clone());
                u
            }
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
        Ok(keys)
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

/// The keys found, else why there are none: the issuer's key set could not
/// be had (its last fetch failed), or it has no such key.
fn held_or(found: Vec<DecodingKey>, keys: &Keys, kid: Option<&str>) -> Result<Vec<DecodingKey>, AuthError> {
    if !found.is_empty() {
        return Ok(found);
    }
    match &keys.last_error {
        Some(e) if keys.failures > 0 => Err(AuthError::Unavailable(e.clone())),
        _ => Err(unknown(kid)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_up_to_the_refresh_interval() {
        let r = Refresh { min_interval: Duration::from_secs(30), max_age: Duration::from_secs(3600) };
        assert_eq!(r.wait_after(0, false), Duration::ZERO);
        assert_eq!(r.wait_after(0, true), Duration::from_secs(30));
        let waits: Vec<u64> = (1..=7).map(|n| r.wait_after(n, false).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(r.wait_after(u32::MAX, false), Duration::from_secs(30));
        let quick = Refresh { min_interval: Duration::ZERO, max_age: Duration::from_secs(1) };
        assert_eq!(quick.wait_after(3, false), Duration::from_secs(1), "never below the first back-off");
    }
}
