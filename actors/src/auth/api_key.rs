//! [`ApiKeyAuthenticator`]: static bearer keys, each acting as a configured
//! subject with configured scopes — for internal deployments without an
//! authorization server. Keys are held as SHA-256 digests.

use std::sync::Arc;

use futures::future::LocalBoxFuture;
use hmac_sha256::Hash;

use super::{bearer_token, AuthError, Authenticator};
use crate::config::{ApiKeyConfig, ConfigError};
use crate::facts::head::Head;
use crate::facts::identity::Identity;

/// Accepts the configured keys.
pub struct ApiKeyAuthenticator {
    keys: Vec<([u8; 32], Arc<Identity>)>,
}

impl std::fmt::Debug for ApiKeyAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeyAuthenticator").field("keys", &self.keys.len()).finish()
    }
}

impl ApiKeyAuthenticator {
    /// The keys of `auth.api_keys` (an `env` key is read now).
    pub fn from_config(keys: &[ApiKeyConfig]) -> Result<Self, ConfigError> {
        let mut out = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let digest: [u8; 32] = if k.env.is_empty() {
                let mut d = [0u8; 32];
                for (j, byte) in d.iter_mut().enumerate() {
                    *byte = u8::from_str_radix(&k.sha256[2 * j..2 * j + 2], 16)
                        .map_err(|_| ConfigError(format!("auth.api_keys[{i}].sha256 is not hex")))?;
                }
                d
            } else {
                let key = std::env::var(&k.env).map_err(|_| {
                    ConfigError(format!("auth.api_keys[{i}]: environment variable {} is not set", k.env))
                })?;
                Hash::hash(key.trim().as_bytes())
            };
            let identity = Identity::new(k.subject.clone()).with_scopes(k.scopes.iter().cloned());
            out.push((digest, Arc::new(identity)));
        }
        Ok(ApiKeyAuthenticator { keys: out })
    }

    /// Accepts `key` (the raw key) as `identity`.
    #[must_use]
    pub fn with_key(mut self, key: &str, identity: Identity) -> Self {
        self.keys.push((Hash::hash(key.as_bytes()), Arc::new(identity)));
        self
    }
}

impl Authenticator for ApiKeyAuthenticator {
    fn authenticate<'a>(&'a self, head: &'a Head<'a>) -> LocalBoxFuture<'a, Result<Arc<Identity>, AuthError>> {
        let found = bearer_token(head).and_then(|token| {
            let token = token.ok_or(AuthError::Missing)?;
            let digest: [u8; 32] = Hash::hash(token.as_bytes());
            self.keys
                .iter()
                .find(|(d, _)| *d == digest)
                .map(|(_, id)| id.clone())
                .ok_or_else(|| AuthError::invalid("unknown API key"))
        });
        Box::pin(std::future::ready(found))
    }
}
