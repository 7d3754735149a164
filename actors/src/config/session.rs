//! `[mrtr]` and `[legacy]`: multi round-trip state and legacy sessions.

use super::error::ConfigError;
use serde::{Deserialize, Serialize};

/// `[mrtr]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MrtrConfig {
    /// Base64 of the secret (at least 32 bytes) that authenticates
    /// `requestState`. Every instance behind one load balancer needs the same
    /// key. Empty (the default): a random key per process, which only works
    /// for a single instance and does not survive a restart.
    pub key: String,
    /// How long a `requestState` stays valid, in ms. Default: 600000 (10 min).
    pub state_ttl_ms: u64,
}

impl Default for MrtrConfig {
    fn default() -> Self {
        MrtrConfig { key: String::new(), state_ttl_ms: 600_000 }
    }
}

impl MrtrConfig {
    /// The configured key, decoded; `None` when none is configured.
    pub fn decoded_key(&self) -> Result<Option<Vec<u8>>, ConfigError> {
        use base64::Engine;
        if self.key.is_empty() {
            return Ok(None);
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(self.key.trim())
            .map_err(|e| ConfigError(format!("mrtr.key is not base64: {e}")))?;
        if bytes.len() < 32 {
            return Err(ConfigError(format!("mrtr.key must decode to at least 32 bytes, got {}", bytes.len())));
        }
        Ok(Some(bytes))
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
}

impl Default for LegacyConfig {
    fn default() -> Self {
        LegacyConfig {
            max_sessions: 10_000,
            evict_idle_ms: 60_000,
            idle_timeout_ms: 1_800_000,
            input_timeout_ms: 300_000,
            max_input_rounds: 10,
        }
    }
}
