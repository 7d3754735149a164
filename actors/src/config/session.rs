//! `[mrtr]` and `[legacy]`: multi round-trip state and legacy sessions.

use super::error::ConfigError;
use super::{HubBackend, LegacyStore};
use serde::{Deserialize, Serialize};

/// `[mrtr]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrtrConfig {
    /// Base64 of the secret (at least 32 bytes) that authenticates
    /// `requestState`. Every instance behind one load balancer needs the same
    /// key. Empty (the default): a random key per process, which only works
    /// for a single instance and does not survive a restart. One key; set
    /// `keys` instead to rotate (setting both is an error).
    pub key: String,
    /// Base64 keys for a rotation: the first signs new `requestState`s,
    /// every one verifies those it signed (each state names its key). To
    /// roll a new key through a fleet without losing a flow: add it last
    /// everywhere, then move it first everywhere, then drop the old one once
    /// `state_ttl_ms` has passed. Default: `[]`.
    pub keys: Vec<String>,
    /// How long a `requestState` stays valid, in ms. Default: 600000 (10 min).
    pub state_ttl_ms: u64,
}

impl Default for MrtrConfig {
    fn default() -> Self {
        MrtrConfig { key: String::new(), keys: Vec::new(), state_ttl_ms: 600_000 }
    }
}

impl MrtrConfig {
    /// The configured keys, decoded, the signing one first (`mrtr.key` is a
    /// list of one); empty when none is configured.
    pub fn decoded_keys(&self) -> Result<Vec<Vec<u8>>, ConfigError> {
        use base64::Engine;
        if !self.key.is_empty() && !self.keys.is_empty() {
            return Err(ConfigError(
                "mrtr.key and mrtr.keys are both set: keep one (mrtr.keys rotates: the first signs, each verifies)"
                    .into(),
            ));
        }
        let (name, keys) = match self.key.is_empty() {
            true => ("mrtr.keys", self.keys.as_slice()),
            false => ("mrtr.key", std::slice::from_ref(&self.key)),
        };
        let mut decoded: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            let at = if name == "mrtr.keys" { format!("{name}[{i}]") } else { name.to_owned() };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(key.trim())
                .map_err(|e| ConfigError(format!("{at} is not base64: {e}")))?;
            if bytes.len() < 32 {
                return Err(ConfigError(format!("{at} must decode to at least 32 bytes, got {}", bytes.len())));
            }
            if decoded.contains(&bytes) {
                return Err(ConfigError(format!("{at} is listed twice")));
            }
            decoded.push(bytes);
        }
        Ok(decoded)
    }
}

/// `[legacy]`: sessions of clients that open with `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LegacyConfig {
    /// Most open sessions. When the table is full, a new `initialize`
    /// evicts the session unused the longest if it has been idle for
    /// `evict_idle_ms`, and is refused (HTTP 503) otherwise. Default: 10000.
    pub max_sessions: usize,
    /// How long a session must have been unused before a new one may evict
    /// it from a full table, ms: a flood of `initialize` calls then locks
    /// nobody out for longer than this, while sessions in use keep their
    /// place. Default: 60000 (1 min).
    pub evict_idle_ms: u64,
    /// A session unused this long (ms) expires; its id then answers 404.
    /// Default: 1800000 (30 min).
    pub idle_timeout_ms: u64,
    /// How long a handler waits for the client to answer a server-to-client
    /// request (sampling, elicitation, roots), ms. Default: 300000 (5 min).
    pub input_timeout_ms: u64,
    /// Most input rounds one request may take. Default: 10.
    pub max_input_rounds: u32,
    /// Where sessions live: `memory` (the instance that answered
    /// `initialize` serves the session; a balancer must be sticky) or
    /// `redis` (at `[redis]`: every instance serves every session — its
    /// state, log level and subscriptions are shared, answers to the
    /// server's questions and cancellations reach the instance running the
    /// request, and `DELETE` ends it everywhere). With `redis`,
    /// `max_sessions` bounds the sessions each instance holds: evicting one
    /// forgets this instance's copy, not the session. Empty (default):
    /// `redis` when `hub.backend = "redis"`, else `memory`.
    pub store: LegacyStore,
}

impl LegacyConfig {
    /// Whether sessions live in Redis, given the hub's backend.
    pub fn in_redis(&self, hub_backend: HubBackend) -> bool {
        match self.store {
            LegacyStore::Redis => true,
            LegacyStore::Memory => false,
            LegacyStore::Auto => hub_backend == HubBackend::Redis,
        }
    }
}

impl Default for LegacyConfig {
    fn default() -> Self {
        LegacyConfig {
            max_sessions: 10_000,
            evict_idle_ms: 60_000,
            idle_timeout_ms: 1_800_000,
            input_timeout_ms: 300_000,
            max_input_rounds: 10,
            store: LegacyStore::Auto,
        }
    }
}
