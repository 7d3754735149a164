//! [`StateSealer`]: seals and opens the `requestState` of multi round-trip
//! requests with the server's key. It owns the key: the configured one
//! (`mrtr.key`, shared by every instance behind a load balancer) or one
//! generated for this process, which it says so that the server can warn.

use mcp_protocol::request_state::{self, Binding, StateKey, StatePayload};
use mcp_protocol::ProtocolError;

use crate::config::{ConfigError, MrtrConfig};

/// Seals and opens `requestState` tokens.
#[derive(Debug)]
pub struct StateSealer {
    key: StateKey,
    ttl_ms: u64,
    generated: bool,
}

impl StateSealer {
    /// The sealer `config` describes; a malformed key is an error, a missing
    /// one is generated.
    pub fn from_config(config: &MrtrConfig) -> Result<Self, ConfigError> {
        match config.decoded_key()? {
            None => Ok(Self::generate(config.state_ttl_ms)),
            Some(key) => {
                let key = StateKey::new(key).map_err(|e| ConfigError(format!("mrtr.key: {e}")))?;
                Ok(StateSealer { key, ttl_ms: config.state_ttl_ms, generated: false })
            }
        }
    }

    /// A sealer with a random key of this process.
    pub fn generate(ttl_ms: u64) -> Self {
        let mut k = uuid::Uuid::new_v4().as_bytes().to_vec();
        k.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
        let key = StateKey::new(k).expect("32 random bytes are a valid key");
        StateSealer { key, ttl_ms, generated: true }
    }

    /// Whether the key was generated at start (then multi round-trip
    /// requests work only against this one process).
    pub fn generated_key(&self) -> bool {
        self.generated
    }

    /// Opens and verifies a token bound to `binding`.
    pub fn open(&self, token: &str, binding: &Binding) -> Result<StatePayload, ProtocolError> {
        request_state::open(token, &self.key, binding, now_ms()).map_err(ProtocolError::from)
    }

    /// A fresh payload for `binding`, valid for the configured time.
    pub fn payload(&self, binding: &Binding) -> StatePayload {
        StatePayload::new(binding, self.ttl_ms, now_ms(), uuid::Uuid::new_v4().simple().to_string())
    }

    /// Seals a payload into a token.
    pub fn seal(&self, payload: &StatePayload) -> String {
        request_state::seal(payload, &self.key)
    }
}

/// Milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
